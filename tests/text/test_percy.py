"""PERCY: known answers (bag-of-words models with exact token contributions), a hand
computation of Eq. 4 and the t-test, the t-test's weakness, invariances and errors."""

import string
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import tensorflow as tf

from xplique_ext.metrics import PERCY, NoRuleKeywordWarning
from xplique_ext.text import BagOfWordsModel, RuleTable, generate_sentences

ALL_KEYWORDS = ("but", "yet", "though", "while")


def only(*keywords):
    """A rules mapping that keeps only ``keywords`` of the default table."""
    return {k: None for k in ALL_KEYWORDS if k not in keywords}


def exact(model, sentences):
    return [model.logit_contributions(s) for s in sentences]


def quiet_evaluate(percy, explanations):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoRuleKeywordWarning)
        return percy.evaluate(explanations)


# ----------------------------------------------------------------------------- known answers
@pytest.fixture(scope="module")
def a_only(lexicon):
    return BagOfWordsModel(lexicon.weights(), part="A")


@pytest.fixture(scope="module")
def b_only(lexicon):
    return BagOfWordsModel(lexicon.weights(), part="B")


def _contrastive(keywords, rule_conjunct, n=120, seed=11):
    sentiment_side = (
        dict(a_style="mixed", b_style="sentiment")
        if rule_conjunct == "B"
        else (dict(a_style="sentiment", b_style="mixed"))
    )
    return generate_sentences(
        n,
        seed=seed,
        structured=1.0,
        contrastive=True,
        rules=only(*keywords),
        comma=0.0,
        **sentiment_side,
    )


def test_b_only_model_follows_but_rule_and_a_only_does_not(lexicon, a_only, b_only):
    df = _contrastive(["but"], "B")
    # the data is what the acceptance asks for: B has >= 2 tokens, all sentiment words
    for b in df.b_text:
        assert len(b.split()) >= 2 and all(lexicon.weight(t) != 0 for t in b.split())
    assert set(df.keyword) == {"but"} and df.contrastive.all()
    sentences, labels = list(df.sentence), df.label.to_numpy()
    b_score = PERCY(b_only, sentences, labels, tokenizer=b_only.tokenizer)
    a_score = PERCY(a_only, sentences, labels, tokenizer=a_only.tokenizer)
    assert b_score.evaluate(exact(b_only, sentences)) >= 0.9
    assert a_score.evaluate(exact(a_only, sentences)) == 0.0
    # accuracy alone tells the same story here, because the pairs are contrastive
    assert b_score.accuracy == 1.0 and a_score.accuracy == 0.0


@pytest.mark.parametrize("keyword", ["though", "while"])
def test_a_only_model_follows_though_while_rules(lexicon, a_only, b_only, keyword):
    df = _contrastive([keyword], "A")
    for a in df.a_text:
        assert len(a.split()) >= 2 and all(lexicon.weight(t) != 0 for t in a.split())
    sentences, labels = list(df.sentence), df.label.to_numpy()
    a_score = PERCY(a_only, sentences, labels, tokenizer=a_only.tokenizer)
    b_score = PERCY(b_only, sentences, labels, tokenizer=b_only.tokenizer)
    assert a_score.evaluate(exact(a_only, sentences)) >= 0.9
    assert b_score.evaluate(exact(b_only, sentences)) == 0.0


def test_same_accuracy_different_percy(a_only, b_only):
    """Non-contrastive 'but' sentences: both copies are always right, PERCY tells them
    apart (the paper's point: accuracy does not reveal rule use)."""
    df = generate_sentences(
        60,
        seed=5,
        structured=1.0,
        contrastive=False,
        rules=only("but"),
        a_style="sentiment",
        b_style="sentiment",
        comma=0.0,
    )
    sentences, labels = list(df.sentence), df.label.to_numpy()
    pa = PERCY(a_only, sentences, labels, tokenizer=a_only.tokenizer)
    pb = PERCY(b_only, sentences, labels, tokenizer=b_only.tokenizer)
    assert pa.accuracy == pb.accuracy == 1.0
    assert pa.evaluate(exact(a_only, sentences)) == 0.0
    assert pb.evaluate(exact(b_only, sentences)) >= 0.6


