"""PERCY under bad input and at the edges (issue 9): which input the model expects,
infinite and unknown-size datasets, and a property test on random valid inputs."""

import warnings

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from xplique_ext.metrics import PERCY, NoRuleKeywordWarning

SENTS = ["the plot was dull but the cast was superb", "a good film", "awful yet fine"]


# ----------------------------------------------------------------------------- model inputs
def test_raw_string_keras_model_given_a_tokenizer(bow_all):
    import keras

    inp = keras.Input(shape=(1,), dtype="string")
    model = keras.Model(inp, bow_all.to_keras()(bow_all.tokenizer(inp)))
    with pytest.raises(
        ValueError, match="`tokenizer` must be None for this model: it takes raw strings"
    ):
        PERCY(model, SENTS, [1, 1, 1], tokenizer=bow_all.tokenizer)


def test_token_id_keras_model_without_tokenizer(bow_all):
    with pytest.raises(
        ValueError, match="`tokenizer` is required for this model: it takes token ids"
    ):
        PERCY(bow_all.to_keras(), SENTS, [1, 1, 1])


def test_token_id_callable_without_tokenizer(bow_all):
    with pytest.raises(TypeError, match="a model on token ids needs `tokenizer=`"):
        PERCY(bow_all, SENTS, [1, 1, 1])


def test_raw_string_callable_given_a_tokenizer(bow_all):
    def on_strings(batch):
        return np.array([[0.9 if "superb" in s.lower() else 0.1] for s in batch])

    with pytest.raises(TypeError, match="a model on raw strings needs `tokenizer=None`"):
        PERCY(on_strings, SENTS, [1, 1, 1], tokenizer=bow_all.tokenizer)


# ----------------------------------------------------------------------------- datasets
@pytest.mark.parametrize("batched", [False, True])
def test_infinite_dataset_is_refused(bow_all, batched):
    ds = tf.data.Dataset.from_tensor_slices(SENTS)
    ds = (ds.batch(2) if batched else ds).repeat()
    with pytest.raises(
        ValueError, match="`inputs` must be a finite tf.data.Dataset, got an infinite one"
    ):
        PERCY(bow_all, ds, [1, 1, 1], tokenizer=bow_all.tokenizer)


def test_unknown_size_dataset_is_streamed(bow_all):
    ds = tf.data.Dataset.from_tensor_slices(SENTS).filter(lambda s: True).batch(2)
    assert int(ds.cardinality()) == int(tf.data.UNKNOWN_CARDINALITY)
    expl = [bow_all.logit_contributions(s) for s in SENTS]
    a = PERCY(bow_all, ds, [1, 0, 1], tokenizer=bow_all.tokenizer).details(expl)
    b = PERCY(bow_all, SENTS, [1, 0, 1], tokenizer=bow_all.tokenizer).details(expl)
    assert a.equals(b)


@pytest.mark.parametrize("labels", [[1, 0, 1], [[0, 1], [1, 0], [0, 1]]])
@pytest.mark.parametrize("batch", [None, 2])
def test_dataset_of_sentence_label_pairs(bow_all, labels, batch):
    ds = tf.data.Dataset.from_tensor_slices((SENTS, labels))
    ds = ds if batch is None else ds.batch(batch)
    percy = PERCY(bow_all, ds, tokenizer=bow_all.tokenizer)
    assert percy.sentences == SENTS
    np.testing.assert_array_equal(percy.targets, [1, 0, 1])
    with pytest.raises(ValueError, match="`targets` must be None when the `inputs` dataset"):
        PERCY(bow_all, ds, [1, 0, 1], tokenizer=bow_all.tokenizer)
    with pytest.raises(TypeError, match="`targets` must be a NumPy array.*got None"):
        PERCY(bow_all, SENTS, tokenizer=bow_all.tokenizer)


