"""LIME, SHAP and Integrated Gradients token adapters (``xplique_ext/text/explainers.py``):
shapes, known answers on the bag-of-words model, equivalence with stock LIME / shap, seeds,
pooling invariances, tokenizer forms and errors."""

import numpy as np
import pytest

from xplique_ext.text import (
    BagOfWordsModel,
    IntegratedGradientsTokenExplainer,
    LimeTokenExplainer,
    ShapTokenExplainer,
    TextClassifier,
    generate_sentences,
    whitespace_tokens,
)
from xplique_ext.text.explainers import sentence_seed


def fast(cls, model, tok, **kw):
    defaults = {
        LimeTokenExplainer: dict(nb_samples=60),
        ShapTokenExplainer: dict(n_permutations=1),
        IntegratedGradientsTokenExplainer: dict(steps=16),
    }[cls]
    defaults.update(kw)
    return cls(model, tok, progress=False, **defaults)


ADAPTERS = [LimeTokenExplainer, ShapTokenExplainer, IntegratedGradientsTokenExplainer]


@pytest.mark.parametrize("cls", ADAPTERS)
def test_one_finite_value_per_token_for_1_to_60_tokens(cls, tiny_cnn, vectorizer, sentence_of):
    sents = [sentence_of(n, seed=n) for n in (1, 2, 7, 24, 60)] + ["good good good"]
    out = fast(cls, tiny_cnn, vectorizer)(sents)
    assert len(out) == len(sents)
    for s, a in zip(sents, out):
        assert a.shape == (len(s.split()),) and np.all(np.isfinite(a))
    # the repeated word gets one value per occurrence (positions, LIME's bow=False)
    assert out[-1].shape == (3,)


def test_empty_sentence_gives_empty_attributions(bow_all):
    for cls in ADAPTERS[:2]:
        out = fast(cls, bow_all, bow_all.tokenizer)(["", "good"])
        assert out[0].shape == (0,) and out[1].shape == (1,)


# ----------------------------------------------------------------------------- known answers
@pytest.fixture(scope="module")
def bow_sentences():
    df = generate_sentences(6, seed=21, structured=0.7, contrastive=0.5)
    return list(df.sentence)


@pytest.mark.parametrize(
    "cls, kw",
    [(LimeTokenExplainer, dict(nb_samples=2000)), (ShapTokenExplainer, dict(n_permutations=10))],
)
def test_lime_and_shap_agree_in_sign_with_exact_contributions(cls, kw, bow_all, bow_sentences):
    out = cls(bow_all, bow_all.tokenizer, progress=False, **kw)(bow_sentences)
    agree = total = 0
    for s, a in zip(bow_sentences, out):
        w = bow_all.logit_contributions(s)
        nz = w != 0
        agree += int(np.sum(np.sign(a[nz]) == np.sign(w[nz])))
        total += int(nz.sum())
    assert total >= 10 and agree / total >= 0.9


def test_shap_on_additive_model_is_exact_for_single_token_effects():
    """For p = sigmoid(w x): one token, SHAP = p(s) - p(masked) exactly."""
    bow = BagOfWordsModel({"good": 2.0})
    phi = ShapTokenExplainer(bow, bow.tokenizer, progress=False)(["good"])[0]
    assert phi[0] == pytest.approx(1 / (1 + np.exp(-2.0)) - 0.5)


@pytest.mark.parametrize("part", ["all", "B"])
def test_ig_is_complete_and_proportional_to_exact_contributions(lexicon, bow_sentences, part):
    bow = BagOfWordsModel(lexicon.weights(), bias=-0.2, part=part, sequence_length=32)
    ig = IntegratedGradientsTokenExplainer(bow.to_keras(), bow.tokenizer, progress=False)
    out = ig(bow_sentences)
    p = bow.predict_proba(bow_sentences)
    base = 1 / (1 + np.exp(0.2))  # every token's embedding zeroed: logit = bias
    for s, a, ps, pb, delta in zip(bow_sentences, out, p, ig.baseline_proba_, ig.proba_):
        w = bow.logit_contributions(s)
        assert abs(a.sum() - (ps - base)) <= 1e-3
        assert pb == pytest.approx(base, abs=1e-6) and delta == pytest.approx(ps, abs=1e-6)
        np.testing.assert_allclose(a[w == 0], 0.0, atol=1e-7)
        if np.any(w != 0):
            ratio = a[w != 0] / w[w != 0]
            np.testing.assert_allclose(ratio, ratio[0], rtol=1e-3)
            assert ratio[0] > 0


