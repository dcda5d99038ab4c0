"""Warnings point at the user's line, not at xplique_ext's internals.

``validate_params`` adds a wrapper frame, so a fixed ``stacklevel`` located a warning
raised in a declared ``__init__`` at ``params.py``; ``xplique_ext.commons.warnings.warn``
locates every warning at the first frame outside the package, whatever the call depth.
Each test checks the recorded ``filename`` (and line) is this file's, and that the
location-keyed filters (``"error"``, ``"once"``, ``"default"``) keep working.
"""

import inspect
import warnings

import numpy as np
import pytest

from tests.conftest import linear_model
from xplique_ext.commons.warnings import (
    DegenerateSettingWarning,
    UndefinedScoreWarning,
    XpliqueExtWarning,
)
from xplique_ext.metrics import MuFidelity
from xplique_ext.rules import Dataset, evaluate_rules, load_voyage, rule_measures

FAST = dict(nb_samples=8, seed=0, progress=False)


def _line() -> int:
    """The line number of the caller's current line."""
    return inspect.currentframe().f_back.f_lineno


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(0)
    x = rng.random((3, 9, 9, 1), dtype=np.float32)
    return linear_model((9, 9, 1)), x, np.ones((3, 1), np.float32)


def _only(record, category):
    hits = [w for w in record if issubclass(w.category, category)]
    assert hits, f"no {category.__name__} recorded"
    return hits


def test_mufidelity_degenerate_setting_points_at_the_user(case):
    model, x, y = case
    with pytest.warns(DegenerateSettingWarning, match="`nb_samples`=2") as record:
        line = _line() + 1
        MuFidelity(model, x, y, nb_samples=2, progress=False)
    for w in _only(record, DegenerateSettingWarning):
        assert (w.filename, w.lineno) == (__file__, line)


def test_undefined_score_from_evaluate_points_at_the_user(case):
    model, x, y = case
    with pytest.warns(DegenerateSettingWarning):
        metric = MuFidelity(model, x, y, grid_size=1, **FAST)  # every score NaN
    with pytest.warns(UndefinedScoreWarning, match="no valid subset") as record:
        line = _line() + 1
        assert np.isnan(metric.evaluate(np.ones_like(x)))
    for w in _only(record, UndefinedScoreWarning):
        assert (w.filename, w.lineno) == (__file__, line)
    # the per-sample path, one level less deep
    with pytest.warns(UndefinedScoreWarning) as record:
        line = _line() + 1
        metric.detailed_evaluate(np.ones_like(x))
    for w in _only(record, UndefinedScoreWarning):
        assert (w.filename, w.lineno) == (__file__, line)


def test_rules_warnings_point_at_the_user():
    with pytest.warns(UndefinedScoreWarning, match=r"Acc \(1\)") as record:
        line = _line() + 1
        rule_measures([0, 2], [0, 1], [3, 1], [2, 1])  # a declared function
    assert {(w.filename, w.lineno) for w in record} == {(__file__, line)}
    rules, data = load_voyage("unordered")
    frame = data.to_frame()
    frame.loc[0, "voyage"] = "?"
    partial = Dataset.from_frame(frame, data.names)
    with pytest.warns(XpliqueExtWarning, match="1 example") as record:
        line = _line() + 1
        evaluate_rules(rules, partial)  # deeper: the warning is in a helper of a helper
    for w in _only(record, XpliqueExtWarning):
        assert (w.filename, w.lineno) == (__file__, line)


def test_percy_no_rule_keyword_points_at_the_user():
    from xplique_ext.metrics import PERCY, NoRuleKeywordWarning
    from xplique_ext.text import BagOfWordsModel, load_lexicon

    model = BagOfWordsModel(load_lexicon().weights(), bias=0.3)
    percy = PERCY(model, [], np.zeros(0, int), tokenizer=model.tokenizer)
    with pytest.warns(NoRuleKeywordWarning, match="no sample to score") as record:
        line = _line() + 1
        percy.evaluate([])
    for w in _only(record, NoRuleKeywordWarning):
        assert (w.filename, w.lineno) == (__file__, line)


def test_error_filter_still_raises(case):
    model, x, y = case
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateSettingWarning)
        with pytest.raises(DegenerateSettingWarning, match="`nb_samples`=2"):
            MuFidelity(model, x, y, nb_samples=2, progress=False)


def test_once_and_default_filters_keep_working(case):
    model, x, y = case
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("once", DegenerateSettingWarning)
        for _ in range(3):
            MuFidelity(model, x, y, nb_samples=2, progress=False)
    assert len(record) == 1 and record[0].filename == __file__
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default", DegenerateSettingWarning)
        first = _line() + 2
        for _ in range(3):  # one location: shown once
            MuFidelity(model, x, y, nb_samples=2, progress=False)
        MuFidelity(model, x, y, nb_samples=2, progress=False)  # another line: shown again
        second = _line() - 1
    assert [(w.filename, w.lineno) for w in record] == [(__file__, first), (__file__, second)]


def test_warn_outside_the_package_is_located_at_its_caller():
    from xplique_ext.commons.warnings import warn

    with pytest.warns(XpliqueExtWarning, match="direct") as record:
        line = _line() + 1
        warn("direct", XpliqueExtWarning)
    assert (record[0].filename, record[0].lineno) == (__file__, line)


def test_callback_warning_points_at_the_users_fit_call():
    # raised inside a Keras callback: the Keras frames are skipped too
    from tests.test_callbacks import MU, ExplanationMetrics, GradientInput, _data, _model

    x, y = _data(16)
    callback = ExplanationMetrics(GradientInput, {"mu": MU(_model(), x[:8], y[:8])}, x[:8], y[:8])
    model = _model(seed=1)
    with pytest.warns(UserWarning, match="another model") as record:
        line = _line() + 1
        model.fit(x, y, epochs=1, verbose=0, callbacks=[callback])
    hits = [w for w in record if "another model" in str(w.message)]
    assert [(w.filename, w.lineno) for w in hits] == [(__file__, line)]