# ----------------------------------------------------------------------------- hand computation
HAND_SENTENCES = [
    "the plot was dull but the cast was superb",
    "superb acting , but a dull and tedious script",
    "It was wonderful, But the ending felt awful",
    "dull yet strangely moving and beautiful",
    "the cast shines though the plot is thin and silly",
    "great fun while it lasts , sadly short",
    "awful awful awful but superb",
    "a masterpiece though boring at times",
    "terrible pacing but a good score and a great lead performance",
    "the film is good BUT the plot is bad though brief",
    "clumsy (yet) charming",
    "no keyword in this good sentence",
]
HAND_KEYWORDS = [
    (4, "but"),
    (3, "but"),
    (3, "but"),
    (1, "yet"),
    (3, "though"),
    (2, "while"),
    (3, "but"),
    (2, "though"),
    (2, "but"),
    (4, "but"),
    (1, "yet"),
    (None, None),
]


RULES = {"but": "B", "yet": "B", "though": "A", "while": "A"}


def reference_rows(
    sentence,
    w,
    p1,
    label,
    *,
    test="ttest",
    alternative="one-sided",
    top_k=None,
    contributions="sign_split",
    alpha=0.05,
    strict=False,
):
    """An independent, loop-by-loop reading of Eq. 4-6 (one dict per structure)."""
    toks = sentence.split()
    if contributions == "sign_split":
        c = [abs(x) * p1 if x > 0 else abs(x) * (1 - p1) if x < 0 else 0.0 for x in w]
    else:
        c = [x * p1 + abs(x) * (1 - p1) for x in w]
    pred = int(p1 > 0.5)
    rows = []
    for k, tok in enumerate(toks):
        kw = tok.strip(string.punctuation).lower()
        if kw not in RULES:
            continue
        a, b = list(c[:k]), list(c[k + 1 :])
        if top_k is not None:
            a, b = sorted(a, reverse=True)[:top_k], sorted(b, reverse=True)[:top_k]
        row = dict(keyword=kw, keyword_index=k, n_a=len(a), n_b=len(b), p_value=np.nan)
        if not a or not b:
            rows.append(dict(row, score=0.0))
            continue
        ea, eb = float(np.mean(a)), float(np.mean(b))
        alt = (
            "two-sided"
            if alternative == "two-sided"
            else ("less" if RULES[kw] == "B" else "greater")
        )
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if test == "ttest":
                pv = scipy.stats.ttest_ind(a, b, alternative=alt).pvalue
            elif test == "welch":
                pv = scipy.stats.ttest_ind(a, b, equal_var=False, alternative=alt).pvalue
            elif test == "mannwhitneyu":
                pv = scipy.stats.mannwhitneyu(a, b, alternative=alt).pvalue
            else:
                pv = np.nan
        direction = ea < eb if RULES[kw] == "B" else ea > eb
        significant = test is None or (pv < alpha if strict else pv <= alpha)
        score = float(pred == label and direction and significant)
        rows.append(dict(row, E_a=ea, E_b=eb, p_value=pv, score=score))
    return rows


def check_against_reference(d, sentences, expl, p1, labels, **options):
    i_row = 0
    for i, s in enumerate(sentences):
        ref = reference_rows(s, expl[i], p1[i], labels[i], **options)
        if not ref:
            row = d.iloc[i_row]
            assert row.sentence_index == i and pd.isna(row.keyword) and np.isnan(row.score)
            i_row += 1
            continue
        for r in ref:
            row = d.iloc[i_row]
            assert row.sentence_index == i and row.sentence == s
            assert row.keyword == r["keyword"] and row.keyword_index == r["keyword_index"]
            assert row.n_a == r["n_a"] and row.n_b == r["n_b"]
            if "E_a" in r:
                assert row.E_a == pytest.approx(r["E_a"], abs=1e-12)
                assert row.E_b == pytest.approx(r["E_b"], abs=1e-12)
            assert row.p_value == pytest.approx(r["p_value"], rel=1e-9, abs=1e-12, nan_ok=True)
            assert row.score == r["score"], (s, r)
            i_row += 1
    assert i_row == len(d)


