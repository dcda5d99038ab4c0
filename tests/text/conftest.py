"""Fixtures of the text (PERCY) tests: tiny models built in code, nothing downloaded."""

import numpy as np
import pytest


@pytest.fixture(scope="session")
def lexicon():
    from xplique_ext.text import load_lexicon

    return load_lexicon()


@pytest.fixture(scope="session")
def bow_all(lexicon):
    from xplique_ext.text import BagOfWordsModel

    return BagOfWordsModel(lexicon.weights(), bias=0.3)


@pytest.fixture(scope="session")
def train_df():
    from xplique_ext.text import generate_sentences

    return generate_sentences(400, seed=3, structured=0.7, contrastive=0.7, max_tokens=24)


@pytest.fixture(scope="session")
def vectorizer(train_df):
    from xplique_ext.text import make_vectorizer

    return make_vectorizer(list(train_df.sentence), sequence_length=64)


@pytest.fixture(scope="session")
def tiny_cnn(vectorizer, train_df):
    """The paper's CNN backbone at a tiny size, trained for 2 epochs (token-id input)."""
    from xplique_ext.text import build_cnn_classifier, train_classifier

    model = build_cnn_classifier(vectorizer, embedding_dim=8, filters=4, seed=0)
    train_classifier(
        model, vectorizer(list(train_df.sentence)).numpy(), train_df.label, epochs=2, seed=0
    )
    return model


@pytest.fixture(scope="session")
def sentences(train_df):
    return list(train_df.sentence[:6])


def _sentence_of(n, seed=0):
    """A sentence of n tokens with a repeated word and glued punctuation."""
    rng = np.random.default_rng(seed)
    words = ["good", "bad", "the", "plot,", "but", "movie", "dull", "superb", "was"]
    toks = [words[i] for i in rng.integers(len(words), size=n)]
    if n >= 3:
        toks[-1] = toks[0]  # a repeated word
    return " ".join(toks)


@pytest.fixture(scope="session")
def sentence_of():
    return _sentence_of


def _randomize_weights(model, seed):
    """Larger random weights than keras-hub's initialisers (std 0.02), so that the
    probabilities vary from sentence to sentence."""
    rng = np.random.default_rng(seed)
    for w in model.weights:
        w.assign(rng.normal(0.0, 0.4, w.shape).astype(w.dtype))


def _tiny_bert(vocabulary, sequence_length=24, seed=None):
    """A tiny random BERT, offline: WordPiece tokenizer on ``vocabulary`` (a list written
    in the test), its text-classifier preprocessor, and a 1-layer backbone of hidden size
    16 (dropout 0). ``seed``: redraw the backbone's weights (:func:`_randomize_weights`).
    Returns (tokenizer, preprocessor, backbone)."""
    keras_hub = pytest.importorskip("keras_hub")
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=list(vocabulary), lowercase=True)
    pre = keras_hub.models.BertTextClassifierPreprocessor(
        tokenizer, sequence_length=sequence_length
    )
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=len(vocabulary),
        num_layers=1,
        num_heads=2,
        hidden_dim=16,
        intermediate_dim=32,
        max_sequence_length=sequence_length,
        dropout=0.0,
    )
    if seed is not None:
        _randomize_weights(backbone, seed)
    return tokenizer, pre, backbone


@pytest.fixture(scope="session")
def tiny_bert():
    """The tiny-BERT builder (see :func:`_tiny_bert`); its ``randomize`` attribute redraws
    a model's weights."""
    _tiny_bert.randomize = _randomize_weights
    return _tiny_bert
