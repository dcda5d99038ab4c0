"""Hostile inputs of the text functions (issue 18, fourth pass): each case was a silent
wrong number, a raw crash or an unclear message; it is now refused (or read) with a
message that names the parameter."""

import numpy as np
import pandas as pd
import pytest

from xplique_ext.metrics import PERCY
from xplique_ext.text import (
    BagOfWordsModel,
    LimeTokenExplainer,
    LocalLipschitzEstimate,
    ShapTokenExplainer,
    TextClassifier,
    percy_pearson_agreement,
    percy_rank_agreement,
)


@pytest.fixture(scope="module")
def bow():
    return BagOfWordsModel({"good": 2.0, "bad": -2.0})


@pytest.fixture(scope="module")
def clf(bow):
    return TextClassifier(bow, bow.tokenizer)


def test_a_0d_array_is_one_sentence_not_its_characters(clf):
    # np.array("good film") was read as the 9 sentences 'g', 'o', 'o', ...
    with pytest.raises(
        TypeError,
        match="`sentences` must be a sequence of sentences, got a single str; wrap it in a list",
    ):
        clf.prepare(np.array("good film"))


def test_a_dataframe_is_read_by_rows_not_by_column_names(clf):
    one_column = pd.DataFrame({"s": ["good", "bad film"]})
    assert clf.prepare(one_column).sentences == ["good", "bad film"]
    # two columns were read as the two sentences 's' and 'y' (the column names)
    with pytest.raises(TypeError, match=r"`sentences\[0\]` must be a string, got \['good', 1\]"):
        clf.prepare(pd.DataFrame({"s": ["good"], "y": [1]}))


@pytest.mark.parametrize("unordered", [{"good", "bad film"}, {"good": 1, "bad film": 0}])
def test_unordered_sentences_are_refused(bow, unordered):
    # a set's order is arbitrary: PERCY paired its sentences with the labels silently
    with pytest.raises(TypeError, match="`inputs` must be an ordered sequence of sentences"):
        PERCY(bow, unordered, [1, 0], tokenizer=bow.tokenizer)


def test_bytes_that_are_not_utf8_name_the_sentence(clf):
    assert clf.prepare([b"good", "bad"]).sentences == ["good", "bad"]
    # was a bare UnicodeDecodeError
    with pytest.raises(ValueError, match=r"`sentences\[1\]` must be a str or UTF-8 bytes"):
        clf.prepare(["good", b"\xff film"])


def test_predict_proba_reads_tensors_and_arrays_like_prepare(clf):
    import tensorflow as tf

    want = clf.predict_proba(["good", "bad"])
    # a tf.Tensor of strings was a raw crash inside the model call
    np.testing.assert_array_equal(clf.predict_proba(tf.constant(["good", "bad"])), want)
    np.testing.assert_array_equal(clf.predict_proba(np.array([b"good", b"bad"])), want)
    with pytest.raises(TypeError, match="got a single bytes; wrap it in a list"):
        clf.predict_proba(tf.constant("good"))


@pytest.mark.parametrize(
    "cls, kw",
    [(LimeTokenExplainer, dict(nb_samples=20)), (ShapTokenExplainer, dict(n_permutations=2))],
)
def test_explainers_take_a_text_classifier(bow, clf, cls, kw):
    # documented, but refused: "`model` must be callable, got <...TextClassifier...>"
    np.testing.assert_allclose(
        cls(clf, **kw)(["a good film"])[0], cls(bow, bow.tokenizer, **kw)(["a good film"])[0]
    )


def test_settings_given_with_a_text_classifier_are_not_ignored(bow, clf):
    # they were ignored silently: the classifier's own mask string, tokenizer, batch size
    with pytest.raises(ValueError, match="`mask_string` must be 'UNKWORDZ' .* got 'ZZZ'"):
        LimeTokenExplainer(clf, mask_string="ZZZ")
    with pytest.raises(ValueError, match="`batch_size` must be 64 .* got 8"):
        PERCY(clf, ["good but bad"], [1], batch_size=8)
    with pytest.raises(ValueError, match="`tokenizer` must be None"):
        ShapTokenExplainer(clf, tokenizer=lambda s: np.ones((len(s), 1), int))
    same = TextClassifier(bow, bow.tokenizer, batch_size=8)
    assert (
        PERCY(same, ["good but bad"], [1], batch_size=8, tokenizer=bow.tokenizer).classifier is same
    )  # its own settings, repeated, are accepted


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


