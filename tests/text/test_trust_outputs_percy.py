"""Issue 15, design point 2, for PERCY and the text classifier wrapper: every batch and
every row of the model's output is checked (a single output, shape (N, 1) or (N, 2) on
every batch, finite probabilities in [0, 1]), through ``TextClassifier`` which PERCY and
the token explainers share; copies; Hypothesis properties of PERCY (explanation scale,
batch size, input order, model output dtype, invalid inputs)."""

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xplique_ext.metrics import PERCY
from xplique_ext.text import LimeTokenExplainer, TextClassifier

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


# ----------------------------------------------------------------- the example
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


# ----------------------------------------------------------------- copies
def test_percy_deepcopy_gives_the_same_details_and_pickle_says_what_to_save(bow_all):
    expl = [bow_all.logit_contributions(s) for s in SENTS]
    percy = PERCY(bow_all, SENTS, [1, 0, 1, 0], tokenizer=bow_all.tokenizer)
    twin = copy.deepcopy(percy)
    assert twin.details(expl).equals(percy.details(expl))
    assert twin.model is percy.model and twin.classifier is not percy.classifier
    with pytest.raises(TypeError, match=r"PERCY cannot be pickled.*get_config\(\).*tokenizer="):
        pickle.dumps(percy)
    # what the message says rebuilds it: the settings, then the data and the tokenizer
    rebuilt = PERCY.from_config(
        percy.get_config(),
        model=bow_all,
        inputs=SENTS,
        targets=[1, 0, 1, 0],
        tokenizer=bow_all.tokenizer,
    )
    assert rebuilt.details(expl).equals(percy.details(expl))
    with pytest.raises(TypeError, match="TextClassifier cannot be pickled"):
        pickle.dumps(percy.classifier)


# ----------------------------------------------------------------- Hypothesis properties
WORDS = ["good", "bad", "the", "plot,", "but", "yet", "though", "dull", "superb"]


@st.composite
def percy_case(draw):
    n = draw(st.integers(2, 6))
    sentences = [
        " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=7)) + [f"s{i}"])
        for i in range(n)
    ]
    # probabilities away from 0.5 and exact in float16 (multiples of 1/64): the
    # predictions p > 0.5 do not depend on the output dtype
    p = draw(
        st.lists(
            st.sampled_from([k / 64 for k in range(65) if abs(k - 32) > 2]), min_size=n, max_size=n
        )
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    expl = [rng.normal(size=len(s.split())) for s in sentences]
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return sentences, p, expl, labels


def _model(sentences, p, dtype=np.float64):
    of = dict(zip(sentences, p))

    def model(batch):
        return np.array([[of[s]] for s in batch], dtype=dtype)

    return model


@settings(max_examples=10, deadline=None)
@given(
    percy_case(),
    st.integers(-150, 150),
    st.integers(1, 4),
    st.integers(0, 2**16),
    st.sampled_from([np.float16, np.float32]),
)
def test_property_scale_batch_order_and_dtype_invariance(
    case, exponent, batch_size, order_seed, dtype
):
    sentences, p, expl, labels = case
    ref = PERCY(_model(sentences, p), sentences, labels).detailed_evaluate(expl)
    # the explanation's scale (1e-150 .. 1e150): PERCY reads signs and ranks
    scaled = PERCY(_model(sentences, p), sentences, labels).detailed_evaluate(
        [e * 10.0**exponent for e in expl]
    )
    np.testing.assert_array_equal(scaled, ref)
    # batch size, input order and the model's output dtype
    order = np.random.default_rng(order_seed).permutation(len(sentences))
    other = PERCY(
        _model(sentences, p, dtype),
        [sentences[i] for i in order],
        [labels[i] for i in order],
        batch_size,
    )
    np.testing.assert_array_equal(other.detailed_evaluate([expl[i] for i in order]), ref[order])


@settings(max_examples=10, deadline=None)
@given(
    percy_case(),
    st.integers(0, 5),
    st.sampled_from(["above", "below", "nan", "dict", "labels", "expl_len"]),
)
def test_property_invalid_inputs_give_errors(case, row, kind):
    sentences, p, expl, labels = case
    row = row % len(sentences)
    p = list(p)
    if kind in ("above", "below", "nan"):
        p[row] = {"above": 1.5, "below": -0.25, "nan": np.nan}[kind]
    model = _model(sentences, p)
    if kind == "dict":
        inner = model

        def model(batch):
            return {"p": inner(batch)}

    if kind == "labels":
        labels = list(labels)
        labels[row] = 2
    with pytest.raises((TypeError, ValueError)) as info:
        percy = PERCY(model, sentences, labels, 2)
        if kind == "expl_len":
            expl = list(expl)
            expl[row] = np.zeros(len(expl[row]) + 1)
        percy.detailed_evaluate(expl)
    name = {"labels": "`targets`", "expl_len": "explanations"}.get(kind, "`model`")
    assert name in str(info.value)
