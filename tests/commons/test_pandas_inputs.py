"""pandas inputs pair by their index, one way everywhere
(:mod:`xplique_ext.commons.pandas_inputs`), and every function that pairs them goes
through it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xplique_ext.commons.pandas_inputs import align_by_index, paired_by_index, pandas_index
from xplique_ext.compare import compare_scores
from xplique_ext.metrics import (
    FiRe,
    QsScore,
    fire_compensation_alpha,
    fire_equilibrium_alpha,
    fire_score,
    qs_score,
)
from xplique_ext.rules import load_voyage, score_rules
from xplique_ext.text.agreement import percy_pearson_agreement, percy_rank_agreement

MISALIGNED = "pandas inputs pair by their index"


def test_align_by_index_keeps_alike_indexes_and_arrays_and_refuses_others():
    a = pd.Series([1.0, 2.0], index=["x", "y"])
    same = pd.Series([3.0, 4.0], index=["x", "y"])
    values = {"a": a, "b": same, "c": np.array([5.0, 6.0])}
    aligned = align_by_index(values, "scores")
    assert list(aligned) == ["a", "b", "c"] and all(aligned[k] is values[k] for k in values)
    reordered = pd.Series([4.0, 3.0], index=["y", "x"])
    with pytest.raises(ValueError, match="`scores` must score every item in the same order"):
        align_by_index({"a": a, "b": reordered}, "scores")
    other = pd.Series([3.0, 4.0], index=["x", "z"])
    with pytest.raises(ValueError, match="the pandas index of 'b' differs from that of 'a'"):
        align_by_index({"a": a, "b": other}, "scores")
    assert align_by_index({}, "scores") == {}
    assert pandas_index(np.zeros(2)) is None and pandas_index(a) is a.index


def test_paired_by_index_checks_the_named_arguments_only():
    @paired_by_index("a", "b")
    def add(a, b, c=None):
        return np.asarray(a) + np.asarray(b)

    x = pd.Series([1.0, 2.0], index=["x", "y"])
    y = pd.Series([10.0, 20.0], index=["y", "x"])
    with pytest.raises(ValueError, match="`b` must be indexed as `a`"):
        add(x, y)
    with pytest.raises(ValueError, match="`b` must be indexed as `a`"):
        add(b=y, a=x)
    np.testing.assert_array_equal(add(x, y.reindex(x.index), c=y), [21.0, 12.0])
    np.testing.assert_array_equal(add(x, np.array([1.0, 1.0])), [2.0, 3.0])
    with pytest.raises(TypeError):  # the function's own error for a bad call
        add(x)


# Each pair of Series scores the items x, y in another order: paired by position, each
# function would pair x with y.
P = pd.Series([0.1, 0.5], index=["x", "y"])
R = pd.Series([8.0, 1.0], index=["y", "x"])


@pytest.mark.parametrize(
    "call",
    [
        lambda: fire_score(1.0, P, R),
        lambda: qs_score(P, R, 1.0),
        lambda: qs_score(P, R.reindex(P.index), pd.Series([1.0, 0.5], index=["y", "x"])),
        lambda: FiRe(1.0).detailed_evaluate(P, R),
        lambda: FiRe(1.0).evaluate(P, R),
        lambda: QsScore().detailed_evaluate(P, R),
        lambda: fire_equilibrium_alpha(pd.Series([2.0, 3.0], index=["y", "x"]), R.sort_index()),
        lambda: fire_compensation_alpha(pd.Series([2.0, 3.0], index=["y", "x"]), R.sort_index()),
    ],
    ids=[
        "fire_score",
        "qs_score",
        "qs_score coverage",
        "FiRe.detailed_evaluate",
        "FiRe.evaluate",
        "QsScore",
        "fire_equilibrium_alpha",
        "fire_compensation_alpha",
    ],
)
def test_fire_functions_refuse_series_indexed_differently(call):
    with pytest.raises(ValueError, match=MISALIGNED):
        call()


def test_fire_scores_series_indexed_alike_as_arrays():
    aligned = R.reindex(P.index)
    np.testing.assert_array_equal(
        FiRe(1.0).detailed_evaluate(P, aligned),
        FiRe(1.0).detailed_evaluate(P.to_numpy(), aligned.to_numpy()),
    )
    assert fire_score(1.0, P, aligned).tolist() == fire_score(1.0, [0.1, 0.5], [1.0, 8.0]).tolist()


def test_compare_scores_and_the_agreements_refuse_reordered_series():
    a = pd.Series(np.arange(12.0), index=[f"i{k}" for k in range(12)])
    b = a[::-1] + 1.0
    with pytest.raises(ValueError, match=MISALIGNED):
        compare_scores({"A": a, "B": b}, higher_is_better=True, n_resamples=100)
    models = pd.Series([0.1, 0.2, 0.3, 0.4], index=["m1", "m2", "m3", "m4"])
    same_ranking = models[::-1] * 2  # the same ranking of the models, listed backwards
    # a DataFrame aligns its columns by index: the same ranking, tau = 1
    frame = pd.DataFrame({"L": models, "S": same_ranking})
    assert percy_rank_agreement(frame).loc["L", "S"] == pytest.approx(1.0)
    # a mapping of Series paired by position would give tau = -1: it is refused
    with pytest.raises(ValueError, match=MISALIGNED):
        percy_rank_agreement({"L": models, "S": same_ranking})
    assert percy_rank_agreement({"L": models, "S": same_ranking.reindex(models.index)}).loc[
        "L", "S"
    ] == pytest.approx(1.0)
    sentences = pd.Series([1.0, 0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match=MISALIGNED):
        percy_pearson_agreement({"L": sentences, "I": sentences[::-1]})
    with pytest.raises(ValueError, match=MISALIGNED):  # the k-th test sets of each framework
        percy_pearson_agreement({"L": [sentences, sentences], "I": [sentences, sentences[::-1]]})
    r = percy_pearson_agreement({"L": [sentences, sentences], "I": [sentences, sentences]})
    assert r.loc["L", "I"] == pytest.approx(1.0)


def test_score_rules_pairs_a_data_frame_and_a_series_reference_by_index():
    rules, data = load_voyage("ordered")
    frame = data.to_frame()
    labels = frame.pop("voyage")
    expected = score_rules(rules, data)
    assert score_rules(rules, frame, labels) == expected
    with pytest.raises(ValueError, match="`reference` must be indexed as `data`"):
        score_rules(rules, frame, labels[::-1])
    shuffled = frame.sample(frac=1.0, random_state=0)
    assert score_rules(rules, shuffled, labels.reindex(shuffled.index)) == expected
