"""Agreement between frameworks (``xplique_ext/text/agreement.py``): Kendall tau and Pearson r
(Eq. 11) against scipy.stats pair by pair, undefined pairs, and the inputs they refuse."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from scipy import stats

from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.text import (
    percy_pearson_agreement,
    percy_rank_agreement,
)


def _pairwise(fn, columns, complete):
    names = list(columns)
    out = np.eye(len(names))
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            x = np.asarray(columns[names[i]], dtype=np.float64)
            y = np.asarray(columns[names[j]], dtype=np.float64)
            ok = complete & np.isfinite(x) & np.isfinite(y)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[i, j] = out[j, i] = fn(x[ok], y[ok]).statistic if ok.sum() >= 2 else np.nan
    return out


def test_rank_agreement_is_scipy_kendall_on_pairwise_complete_rows():
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.integers(0, 4, size=(12, 4)).astype(float), columns=list("abcd"))
    table.iloc[3, 1] = np.nan
    table.iloc[7, 2] = np.inf
    table["e"] = 1.0  # constant: undefined against every other column
    with pytest.warns(UndefinedScoreWarning, match="a/e, b/e, c/e, d/e; set to NaN"):
        tau = percy_rank_agreement(table)
    expected = _pairwise(stats.kendalltau, table, np.ones(len(table), bool))
    np.testing.assert_allclose(tau.to_numpy(), expected, rtol=0, atol=1e-14)
    assert list(tau.index) == list(tau.columns) == list("abcde")
    np.testing.assert_array_equal(np.diag(tau), 1.0)
    assert np.isinf(table.iloc[7, 2])  # the input is untouched


def test_rank_agreement_too_few_rows_per_pair_is_nan():
    with pytest.warns(UndefinedScoreWarning, match="a/b"):
        tau = percy_rank_agreement({"a": [1.0, np.nan, 3.0], "b": [np.nan, 2.0, 1.0]})
    assert np.isnan(tau.loc["a", "b"]) and tau.loc["a", "a"] == 1.0


def test_pearson_agreement_is_scipy_pearson_on_sentences_scored_by_all():
    rng = np.random.default_rng(1)
    vectors = {k: rng.integers(0, 2, size=40).astype(float) for k in ("L", "S", "I")}
    vectors["S"][[2, 9]] = np.nan
    vectors["I"][30] = np.nan
    complete = np.all([np.isfinite(v) for v in vectors.values()], axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning when every pair is defined
        r = percy_pearson_agreement(vectors)
    np.testing.assert_allclose(
        r.to_numpy(), _pairwise(stats.pearsonr, vectors, complete), rtol=0, atol=1e-14
    )
    # per-model lists are concatenated (Eq. 11)
    split = {k: [v[:25], v[25:]] for k, v in vectors.items()}
    pd.testing.assert_frame_equal(percy_pearson_agreement(split), r)


def test_pearson_agreement_undefined_pairs_warn_once():
    with pytest.warns(UndefinedScoreWarning, match=r"constant PERCY vector\) for L/S, S/I;") as rec:
        r = percy_pearson_agreement({"L": [1, 0, 1, 0], "S": [1, 1, 1, 1], "I": [0, 0, 1, 1]})
    assert len([w for w in rec if w.category is UndefinedScoreWarning]) == 1
    assert np.isnan(r.loc["L", "S"]) and r.loc["L", "I"] == pytest.approx(0.0)
    with pytest.warns(UndefinedScoreWarning, match="L/S"):  # fewer than two sentences left
        r = percy_pearson_agreement({"L": [1, np.nan], "S": [1, 0]})
    assert np.isnan(r.loc["L", "S"])


def test_pearson_agreement_reads_scalars_lists_and_refuses_matrices():
    import numpy as np
    import pytest

    from xplique_ext.text import percy_pearson_agreement

    one = percy_pearson_agreement({"a": np.float64(1), "b": np.float64(2)})  # one sentence each
    assert one.shape == (2, 2)
    split = percy_pearson_agreement(
        {"a": [np.array([1.0, 0.0]), np.array([1.0, 1.0])], "b": np.array([1.0, 0.0, 0.0, 1.0])}
    )
    whole = percy_pearson_agreement(
        {"a": np.array([1.0, 0.0, 1.0, 1.0]), "b": np.array([1.0, 0.0, 0.0, 1.0])}
    )
    assert split.equals(whole)
    with pytest.raises(ValueError, match=r"`per_sentence\['a'\]` must be an array of shape \(N,\)"):
        percy_pearson_agreement({"a": [np.ones((3, 1)), np.zeros((2, 1))], "b": np.ones(5)})
    # strings and booleans are refused with the framework's name (strings were a raw
    # "could not convert string to float", booleans read as 0/1)
    with pytest.raises(TypeError, match=r"`per_sentence\['a'\]` must be .*real numbers"):
        percy_pearson_agreement({"a": ["1", "0"], "b": [1.0, 0.0]})
    with pytest.raises(TypeError, match=r"`per_sentence\['b'\]` must be .*got dtype bool"):
        percy_pearson_agreement({"a": [1.0, 0.0, 1.0], "b": np.array([True, False, False])})


# ----------------------------------------------------------------------------- agreement
def test_rank_agreement_matches_scipy_kendall():
    table = pd.DataFrame(
        {
            "L-PERCY": [0.13, 0.22, 0.09, 0.25, 0.15],
            "S-PERCY": [0.08, 0.20, 0.07, 0.23, 0.06],
            "accuracy": [0.75, 0.82, 0.88, 0.82, 0.74],
        },
        index=["CW", "CE", "CsB", "CDE", "CDG"],
    )
    tau = percy_rank_agreement(table)
    assert tau.loc["L-PERCY", "S-PERCY"] == pytest.approx(
        scipy.stats.kendalltau(table["L-PERCY"], table["S-PERCY"]).statistic
    )
    assert tau.loc["accuracy", "L-PERCY"] == pytest.approx(
        scipy.stats.kendalltau(table["accuracy"], table["L-PERCY"]).statistic
    )
    np.testing.assert_allclose(np.diag(tau), 1.0)
    assert (tau.to_numpy() == tau.to_numpy().T).all()
    with pytest.warns(UndefinedScoreWarning, match="constant"):
        t = percy_rank_agreement({"a": [1, 2, 3], "b": [1, 1, 1]})
    assert np.isnan(t.loc["a", "b"])
    with pytest.raises(ValueError, match="at least two frameworks"):
        percy_rank_agreement({"a": [1, 2]})
    with pytest.raises(TypeError, match="DataFrame or a mapping"):
        percy_rank_agreement([[1, 2], [3, 4]])


def test_pearson_agreement_eq11_concatenates_models_and_drops_nan():
    lime = [np.array([1, 0, np.nan, 1]), np.array([0, 0, 1])]
    shap = [np.array([1, 0, np.nan, 0]), np.array([0, 1, 1])]
    r = percy_pearson_agreement({"L": lime, "S": shap})
    x = np.array([1, 0, 1, 0, 0, 1])
    y = np.array([1, 0, 0, 0, 1, 1])
    assert r.loc["L", "S"] == pytest.approx(scipy.stats.pearsonr(x, y).statistic)
    with pytest.raises(ValueError, match="same sentences"):
        percy_pearson_agreement({"L": [1, 0, 1], "S": [1, 0]})
    with pytest.warns(UndefinedScoreWarning, match="constant"):
        percy_pearson_agreement({"L": [1, 1, 1], "S": [1, 0, 1]})


def test_pearson_agreement_refuses_strings_and_keeps_distinct_keys():
    with pytest.raises(TypeError, match=r"`per_sentence\['L'\]` must be .*real numbers"):
        percy_pearson_agreement({"L": ["1", "0"], "S": [1.0, 0.0]})
    # the keys 1 and '1' were merged into one column: a framework was dropped silently
    r = percy_pearson_agreement({1: [1.0, 0.0, 1.0], "1": [0.0, 1.0, 1.0], "x": [1, 1, 0]})
    assert list(r.columns) == [1, "1", "x"]


def test_rank_agreement_names_the_column_it_cannot_read():
    table = pd.DataFrame({"model": ["cnn", "lstm", "bert"], "L": [1.0, 2, 3], "S": [1.0, 3, 2]})
    # was "could not convert string to float: 'cnn'"
    with pytest.raises(TypeError, match=r"`scores\['model'\]` must be .*got dtype object"):
        percy_rank_agreement(table)
    t = percy_rank_agreement(table.set_index("model"))
    assert t.loc["L", "S"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="on the same models .* got lengths"):
        percy_rank_agreement({"L": [1, 2, 3], "S": [1, 2]})  # was pandas' own message
    with pytest.raises(ValueError, match=r"same models \(at least 2\), got lengths"):
        percy_rank_agreement({"L": 1, "S": 2})  # was "'int' object is not iterable"
    with pytest.raises(TypeError, match=r"`scores\['L'\]` must be .*got dtype bool"):
        percy_rank_agreement({"L": [True, False, True], "S": [1, 2, 3]})


def test_agreements_pair_pandas_series_by_index():
    models = pd.Series([0.1, 0.2, 0.3, 0.4], index=["m1", "m2", "m3", "m4"])
    same_ranking = models[::-1] * 2  # the same ranking of the models, listed backwards
    # a DataFrame aligns its columns by index: the same ranking, tau = 1
    frame = pd.DataFrame({"L": models, "S": same_ranking})
    assert percy_rank_agreement(frame).loc["L", "S"] == pytest.approx(1.0)
    # a mapping of Series paired by position would give tau = -1: it is refused
    with pytest.raises(ValueError, match="pandas inputs pair by their index"):
        percy_rank_agreement({"L": models, "S": same_ranking})
    assert percy_rank_agreement({"L": models, "S": same_ranking.reindex(models.index)}).loc[
        "L", "S"
    ] == pytest.approx(1.0)
    sentences = pd.Series([1.0, 0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="pandas inputs pair by their index"):
        percy_pearson_agreement({"L": sentences, "I": sentences[::-1]})
    with pytest.raises(
        ValueError, match="pandas inputs pair by their index"
    ):  # the k-th test sets of each framework
        percy_pearson_agreement({"L": [sentences, sentences], "I": [sentences, sentences[::-1]]})
    r = percy_pearson_agreement({"L": [sentences, sentences], "I": [sentences, sentences]})
    assert r.loc["L", "I"] == pytest.approx(1.0)
