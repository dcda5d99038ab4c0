"""Vectorised evaluation (:mod:`xplique_ext.rules.evaluation`) against the
per-example loop of Algorithms 1-3, predictions, the tidy table, the labels checked
against the rule heads and the report's worked example."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.rules.parser_strategies import DATA_TEXT, RULES_TEXT, mutated
from tests.rules.parser_strategies import NAMES as VOYAGE_NAMES
from tests.rules.rules_reference import evaluate_rules_loop
from tests.rules.rules_voyage_expected import (
    FIGURES,
)
from tests.rules.sklearn_tables import frame_of
from xplique_ext.commons.warnings import DegenerateSettingWarning, XpliqueExtWarning
from xplique_ext.rules import (
    MEASURES,
    Attribute,
    Condition,
    ContingencyTables,
    Dataset,
    Names,
    ParseError,
    Rule,
    RuleEvaluation,
    RuleMetrics,
    RuleSet,
    evaluate_rules,
    example_path,
    load_voyage,
    parse_data,
    parse_rules,
    predict_rules,
    read_data,
    rule_measures,
    score_rules,
)
from xplique_ext.rules.measures import HIGHER_IS_BETTER

NAMES = Names(
    [
        Attribute("color", "nominal", ("red", "green", "blue")),
        Attribute("size", "enumerated", ("s", "m", "l")),
        Attribute("x", "real"),
        Attribute("k", "integer"),
        Attribute("y", "nominal", ("a", "b", "c")),
    ],
    "y",
)


@st.composite
def datasets(draw):
    n = draw(st.integers(min_value=1, max_value=25))
    missing = st.sampled_from(["?", "!", None])  # None: a regular value

    def column(values):
        out = []
        for _ in range(n):
            marker = draw(st.one_of(st.just(None), st.just(None), missing))
            out.append(marker if marker is not None else draw(values))
        return out

    frame = pd.DataFrame(
        {
            "color": column(st.sampled_from(["red", "green", "blue"])),
            "size": column(st.sampled_from(["s", "m", "l"])),
            "x": column(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0])),
            "k": column(st.integers(min_value=0, max_value=3)),
            "y": [draw(st.sampled_from(["a", "b", "c"])) for _ in range(n)],
        }
    )
    return Dataset.from_frame(frame.astype(object), NAMES)


@st.composite
def conditions(draw):
    kind = draw(st.sampled_from(["color", "size", "x", "k", "linear", "in"]))
    if kind == "color":
        return Condition(
            "color",
            draw(st.sampled_from(["=", "!="])),
            draw(st.sampled_from(["red", "green", "blue"])),
        )
    if kind == "size":
        return Condition(
            "size",
            draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="])),
            draw(st.sampled_from(["s", "m", "l"])),
        )
    if kind in ("x", "k"):
        return Condition(
            kind,
            draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="])),
            draw(st.sampled_from(["-1", "0", "0.5", "1", "2"])),
        )
    if kind == "in":
        values = draw(st.lists(st.sampled_from(["red", "green", "blue"]), min_size=1, max_size=3))
        return Condition("color", "in", tuple(values))
    terms = (("1", "x"), (draw(st.sampled_from(["-1", "0.5", "2"])), "k"))
    return Condition(
        None,
        draw(st.sampled_from(["<=", ">", "!=", "="])),
        draw(st.sampled_from(["0", "1", "1.5"])),
        terms,
    )


@st.composite
def rule_sets(draw):
    n_rules = draw(st.integers(min_value=1, max_value=5))
    rules = []
    for k in range(n_rules):
        body = tuple(
            tuple(draw(st.lists(conditions(), min_size=1, max_size=3)))
            for _ in range(draw(st.integers(min_value=1, max_value=2)))
        )
        rules.append(Rule(f"R{k + 1:04d}", body, draw(st.sampled_from(["a", "b", "c"]))))
    if draw(st.booleans()):
        rules.append(Rule(f"R{n_rules + 1:04d}", (), "a", is_default=True))
    return RuleSet(rules)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=datasets(),
    rules=rule_sets(),
    mode=st.sampled_from(["unordered", "ordered", "inter-class"]),
)
def test_vectorised_equals_per_example_loop(data, rules, mode):
    fast = evaluate_rules(rules, data, mode)
    slow = evaluate_rules_loop(rules, data, mode)
    assert fast.known == slow.known, (fast.known, slow.known)
    assert fast.unknown == slow.unknown, (fast.unknown, slow.unknown)
    # every example is in exactly one table of every rule
    np.testing.assert_array_equal(fast.known.n + fast.unknown.n, data.n_examples)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=datasets(),
    rules=rule_sets(),
    mode=st.sampled_from(["unordered", "ordered", "inter-class"]),
    cores=st.integers(2, 5),
)
def test_rows_counted_by_several_threads_add_up_to_the_loop(data, rules, mode, cores):
    # a table is counted in row parts by one thread per core above _ROWS_PER_THREAD
    # examples a part; here parts of 2 examples, so that tiny tables are split too
    from unittest import mock

    from xplique_ext.rules import evaluation

    with (
        mock.patch.object(evaluation, "_ROWS_PER_THREAD", 2),
        mock.patch.object(evaluation, "usable_cores", lambda: cores),
    ):
        fast = evaluate_rules(rules, data, mode)
    slow = evaluate_rules_loop(rules, data, mode)
    assert fast.known == slow.known and fast.unknown == slow.unknown


@settings(max_examples=60, deadline=None)
@given(data=datasets(), rules=rule_sets(), seed=st.integers(0, 2**16))
def test_invariant_to_example_order(data, rules, seed):
    order = np.random.default_rng(seed).permutation(data.n_examples)
    for mode in ("unordered", "ordered", "inter-class"):
        a = evaluate_rules(rules, data, mode)
        b = evaluate_rules(rules, data.take(order), mode)
        assert a.known == b.known and a.unknown == b.unknown


def test_unordered_rules_are_independent_and_ordered_first_wins():
    rules, data = load_voyage("ordered")
    unordered = evaluate_rules(rules, data, "unordered")
    ordered = evaluate_rules(rules, data, "ordered")
    # the first rule sees every example in both modes
    assert unordered.known == unordered.known and unordered.known.bh[0] == ordered.known.bh[0]
    # T3 and T15 covered by R0001 and R0004 when independent, only by R0001 when ordered
    assert (
        unordered.known.bh[3] + unordered.known.bhbar[3]
        > ordered.known.bh[3] + ordered.known.bhbar[3]
    )


def test_not_applicable_tests_are_false():
    names = Names([Attribute("a", "real"), Attribute("c", "nominal", ("p", "q"))], "c")
    data = Dataset.from_frame(
        pd.DataFrame({"a": ["!", "!", 1.0, "?"], "c": ["p", "q", "p", "q"]}), names
    )
    rules = parse_rules("R0001 IF a != 5 THEN CLASS = p")
    result = evaluate_rules(rules, data)
    # ! is known (first table) and false; ? goes to the second table and is true
    assert (
        result.known.bh[0],
        result.known.bhbar[0],
        result.known.bbarh[0],
        result.known.bbarhbar[0],
    ) == (1, 0, 1, 1)
    assert (result.unknown.bhbar[0], result.unknown.n[0]) == (1, 1)


@pytest.mark.parametrize("split", [False, True])  # True: rows counted by 3 threads
def test_labels_override_and_unknown_class(split, monkeypatch):
    from xplique_ext.rules import evaluation

    if split:
        monkeypatch.setattr(evaluation, "_ROWS_PER_THREAD", 4)
        monkeypatch.setattr(evaluation, "usable_cores", lambda: 3)
    rules, data = load_voyage("unordered")
    flipped = np.where(data.labels() == "go", "dont_go", "go")
    result = evaluate_rules(rules, data, labels=flipped)
    base = evaluate_rules(rules, data)
    np.testing.assert_array_equal(result.known.bh, base.known.bhbar)
    frame = data.to_frame()
    frame.loc[0, "voyage"] = "?"
    with pytest.warns(XpliqueExtWarning, match="1 example"):
        partial = evaluate_rules(rules, Dataset.from_frame(frame, data.names))
    np.testing.assert_array_equal(partial.known.n + partial.unknown.n, 14)
    with pytest.raises(ValueError, match="`labels` must have shape"):
        evaluate_rules(rules, data, labels=flipped[:3])


def test_mode_and_type_errors():
    rules, data = load_voyage()
    with pytest.raises(ValueError, match="`mode` must be one of"):
        evaluate_rules(rules, data, "sorted")
    for former in ("interclass", "inter-class ordered", "i", "o", "u", "Ordered"):  # 0.x spellings
        with pytest.raises(ValueError, match=r"`mode` must be one of \['unordered', 'ordered', "):
            evaluate_rules(rules, data, former)
    with pytest.raises(TypeError, match="`data` must be a Dataset"):
        evaluate_rules(rules, data.to_frame())
    with pytest.raises(TypeError, match="`rules` must be a RuleSet"):
        evaluate_rules("R0001", data)


def test_tidy_frame():
    rules, data = load_voyage("unordered")
    frame = evaluate_rules(rules, data).to_frame()
    assert list(frame.columns[:14]) == [
        "rule",
        "head",
        "mode",
        "condition",
        "bh",
        "bhbar",
        "bbarhbar",
        "bbarh",
        "n",
        "unknown_bh",
        "unknown_bhbar",
        "unknown_bbarhbar",
        "unknown_bbarh",
        "unknown_n",
    ]
    assert list(frame.columns[14:]) == list(MEASURES)
    assert len(frame) == 6 and frame["rule"].tolist()[0] == "R0001"
    assert frame.loc[0, "condition"] == "humidity < 83.00 AND windy = no"
    assert frame["n"].tolist() == [12, 14, 13, 13, 13, 11]


def test_rule_metrics_class():
    rules, data = load_voyage("unordered")
    metric = RuleMetrics(rules, "unordered")
    detailed = metric.detailed_evaluate(data)
    assert isinstance(detailed, np.ndarray) and detailed.shape == (6,)
    table = metric.details(data)
    np.testing.assert_array_equal(detailed, table["WRAcc"].to_numpy())
    np.testing.assert_array_equal(table["score"], table["WRAcc"])
    assert not hasattr(metric, "to_frame")  # one name, every metric's: details
    assert metric.evaluate(data) == pytest.approx(detailed.mean())
    np.testing.assert_array_equal(
        RuleMetrics(rules, measure="Err").detailed_evaluate(data), table["Err"]
    )
    assert metric(data) == metric.evaluate(data)
    assert RuleMetrics(rules, measure="Err").higher_is_better is False
    for measure in MEASURES:  # the metric reads the one table of directions
        assert RuleMetrics(rules, measure=measure).higher_is_better is HIGHER_IS_BETTER[measure]
    with pytest.raises(ValueError, match="`measure` must be one of"):
        RuleMetrics(rules, measure="accuracy")
    with pytest.raises(ValueError, match="`zero_division`"):
        RuleMetrics(rules, zero_division="ignore")


def test_predictions():
    rules, data = load_voyage("ordered")
    ordered = predict_rules(rules, data, "ordered")
    # T1: sunny 25 75 yes -> R0004 (temp < 24)? no: 25 -> DEFAULT go
    assert ordered[0] == "go"
    # T4: sunny 23 95 no -> R0002 dont_go
    assert ordered[3] == "dont_go"
    # T9: overcast 26 ? no -> R0001 covers thanks to ? (tests on ? are true)
    assert ordered[8] == "go"
    # T12: rain 19 70 ? -> R0001 (windy ?) -> go
    assert ordered[11] == "go"
    # unordered vote: T8 overcast 20 65 yes is covered by R0004 only (temp < 24)
    unordered = predict_rules(rules, data, "unordered")
    assert unordered[7] == "dont_go"
    # weights change the vote; ties go to the earliest covering rule
    # T11 rain 22 95 no: R0003 (go) and R0004 (dont_go) cover it
    assert unordered[10] == "go"
    weighted = predict_rules(rules, data, "unordered", weights=[1, 1, 1, 2])
    assert weighted[10] == "dont_go"
    with pytest.raises(ValueError, match=r"`weights` must hold one number per rule \(4\), got 2"):
        predict_rules(rules, data, "unordered", weights=[1, 1])
    with pytest.raises(
        ValueError, match=r"`weights` must be numbers in \[0, inf\) or None, got -1"
    ):
        predict_rules(rules, data, "unordered", weights=[1, 1, -1, 1])
    with pytest.raises(ValueError, match="only used with mode='unordered'"):
        predict_rules(rules, data, "ordered", weights=[1, 1, 1, 1])
    # no DEFAULT: uncovered examples get `missing`
    bare = RuleSet(list(rules.rules))
    assert predict_rules(bare, data, "ordered", missing="none")[0] == "none"


def test_regression_heads():
    names = Names([Attribute("a", "real"), Attribute("t", "real")], "t")
    data = Dataset.from_frame(
        pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "t": [1.0, 1.0, 2.0, 5.0]}), names
    )
    rules = parse_rules(
        "R0001 IF a <= 1 THEN CLASS = 1.0\nR0002 IF a >= 1 THEN CLASS = 4\nR0003 DEFAULT CLASS = 0"
    )
    np.testing.assert_allclose(predict_rules(rules, data, "ordered"), [1, 1, 4, 4])
    np.testing.assert_allclose(predict_rules(rules, data, "unordered"), [1, 2.5, 4, 4])
    result = evaluate_rules(rules, data)
    assert result.known.bh.tolist() == [2, 0]


def test_a_zero_weight_does_not_vote_and_huge_weights_do_not_overflow():
    rules, data = load_voyage("ordered")
    bare = RuleSet(list(rules.rules))  # no DEFAULT: an example no voting rule covers is None
    plain = predict_rules(bare, data, "unordered")
    # T8 is covered by R0004 alone: with weight 0 it gets no vote, as for numeric heads
    zero = predict_rules(bare, data, "unordered", weights=[1, 1, 1, 0], missing="none")
    assert plain[7] == "dont_go" and zero[7] == "none"
    # T11: R0003 (go) and R0004 (dont_go); R0004 at weight 0 leaves go, R0003 at 0 dont_go
    assert zero[10] == "go"
    assert predict_rules(bare, data, "unordered", weights=[1, 1, 0, 1])[10] == "dont_go"
    # weights near the float maximum: the sums do not overflow (inf would tie everything)
    huge = predict_rules(bare, data, "unordered", weights=[1e308, 1e308, 1e308, 1.5e308])
    assert huge.tolist() == predict_rules(bare, data, "unordered", weights=[2, 2, 2, 3]).tolist()
    names = Names([Attribute("a", "real"), Attribute("t", "real")], "t")
    frame = Dataset.from_frame(pd.DataFrame({"a": [0.0, 1.0, 2.0], "t": [1.0, 1.0, 2.0]}), names)
    numeric = parse_rules("R0001 IF a <= 1 THEN CLASS = 1.0\nR0002 IF a >= 1 THEN CLASS = 4")
    np.testing.assert_allclose(
        predict_rules(numeric, frame, "unordered", weights=[1e308, 1e308]), [1, 2.5, 4]
    )
    np.testing.assert_allclose(
        predict_rules(numeric, frame, "unordered", weights=[0, 1]), [np.nan, 4, 4]
    )


def test_weights_of_chunk_predictions_are_checked_when_called():
    rules, _ = load_voyage("ordered")
    chunks = read_data(example_path("voyage.test"), chunksize=4)
    with pytest.raises(ValueError, match=r"`weights` must hold one number per rule \(4\), got 2"):
        predict_rules(rules, chunks, "unordered", weights=[1, 1])  # not iterated yet
    with pytest.raises(ValueError, match="only used with mode='unordered'"):
        predict_rules(rules, chunks, "ordered", weights=[1, 1, 1, 1])


def test_as_array_is_in_the_order_of_rule_measures_arguments():
    rules, data = load_voyage("unordered")
    evaluation = evaluate_rules(rules, data, "unordered")
    tables = evaluation.known
    assert tables.as_array()[0].tolist() == [
        tables.bh[0],
        tables.bhbar[0],
        tables.bbarh[0],
        tables.bbarhbar[0],
    ]
    again = pd.DataFrame(
        rule_measures(*tables.as_array().T, n_classes=evaluation.n_classes),
        index=evaluation.measures().index,
    )
    pd.testing.assert_frame_equal(again, evaluation.measures())
    # the printed frequencies keep the report's order f_bh, f_bh̄, f_b̄h̄, f_b̄h, n (Fig. 12)
    assert tables.frequencies()[0].round(3).tolist() == [0.25, 0.083, 0.417, 0.25, 12.0]


def test_bytes_labels_are_refused_by_name():
    rules, data = load_voyage("unordered")
    text = np.asarray(data.labels(), dtype=str)
    for labels in (text.astype(bytes), text.astype(bytes).astype(object)):
        with pytest.raises(
            TypeError,
            match=r"`labels` must be an array of class labels: str, "
            r"numbers or bools \(decode bytes\)",
        ):
            evaluate_rules(rules, data, labels=labels)
    with pytest.raises(TypeError, match=r"`reference` must be an array of class labels"):
        score_rules(rules, data, text.astype(bytes))
    assert evaluate_rules(rules, data, labels=text).known == evaluate_rules(rules, data).known


def test_tf_string_labels_are_refused_by_name():
    tf = pytest.importorskip("tensorflow")
    rules, data = load_voyage("unordered")
    with pytest.raises(TypeError, match=r"`labels` must be an array of class labels.*EagerTensor"):
        evaluate_rules(rules, data, labels=tf.constant(np.asarray(data.labels(), dtype=str)))


def test_question_mark_labels_are_unknown_like_nan():
    rules, data = load_voyage("unordered")
    for marker, series in (("?", 0), (np.nan, 0), (None, 0), (pd.NA, 0), (pd.NA, 1)):
        labels = np.asarray(data.labels(), dtype=object)
        labels[[0, 5]] = marker
        labels = pd.Series(labels, dtype="string") if series else labels
        with pytest.warns(XpliqueExtWarning, match=r"2 example\(s\) with an unknown"):
            evaluation = evaluate_rules(rules, data, labels=labels)
        assert (
            evaluation.known
            == evaluate_rules(rules, data.take(np.arange(1, 15)[np.arange(1, 15) != 5])).known
        ), marker
    reference = np.asarray(data.labels(), dtype=object)
    reference[0] = "?"  # score_rules leaves it out as a NaN reference
    nan_reference = reference.copy()
    nan_reference[0] = np.nan
    assert score_rules(rules, data, reference) == score_rules(rules, data, nan_reference)
    nan_reference[0] = pd.NA
    assert score_rules(rules, data, reference) == score_rules(rules, data, nan_reference)


# -- labels against the heads' classes -------------------------------------------------------------
@pytest.fixture(scope="module")
def voyage():
    rules, data = load_voyage("ordered")
    return rules, data, data.labels()


def test_labels_sharing_no_class_with_the_heads_are_refused(voyage):
    rules, data, y = voyage
    binary = np.where(y == "go", 1, 0)
    with pytest.raises(
        ValueError,
        match=r"`labels` share no class with the rule heads: "
        r"expected labels among \['dont_go', 'go'\], got \['0', '1'\]",
    ):
        evaluate_rules(rules, data, labels=binary)
    with pytest.raises(ValueError, match=r"`labels` share no class .* got \['0.5', '1.5'\]"):
        evaluate_rules(rules, data, labels=np.where(y == "go", 1.5, 0.5))
    with pytest.raises(ValueError, match=r"`reference` share no class with the rule heads"):
        score_rules(rules, data, reference=binary)


def test_labels_that_never_hold_a_head_class_warn_naming_it(voyage):
    rules, data, y = voyage
    partial = np.where(y == "go", "go", "stay").astype(object)
    with pytest.warns(UserWarning, match=r"`labels` never hold the class\(es\) \['dont_go'\]"):
        result = evaluate_rules(rules, data, labels=partial)
    assert result.known.bh.sum() > 0  # the 'go' rules still count
    with pytest.warns(UserWarning, match=r"`reference` never hold .*\['dont_go'\]"):
        score_rules(rules, data, reference=partial)


def test_labels_holding_every_head_class_pass_silently(voyage):
    rules, data, y = voyage
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = evaluate_rules(rules, data, labels=y)
        score_rules(rules, data, reference=y)
    assert same.known == evaluate_rules(rules, data).known


def test_numeric_heads_match_labels_by_value_as_score_rules_reads_them():
    rules = parse_rules("R0001 IF a <= 1 THEN CLASS = 1.0\nR0002 DEFAULT CLASS = 0.0")
    frame = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0]})
    data = Dataset.from_frame(frame, Names([Attribute("a", "real")]))
    y = np.array([1.0, 0.0, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every label is a class of the heads
        by_float = evaluate_rules(rules, data, labels=y)
        by_int = evaluate_rules(rules, data, labels=y.astype(int))
        by_text = evaluate_rules(rules, data, labels=np.array(["1", "0", "1", "1"]))
        by_text_float = evaluate_rules(rules, data, labels=np.array(["1.0", "0", "1.0", "1.0"]))
    # R0001 covers a = 0 and a = 1 (labels 1 and 0); a = 2 and a = 3 have the label 1
    known = by_float.known
    assert (known.bh[0], known.bhbar[0], known.bbarh[0], known.bbarhbar[0]) == (1, 1, 2, 0)
    assert by_int.known == by_text.known == by_text_float.known == known
    with pytest.warns(DegenerateSettingWarning, match="the rules declare no task"):
        score = score_rules(rules, frame, y)
    assert score.predictive_loss == 0.75  # predictions 1, 1, 0, 0 against 1, 0, 1, 1


def test_warnings_of_declared_entry_points_point_at_the_caller(voyage):
    """The declaration wrapper adds a frame: the warnings still name the caller's line."""
    rules, data, y = voyage
    partial = np.where(y == "go", "go", "stay").astype(object)
    with pytest.warns(UserWarning) as record:
        evaluate_rules(rules, data, labels=partial)
        score_rules(rules, data, reference=partial)
    assert {w.filename for w in record} == {__file__}
    unknown = np.where(y == "go", "go", None).astype(object)
    with pytest.warns(UserWarning) as record:  # examples left out; 'dont_go' never held
        evaluate_rules(rules, data, labels=unknown)
    assert any("left out of the contingency tables" in str(w.message) for w in record)
    assert all(w.filename == __file__ for w in record)


