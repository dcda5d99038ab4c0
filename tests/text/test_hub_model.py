"""keras-hub transformers through PERCY and the token explainers, offline
(``xplique_ext/text/hub_model.py``, the adapter).

A tiny BERT (one layer, hidden size 16, a WordPiece vocabulary of 34 entries written
here, random weights) in a ``BertTextClassifier`` with its preprocessor, used as it comes:
word-aligned attributions, IG completeness, a known answer for the subword-to-word sum
(an independent IG written here on the backbone's token embeddings), SHAP's efficiency
against the model on hand-packed ids, and the errors."""

from __future__ import annotations

import keras  # noqa: E402
import numpy as np
import pytest
import tensorflow as tf  # noqa: E402

from xplique_ext.metrics import PERCY, NoRuleKeywordWarning  # noqa: E402
from xplique_ext.text import (  # noqa: E402
    IntegratedGradientsTokenExplainer,
    LimeTokenExplainer,
    ShapTokenExplainer,
)
from xplique_ext.text.classifier import TextClassifier  # noqa: E402
from xplique_ext.text.hub import adapt_text_model  # noqa: E402

keras_hub = pytest.importorskip("keras_hub")  # part of the dev extra: runs in CI


VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "movie",
    "was",
    "good",
    "great",
    "bad",
    "dull",
    "but",
    "yet",
    "fun",
    "not",
    "cast",
    "plot",
    "shine",
    "##s",
    "##ing",
    "un",
    "##fun",
    "##ny",
    ",",
    ".",
    "!",
    "a",
    "bor",
    "##ed",
    "i",
    "love",
    "it",
    "though",
]


ID = {w: i for i, w in enumerate(VOCAB)}


CLS, SEP, MASK = ID["[CLS]"], ID["[SEP]"], ID["[MASK]"]


SENTENCES = [
    "the plot was dull, but the cast shines",
    "unfunny movie",
    "i love it though the movie was bored",
    "great fun yet unfunny",
]


SEQ = 24


@pytest.fixture(scope="module")
def _randomize(tiny_bert):
    return tiny_bert.randomize


@pytest.fixture(scope="module")
def hub(tiny_bert, _randomize):
    tokenizer, pre, backbone = tiny_bert(VOCAB, SEQ)
    task = keras_hub.models.BertTextClassifier(
        backbone, num_classes=2, preprocessor=pre, dropout=0.0
    )
    _randomize(task, 0)
    return task, pre, tokenizer, backbone


def _softmax1(logits) -> np.ndarray:
    z = np.asarray(logits, np.float64)
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return (z / z.sum(axis=1, keepdims=True))[:, 1]


def _packed(piece_ids) -> dict:
    """The backbone's inputs for one sentence given its word-piece ids (by hand)."""
    ids = [CLS, *piece_ids, SEP]
    return {
        "token_ids": np.array([ids], np.int32),
        "padding_mask": np.ones((1, len(ids)), np.int32),
        "segment_ids": np.zeros((1, len(ids)), np.int32),
    }


def _task_p1(task, piece_ids) -> float:
    return float(_softmax1(task(_packed(piece_ids), training=False))[0])


# --------------------------------------------------------------------------- the adapter
def test_word_pieces_known_answer(hub):
    task, *_ = hub
    model, tok = adapt_text_model(task)
    # "unfunny" -> un ##fun ##ny; "shines" -> shine ##s; the glued comma is its own piece;
    # ids are shifted by one so that 0 pads; UNKWORDZ (LIME's mask word) -> [MASK]
    got = tok(["unfunny movie", "dull, UNKWORDZ shines", ""])
    expect = (
        np.array(
            [
                [ID["un"], ID["##fun"], ID["##ny"], ID["movie"], -1],
                [ID["dull"], ID[","], MASK, ID["shine"], ID["##s"]],
                [-1, -1, -1, -1, -1],
            ]
        )
        + 1
    )
    np.testing.assert_array_equal(got, expect)


def test_probabilities_match_the_task_on_raw_strings(hub):
    task, pre, *_ = hub
    clf = TextClassifier(task)
    p = clf.predict_proba(SENTENCES)
    ref = _softmax1(task(pre(SENTENCES), training=False))  # the preprocessor's packing
    np.testing.assert_allclose(p, ref, atol=1e-5)
    assert np.ptp(p) > 0.01  # the sentences are told apart (the test can fail)
    # the same adapter (and compiled functions) for every wrapper of the task
    assert TextClassifier(task).model is clf.model