def test_details_match_hand_computation_of_eq4_and_ttest(bow_all):
    rng = np.random.default_rng(0)
    expl = [rng.normal(size=len(s.split())) for s in HAND_SENTENCES]
    labels = np.array([1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1])
    percy = PERCY(bow_all, HAND_SENTENCES, labels, tokenizer=bow_all.tokenizer)
    d = percy.details(expl)
    p1_all = bow_all.predict_proba(HAND_SENTENCES)
    np.testing.assert_allclose(percy.p_positive, p1_all, atol=1e-12)
    check_against_reference(d, HAND_SENTENCES, expl, p1_all, labels)
    # one row per structure: the "but ... though" sentence has two
    assert len(d) == len(HAND_SENTENCES) + 1
    assert list(d[d.sentence_index == 9].keyword) == ["but", "though"]
    for i, (k, kw) in enumerate(HAND_KEYWORDS):  # first keyword attributes kept
        assert percy.keyword_indices[i] == k and percy.keywords[i] == kw
    assert list(d.columns) == [
        "sentence_index",
        "sentence",
        "keyword",
        "keyword_index",
        "rule_conjunct",
        "target",
        "prediction",
        "p_positive",
        "correct",
        "E_a",
        "E_b",
        "n_a",
        "n_b",
        "p_value",
        "score",
    ]


@pytest.mark.parametrize(
    "options",
    [
        dict(test="welch"),
        dict(test="mannwhitneyu"),
        dict(test=None),
        dict(alternative="two-sided"),
        dict(contributions="typeset"),
        dict(top_k=2, test="mannwhitneyu", alternative="two-sided"),
    ],
)
def test_options_match_reference(bow_all, options):
    rng = np.random.default_rng(1)
    sents = HAND_SENTENCES
    expl = [rng.normal(size=len(s.split())) for s in sents]
    labels = rng.integers(0, 2, len(sents))
    percy = PERCY(bow_all, sents, labels, tokenizer=bow_all.tokenizer, **options)
    check_against_reference(percy.details(expl), sents, expl, percy.p_positive, labels, **options)


def test_top_k_applies_to_comparison_and_test(bow_all):
    rng = np.random.default_rng(2)
    sents = HAND_SENTENCES[:-1]
    expl = [rng.normal(size=len(s.split())) for s in sents]
    labels = np.ones(11, int)
    full = PERCY(bow_all, sents, labels, tokenizer=bow_all.tokenizer).details(expl)
    metric = PERCY(bow_all, sents, labels, tokenizer=bow_all.tokenizer, top_k=2)
    top = metric.details(expl)
    i, k = 8, 2  # "terrible pacing but a good score and a great lead performance"
    w = expl[i]
    p1 = full.p_positive[i]
    c = np.where(w > 0, w * p1, -w * (1 - p1))
    a, b = np.sort(c[:k])[::-1][:2], np.sort(c[k + 1 :])[::-1][:2]
    assert top.E_a[i] == pytest.approx(a.mean()) and top.E_b[i] == pytest.approx(b.mean())
    assert top.E_b[i] != pytest.approx(full.E_b[i])  # E[b] is the mean of the top 2
    assert top.n_b[i] == 2 and full.n_b[i] == len(w) - k - 1
    assert top.p_value[i] == pytest.approx(scipy.stats.ttest_ind(a, b, alternative="less").pvalue)
    check_against_reference(top, sents, expl, metric.p_positive, labels, top_k=2)