# -- declared parameters ---------------------------------------------------------------------------
def test_contingency_tables_are_counts_of_one_length():
    tables = ContingencyTables([1, 2], np.array([0, 0], dtype=np.int32), [3, 4], [5, 6])
    assert tables.bhbar.dtype == np.int64 and tables.n.tolist() == [9, 12]
    with pytest.raises(ValueError, match=r"`bh` must be integers >= 0, got -1"):
        ContingencyTables([-1, 2], [0, 0], [0, 0], [0, 0])
    with pytest.raises(TypeError, match=r"`bbarh` must be an array of integers, got dtype float"):
        ContingencyTables([1], [1], [0.5], [1])
    with pytest.raises(ValueError, match="must have one count per rule each"):
        ContingencyTables([1, 2], [0], [0, 0], [0, 0])


def test_a_rule_evaluation_declares_its_parts_and_its_table_choice():
    rules, data = load_voyage("ordered")
    evaluation = evaluate_rules(rules, data, mode="ordered")
    again = RuleEvaluation(
        rules, "ordered", evaluation.known, evaluation.unknown, n_classes=np.int64(2)
    )
    assert again.n_classes == 2 and type(again.n_classes) is int
    assert again.table("all") == evaluation.known + evaluation.unknown
    with pytest.raises(ValueError, match=r"`table` must be one of .*, got 'both'"):
        evaluation.table("both")
    with pytest.raises(TypeError, match="`known` must be a ContingencyTables, got"):
        RuleEvaluation(rules, "ordered", evaluation.known.as_array(), evaluation.unknown)