def test_softmax_and_sigmoid_tasks_are_used_as_they_are(hub):
    _, pre, _, backbone = hub
    soft = keras_hub.models.BertTextClassifier(
        backbone, num_classes=2, preprocessor=pre, activation="softmax", dropout=0.0
    )
    x = pre(SENTENCES[:2])
    p = TextClassifier(soft).predict_proba(SENTENCES[:2])
    np.testing.assert_allclose(p, soft(x, training=False).numpy()[:, 1], atol=1e-5)
    logit1 = keras_hub.models.BertTextClassifier(
        backbone, num_classes=1, preprocessor=pre, dropout=0.0
    )
    p1 = TextClassifier(logit1).predict_proba(SENTENCES[:2])
    z = logit1(x, training=False).numpy()[:, 0]
    np.testing.assert_allclose(p1, 1 / (1 + np.exp(-z)), atol=1e-5)


def test_plain_model_over_a_backbone_with_its_preprocessor_or_tokenizer(hub):
    _, pre, tokenizer, backbone = hub
    inputs = backbone.input
    out = keras.layers.Dense(1, activation="sigmoid")(backbone(inputs)["pooled_output"])
    model = keras.Model(inputs, out)
    with pytest.raises(ValueError, match="`tokenizer` is required for this keras-hub model"):
        TextClassifier(model)
    ref = model(pre(SENTENCES), training=False).numpy()[:, 0]
    for tok in (pre, tokenizer):
        np.testing.assert_allclose(
            TextClassifier(model, tok).predict_proba(SENTENCES), ref, atol=1e-5
        )
    ig = IntegratedGradientsTokenExplainer(model, pre, steps=16)
    a = ig(SENTENCES[:2])
    assert [len(x) for x in a] == [len(s.split()) for s in SENTENCES[:2]]
    assert np.all(np.abs(ig.convergence_delta_) <= ig.tolerance)


# --------------------------------------------------------------------------- explainers
def test_word_aligned_attributions_from_the_three_explainers(hub):
    task, *_ = hub
    sentences = [*SENTENCES, ""]
    explainers = [
        LimeTokenExplainer(task, nb_samples=60),
        ShapTokenExplainer(task, n_permutations=2),
        IntegratedGradientsTokenExplainer(task, steps=16),
    ]
    for explainer in explainers:
        got = explainer(sentences)
        assert [a.shape for a in got] == [(len(s.split()),) for s in sentences]
        assert all(np.all(np.isfinite(a)) for a in got)
        assert np.abs(np.concatenate(got)).max() > 0


def test_lime_and_shap_mask_whole_words(hub):
    task, *_ = hub
    clf = TextClassifier(task)
    prep = clf.prepare(["unfunny movie"])
    ids, owner = clf.masked_inputs(prep, 0, np.array([[False, True], [True, False]]))
    # the three pieces of "unfunny" become one [MASK]; ids shifted by one, 0 pads
    np.testing.assert_array_equal(
        ids[:, :4],
        np.array([[MASK, ID["movie"], -1, -1], [ID["un"], ID["##fun"], ID["##ny"], MASK]]) + 1,
    )
    np.testing.assert_array_equal(owner[:, :4], [[0, 1, -1, -1], [0, 0, 0, 1]])


def test_shap_efficiency_against_hand_packed_ids(hub):
    """Permutation SHAP sums exactly to p(s) - p(every word masked): both ends computed
    here on ids packed by hand, every word replaced by one [MASK]."""
    task, *_ = hub
    sentence = "great fun yet unfunny"
    phi = ShapTokenExplainer(task, n_permutations=3)([sentence])[0]
    full = [ID["great"], ID["fun"], ID["yet"], ID["un"], ID["##fun"], ID["##ny"]]
    expect = _task_p1(task, full) - _task_p1(task, [MASK] * 4)
    assert phi.sum() == pytest.approx(expect, abs=1e-5)