def test_ttest_weakness_correct_decision_on_b_can_score_zero(b_only):
    """The paper's numbers (PERCY < 0.25 even for the best models) are consistent with
    this: B decides, correctly and with E[a] < E[b], but holds a single sentiment word
    among neutral ones, so the t-test on the c_i is not significant and PERCY is 0."""
    sentence = "the acting and the cast were fine but the plot of the film was dull at the end"
    expl = exact(b_only, [sentence])
    percy = PERCY(b_only, [sentence], [0], tokenizer=b_only.tokenizer)
    row = percy.details(expl).iloc[0]
    assert row.prediction == 0 and row.correct
    assert row.E_a < row.E_b  # the right conjunct dominates...
    assert row.p_value > 0.05  # ...but not significantly
    assert row.score == 0.0
    no_test = PERCY(b_only, [sentence], [0], tokenizer=b_only.tokenizer, test=None)
    assert no_test.detailed_evaluate(expl)[0] == 1.0
    # with two sentiment words among neutral ones it is still not significant
    two = "the acting and the cast were fine but the plot of the film was dull and lifeless"
    p2 = PERCY(b_only, [two], [0], tokenizer=b_only.tokenizer)
    row2 = p2.details(exact(b_only, [two])).iloc[0]
    assert row2.correct and row2.E_a < row2.E_b and row2.p_value > 0.05 and row2.score == 0


def test_empty_conjunct_scores_zero_and_first_keyword_counts(b_only):
    sents = ["but superb wonderful brilliant", "dull but superb though awful"]
    percy = PERCY(b_only, sents, [1, 1], tokenizer=b_only.tokenizer, test=None)
    d = percy.details(exact(b_only, sents))
    assert d.n_a[0] == 0 and d.score[0] == 0.0
    assert d.keyword[1] == "but" and d.rule_conjunct[1] == "B" and d.keyword_index[1] == 1


# ----------------------------------------------------------------------------- rules
def test_rules_extend_replace_and_remove(bow_all):
    sents = ["dull however superb", "dull but superb", "dull while superb"]
    w = [np.array([-1.0, 0.0, 2.0])] * 3
    ext = PERCY(bow_all, sents, [1, 1, 1], tokenizer=bow_all.tokenizer, rules={"However": "B"})
    assert ext.keywords == ["however", "but", "while"]
    rep = PERCY(
        bow_all, sents, [1, 1, 1], tokenizer=bow_all.tokenizer, rules=RuleTable({"however": "A"})
    )
    assert rep.keywords == ["however", None, None]
    assert rep.details(w).rule_conjunct[0] == "A"
    rem = PERCY(bow_all, sents, [1, 1, 1], tokenizer=bow_all.tokenizer, rules={"while": None})
    assert rem.keywords == [None, "but", None] and rem.n_without_keyword == 2


@pytest.mark.parametrize(
    "rules, exc, match",
    [
        ({"however": "C"}, ValueError, r"`rules\['however'\]` must be 'A', 'B' or None"),
        ({"even though": "A"}, ValueError, "single words"),
        ({"": "A"}, ValueError, "non-empty"),
        ({"However": "A", "however": "B"}, ValueError, "both"),
        (["but"], TypeError, "mapping"),
        ({k: None for k in ALL_KEYWORDS}, ValueError, "at least one keyword"),
    ],
)
def test_bad_rules(bow_all, rules, exc, match):
    with pytest.raises(exc, match=match):
        PERCY(bow_all, ["a but b"], [1], tokenizer=bow_all.tokenizer, rules=rules)


def test_bad_rule_table():
    with pytest.raises(ValueError, match="at least one keyword"):
        RuleTable({})
    with pytest.raises(ValueError, match="must be 'A' or 'B'"):
        RuleTable({"but": None})


# ----------------------------------------------------------------------------- errors
def test_counts_differ(bow_all):
    with pytest.raises(ValueError, match="one label per sentence: got 1 targets for 2 sentences"):
        PERCY(bow_all, ["a but b", "c"], [1], tokenizer=bow_all.tokenizer)


@pytest.mark.parametrize(
    "targets, match",
    [
        ([0, 2], r"`targets` must be integers in \[0, 1\], got 2 \(1 of 2 values\)"),
        ([0.5, 1.0], r"`targets` must be integers in \[0, 1\], got 0.5"),
        ([1.0, np.nan], r"`targets` must be an array of finite values only, got 1 NaN"),
        (["pos", "neg"], "`targets` must be an array of .*got dtype"),
        (None, "`targets` must be a NumPy array.*got None"),
        (np.zeros((2, 1, 1)), r"`targets` must be an array of shape \(N,\), \(N, 1\) or \(N, 2\)"),
        (np.zeros((2, 3)), r"shape \(N,\), \(N, 1\) or \(N, 2\)"),
        (np.array([[1, 1], [0, 1]]), "one-hot"),
    ],
)
def test_non_binary_targets(bow_all, targets, match):
    with pytest.raises((ValueError, TypeError), match=match):
        PERCY(bow_all, ["a but b", "c but d"], targets, tokenizer=bow_all.tokenizer)