# ----------------------------------------------------------------------------- options
@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(contributions="sum"), "`contributions` must be one of"),
        (dict(alternative="less"), "`alternative` must be one of"),
        (dict(structures="last"), "`structures` must be one of"),
        (dict(preset="authors", test="welch"), "`test`='welch' conflicts with preset"),
        (dict(preset="authors", alternative="one-sided"), None),  # the default: allowed
    ],
)
def test_bad_new_options(bow_all, kwargs, match):
    if match is None:
        assert (
            PERCY(bow_all, SENTS, [1, 1, 1], tokenizer=bow_all.tokenizer, **kwargs).alternative
            == "two-sided"
        )
        return
    with pytest.raises(ValueError, match=match):
        PERCY(bow_all, SENTS, [1, 1, 1], tokenizer=bow_all.tokenizer, **kwargs)


def test_empty_input_gives_nan_with_warning(bow_all):
    percy = PERCY(bow_all, [], np.zeros(0, int), tokenizer=bow_all.tokenizer)
    assert percy.detailed_evaluate([]).shape == (0,)
    with pytest.warns(NoRuleKeywordWarning, match="no sample to score"):
        assert np.isnan(percy.evaluate([]))


# ----------------------------------------------------------------------------- property test
WORDS = ["good", "bad", "the", "plot,", "but", "yet", "though", "while", "dull", "superb"]


@st.composite
def percy_inputs(draw):
    n = draw(st.integers(1, 8))
    sentences, p_of, expl = [], {}, []
    for i in range(n):
        toks = draw(st.lists(st.sampled_from(WORDS), min_size=0, max_size=9))
        s = " ".join(toks + [f"s{i}"])
        sentences.append(s)
        p_of[s] = draw(st.floats(0.0, 1.0))
        values = st.one_of(st.just(0.0), st.floats(-1e3, 1e3, allow_nan=False, width=64))
        expl.append(
            np.array(
                draw(st.lists(values, min_size=len(toks) + 1, max_size=len(toks) + 1)),
                dtype=np.float64,
            )
        )
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    options = draw(
        st.sampled_from(
            [
                {},
                dict(test="welch"),
                dict(test="mannwhitneyu"),
                dict(test=None),
                dict(preset="authors"),
                dict(top_k=2),
                dict(contributions="typeset"),
                dict(alternative="two-sided"),
                dict(structures="first"),
            ]
        )
    )
    return sentences, p_of, expl, labels, options


@settings(max_examples=40, deadline=None)
@given(percy_inputs(), st.integers(1, 4))
def test_property_in_range_or_nan_with_warning_and_batch_invariant(data, batch_size):
    sentences, p_of, expl, labels, options = data

    def model(batch):
        return np.array([[p_of[s]] for s in batch], dtype=np.float64)

    full = PERCY(model, sentences, labels, None, **options)
    small = PERCY(model, sentences, labels, batch_size, **options)
    scores = full.detailed_evaluate(expl)
    np.testing.assert_array_equal(scores, small.detailed_evaluate(expl))
    has_keyword = np.array([k is not None for k in full.keyword_indices])
    assert np.isnan(scores[~has_keyword]).all()
    defined = scores[has_keyword]
    assert np.isfinite(defined).all() and ((defined >= 0) & (defined <= 1)).all()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = full.evaluate(expl)
    keyword_warnings = [w for w in caught if issubclass(w.category, NoRuleKeywordWarning)]
    if has_keyword.all():
        assert not keyword_warnings and 0.0 <= value <= 1.0
    elif has_keyword.any():
        assert keyword_warnings and 0.0 <= value <= 1.0
    else:
        assert keyword_warnings and np.isnan(value)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


# ----------------------------------------------------------------------------- the classifier
def test_percy_holds_a_text_classifier(bow_all):
    from xplique_ext.commons.metric import BaseMetric
    from xplique_ext.text import TextClassifier

    expl = [bow_all.logit_contributions(s) for s in SENTS]
    clf = TextClassifier(bow_all, bow_all.tokenizer, batch_size=2)
    held = PERCY(clf, SENTS, [1, 0, 1])
    assert isinstance(held, BaseMetric) and held.classifier is clf and held.model is clf.model
    assert held.batch_size == 2 and held.get_config()["batch_size"] == 2
    built = PERCY(bow_all, SENTS, [1, 0, 1], tokenizer=bow_all.tokenizer)
    assert held.details(expl).equals(built.details(expl))
    assert not hasattr(held, "inputs") and not hasattr(held, "n_inputs")