def _independent_ig(task, backbone, piece_ids, steps=256) -> np.ndarray:
    """IG of p(y=1) along the token embeddings of the pieces, from [MASK]'s, written
    here without the package: one value per position of [CLS] pieces [SEP]."""
    inputs = _packed(piece_ids)
    layer = backbone.token_embedding
    e = layer(tf.constant(inputs["token_ids"])).numpy()[0]  # (L, D)
    b = e.copy()
    b[1:-1] = layer(tf.constant([[MASK]])).numpy()[0, 0]
    alphas = np.linspace(0.0, 1.0, steps + 1)
    path = tf.constant(b[None] + alphas[:, None, None] * (e - b)[None], tf.float32)
    tiled = {k: np.repeat(v, len(alphas), axis=0) for k, v in inputs.items()}
    layer.call = lambda x, *a, **k: path
    try:
        with tf.GradientTape() as tape:
            tape.watch(path)
            p1 = tf.nn.softmax(task(tiled, training=False), axis=-1)[:, 1]
        grad = tape.gradient(p1, path).numpy()  # (K, L, D)
    finally:
        del layer.call
    avg = np.trapezoid(grad, alphas, axis=0)
    return ((e - b) * avg).sum(axis=1)


def test_integrated_gradients_sum_subwords_per_word_known_answer(hub):
    task, _, _, backbone = hub
    sentence = "unfunny movie shines"
    pieces = [ID["un"], ID["##fun"], ID["##ny"], ID["movie"], ID["shine"], ID["##s"]]
    per_piece = _independent_ig(task, backbone, pieces)[1:-1]
    ig = IntegratedGradientsTokenExplainer(task, steps=64, tolerance=1e-5, max_steps=4096)
    got = ig([sentence])[0]
    expect = np.array([per_piece[:3].sum(), per_piece[3], per_piece[4:].sum()])
    np.testing.assert_allclose(got, expect, atol=2e-4)
    assert np.abs(per_piece[:3] - got[0]).min() > 1e-4  # the sum, not one piece
    # completeness, with both ends computed on hand-packed ids
    p, p_base = _task_p1(task, pieces), _task_p1(task, [MASK] * len(pieces))
    assert ig.proba_[0] == pytest.approx(p, abs=1e-5)
    assert ig.baseline_proba_[0] == pytest.approx(p_base, abs=1e-5)
    assert got.sum() == pytest.approx(p - p_base, abs=1e-5)


def test_integrated_gradients_completeness_and_batch_size(hub):
    task, *_ = hub
    ig = IntegratedGradientsTokenExplainer(task, steps=16, tolerance=1e-4)
    a = ig(SENTENCES)
    for x, p, b in zip(a, ig.proba_, ig.baseline_proba_):
        assert abs(x.sum() - (p - b)) <= 1e-4
    a1 = IntegratedGradientsTokenExplainer(task, batch_size=3, steps=16, tolerance=1e-4)(
        SENTENCES[::-1]
    )[::-1]
    for x, y in zip(a, a1):
        np.testing.assert_allclose(x, y, atol=1e-5)


def test_integrated_gradients_beyond_the_sequence_length(hub):
    """A sentence with more word pieces than the preprocessor's sequence length (24: 22
    pieces between [CLS] and [SEP]) raised a raw InvalidArgumentError in IG, while LIME,
    SHAP and PERCY took it: the words beyond the length get 0 (as documented), the others
    the attributions of the sentence cut at the length, completeness holds, and the
    Lipschitz estimate's embedding shifts take it too."""
    from xplique_ext.text import TextLocalLipschitzEstimate

    task, *_ = hub
    words = ("the movie was good but the cast was dull yet fun " * 3).split()  # 33 pieces
    long = " ".join(words)
    cut = " ".join(words[:22])
    ig = IntegratedGradientsTokenExplainer(task, steps=16, tolerance=1e-4)
    got = ig([long, "good movie"])[0]
    assert got.shape == (33,) and not got[22:].any()
    assert abs(got.sum() - (ig.proba_[0] - ig.baseline_proba_[0])) <= 1e-4
    np.testing.assert_allclose(got[:22], ig([cut])[0], atol=1e-5)
    lle = TextLocalLipschitzEstimate([long], nb_samples=2)
    assert np.isfinite(lle.detailed_evaluate(ig)).all()
    for explainer in (LimeTokenExplainer(task, nb_samples=30), ShapTokenExplainer(task)):
        assert explainer([long])[0].shape == (33,)