def test_names_mismatch_says_which_declaration_differs():
    from xplique_ext.rules import evaluate_rules, parse_rules
    from xplique_ext.rules.datafile import parse_data
    from xplique_ext.rules.names import parse_names

    ours, theirs = parse_names("yes, no.\nx: p, q.\n"), parse_names("yes, no.\nx: p, q, r.\n")
    rules = parse_rules("R0001  IF x = p\n        THEN CLASS = yes\n")
    with pytest.raises(ValueError, match=r"values=\('p', 'q'\).* instead of .*'r'\)"):
        evaluate_rules(rules, parse_data("p,yes\n", ours), "unordered", names=theirs)


# -- the report's worked example (voyage) ----------------------------------------------------------
@pytest.mark.parametrize("mode", ["unordered", "ordered", "inter-class"])
def test_api_matches_figures_and_loop(mode):
    rules, data = load_voyage(mode)
    result = evaluate_rules(rules, data, mode)
    for k, rule in enumerate(rules):
        known, unknown = FIGURES[mode][rule.id]
        np.testing.assert_allclose(result.known.frequencies()[k], known, atol=5e-4 + 1e-12)
        np.testing.assert_allclose(result.unknown.frequencies()[k], unknown, atol=5e-4 + 1e-12)
    loop = evaluate_rules_loop(rules, data, mode)
    assert loop.known == result.known and loop.unknown == result.unknown