def test_ig_completeness_on_the_cnn_and_independent_baseline(tiny_cnn, vectorizer, train_df):
    sents = list(train_df.sentence[:8])
    ig = IntegratedGradientsTokenExplainer(tiny_cnn, vectorizer, progress=False)
    out = ig(sents)
    p = ig.classifier.predict_proba(sents)
    np.testing.assert_allclose(ig.proba_, p, atol=1e-5)
    # p(baseline) computed independently: shift the embedding of every token to zero
    clf = ig.classifier
    prep = clf.prepare(sents)
    table = clf.embedding.get_weights()[0]
    for i, a in enumerate(out):
        ids, owner = clf.masked_inputs(prep, i, np.ones((1, len(prep.words[i])), bool))
        shift = -table[ids[0]] * (owner[0] >= 0)[:, None]
        pb = clf.forward_shifted(ids, shift[None])[0]
        assert ig.baseline_proba_[i] == pytest.approx(pb, abs=1e-5)
        assert abs(a.sum() - (p[i] - pb)) <= 1e-3
    assert np.max(np.abs(ig.convergence_delta_)) <= 1e-3


def test_ig_gauss_legendre(tiny_cnn, vectorizer, sentences):
    ig = IntegratedGradientsTokenExplainer(
        tiny_cnn, vectorizer, steps=64, method="gausslegendre", progress=False
    )
    ref = IntegratedGradientsTokenExplainer(tiny_cnn, vectorizer, steps=256, progress=False)
    for a, b in zip(ig(sentences), ref(sentences)):
        np.testing.assert_allclose(a, b, atol=2e-4)
    assert np.max(np.abs(ig.convergence_delta_)) <= 1e-3


# ----------------------------------------------------------------------------- stock libraries
def test_lime_matches_stock_lime_on_the_same_neighbourhood(bow_all, bow_sentences):
    """Stock LimeTextExplainer(bow=False, whitespace split): record its perturbed strings,
    rebuild the binary neighbourhood, and refit it with the adapter: same weights."""
    from lime.lime_text import LimeTextExplainer

    sentence = bow_sentences[0]
    words = whitespace_tokens(sentence)
    seen = []

    def classifier_fn(texts):
        seen.extend(texts)
        p = bow_all.predict_proba(texts)
        return np.stack([1 - p, p], axis=1)

    stock = LimeTextExplainer(
        bow=False, split_expression=whitespace_tokens, feature_selection="none", random_state=3
    )
    exp = stock.explain_instance(
        sentence, classifier_fn, labels=(1,), num_features=len(words), num_samples=300
    )
    stock_w = np.zeros(len(words))
    for j, v in exp.local_exp[1]:
        stock_w[j] = v
    data = np.array([[t != "UNKWORDZ" for t in s.split()] for s in seen])
    assert data[0].all() and data.shape == (300, len(words))
    adapter = LimeTokenExplainer(bow_all, bow_all.tokenizer, progress=False)
    w, intercept, score = adapter.fit(stock.base, data, bow_all.predict_proba(seen))
    np.testing.assert_allclose(w, stock_w, atol=1e-10)
    assert score == pytest.approx(exp.score)
    # LIME's own distances (sklearn cosine x 100) equal the adapter's closed form
    import scipy.sparse
    import sklearn.metrics

    ref = (
        sklearn.metrics.pairwise.pairwise_distances(
            scipy.sparse.csr_matrix(data.astype(float)),
            scipy.sparse.csr_matrix(data[:1].astype(float)),
            metric="cosine",
        ).ravel()
        * 100
    )
    np.testing.assert_allclose(LimeTokenExplainer.distances(data), ref, atol=1e-9)


def test_lime_neighbourhood_follows_lime_sampling_scheme():
    n, m = 6, 20000
    data = LimeTokenExplainer.neighbourhood(n, m, np.random.default_rng(0))
    assert data[0].all()
    removed = n - data[1:].sum(axis=1)
    assert removed.min() == 1 and removed.max() == n
    counts = np.bincount(removed, minlength=n + 1)[1:] / (m - 1)
    np.testing.assert_allclose(counts, 1 / n, atol=0.015)  # uniform size in 1..n
    np.testing.assert_allclose((~data[1:]).mean(axis=0), (n + 1) / (2 * n), atol=0.015)