# --------------------------------------------------------------------------- PERCY
def test_percy_on_the_task_as_it_comes(hub):
    task, pre, *_ = hub
    labels = [1, 0, 1, 1]
    percy = PERCY(task, SENTENCES, labels)
    np.testing.assert_allclose(
        percy.p_positive, _softmax1(task(pre(SENTENCES), training=False)), atol=1e-5
    )
    assert [(i, kw) for i, _, kw in percy.structures] == [(0, "but"), (2, "though"), (3, "yet")]
    for explainer in (
        LimeTokenExplainer(task, nb_samples=60),
        IntegratedGradientsTokenExplainer(task, steps=16),
    ):
        explanations = percy.explain(explainer)
        assert [None if e is None else len(e) for e in explanations] == [8, None, 8, 4]
        with pytest.warns(NoRuleKeywordWarning, match="1 of 4 per-sample scores"):
            score = percy.evaluate(explanations)
        assert 0.0 <= score <= 1.0


# --------------------------------------------------------------------------- errors
def test_errors_name_the_parameter(hub):
    task, pre, tokenizer, backbone = hub
    bare = keras_hub.models.BertTextClassifier(backbone, num_classes=2, preprocessor=None)
    with pytest.raises(ValueError, match="`tokenizer` is required"):
        LimeTokenExplainer(bare)
    with pytest.raises(TypeError, match="`tokenizer` must be a keras-hub preprocessor"):
        TextClassifier(task, tokenizer=lambda texts: [[1]] * len(texts))
    relu = keras_hub.models.BertTextClassifier(
        backbone, num_classes=2, preprocessor=pre, activation="relu"
    )
    with pytest.raises(ValueError, match="output activation must be linear"):
        TextClassifier(relu)
    with pytest.raises(ValueError, match="`activation` must be one of"):
        adapt_text_model(task, activation="tanh")
    three = keras_hub.models.BertTextClassifier(backbone, num_classes=3, preprocessor=pre)
    with pytest.raises(ValueError, match=r"shape \(N, 1\) \(sigmoid\) or \(N, 2\)"):
        TextClassifier(three).predict_proba(["good"])


def test_lipschitz_embedding_shifts_reach_the_pieces(hub):
    """The Local Lipschitz estimate shifts the embedding layer the adapter exposes (the
    word pieces' token embeddings): finite estimates, one per sentence."""
    from xplique_ext.text import TextLocalLipschitzEstimate

    task, *_ = hub
    lle = TextLocalLipschitzEstimate(SENTENCES[:2], nb_samples=2)
    got = lle.detailed_evaluate(LimeTokenExplainer(task, nb_samples=30))
    assert got.shape == (2,) and np.all(np.isfinite(got)) and np.all(got >= 0)


def test_packing_matches_the_preprocessor(hub):
    task, pre, *_ = hub
    model, tok = adapt_text_model(task)
    ids = tok(SENTENCES)
    packed = pre(SENTENCES)["token_ids"].numpy()
    for row, ref in zip(ids, packed):
        pieces = row[row > 0] - 1
        expect = ref[: len(pieces) + 2]
        np.testing.assert_array_equal([CLS, *pieces, SEP], expect)
        assert np.all(ref[len(pieces) + 2 :] == ID["[PAD]"])


