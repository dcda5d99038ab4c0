"""Whitespace tokens, keyword matching and the alignment of a tokenizer's ids with the
tokens (``xplique_ext/text/tokens.py``)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xplique_ext.text import (
    BagOfWordsModel,
    TextClassifier,
    find_keyword,
    normalize_token,
    resolve_rules,
    whitespace_tokens,
)
from xplique_ext.text.tokens import Tokenizer, as_sentences, compose, is_compositional


# ----------------------------------------------------------------------------- tokens
def test_whitespace_tokens_keep_punctuation_glued():
    assert whitespace_tokens("  the plot, was\tdull , but fun ") == [
        "the",
        "plot,",
        "was",
        "dull",
        ",",
        "but",
        "fun",
    ]


@pytest.mark.parametrize(
    "token, norm",
    [
        ("But", "but"),
        ("but,", "but"),
        ("(but)", "but"),
        ("BUT!!", "but"),
        ("but's", "but's"),
        ("«yet»", "yet"),
        ("...", ""),
    ],
)
def test_normalize_token(token, norm):
    assert normalize_token(token) == norm


def test_find_keyword_first_and_case_insensitive():
    rules = resolve_rules()
    assert find_keyword("dull, But fun though short".split(), rules) == (1, "but")
    assert find_keyword("no rule here".split(), rules) == (None, None)
    assert find_keyword("butter is good".split(), rules) == (None, None)


def _make_tok():
    """A TextVectorization tokenizer on a few words, padded to 16 ids."""
    import keras

    return Tokenizer(
        keras.layers.TextVectorization(
            vocabulary=["good", "bad", "superb", "dull", "the", "but"], output_sequence_length=16
        )
    )


_TOK = _make_tok()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.sampled_from(["good", "bad", "Superb,", "dull", ",", "the", "zzz", "but"]),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 2**31 - 1),
)
def test_compose_equals_tokenizing_the_masked_strings(words, seed):
    """Property: building masked id rows from per-token pieces equals tokenizing the
    masked sentence, for a word-level tokenizer (TextVectorization)."""
    tok = _TOK
    rng = np.random.default_rng(seed)
    keep = rng.random((5, len(words))) < 0.5
    pieces = tok.pieces(words)
    mask = tok.pieces(["UNKWORDZ"])[0]
    ids, owner = compose(pieces, keep, mask, 16)
    strings = [" ".join(w if k else "UNKWORDZ" for w, k in zip(words, row)) for row in keep]
    np.testing.assert_array_equal(ids, tok(strings))
    assert np.all((owner >= 0) == (ids != 0))


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.text("abcdefg", min_size=1, max_size=8), min_size=1, max_size=8),
    st.integers(0, 2**31 - 1),
)
def test_compose_with_multi_piece_words(words, seed):
    """Subword pieces (chunks of 3 characters) and a two-piece mask string."""
    vocab = {}

    def chunk_tok(texts):
        return [
            [
                vocab.setdefault(w[i : i + 3], len(vocab) + 1)
                for w in t.split()
                for i in range(0, len(w), 3)
            ]
            for t in texts
        ]

    tok = Tokenizer(chunk_tok)
    rng = np.random.default_rng(seed)
    keep = rng.random((4, len(words))) < 0.5
    mask = tok.pieces(["MASKXY"])[0]
    ids, owner = compose(tok.pieces(words), keep, mask, 40)
    strings = [" ".join(w if k else "MASKXY" for w, k in zip(words, row)) for row in keep]
    expect = tok(strings)
    width = min(40, expect.shape[1])
    np.testing.assert_array_equal(ids[:, :width], expect[:, :width])
    for r in range(len(keep)):  # every position is owned by the word it came from
        for pos in np.flatnonzero(owner[r] >= 0):
            j = owner[r, pos]
            source = words[j] if keep[r, j] else "MASKXY"
            assert ids[r, pos] in tok.pieces([source])[0]


def test_is_compositional_detects_special_tokens():
    def with_cls(texts):
        return [[1] + [len(w) + 1 for w in t.split()] for t in texts]

    ok, where = is_compositional(Tokenizer(with_cls), ["a bb"], [["a", "bb"]])
    assert not ok and where == 0


@pytest.fixture(scope="module")
def bow():
    return BagOfWordsModel({"good": 2.0, "bad": -2.0})


def test_a_tokenizer_returning_too_few_rows_is_refused(bow):
    # one row for every call: the pieces of all but the first word were dropped silently
    # (zip), and predict_proba failed in NumPy
    with pytest.raises(
        ValueError,
        match=r"`tokenizer` must return integer ids of shape \(N, L\)"
        r" for N strings, got .* shape \(1, 3\).* for 2 strings",
    ):
        TextClassifier(bow, lambda s: np.ones((1, 3), int)).predict_proba(["good", "bad"])


def test_sentences_in_bytes_must_be_utf8():
    assert as_sentences([b"caf\xc3\xa9", "bad"]) == ["caf\u00e9", "bad"]
    # strict: bytes that are not UTF-8 are refused naming the sentence, not read as Latin-1
    with pytest.raises(ValueError, match=r"`inputs\[1\]` must be a str or UTF-8 bytes"):
        as_sentences(["good", b"caf\xe9"])
    with pytest.raises(ValueError, match=r"`texts\[0\]` must be a str or UTF-8 bytes"):
        as_sentences(np.array([b"\xff film"], dtype=object), "texts")