def test_shap_matches_direct_shap_permutation_explainer(bow_all, bow_sentences):
    import shap

    seed = 5
    sentence = bow_sentences[1]
    words = np.array(whitespace_tokens(sentence), dtype=object)
    adapter = ShapTokenExplainer(
        bow_all, bow_all.tokenizer, n_permutations=3, seed=seed, progress=False
    )
    ours = adapter([sentence])[0]

    def model(masks):
        masks = np.asarray(masks, bool)
        texts = [" ".join(np.where(m, words, "UNKWORDZ")) for m in masks]
        return bow_all.predict_proba(texts)

    state = np.random.get_state()
    explainer = shap.PermutationExplainer(
        model,
        lambda mask, x: np.asarray(mask, bool).reshape(1, -1),
        seed=sentence_seed(seed, sentence),
    )
    direct = explainer(np.zeros((1, len(words))), max_evals=3 * (2 * len(words) + 1), silent=True)
    np.random.set_state(state)
    np.testing.assert_allclose(ours, direct.values[0], atol=1e-12)
    assert adapter.expected_values_[0] == pytest.approx(direct.base_values[0])


def test_shap_leaves_global_numpy_state_alone(bow_all, bow_sentences):
    np.random.seed(123)
    before = np.random.random()
    np.random.seed(123)
    ShapTokenExplainer(bow_all, bow_all.tokenizer, progress=False)(bow_sentences[:2])
    assert np.random.random() == before


# ----------------------------------------------------------------------------- seeds, pooling
@pytest.mark.parametrize("cls", ADAPTERS)
def test_same_seed_same_attributions_whatever_batching_and_order(
    cls, tiny_cnn, vectorizer, sentences
):
    ref = fast(cls, tiny_cnn, vectorizer, seed=7)(sentences)
    again = fast(cls, tiny_cnn, vectorizer, seed=7, batch_size=5)(sentences)
    whole = fast(cls, tiny_cnn, vectorizer, seed=7, batch_size=None)(sentences)
    rev = fast(cls, tiny_cnn, vectorizer, seed=7, batch_size=3)(sentences[::-1])[::-1]
    single = [fast(cls, tiny_cnn, vectorizer, seed=7)([s])[0] for s in sentences[:2]]
    for variant in (again, whole, rev, single):
        for a, b in zip(ref, variant):
            np.testing.assert_allclose(a, b, atol=2e-6)
    explainer = fast(cls, tiny_cnn, vectorizer, seed=7)
    first, second = explainer(sentences), explainer(sentences)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)  # every call gives the same result
    if cls is not IntegratedGradientsTokenExplainer:
        other = fast(cls, tiny_cnn, vectorizer, seed=8)(sentences)
        assert any(not np.allclose(a, b) for a, b in zip(ref, other))


def test_model_calls_are_pooled_across_sentences(bow_all, bow_sentences):
    sizes = []

    def model(ids):
        sizes.append(len(ids))
        return bow_all(ids)

    LimeTokenExplainer(model, bow_all.tokenizer, batch_size=64, nb_samples=50, progress=False)(
        bow_sentences
    )
    # 6 sentences x 50 rows = 300 rows -> 4 full batches of 64 and one of 44 (plus the
    # one-row output check), not one call per sentence
    assert sizes[1:] == [64, 64, 64, 64, 44]
    sizes.clear()
    ShapTokenExplainer(model, bow_all.tokenizer, batch_size=100, progress=False)(bow_sentences)
    assert max(sizes) == 100 and sizes.count(100) >= len(sizes) - 2


def test_progress_bar_can_be_switched_off(bow_all, capsys):
    LimeTokenExplainer(bow_all, bow_all.tokenizer, nb_samples=20, progress=False)(["good"])
    assert "LIME" not in capsys.readouterr().err
    LimeTokenExplainer(bow_all, bow_all.tokenizer, nb_samples=20, progress=True)(["good"])
    assert "LIME" in capsys.readouterr().err


# ----------------------------------------------------------------------------- model forms
def test_raw_string_model_equals_token_id_model(bow_all, bow_sentences):
    import keras

    inner = bow_all.to_keras()
    inp = keras.Input(shape=(1,), dtype="string")
    raw = keras.Model(inp, inner(bow_all.tokenizer(inp)))
    for cls in ADAPTERS:
        a = fast(cls, raw, None)(bow_sentences[:3])
        b = fast(cls, inner, bow_all.tokenizer)(bow_sentences[:3])
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, atol=1e-5)