def test_explanation_length_names_index_and_lengths(bow_all):
    percy = PERCY(
        bow_all, ["a but b", "the plot but the cast"], [1, 0], tokenizer=bow_all.tokenizer
    )
    with pytest.raises(ValueError, match=r"`explanations\[1\]`.*got shape \(4,\) for 5 tokens"):
        percy.evaluate([np.zeros(3), np.zeros(4)])
    with pytest.raises(ValueError, match="one attribution array per sentence: got 1 for 2"):
        percy.evaluate([np.zeros(3)])
    with pytest.raises(ValueError, match="finite"):
        percy.evaluate([np.zeros(3), np.array([0, np.nan, 0, 0, 0])])
    with pytest.raises(ValueError, match=r"`explanations\[0\]` is None but sentence 0 holds"):
        percy.evaluate([None, np.zeros(5)])
    with pytest.raises(TypeError, match="sequence of per-token attribution arrays"):
        percy.evaluate(3.0)
    # a (T, 1) column is refused, not flattened (nor a (1, T) row): the rank is declared
    for shape in ((5, 1), (1, 5)):
        with pytest.raises(ValueError, match=r"`explanations\[1\]` must be .*\(T,\).* got shape"):
            percy.evaluate([np.zeros(3), np.zeros(shape)])


@pytest.mark.parametrize("out_shape", [(3,), (1,), ()])
def test_model_output_shape(out_shape):
    def model(x):
        return np.full((len(x),) + out_shape, 0.5)

    if out_shape == (1,):
        PERCY(model, ["a but b"], [1])  # (N, 1) is fine
        return
    with pytest.raises(ValueError, match=r"shape \(N, 1\) \(sigmoid\) or \(N, 2\)"):
        PERCY(model, ["a but b"], [1])


