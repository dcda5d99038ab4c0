"""Tokens and alignment, the sentence generator and its lexicon, the backbones and the
bag-of-words model."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xplique_ext.text import (
    BagOfWordsModel,
    build_cnn_classifier,
    build_lstm_classifier,
    find_keyword,
    generate_sentences,
    load_lexicon,
    normalize_token,
    resolve_rules,
    whitespace_tokens,
)
from xplique_ext.text.tokens import Tokenizer, compose, is_compositional


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


# ----------------------------------------------------------------------------- data
def test_generator_is_seeded_and_labels_follow_the_rule():
    a = generate_sentences(200, seed=4)
    b = generate_sentences(200, seed=4)
    assert a.equals(b) and not a.equals(generate_sentences(200, seed=5))
    s = a[a.structured]
    assert set(s.keyword) == {"but", "yet", "though", "while"}
    b_rule = s[s.rule_conjunct == "B"]
    a_rule = s[s.rule_conjunct == "A"]
    assert (b_rule.label == b_rule.b_sentiment).all() and (a_rule.label == a_rule.a_sentiment).all()
    assert s.contrastive.all() and (s.a_sentiment != s.b_sentiment).all()
    assert (a.n_tokens <= 24).all() and 0.6 < a.structured.mean() < 0.9
    for row in s.itertuples():  # the sentence is A keyword B
        assert row.keyword in row.sentence.split()
        assert row.sentence.startswith(row.a_text) and row.sentence.endswith(row.b_text)


def test_generator_options(lexicon):
    df = generate_sentences(
        100,
        seed=1,
        structured=1.0,
        contrastive=False,
        label_by="A",
        b_style="sentiment",
        rules={"however": "B", "while": None},
    )
    assert set(df.keyword) <= {"but", "yet", "though", "however"}
    assert (df.a_sentiment == df.b_sentiment).all() and (df.label == df.a_sentiment).all()
    for b in df.b_text:
        toks = b.split()
        assert 2 <= len(toks) <= 3
        assert all(lexicon.weight(t) != 0 for t in toks)
    none = generate_sentences(50, seed=2, structured=0.0)
    assert not none.structured.any() and none.keyword.isna().all()
    mix = generate_sentences(400, seed=3, structured=1.0, contrastive=0.3)
    assert 0.2 < mix.contrastive.mean() < 0.4


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(structured=1.5), "`structured` must be in"),
        (dict(contrastive=2.0), r"`contrastive` must be a bool or in \[0, 1\], got 2"),
        (dict(label_by="C"), "`label_by` must be one of"),
        (dict(a_style="fancy"), "`a_style` must be one of"),
        (dict(max_tokens=3), "`max_tokens` must be >= 7"),
        (dict(rules={"but": "Q"}), "must be 'A', 'B' or None"),
    ],
)
def test_generator_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        generate_sentences(3, **kwargs)


def test_generator_never_exceeds_max_tokens():
    # a comma before every keyword: only A and B of 2 tokens fit in 7 (1 draw in 144); the
    # generator kept a too long row after 200 draws (rows of up to 14 tokens here)
    df = generate_sentences(40, seed=0, structured=1.0, comma=1.0, max_tokens=7)
    assert (df.n_tokens <= 7).all()
    assert (df.sentence.str.split().str.len() == df.n_tokens).all()


def test_generator_refuses_a_keyword_the_clauses_use():
    # 'and' joins words inside clauses: the sentence's first 'and' was not its structure's
    from xplique_ext.text import RuleTable

    with pytest.raises(ValueError, match=r"`rules` keywords must not be words .*\['and'\]"):
        generate_sentences(5, rules=RuleTable({"and": "B"}))
    with pytest.raises(ValueError, match=r"\['superb'\]"):
        generate_sentences(5, rules={"superb": "A"})


def test_lexicon_is_shipped_and_consistent():
    lex = load_lexicon()
    assert len(lex.words("adj", 1)) >= 40 and len(lex.words("adj", -1)) >= 40
    assert lex.weight("superb") > 0 > lex.weight("dreadful")
    assert lex.weight("movie") == 0 and lex.weight("unknownword") == 0
    assert all(v != 0 for v in lex.weights().values())


# ----------------------------------------------------------------------------- backbones
def test_cnn_backbone_structure(vectorizer):
    import keras

    cnn = build_cnn_classifier(vectorizer, embedding_dim=8, filters=4)
    convs = [layer for layer in cnn.layers if isinstance(layer, keras.layers.Conv1D)]
    assert sorted(c.kernel_size[0] for c in convs) == [3, 4, 5]
    assert any(isinstance(layer, keras.layers.Concatenate) for layer in cnn.layers)
    emb = [layer for layer in cnn.layers if isinstance(layer, keras.layers.Embedding)][0]
    assert emb.trainable and cnn.output_shape == (None, 1)
    assert cnn.layers[-1].activation.__name__ == "sigmoid"


def test_lstm_backbone_structure(vectorizer):
    import keras

    lstm = build_lstm_classifier(vectorizer, embedding_dim=8)
    cell = [layer for layer in lstm.layers if isinstance(layer, keras.layers.LSTM)][0]
    assert cell.units == 128 and not cell.return_sequences
    assert lstm.output_shape == (None, 1)


def test_raw_string_backbone(vectorizer):
    cnn = build_cnn_classifier(vectorizer, raw_strings=True, embedding_dim=8, filters=4)
    ids_model = build_cnn_classifier(vectorizer, embedding_dim=8, filters=4)
    ids_model.set_weights(cnn.get_weights())
    s = ["the plot was dull but superb", "good"]
    np.testing.assert_allclose(
        cnn(np.array(s).reshape(-1, 1)).numpy(), ids_model(vectorizer(s)).numpy(), atol=1e-6
    )
    with pytest.raises(ValueError, match="raw_strings=True"):
        build_cnn_classifier(100, sequence_length=10, raw_strings=True)
    with pytest.raises(ValueError, match="sequence_length"):
        build_lstm_classifier(100)
    # no kernel size at all: an IndexError deep in the builder before
    with pytest.raises(ValueError, match=r"`kernel_sizes` must be a non-empty array"):
        build_cnn_classifier(100, sequence_length=10, kernel_sizes=np.array([], dtype=int))


def test_builders_and_training_refuse_what_they_used_to_take_silently(vectorizer):
    """Found by the hostile sweep: a raw TensorFlow error for no or non-str sentences, and
    train_classifier trained on 2 of 3 labels, on a label 2, or crashed on no row."""
    from xplique_ext.text import make_vectorizer, train_classifier

    with pytest.raises(ValueError, match="`sentences` must be a non-empty array"):
        make_vectorizer([])
    with pytest.raises(TypeError, match=r"`sentences\[0\]` must be a str"):
        make_vectorizer([1, 2])
    model = build_cnn_classifier(vectorizer, embedding_dim=4, filters=2)
    x = vectorizer(["a good film", "a bad film"]).numpy()
    with pytest.raises(ValueError, match=r"`y` must hold one label per row of `x` \(2\), got 3"):
        train_classifier(model, x, [1, 0, 1])
    with pytest.raises(ValueError, match=r"`y` must be numbers in \[0, 1\], got 2"):
        train_classifier(model, x, [1, 2])
    with pytest.raises(ValueError, match="`x` must be a non-empty array"):
        train_classifier(model, x[:0], [])
    with pytest.raises(ValueError, match="distinct single words .*got 'good'"):
        BagOfWordsModel({"Good": 1.0, "good": -1.0})  # the last one won


# ----------------------------------------------------------------------------- bag of words
def test_bag_of_words_numpy_keras_and_exact_contributions(lexicon):
    sents = [
        "the plot was dull, but superb acting",
        "awful yet moving",
        "a great film",
        "Superb though DULL and boring",
    ]
    for part in ("all", "A", "B"):
        bow = BagOfWordsModel(lexicon.weights(), bias=0.4, part=part)
        ids = bow.tokenizer(sents).numpy()
        np.testing.assert_allclose(bow.to_keras()(ids).numpy()[:, 0], bow(ids)[:, 0], atol=1e-6)
        for s, logit in zip(sents, bow.logits(ids)):
            assert bow.bias + bow.logit_contributions(s).sum() == pytest.approx(logit)
    b = BagOfWordsModel(lexicon.weights(), part="B")
    c = b.logit_contributions("the plot was dull, but superb acting")
    assert c[3] == 0 and c[5] == pytest.approx(lexicon.weight("superb"))
    a = BagOfWordsModel(lexicon.weights(), part="A")
    c = a.logit_contributions("the plot was dull, but superb acting")
    assert c[3] == pytest.approx(lexicon.weight("dull")) and c[5] == 0
    with pytest.raises(ValueError, match="`part` must be one of"):
        BagOfWordsModel({"good": 1.0}, part="C")


def _make_tok():
    import keras

    return Tokenizer(
        keras.layers.TextVectorization(
            vocabulary=["good", "bad", "superb", "dull", "the", "but"], output_sequence_length=16
        )
    )


_TOK = _make_tok()