def test_two_class_softmax_model(tiny_cnn, vectorizer, sentences):
    import keras

    inp = keras.Input(tiny_cnn.input_shape[1:], dtype="int32")
    p = tiny_cnn(inp)
    soft = keras.Model(inp, keras.layers.Concatenate()([1 - p, p]))
    for cls in ADAPTERS:
        a = fast(cls, soft, vectorizer)(sentences[:2])
        b = fast(cls, tiny_cnn, vectorizer)(sentences[:2])
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, atol=1e-5)


class SubwordTokenizer:
    """Splits each (lower-cased) word into chunks of 3 characters: 'superb' -> 'sup',
    'erb'. Ids from a growing vocabulary (0 = padding)."""

    def __init__(self, cls_token=False):
        self.vocab = {}
        self.cls_token = cls_token

    def _id(self, piece):
        return self.vocab.setdefault(piece, len(self.vocab) + 2)

    def __call__(self, texts):
        rows = []
        for t in texts:
            ids = [1] if self.cls_token else []
            for w in t.lower().split():
                ids += [self._id(w[i : i + 3]) for i in range(0, len(w), 3)]
            rows.append(ids)
        return rows


def _subword_model(length=40, vocab=500):
    import keras

    inp = keras.Input((length,), dtype="int32")
    e = keras.layers.Embedding(
        vocab, 6, embeddings_initializer=keras.initializers.RandomNormal(seed=1)
    )(inp)
    h = keras.layers.GlobalAveragePooling1D()(
        keras.layers.Conv1D(5, 3, padding="same", activation="tanh")(e)
    )
    out = keras.layers.Dense(
        1, activation="sigmoid", kernel_initializer=keras.initializers.RandomNormal(seed=2)
    )(h)
    return keras.Model(inp, out)


def test_subword_tokenizer_ig_aggregates_pieces_to_words():
    model = _subword_model()
    tok = SubwordTokenizer()
    sents = ["superb acting but a dreadful screenplay", "ok"]
    ig = IntegratedGradientsTokenExplainer(model, tok, steps=128, progress=False)
    out = ig(sents)
    assert [a.shape for a in out] == [(6,), (1,)]
    assert np.max(np.abs(ig.convergence_delta_)) <= 1e-3
    # the word 'screenplay' (4 pieces) gets the sum of its pieces' IG
    prep = ig.classifier.prepare(sents)
    assert [len(p) for p in prep.pieces[0]] == [2, 2, 1, 1, 3, 4]
    for cls in ADAPTERS[:2]:
        assert [a.shape for a in fast(cls, model, tok)(sents)] == [(6,), (1,)]


def test_non_compositional_tokenizer_falls_back_for_lime_shap_and_ig_refuses():
    model = _subword_model()
    tok = SubwordTokenizer(cls_token=True)  # a [CLS] id per call: not compositional
    sents = ["superb acting but a dreadful screenplay"]
    lime = fast(LimeTokenExplainer, model, tok)
    assert not lime.classifier.prepare(sents).compositional
    assert lime(sents)[0].shape == (6,)
    with pytest.raises(ValueError, match="compositional"):
        fast(IntegratedGradientsTokenExplainer, model, tok)(sents)


