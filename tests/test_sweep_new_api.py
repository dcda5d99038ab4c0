"""Hostile inputs to the entry points that landed with the uncertainty / comparison /
text / rule-learner work (adversarial sweep): each must raise a clear error naming the
parameter, or give a documented NaN with its reason, never a raw crash or a wrong
number."""

import numpy as np
import pandas as pd
import pytest

from xplique_ext.commons.metric import BaseMetric
from xplique_ext.commons.params import ArrayLike, check_param
from xplique_ext.commons.uncertainty import summarize_scores
from xplique_ext.compare import compare, compare_scores


class _Scores(BaseMetric):
    higher_is_better = True

    def detailed_evaluate(self, explanations):
        return np.asarray(explanations, dtype=float)


def test_arraylike_nonempty_names_the_parameter():
    constraint = [ArrayLike("numeric", ndim=1, nonempty=True)]
    with pytest.raises(ValueError, match=r"`s` must be a non-empty array .*got shape \(0,\)"):
        check_param(np.zeros(0), "s", constraint)
    assert check_param([1.0], "s", constraint).shape == (1,)


def test_summarize_scores_refuses_empty_scores():
    # was: a NaN summary and the warning "no defined score (all 0 are NaN)"
    with pytest.raises(ValueError, match="`scores` must be a non-empty array"):
        summarize_scores([])


@pytest.mark.parametrize("function", ["compare_scores", "summarize_scores"])
def test_huge_n_resamples_is_refused_not_a_memory_error(function):
    # was: MemoryError from numpy (146 TiB)
    with pytest.raises(ValueError, match=r"`n_resamples` must be in \[100, 1000000\]"):
        if function == "compare_scores":
            compare_scores(
                {"A": np.arange(20.0), "B": np.zeros(20)}, higher_is_better=True, n_resamples=10**12
            )
        else:
            summarize_scores(np.arange(20.0), n_resamples=10**12)


def test_large_bootstrap_is_batched(monkeypatch):
    from xplique_ext.commons import uncertainty

    monkeypatch.setattr(uncertainty, "_RESAMPLE_BUDGET", 1000)
    assert uncertainty.resample_batch(200, 10) == 100
    assert uncertainty.resample_batch(50, 10) is None
    small = summarize_scores(np.arange(40.0), n_resamples=500, seed=0)
    assert np.isfinite([small.ci_low, small.ci_high]).all()
    assert small.ci_low < small.mean < small.ci_high


def test_compare_scores_refuses_empty_arrays():
    # was: a table of NaN, silently
    with pytest.raises(ValueError, match=r"`scores_by_name\['A'\]` must be a non-empty"):
        compare_scores({"A": [], "B": []}, higher_is_better=True)


def test_compare_scores_all_nan_pair_still_gives_nan_row():
    table = compare_scores(
        {"A": np.full(4, np.nan), "B": np.full(4, np.nan)}, higher_is_better=True, n_resamples=100
    )
    pair = table.pairs.iloc[0]
    assert np.isnan(pair["estimate"]) and pair["n"] == 0 and pair["n_undefined"] == 4


def test_compare_scores_refuses_misaligned_pandas_indexes():
    # was: compared by position, input 0 of A against input 19 of B: a wrong estimate
    b = np.arange(20.0)
    with pytest.raises(ValueError, match="pandas index of 'B' differs"):
        compare_scores(
            {"A": pd.Series(b + 1), "B": pd.Series(b[::-1], index=range(19, -1, -1))},
            higher_is_better=True,
            n_resamples=100,
        )
    same = compare_scores(
        {"A": pd.Series(b + 1), "B": pd.Series(b)}, higher_is_better=True, n_resamples=100
    )
    assert same.pairs["estimate"].iloc[0] == pytest.approx(1.0)


def test_compare_scores_text_scores_name_the_key():
    with pytest.raises(TypeError, match=r"`scores_by_name\['A'\]` must be an array of numbers"):
        compare_scores({"A": ["a", "b"]}, higher_is_better=True)