def test_model_output_must_be_probabilities():
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        PERCY(lambda x: np.full((len(x), 1), 3.0), ["a but b"], [1])


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(test="chi2"), ValueError, "`test` must be one of"),
        (dict(alpha=0.0), ValueError, r"`alpha` must be in \(0, 1\), got 0"),
        (dict(alpha=1.0), ValueError, r"`alpha` must be in \(0, 1\), got 1"),
        (dict(alpha=1.5), ValueError, r"`alpha` must be in \(0, 1\), got 1.5"),
        (dict(top_k=0), ValueError, "`top_k` must be >= 1"),
        (dict(batch_size=0), ValueError, "`batch_size` must be >= 1"),
    ],
)
def test_bad_options(bow_all, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        PERCY(bow_all, ["a but b"], [1], tokenizer=bow_all.tokenizer, **kwargs)


def test_inputs_must_be_sentences(bow_all):
    with pytest.raises(TypeError, match="single str"):
        PERCY(bow_all, "a but b", [1], tokenizer=bow_all.tokenizer)
    with pytest.raises(TypeError, match=r"`inputs\[1\]` must be a str"):
        PERCY(bow_all, ["a but b", 3], [1, 1], tokenizer=bow_all.tokenizer)


# ----------------------------------------------------------------------------- no keyword
def test_sentences_without_keyword_are_counted_and_reported(bow_all):
    sents = ["dull but superb", "a good film", "superb", "awful yet fine"]
    percy = PERCY(bow_all, sents, [1, 1, 1, 1], tokenizer=bow_all.tokenizer, test=None)
    assert percy.n_without_keyword == 2
    expl = [np.array([-1.0, 0, 2.0]), None, np.zeros(1), np.array([-2.0, 0, 0.5])]
    scores = percy.detailed_evaluate(expl)
    assert np.isnan(scores[[1, 2]]).all() and not np.isnan(scores[[0, 3]]).any()
    with pytest.warns(NoRuleKeywordWarning, match="2 of 4 per-sample scores.*no rule keyword"):
        value = percy.evaluate(expl)
    assert value == pytest.approx(np.nanmean(scores))
    none = PERCY(bow_all, ["a good film"], [1], tokenizer=bow_all.tokenizer)
    with pytest.warns(NoRuleKeywordWarning, match="all 1 per-sample scores.*no rule keyword"):
        assert np.isnan(none.evaluate([np.zeros(3)]))


def test_explain_runs_only_on_keyword_sentences(bow_all):
    sents = ["dull but superb", "a good film"]
    seen = []

    def explainer(batch):
        seen.extend(batch)
        return [np.ones(len(s.split())) for s in batch]

    percy = PERCY(bow_all, sents, [1, 1], tokenizer=bow_all.tokenizer)
    expl = percy.explain(explainer)
    assert seen == ["dull but superb"] and expl[1] is None
    assert percy.detailed_evaluate(expl).shape == (2,)


# ----------------------------------------------------------------------------- invariances
def test_batch_size_input_types_and_order(bow_all):
    rng = np.random.default_rng(4)
    sents = HAND_SENTENCES
    labels = rng.integers(0, 2, len(sents))
    expl = [rng.normal(size=len(s.split())) for s in sents]
    ref = PERCY(bow_all, sents, labels, tokenizer=bow_all.tokenizer).details(expl)
    variants = [
        dict(inputs=np.array(sents), batch_size=1),
        dict(inputs=pd.Series(sents), batch_size=None),
        dict(inputs=tf.constant(sents), batch_size=5),
        dict(inputs=tf.data.Dataset.from_tensor_slices(sents).batch(4), batch_size=3),
    ]
    for v in variants:
        d = PERCY(
            bow_all, v["inputs"], labels, v["batch_size"], tokenizer=bow_all.tokenizer
        ).details(expl)
        pd.testing.assert_frame_equal(d, ref)
    onehot = np.eye(2, dtype=int)[labels]
    pd.testing.assert_frame_equal(
        PERCY(bow_all, sents, onehot, tokenizer=bow_all.tokenizer).details(expl), ref
    )
    order = rng.permutation(len(sents))
    shuffled = PERCY(
        bow_all, [sents[i] for i in order], labels[order], tokenizer=bow_all.tokenizer
    ).details([expl[i] for i in order])
    per_sentence = PERCY(bow_all, sents, labels, tokenizer=bow_all.tokenizer).detailed_evaluate(
        expl
    )
    reordered = PERCY(
        bow_all, [sents[i] for i in order], labels[order], tokenizer=bow_all.tokenizer
    ).detailed_evaluate([expl[i] for i in order])
    np.testing.assert_array_equal(reordered, per_sentence[order])
    assert len(shuffled) == len(ref)
    ragged = tf.ragged.constant([e.tolist() for e in expl])
    np.testing.assert_array_equal(
        PERCY(bow_all, sents, labels, tokenizer=bow_all.tokenizer).detailed_evaluate(ragged),
        per_sentence,
    )


def test_softmax_output_equals_sigmoid_output(bow_all):
    def softmax_model(ids):
        p = bow_all(ids)
        return np.concatenate([1 - p, p], axis=1)

    sents = HAND_SENTENCES
    expl = [np.linspace(-1, 1, len(s.split())) for s in sents]
    labels = np.ones(len(sents), int)
    a = PERCY(bow_all, sents, labels, tokenizer=bow_all.tokenizer).details(expl)
    b = PERCY(softmax_model, sents, labels, tokenizer=bow_all.tokenizer).details(expl)
    pd.testing.assert_frame_equal(a, b)


def test_raw_string_keras_model(bow_all):
    import keras

    inner = bow_all.to_keras()
    inp = keras.Input(shape=(1,), dtype="string")
    model = keras.Model(inp, inner(bow_all.tokenizer(inp)))
    sents = HAND_SENTENCES
    p = PERCY(model, sents, np.ones(len(sents), int))
    np.testing.assert_allclose(p.p_positive, bow_all.predict_proba(sents), atol=1e-6)
    assert PERCY.higher_is_better is True