def test_lstm_backbone_with_masking(vectorizer, sentences):
    from xplique_ext.text import build_lstm_classifier

    lstm = build_lstm_classifier(vectorizer, embedding_dim=4, units=4, seed=0)
    ig = IntegratedGradientsTokenExplainer(lstm, vectorizer, steps=32, progress=False)
    out = ig(sentences[:3])
    assert all(np.isfinite(a).all() for a in out)
    assert np.max(np.abs(ig.convergence_delta_)) <= 1e-3


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "cls, kwargs, exc, match",
    [
        (LimeTokenExplainer, dict(nb_samples=1), ValueError, "`nb_samples` must be >= 2"),
        (LimeTokenExplainer, dict(kernel_width=0), ValueError, "`kernel_width` must be in"),
        (ShapTokenExplainer, dict(n_permutations=0), ValueError, "`n_permutations` must be >= 1"),
        (IntegratedGradientsTokenExplainer, dict(steps=0), ValueError, "`steps` must be >= 1"),
        (IntegratedGradientsTokenExplainer, dict(method="simpson"), ValueError, "`method`"),
        (LimeTokenExplainer, dict(seed=-1), ValueError, "`seed` must be >= 0"),
        (LimeTokenExplainer, dict(progress="yes"), TypeError, "`progress` must be a bool"),
        (LimeTokenExplainer, dict(batch_size=0), ValueError, "`batch_size` must be >= 1"),
        (LimeTokenExplainer, dict(mask_string="two words"), ValueError, "`mask_string`"),
    ],
)
def test_bad_options(tiny_cnn, vectorizer, cls, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        cls(tiny_cnn, vectorizer, **kwargs)


def test_other_errors(bow_all):
    with pytest.raises(
        ValueError, match="Integrated Gradients need a Keras model with an Embedding layer"
    ):
        IntegratedGradientsTokenExplainer(bow_all, bow_all.tokenizer)
    with pytest.raises(TypeError, match="`model` must be callable"):
        LimeTokenExplainer("model")
    with pytest.raises(TypeError, match="`tokenizer` must be callable, got 42"):
        LimeTokenExplainer(bow_all, tokenizer=42)
    lime = LimeTokenExplainer(bow_all, bow_all.tokenizer, progress=False)
    with pytest.raises(TypeError, match="single str"):
        lime("good film")
    with pytest.raises(ValueError, match=r"shape \(N, 1\) \(sigmoid\) or \(N, 2\)"):
        LimeTokenExplainer(lambda x: np.zeros((len(x), 3)), bow_all.tokenizer, progress=False)(
            ["good film"]
        )


def test_ig_adaptive_refinement_equals_the_finer_trapezoid(tiny_cnn, vectorizer, sentences):
    from xplique_ext.commons.warnings import XpliqueExtWarning

    adaptive = IntegratedGradientsTokenExplainer(
        tiny_cnn, vectorizer, steps=2, tolerance=1e-4, progress=False
    )
    out = adaptive(sentences)
    assert np.max(np.abs(adaptive.convergence_delta_)) <= 1e-4
    assert adaptive.steps_used_.max() > 2
    for steps in np.unique(adaptive.steps_used_):  # T_2n from T_n and the midpoints
        fixed = IntegratedGradientsTokenExplainer(
            tiny_cnn, vectorizer, steps=int(steps), tolerance=None, progress=False
        )(sentences)
        for i in np.flatnonzero(adaptive.steps_used_ == steps):
            np.testing.assert_allclose(out[i], fixed[i], atol=1e-7)
    capped = IntegratedGradientsTokenExplainer(
        tiny_cnn, vectorizer, steps=1, max_steps=2, tolerance=1e-9, progress=False
    )
    with pytest.warns(XpliqueExtWarning, match="raise `max_steps`"):
        capped(sentences)
    with pytest.raises(ValueError, match="`max_steps` must be >= 8"):
        IntegratedGradientsTokenExplainer(tiny_cnn, vectorizer, steps=8, max_steps=4)


@pytest.fixture(scope="module")
def bow():
    return BagOfWordsModel({"good": 2.0, "bad": -2.0})


@pytest.fixture(scope="module")
def clf(bow):
    return TextClassifier(bow, bow.tokenizer)


@pytest.mark.parametrize(
    "cls, kw",
    [(LimeTokenExplainer, dict(nb_samples=20)), (ShapTokenExplainer, dict(n_permutations=2))],
)
def test_explainers_take_a_text_classifier(bow, clf, cls, kw):
    # documented, but refused: "`model` must be callable, got <...TextClassifier...>"
    np.testing.assert_allclose(
        cls(clf, **kw)(["a good film"])[0], cls(bow, bow.tokenizer, **kw)(["a good film"])[0]
    )


def test_sentence_seed_is_the_package_draw_per_input():
    """A sentence's seed comes from the one helper of per-input draws (the seed and the
    sentence's text), so its LIME neighbourhood and SHAP permutations do not depend on
    its position."""
    from xplique_ext.commons.random import input_sequence

    for seed, sentence in ((0, "a good film"), (2**40, "café"), (7, "")):
        expected = input_sequence(seed, sentence).generate_state(1, dtype=np.uint32)[0]
        assert sentence_seed(seed, sentence) == int(expected)
    assert sentence_seed(0, "a good film") != sentence_seed(0, "a good film.")