def test_compare_with_a_metric_class_says_so():
    # was: "detailed_evaluate() missing 1 required positional argument"
    with pytest.raises(TypeError, match="`metric` must be a metric instance.*class _Scores"):
        compare(_Scores, {"A": np.zeros(3)})


def test_load_sentiment_dataset_error_quotes_the_split_passed(tmp_path):
    from xplique_ext.text import load_sentiment_dataset

    file = tmp_path / "s140.csv"
    file.write_text('"4","1","d","q","u","great"\n')
    # was: "`split` must be one of ['train', 'test'], got 'validation'"
    with pytest.raises(
        ValueError,
        match=r"`split` must be one of \['train', 'test'\], "
        r"got 'dev'",
    ):
        load_sentiment_dataset("sentiment140", "dev", path=file)
    (tmp_path / "dev.tsv").write_text("sentence\tlabel\na mess\t0\n")
    assert load_sentiment_dataset("sst2", "dev", path=tmp_path)[0] == ["a mess"]


@pytest.mark.parametrize(
    "vocabulary, error, match",
    [
        # was: the characters of "good" taken for 4 tokens, silently
        (
            "good",
            TypeError,
            r"`vocabulary` must be a non-empty sequence of distinct tokens.*got 'good'",
        ),
        # was: the first 'good' got a random vector and the second the file's (a wrong row)
        (["", "good", "good"], ValueError, r"got 'good' more than once"),
        ([1, 2], TypeError, r"got an item 1 \(int\)"),
        ([], ValueError, r"got an empty sequence"),
    ],
)
def test_load_word_vectors_vocabulary(tmp_path, vocabulary, error, match):
    from xplique_ext.text import load_word_vectors

    file = tmp_path / "v.txt"
    file.write_text("good 1 0\nbad 0 1\n")
    with pytest.raises(error, match=match):
        load_word_vectors(file, vocabulary)
    matrix, found = load_word_vectors(file, pd.Index(["", "good", "film"]))
    assert found == 1 and matrix[1].tolist() == [1.0, 0.0]


def test_set_embedding_names_model_and_name():
    import keras

    from xplique_ext.text import set_embedding

    model = keras.Sequential(
        [
            keras.Input((4,), dtype="int32"),
            keras.layers.Embedding(5, 2, name="embedding"),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(1, name="dense"),
        ]
    )
    with pytest.raises(TypeError, match="`model` must be a Keras model"):
        set_embedding(None)  # was: AttributeError
    with pytest.raises(ValueError, match=r"`name` must be the name of a layer.*got 'emb'"):
        set_embedding(model, name="emb")
    with pytest.raises(ValueError, match=r"`name` must name an embedding layer, got 'dense'"):
        set_embedding(model, np.zeros((2, 1)), name="dense")  # was: Keras' set_weights error
    assert (
        set_embedding(model, np.ones((5, 2)), trainable=False)
        .get_layer("embedding")
        .get_weights()[0]
        .sum()
        == 10
    )


def test_summary_of_no_sample_is_nan_with_the_true_reason():
    from xplique_ext.commons.warnings import UndefinedScoreWarning
    from xplique_ext.rules.fire import FiRe

    # was: ValueError about a `scores` parameter the user never passed (after the
    # non-empty declaration) and, before it, "all 0 are NaN"
    with pytest.warns(UndefinedScoreWarning, match="no sample to score"):
        summary = FiRe(psi=1.0).summary([], [])
    assert np.isnan(summary.mean) and summary.n == 0 and summary.n_undefined == 0
    with pytest.warns(UndefinedScoreWarning, match="no sample to score"):
        assert np.isnan(FiRe(psi=1.0).evaluate([], []))


def test_summary_checks_its_settings_before_scoring():
    calls = []

    class Counted(_Scores):
        def detailed_evaluate(self, explanations):
            calls.append(1)
            return super().detailed_evaluate(explanations)

    for kwargs, error in (
        (dict(confidence=2), ValueError),
        (dict(n_resamples=10**9), ValueError),
        (dict(interval="normal"), ValueError),
        (dict(seed="a"), TypeError),
    ):
        with pytest.raises(error, match=f"`{next(iter(kwargs))}` must be"):
            Counted().summary(np.arange(5.0), **kwargs)
    assert calls == []  # was: the metric scored every input, then the setting was refused