def test_semantics_of_the_worked_example():
    """The T2/T3/T5/T9/T12 discussions of section 5."""
    rules, data = load_voyage("unordered")
    result = evaluate_rules(rules, data)
    # T3 counted as bh in both R0001 and R0003 (unordered)
    assert result.known.bh[0] == 3 and result.known.bh[2] == 1
    # T2, T9, T12 in R0001's unknown table; T5 in its known table
    assert result.unknown.n[0] == 3 and result.known.n[0] == 12
    rules, data = load_voyage("ordered")
    result = evaluate_rules(rules, data, "ordered")
    # T9 (unknown humidity) counted by R0001 and R0003: covering thanks to ? does not stop
    assert result.unknown.bh[0] == 1 and result.unknown.bh[2] == 1
    # T5 (unknown temperature) fired at R0002, so R0004 counts it in its known table
    assert result.known.n[3] == 15 and result.unknown.n[3] == 0


# -- a real table with quoted attribute names ------------------------------------------------------
def test_hand_written_rules_on_breast_cancer_with_quoted_names():
    frame = frame_of("breast_cancer")
    rules = parse_rules("""
R0001  IF "worst radius" > 16.8
        THEN CLASS = malignant
R0002  IF "worst concave points" > 0.14 AND "mean texture" > 16
        THEN CLASS = malignant
R0003  DEFAULT CLASS = benign""")
    data = Dataset.from_frame(frame, class_name="class")
    result = evaluate_rules(rules, data, "unordered")
    malignant = frame["class"].to_numpy() == "malignant"
    masks = [
        frame["worst radius"].to_numpy() > 16.8,
        (frame["worst concave points"].to_numpy() > 0.14) & (frame["mean texture"].to_numpy() > 16),
    ]
    for k, body in enumerate(masks):
        assert int(result.known.bh[k]) == int((body & malignant).sum())
        assert int(result.known.bhbar[k]) == int((body & ~malignant).sum())
        assert int(result.known.bbarh[k]) == int((~body & malignant).sum())
    measures = rule_measures(
        bh=result.known.bh,
        bhbar=result.known.bhbar,
        bbarh=result.known.bbarh,
        bbarhbar=result.known.bbarhbar,
    )
    np.testing.assert_allclose(
        measures["Sens"], [(m & malignant).sum() / malignant.sum() for m in masks]
    )


# -- property test: parsed texts evaluate or raise a ParseError ------------------------------------
@settings(max_examples=100, deadline=None)
@given(mutated(RULES_TEXT), mutated(DATA_TEXT))
def test_whole_pipeline_raises_only_parse_errors(rules_text, data_text):
    try:
        evaluate_rules(parse_rules(rules_text), parse_data(data_text, VOYAGE_NAMES))
    except ParseError:
        pass
