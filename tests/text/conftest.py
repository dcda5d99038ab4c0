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
