"""The rules section of the demo (:mod:`xplique_ext.rules.demo`)."""

import numpy as np
import pytest

from xplique_ext.rules.demo import demo_section


def test_demo_section():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 6, size=(300, 3)).astype(float)
    black_box = (counts[:, 0] > 2).astype(int) + (counts[:, 1] > 3)
    text = demo_section(counts, ["circles", "squares", "stars"], black_box, seed=0)
    lines = text.splitlines()
    assert lines[1].split() == ["leaves", "rules", "fidelity", "FiRe", "Qs"]
    rows = [line.split() for line in lines[2:6]]
    assert [int(r[0]) for r in rows] == [2, 3, 4, 8]
    fidelities = [float(r[2]) for r in rows]
    assert fidelities == sorted(fidelities)  # bigger trees mimic better here
    assert fidelities[-1] == 1.0 and float(rows[-1][3]) == 0.0
    assert "Best by FiRe" in text and "IF" in text
    assert demo_section(counts, ["circles", "squares", "stars"], black_box, seed=0) == text
    with pytest.raises(ValueError, match="`feature_names`"):
        demo_section(counts, ["a"], black_box)
    # no tree to grow: a named error (not min()'s "arg is an empty sequence"), and wrong
    # feature_names are named before any tree is grown
    for leaves in ((), [], np.array([], dtype=int)):
        with pytest.raises(ValueError, match="`leaves` must hold at least one"):
            demo_section(counts, ["a"], black_box, leaves=leaves)
    assert demo_section(counts, ["circles", "squares", "stars"], black_box, leaves=np.array([2]))