def test_byte_pair_tokenizer_gets_the_models_own_ids(_randomize):
    """RoBERTa (no segment ids, <s> </s> packing, a byte-pair tokenizer that marks
    leading spaces): the probabilities are the task's; the tokenizer is not word by word
    ("b" alone is not "b" after a space), so LIME perturbs strings and IG refuses it."""
    vocab = {
        "<s>": 0,
        "<pad>": 1,
        "</s>": 2,
        "<unk>": 3,
        "<mask>": 4,
        "Ġ": 5,
        "a": 6,
        "b": 7,
        "Ġa": 8,
        "Ġb": 9,
        "ab": 10,
        "Ġab": 11,
        "c": 12,
        "Ġc": 13,
    }
    merges = ["Ġ a", "Ġ b", "a b", "Ġa b", "Ġ c"]
    tokenizer = keras_hub.models.RobertaTokenizer(vocabulary=vocab, merges=merges)
    pre = keras_hub.models.RobertaTextClassifierPreprocessor(tokenizer, sequence_length=12)
    backbone = keras_hub.models.RobertaBackbone(
        vocabulary_size=len(vocab),
        num_layers=1,
        num_heads=2,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=12,
        dropout=0.0,
    )
    task = keras_hub.models.RobertaTextClassifier(
        backbone, num_classes=2, preprocessor=pre, dropout=0.0
    )
    _randomize(task, 1)
    sentences = ["ab b a", "c ab", "a b c"]
    clf = TextClassifier(task)
    np.testing.assert_allclose(
        clf.predict_proba(sentences),
        _softmax1(task(pre(sentences), training=False)),
        atol=1e-5,
    )
    assert not clf.prepare(sentences).compositional
    got = LimeTokenExplainer(task, nb_samples=30)(sentences)
    assert [len(a) for a in got] == [3, 2, 3]
    with pytest.raises(ValueError, match="not compositional"):
        IntegratedGradientsTokenExplainer(task)(sentences)


def test_activation_given_when_it_cannot_be_read(hub):
    _, pre, _, backbone = hub
    inputs = backbone.input
    logits = keras.layers.Dense(2)(backbone(inputs)["pooled_output"])
    model = keras.Model(inputs, keras.layers.Softmax()(logits))
    with pytest.raises(ValueError, match="adapt_text_model"):
        TextClassifier(model, pre)
    from xplique_ext.text import adapt_text_model as exported

    adapted, tok = exported(model, pre, activation="softmax")
    ref = model(pre(SENTENCES[:2]), training=False).numpy()[:, 1]
    np.testing.assert_allclose(
        TextClassifier(adapted, tok).predict_proba(SENTENCES[:2]), ref, atol=1e-5
    )
    # an adapted model passed again keeps its tokenizer; another mask word still -> [MASK]
    clf = TextClassifier(adapted, mask_string="ZZZ")
    ids, _ = clf.masked_inputs(clf.prepare(["good movie"]), 0, np.array([[False, True]]))
    np.testing.assert_array_equal(ids[0, :2], np.array([MASK, ID["movie"]]) + 1)
    with pytest.raises(ValueError, match="`tokenizer` must be None for a KerasHubTextModel"):
        TextClassifier(adapted, pre)


def test_the_users_model_is_left_untouched(hub):
    task, *_ = hub
    before = (
        set(vars(task)),
        [w.numpy().copy() for w in task.weights[:3]],
        [layer.name for layer in task.layers],
    )
    adapted, _ = adapt_text_model(task)
    LimeTokenExplainer(task, nb_samples=20)(["good movie"])
    after = (
        set(vars(task)),
        [w.numpy() for w in task.weights[:3]],
        [layer.name for layer in task.layers],
    )
    assert before[0] == after[0] and before[2] == after[2]
    assert all(np.array_equal(a, b) for a, b in zip(before[1], after[1]))
    assert "call" not in vars(task.backbone.token_embedding)  # the patch is undone
    assert adapt_text_model(task)[0] is adapted  # shared while in use


def test_hub_adapter_cuts_pieces_at_the_shortest_limit(tiny_bert):
    keras_hub = pytest.importorskip("keras_hub")
    from xplique_ext.text.hub import adapt_text_model

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "film"]
    tokenizer, pre, backbone = tiny_bert(vocab, 12)
    task = keras_hub.models.BertTextClassifier(backbone, num_classes=2, preprocessor=pre)
    model, tok = adapt_text_model(task)
    assert model.max_pieces == 10  # min(preprocessor 12, backbone 12) - 2
    model, tok = adapt_text_model(task, tokenizer)  # no length but the backbone's
    assert model.max_pieces == 10
    assert adapt_text_model(model)[1] is model.tokenizer
    other = adapt_text_model(model, mask_string="ZZZ")[1]
    assert other is not model.tokenizer and other.mask_string == "ZZZ"
    with pytest.raises(TypeError, match="`backbone` must be a keras-hub Backbone"):
        from xplique_ext.text.hub import build_hub_classifier

        build_hub_classifier(task)