def test_percy_text_attributions_name_the_parameter():
    from xplique_ext.metrics import PERCY
    from xplique_ext.text import BagOfWordsModel

    bow = BagOfWordsModel({"dull": -1.0, "superb": 2.0}, part="B")
    sentences = ["dull but superb", "superb yet dull"]
    percy = PERCY(bow, sentences, [1, 0], tokenizer=bow.tokenizer)
    # was: "could not convert string to float: 'a'" from NumPy
    with pytest.raises(TypeError, match=r"`explanations\[0\]` must be .*real numbers"):
        percy.summary([["a", "b", "c"], [1.0, 2.0, 3.0]])
    with pytest.raises(TypeError, match=r"`explanations\[1\]` must be .*real numbers"):
        percy.evaluate([[1.0, 2.0, 3.0], [True, False, True]])


def test_compare_scores_equal_infinities_are_undefined_differences():
    import warnings

    a = np.r_[np.arange(10.0), -np.inf]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # was: invalid value in subtract
        pair = compare_scores(
            {"A": a, "B": a + 0.0}, higher_is_better=True, n_resamples=100
        ).pairs.iloc[0]
    # was: n_undefined 0 and a NaN p-value from the NaN difference left in
    assert pair["n"] == 10 and pair["n_undefined"] == 1 and pair["p_value"] == 1.0


def test_summary_all_undefined_gives_the_reason():
    from xplique_ext.commons.warnings import UndefinedScoreWarning
    from xplique_ext.datasets import make_aixi_color
    from xplique_ext.metrics import GroundTruthLocalisation
    from xplique_ext.models import AIXIFunctionModel

    data = make_aixi_color(4, image_size=32, function="ssin", seed=1)
    metric = GroundTruthLocalisation(
        AIXIFunctionModel("ssin", dataset="color"),
        data.images,
        data.targets,
        masks=data.relevant_masks,
        measure="pointing_game",
        min_accuracy=0.0,
    )
    # was: "no defined score (all 4 are NaN)" without why (evaluate says why)
    with pytest.warns(UndefinedScoreWarning, match="no defined score.*Reason: .*constant map"):
        summary = metric.summary(np.zeros_like(data.ground_truth))
    assert np.isnan(summary.mean) and summary.n_undefined == 4


def test_rule_distillation_fit_checks_its_arguments():
    import tensorflow as tf

    from xplique_ext.text import build_cnn_classifier, make_vectorizer
    from xplique_ext.text.distillation import RuleDistillation

    s = ["good film but dull end", "dull film but good end", "a good film"] * 2
    y = [0, 1, 1] * 2
    tv = make_vectorizer(s, sequence_length=8)
    model = RuleDistillation(build_cnn_classifier(tv, embedding_dim=4, filters=2), tokenizer=tv)
    model.compile(optimizer="adam")
    # was: ZeroDivisionError, int('a'), a Keras shape error, and 2.5 silently 2
    for bad, error in ((0, ValueError), ("a", TypeError), (-1, ValueError), (2.5, TypeError)):
        with pytest.raises(error, match="`batch_size` must be"):
            model.fit(s, y, batch_size=bad, verbose=0)
    with pytest.raises(ValueError, match="`x` must hold at least one training sentence, got 0"):
        model.fit([], [], verbose=0)  # was: nothing trained, a Keras warning
    raw = tf.data.Dataset.from_tensor_slices((s, y)).batch(2)
    with pytest.raises(TypeError, match=r"`x` must be a tf.data.Dataset of \(dict, label\)"):
        model.fit(raw, verbose=0)  # was: TypeError about indices, got 'x_rule'
    prepared = tf.data.Dataset.from_tensor_slices((model.prepare(s), np.asarray(y))).batch(2)
    with pytest.raises(ValueError, match="`x` must hold at least one batch"):
        model.fit(prepared.take(0), verbose=0)
    assert "loss" in model.fit(prepared, verbose=0).history
