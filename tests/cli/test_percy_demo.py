"""The PERCY section of ``xplique-ext demo`` (``xplique_ext/cli/percy_demo.py``)."""

import warnings

from xplique_ext.commons.warnings import UndefinedScoreWarning


def test_demo_section():
    from xplique_ext.cli.percy_demo import demo_section

    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedScoreWarning)
        text = demo_section(seed=0, progress=False)
    assert "L-PERCY" in text and "I-PERCY" in text and "accuracy" in text
    positive, negative = text.split("negative sentences (label 0")
    assert "positive sentences (label 1" in positive
    for table in (positive, negative):  # each class in its own table
        lines = {line.split("  ")[0].strip(): line for line in table.splitlines()}
        b_only = lines["bag-of-words, reads B only"].split()[-4:]
        a_only = lines["bag-of-words, reads A only"].split()[-4:]
        assert float(b_only[0]) == 1.0 and float(b_only[1]) >= 0.9  # accuracy, L-PERCY
        assert all(float(v) == 0.0 for v in a_only)
