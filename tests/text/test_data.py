"""The sentence generator and its lexicon (``xplique_ext/text/data.py``)."""

import pytest

from xplique_ext.text import (
    generate_sentences,
    load_lexicon,
)


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
