"""The text classifier wrapper (``xplique_ext/text/classifier.py``) that PERCY and the token
explainers share: the sentences it reads, the settings it keeps, and the model's outputs,
checked on every batch and every row (one output, shape (N, 1) or (N, 2) on every batch,
finite probabilities in [0, 1])."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xplique_ext.metrics import PERCY
from xplique_ext.text import (
    BagOfWordsModel,
    LimeTokenExplainer,
    ShapTokenExplainer,
    TextClassifier,
)

# ---------------------------------------------------------------------------
# the model's outputs, checked on every batch and every row
SENTS = [
    "the plot was dull but the cast was superb",
    "a good film though slow",
    "awful yet fine",
    "superb but dull",
]


def table_model(p, dtype=np.float64):
    """A model on raw strings returning p[i] for the i-th sentence of SENTS."""
    index = {s: i for i, s in enumerate(SENTS)}

    def model(batch):
        return np.array([[p[index.get(s, 0)]] for s in batch], dtype=dtype)

    return model


# ----------------------------------------------------------------- out-of-range rows
@pytest.mark.parametrize("batch_size", [None, 1, 2])
def test_outputs_leaving_0_1_after_the_first_row_are_refused(batch_size):
    # p = 12.5 and -2.5 on rows 1 and 2: accepted before (only the first row was checked)
    model = table_model([0.7, 12.5, -2.5, 0.2])
    with pytest.raises(
        ValueError,
        match=r"`model` must return probabilities in \[0, 1\]"
        r".*\(inputs 1",
    ) as info:
        PERCY(model, SENTS, [1, 1, 0, 0], batch_size)
    if batch_size is None:
        assert "got values in [-2.5, 12.5] (inputs 1, 2 out of range)" in str(info.value)


def test_keras_model_leaving_0_1_is_refused(bow_all):
    import keras

    inner = bow_all.to_keras()
    inp = keras.Input(inner.inputs[0].shape[1:], dtype="int32")
    model = keras.Model(inp, keras.layers.Rescaling(25.0, offset=-12.0)(inner(inp)))
    with pytest.raises(ValueError, match=r"`model` must return probabilities in \[0, 1\]"):
        PERCY(model, SENTS, [1, 1, 0, 0], 2, tokenizer=bow_all.tokenizer)


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        (np.nan, ValueError, "finite outputs"),
        (np.inf, ValueError, "finite outputs"),
    ],
)
def test_non_finite_probabilities_are_refused(bad, exc, match):
    with pytest.raises(exc, match=match):
        PERCY(table_model([0.7, 0.2, bad, 0.2]), SENTS, [1, 1, 0, 0], 2)


def test_output_shape_changing_after_the_first_batch_is_refused():
    def model(batch):
        k = 1 if len(batch) == 1 else 2
        return np.full((len(batch), k), 0.5)

    with pytest.raises(ValueError, match=r"shape \(N, 1\) on every batch, got shape \(3, 2\)"):
        PERCY(model, SENTS[:3], [1, 1, 0], 3)


@pytest.mark.parametrize(
    "returned, match",
    [
        (lambda p: {"proba": p}, "dict with keys"),
        (lambda p: (p, p), "tuple of 2 outputs"),
        (lambda p: p.astype(str), "real numbers"),
    ],
)
def test_several_or_non_numeric_outputs_are_a_type_error(returned, match):
    base = table_model([0.7, 0.2, 0.3, 0.2])
    with pytest.raises(TypeError, match=match):
        PERCY(lambda b: returned(base(b)), SENTS, [1, 1, 0, 0])


def test_token_explainers_share_the_check():
    # LIME calls the model on masked sentences: the out-of-range rows are caught there too
    def model(batch):
        return np.array([[0.5 if i == 0 else 3.0] for i, _ in enumerate(batch)])

    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        LimeTokenExplainer(model, None, nb_samples=10, batch_size=4, progress=False)(SENTS[:1])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_probabilities_are_float64_and_not_rounded_through_float32(dtype):
    p = np.array([0.7, 0.2, 0.3, 1e-12], dtype=np.float64)
    got = TextClassifier(table_model(p, dtype)).predict_proba(SENTS)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, p.astype(dtype).astype(np.float64))


# ---------------------------------------------------------------------------
# the sentences, and a classifier given with settings
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


def test_a_text_classifier_as_model_is_refused_by_the_declared_constraint():
    bow = BagOfWordsModel({"good": 1.0})
    clf = TextClassifier(bow, bow.tokenizer)
    with pytest.raises(TypeError, match=r"`model` must be callable, got .*TextClassifier"):
        TextClassifier(clf)