def test_lipschitz_refuses_non_finite_inputs_and_unsized_targets():
    # NaN inputs gave NaN scores blamed on "a zero norm"; a scalar target a bare len() error
    with pytest.raises(ValueError, match="`inputs` must be an array of finite values only"):
        LocalLipschitzEstimate(np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match=r"`targets` must be an array of shape \(N, ...\)"):
        LocalLipschitzEstimate(np.zeros((2, 3)), targets=5)


def test_lipschitz_checks_the_explainer_outputs():
    lle = LocalLipschitzEstimate(np.ones((4, 3)), nb_samples=2)
    # one row per batch instead of one per input: a bare reshape error (or, when the sizes
    # divided, explanations silently paired with the wrong inputs)
    with pytest.raises(ValueError, match="`explainer` must return one output per input"):
        lle.detailed_evaluate(lambda z: z.mean(axis=0))
    with pytest.raises(ValueError, match="`explainer` must return finite outputs"):
        lle.detailed_evaluate(lambda z: z * np.nan)


def test_lipschitz_skips_only_the_perturbations_of_zero_norm():
    # near 1e6, float32 rounds a perturbation below 0.03 to zero: with 10 perturbations some
    # vanish and others do not; one of them made L NaN (the documented NaN is for an input
    # whose perturbations ALL vanish)
    lle = LocalLipschitzEstimate(np.full((3, 1), 1e6), epsilon=0.1, nb_samples=10)
    np.testing.assert_allclose(lle.detailed_evaluate(lambda z: 2.0 * z), 2.0)


def test_a_tokenizer_returning_too_few_rows_is_refused(bow):
    # one row for every call: the pieces of all but the first word were dropped silently
    # (zip), and predict_proba failed in NumPy
    with pytest.raises(
        ValueError,
        match=r"`tokenizer` must return integer ids of shape \(N, L\)"
        r" for N strings, got .* shape \(1, 3\).* for 2 strings",
    ):
        TextClassifier(bow, lambda s: np.ones((1, 3), int)).predict_proba(["good", "bad"])


def test_conjunct_contributions_checks_the_probability_and_the_weights():
    from xplique_ext.metrics.percy import conjunct_contributions, conjunct_pvalues

    # p(y=1|s) = 1.5 gave a negative contribution, NaN weights NaN contributions, silently
    with pytest.raises(ValueError, match=r"`p_positive` must be in \[0, 1\], got 1.5"):
        conjunct_contributions([0.3, -0.3], 1.5)
    with pytest.raises(ValueError, match="`attributions` must be an array of finite values"):
        conjunct_contributions([0.3, np.nan], 0.5)
    with pytest.raises(TypeError, match="`alternative` must be one of"):  # was "unhashable"
        conjunct_pvalues([[0.1, 0.2]], [[0.3, 0.4]], alternative=[["less"]])


@pytest.mark.parametrize("alternative", [["bogus"], [3], ["less", "greater", "bogus"]])
def test_conjunct_pvalues_counts_the_alternatives_before_checking_each(alternative):
    from xplique_ext.metrics.percy import conjunct_pvalues

    # a wrong count is reported as such, whatever the values (it came second for a while)
    with pytest.raises(ValueError, match=r"^`alternative` must be one value or 2 values, got "):
        conjunct_pvalues(
            [[0.1, 0.2], [0.5, 0.4]], [[0.3, 0.4], [0.1, 0.2]], alternative=alternative
        )


@pytest.mark.parametrize("alternative", [None, 3, {"less"}])
def test_conjunct_pvalues_names_an_alternative_that_is_no_option(alternative):
    from xplique_ext.metrics.percy import conjunct_pvalues

    # None and 3 gave "'NoneType' object is not iterable" / "'int' object is not iterable"
    with pytest.raises(TypeError, match=r"^`alternative` must be one of \['two-sided', 'less'"):
        conjunct_pvalues(
            [[0.1, 0.2], [0.5, 0.4]], [[0.3, 0.4], [0.1, 0.2]], alternative=alternative
        )
