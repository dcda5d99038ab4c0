"""Iterative rule knowledge distillation (Hu et al. 2016): the teacher q, the pi schedule,
the conjuncts, and the Keras training wrapper in ``fit``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from xplique_ext.text import (
    RuleTable,
    distillation_pi,
    generate_sentences,
    rule_conjuncts,
    rule_teacher,
)


# --------------------------------------------------------------------------- teacher
def test_teacher_known_answer_by_hand():
    q = rule_teacher(np.array([0.3, 0.7]), np.array([0.9, 0.1]), C=6)
    np.testing.assert_allclose(q, [0.981, 0.019], atol=5e-4)
    # by hand: 0.3 e^{-0.6} / (0.3 e^{-0.6} + 0.7 e^{-5.4})
    a, b = 0.3 * np.exp(-6 * 0.1), 0.7 * np.exp(-6 * 0.9)
    np.testing.assert_allclose(q, [a / (a + b), b / (a + b)], rtol=1e-12)


def test_default_C_is_hu_et_al():
    np.testing.assert_allclose(
        rule_teacher([0.3, 0.7], [0.9, 0.1]), rule_teacher([0.3, 0.7], [0.9, 0.1], C=6.0)
    )


def test_C_zero_gives_p():
    rng = np.random.default_rng(0)
    p = rng.dirichlet([1, 1], size=50)
    pr = rng.dirichlet([1, 1], size=50)
    np.testing.assert_allclose(rule_teacher(p, pr, C=0), p, rtol=1e-12)


def test_no_rule_keeps_p():
    p = np.array([[0.3, 0.7], [0.3, 0.7]])
    pr = np.array([[0.9, 0.1], [0.9, 0.1]])
    q = rule_teacher(p, pr, C=6, has_rule=[False, True])
    np.testing.assert_array_equal(q[0], p[0])
    np.testing.assert_allclose(q[1], [0.981, 0.019], atol=5e-4)


def _direct(p, pr, C, logic="lukasiewicz"):
    """A direct transcription of q = p exp(-C (1 - r)) / Z with the Lukasiewicz rule
    (y => B) & (B => y), a => b = min(1, 1 - a + b), a & b = max(0, a + b - 1)."""
    out = np.empty_like(p)
    for i in range(p.shape[0]):
        w = np.empty(p.shape[1])
        for y in range(p.shape[1]):
            ind = 1.0  # 1(class = y) for the hypothesis y
            imp1 = min(1.0, 1.0 - ind + pr[i, y])
            imp2 = min(1.0, 1.0 - pr[i, y] + ind)
            r = max(0.0, imp1 + imp2 - 1.0) if logic == "lukasiewicz" else (imp1 + imp2) / 2
            w[y] = p[i, y] * np.exp(-C * (1.0 - r))
        out[i] = w / w.sum()
    return out


@pytest.mark.parametrize("logic", ["lukasiewicz", "average"])
@pytest.mark.parametrize("C", [0.5, 6.0, 40.0])
def test_teacher_vs_direct_transcription(C, logic):
    rng = np.random.default_rng(int(C * 10))
    for k in (2, 3):
        p = rng.dirichlet(np.ones(k), size=64)
        pr = rng.dirichlet(np.ones(k), size=64)
        np.testing.assert_allclose(
            rule_teacher(p, pr, C, logic=logic), _direct(p, pr, C, logic), rtol=1e-10
        )


def test_average_logic_is_half_C():
    p, pr = np.array([0.3, 0.7]), np.array([0.9, 0.1])
    np.testing.assert_allclose(
        rule_teacher(p, pr, 6, logic="average"), rule_teacher(p, pr, 3), rtol=1e-12
    )


@pytest.mark.parametrize("logic", ["lukasiewicz", "average"])
def test_training_teacher_is_rule_teacher(logic):
    """The teacher inside train_step (keras.ops, float32) is rule_teacher."""
    from xplique_ext.text.distillation import _teacher_ops

    rng = np.random.default_rng(7)
    p = rng.dirichlet([1, 1], size=40)
    pr = rng.dirichlet([1, 1], size=40)
    mask = rng.random(40) < 0.7
    got = _teacher_ops(
        p.astype("float32"), pr.astype("float32"), mask.astype("float32")[:, None], 6.0, logic
    )
    np.testing.assert_allclose(
        np.asarray(got), rule_teacher(p, pr, 6.0, has_rule=mask, logic=logic), atol=1e-5
    )


def test_large_C_no_overflow_and_moves_to_conjunct():
    q = rule_teacher([0.999, 0.001], [0.0, 1.0], C=1e4)
    assert np.isfinite(q).all()
    np.testing.assert_allclose(q, [0.0, 1.0], atol=1e-12)


def test_inputs_untouched_and_float_types():
    p = np.array([[0.3, 0.7]], dtype=np.float32)
    pr = np.array([[1, 0]])  # integer one-hot is a valid distribution
    p0, pr0 = p.copy(), pr.copy()
    q = rule_teacher(p, pr, 6)
    assert q.dtype == np.float64 and q.shape == (1, 2)
    np.testing.assert_array_equal(p, p0)
    np.testing.assert_array_equal(pr, pr0)


def test_empty_batch():
    assert rule_teacher(np.zeros((0, 2)), np.zeros((0, 2))).shape == (0, 2)


@pytest.mark.parametrize(
    "p, pr, kwargs, err, match",
    [
        ([0.3, 0.7], [0.9, 0.1, 0.0], {}, ValueError, "same shape"),
        ([[[0.3, 0.7]]], [[[0.9, 0.1]]], {}, ValueError, "shape"),
        ([1.0], [1.0], {}, ValueError, "K >= 2"),
        ([0.3, 0.8], [0.9, 0.1], {}, ValueError, "sum to 1"),
        ([-0.3, 1.3], [0.9, 0.1], {}, ValueError, r"\[0, 1\]"),
        ([np.nan, 0.5], [0.9, 0.1], {}, ValueError, "NaN"),
        ([0.3, 0.7], [np.inf, 0.1], {}, ValueError, "inf"),
        (["a", "b"], [0.9, 0.1], {}, TypeError, "real numbers"),
        ([0.3, 0.7], [0.9, 0.1], {"C": -1.0}, ValueError, "`C`"),
        ([0.3, 0.7], [0.9, 0.1], {"C": np.inf}, ValueError, "`C`"),
        ([0.3, 0.7], [0.9, 0.1], {"C": "6"}, TypeError, "`C`"),
        ([0.3, 0.7], [0.9, 0.1], {"logic": "godel"}, ValueError, "logic"),
        ([[0.3, 0.7]], [[0.9, 0.1]], {"has_rule": [True, False]}, ValueError, "has_rule"),
        ([[0.3, 0.7]], [[0.9, 0.1]], {"has_rule": [0.5]}, TypeError, "has_rule"),
        ([[0.3, 0.7]], [[0.9, 0.1]], {"has_rule": [2]}, TypeError, "has_rule"),
    ],
)
def test_teacher_refuses_bad_inputs_naming_them(p, pr, kwargs, err, match):
    with pytest.raises(err, match=match):
        rule_teacher(np.asarray(p) if not isinstance(p[0], str) else p, pr, **kwargs)


# --------------------------------------------------------------------------- schedule
def test_pi_schedule_of_hu_et_al():
    # get_pi(cur_iter=t, params=[0.95, 0]) = 1 - max(0.95^t, 0)
    t = np.array([0.0, 0.5, 1.0, 11.0, 100.0])
    np.testing.assert_allclose(distillation_pi(t), 1 - 0.95**t)
    assert distillation_pi(100.0, pi_max=0.5) == 0.5
    with pytest.raises(ValueError, match="`t`"):
        distillation_pi(-1.0)
    with pytest.raises(ValueError, match="`alpha`"):
        distillation_pi(1.0, alpha=1.5)


# --------------------------------------------------------------------------- conjuncts
def test_conjuncts_follow_rule_table():
    sentences = [
        "the plot was dull , but the cast shines",
        "though the plot was dull the cast shines",
        "a fine film",
        "But nothing after",
        "nothing before but",
    ]
    conj, flags = rule_conjuncts(sentences)
    assert conj[:3] == ["the cast shines", "", ""]  # "though": A is empty before it
    np.testing.assert_array_equal(flags, [True, False, False, True, False])
    assert conj[3] == "nothing after"
    conj_hu, flags_hu = rule_conjuncts(
        ["good but bad", "good yet bad"], rules=RuleTable({"but": "B"})
    )
    assert conj_hu == ["bad", ""] and flags_hu.tolist() == [True, False]


def test_conjuncts_match_the_generator():
    df = generate_sentences(60, seed=2, structured=1.0, comma=0.0)
    conj, flags = rule_conjuncts(df.sentence)
    assert flags.all()
    expected = [a if c == "A" else b for a, b, c in zip(df.a_text, df.b_text, df.rule_conjunct)]
    assert conj == expected


# --------------------------------------------------------------------------- training
@pytest.fixture(scope="module")
def small_data():
    df = generate_sentences(96, seed=5, structured=0.8, contrastive=0.8, max_tokens=16)
    return list(df.sentence), df.label.to_numpy()


@pytest.fixture(scope="module")
def small_tv(small_data):
    from xplique_ext.text import make_vectorizer

    return make_vectorizer(small_data[0], sequence_length=16)


def _cnn(tv, raw=False, seed=0):
    from xplique_ext.text import build_cnn_classifier

    return build_cnn_classifier(
        tv, raw_strings=raw, embedding_dim=8, filters=4, dropout=0.5, seed=seed
    )


def test_pi_zero_is_plain_cross_entropy(small_data, small_tv):
    """Same seed, same batch, one Adam step: the same weights as compile('bce') + fit."""
    import keras

    from xplique_ext.text import RuleDistillation

    sentences, y = small_data
    ids = small_tv(sentences).numpy().astype("int32")
    plain = _cnn(small_tv, seed=3)
    plain.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy")
    plain.fit(
        ids,
        y.astype("float32").reshape(-1, 1),
        batch_size=len(y),
        epochs=1,
        shuffle=False,
        verbose=0,
    )
    student = _cnn(small_tv, seed=3)
    model = RuleDistillation(student, tokenizer=small_tv, pi=0.0)
    model.compile(optimizer=keras.optimizers.Adam(1e-2))
    model.fit(sentences, y, batch_size=len(y), epochs=1, shuffle=False, verbose=0)
    for a, b in zip(plain.get_weights(), student.get_weights()):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-7)
    # and the distillation term does change the step (the check above can fail)
    other = _cnn(small_tv, seed=3)
    model2 = RuleDistillation(other, tokenizer=small_tv, pi=0.9)
    model2.compile(optimizer=keras.optimizers.Adam(1e-2))
    model2.fit(sentences, y, batch_size=len(y), epochs=1, shuffle=False, verbose=0)
    diff = max(float(np.abs(a - b).max()) for a, b in zip(plain.get_weights(), other.get_weights()))
    assert diff > 1e-5


def test_fit_two_epochs_token_ids(small_data, small_tv):
    import keras

    from xplique_ext.text import RuleDistillation

    sentences, y = small_data
    student = _cnn(small_tv)
    model = RuleDistillation(student, tokenizer=small_tv)
    model.compile(optimizer=keras.optimizers.Adam(1e-2))
    hist = model.fit(sentences, y, batch_size=32, epochs=2, verbose=0, shuffle=False)
    assert set(hist.history) == {"loss", "pi", "accuracy"}
    assert np.isfinite(hist.history["loss"]).all()
    # pi follows the schedule: 3 batches per epoch, steps t = 1/3 .. 6/3
    steps = np.arange(1, 7) / 3.0
    expected = [np.mean(1 - 0.95 ** steps[:3]), np.mean(1 - 0.95 ** steps[3:])]
    np.testing.assert_allclose(hist.history["pi"], expected, rtol=1e-5)
    assert int(model.optimizer.iterations.numpy()) == 6
    ev = model.evaluate(model.prepare(sentences), y, verbose=0, return_dict=True)
    assert 0 <= ev["accuracy"] <= 1
    ev2 = model.evaluate(sentences, y, verbose=0, return_dict=True)  # raw sentences too
    assert ev2["accuracy"] == ev["accuracy"]
    # the student was trained in place and predicts on its own
    assert student.predict(small_tv(sentences[:3]), verbose=0).shape == (3, 1)


def test_fit_on_a_dataset_with_validation(small_data, small_tv):
    import keras
    import tensorflow as tf

    from xplique_ext.text import RuleDistillation

    sentences, y = small_data
    model = RuleDistillation(_cnn(small_tv), tokenizer=small_tv)
    model.compile(optimizer=keras.optimizers.Adam(1e-2))
    prep = model.prepare(sentences)
    ds = tf.data.Dataset.from_tensor_slices((prep, y.astype("float32"))).batch(24)
    hist = model.fit(ds, epochs=2, verbose=0)
    steps = np.arange(1, 9) / 4.0  # 4 batches per epoch
    np.testing.assert_allclose(
        hist.history["pi"],
        [np.mean(1 - 0.95 ** steps[:4]), np.mean(1 - 0.95 ** steps[4:])],
        rtol=1e-5,
    )
    with pytest.raises(ValueError, match="finite"):
        model.fit(ds.repeat(), epochs=1, verbose=0)
    hist = model.fit(sentences, y, validation_data=(sentences[:20], y[:20]), verbose=0)
    assert "val_accuracy" in hist.history
    # the schedule goes on from the optimizer's 8 steps, now 3 batches per epoch
    np.testing.assert_allclose(
        hist.history["pi"], [np.mean(1 - 0.95 ** (np.arange(9, 12) / 3.0))], rtol=1e-5
    )


def test_fit_raw_strings_lstm(small_data, small_tv):
    import keras

    from xplique_ext.text import RuleDistillation, build_lstm_classifier

    sentences, y = small_data
    student = build_lstm_classifier(small_tv, raw_strings=True, embedding_dim=8, units=4)
    model = RuleDistillation(student)
    model.compile(optimizer=keras.optimizers.Adam(1e-2))
    hist = model.fit(sentences, y, batch_size=48, epochs=2, verbose=0)
    assert len(hist.history["loss"]) == 2 and np.isfinite(hist.history["loss"]).all()


def test_one_step_moves_p_toward_the_teacher(small_data, small_tv):
    """pi = 1, no dropout, one SGD step on one rule sentence: p(y=1|x) moves in the
    direction of q(y=1|x) - p(y=1|x), and q is rule_teacher of the student's outputs."""
    import keras

    from xplique_ext.text import RuleDistillation, build_cnn_classifier

    sentences, _ = small_data
    conj, flags = rule_conjuncts(sentences)
    moved = 0
    for i in np.flatnonzero(flags)[:4]:
        student = build_cnn_classifier(small_tv, embedding_dim=8, filters=4, dropout=0.0)
        model = RuleDistillation(student, tokenizer=small_tv, pi=1.0, C=6.0)
        prep = model.prepare([sentences[i]])
        p1 = float(student(prep["x"]).numpy()[0, 0])
        b1 = float(student(prep["x_rule"]).numpy()[0, 0])
        q1 = rule_teacher([1 - p1, p1], [1 - b1, b1], C=6.0)[1]
        model.compile(optimizer=keras.optimizers.SGD(0.5))
        model.fit([sentences[i]], [0], batch_size=1, epochs=1, verbose=0)  # label unused
        p1_after = float(student(prep["x"]).numpy()[0, 0])
        assert np.sign(p1_after - p1) == np.sign(q1 - p1)
        moved += 1
    assert moved == 4


def test_softmax_student(small_data, small_tv):
    import keras

    from xplique_ext.text import RuleDistillation

    sentences, y = small_data
    inp = keras.Input(shape=(16,), dtype="int32")
    h = keras.layers.Embedding(int(small_tv.vocabulary_size()), 4)(inp)
    h = keras.layers.GlobalAveragePooling1D()(h)
    out = keras.layers.Dense(2, activation="softmax")(h)
    model = RuleDistillation(keras.Model(inp, out), tokenizer=small_tv)
    model.compile(optimizer="adam")
    hist = model.fit(sentences, y, batch_size=32, epochs=2, verbose=0)
    assert np.isfinite(hist.history["loss"]).all()


def test_wrapper_refuses_bad_students_and_inputs(small_data, small_tv):
    import keras

    from xplique_ext.text import RuleDistillation

    sentences, y = small_data
    with pytest.raises(TypeError, match="student"):
        RuleDistillation(lambda x: x)
    with pytest.raises(ValueError, match="tokenizer"):
        RuleDistillation(_cnn(small_tv))
    with pytest.raises(ValueError, match="tokenizer"):
        RuleDistillation(_cnn(small_tv, raw=True), tokenizer=small_tv)
    inp = keras.Input(shape=(16,), dtype="int32")
    three = keras.Model(inp, keras.layers.Dense(3)(keras.layers.Embedding(50, 2)(inp))[:, 0])
    with pytest.raises(ValueError, match="binary"):
        RuleDistillation(three, tokenizer=small_tv)
    for kwargs, match in (({"C": -1}, "`C`"), ({"pi": 1.5}, "`pi`"), ({"alpha": 2}, "alpha")):
        with pytest.raises(ValueError, match=match):
            RuleDistillation(_cnn(small_tv), tokenizer=small_tv, **kwargs)
    model = RuleDistillation(_cnn(small_tv), tokenizer=small_tv)
    model.compile(optimizer="adam")
    with pytest.raises(ValueError, match="labels"):
        model.fit(sentences, y[:-1], verbose=0)
    with pytest.raises(ValueError, match="0/1"):
        model.fit(sentences, y + 2, verbose=0)
    with pytest.raises(TypeError, match="single str"):
        model.fit("one sentence", [1], verbose=0)
    with pytest.raises(ValueError, match="keys"):
        model.fit({"x": 1}, y, verbose=0)
    with pytest.raises(TypeError, match=r"`sample_weight` must be None \(Hu et al.'s"):
        model.fit(sentences, y, sample_weight=np.ones(len(y)), verbose=0)


def test_wrapper_refuses_logits_and_bad_fit_options(small_data, small_tv):
    """Refused, each with a named error: a logits student (it trained as if it gave
    probabilities), steps_per_epoch=-3 (pi < 0), epochs=-1 (an empty history); and with
    validation_split the schedule counts the training batches only, not the held-out ones."""
    import keras

    from xplique_ext.text import RuleDistillation

    sentences, y = small_data
    inp = keras.Input(shape=(16,), dtype="int32")
    pooled = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(50, 4)(inp))
    with pytest.raises(ValueError, match=r"output shape \(None, 2\) of logits"):
        RuleDistillation(keras.Model(inp, keras.layers.Dense(2)(pooled)), tokenizer=small_tv)

    class Subclassed(keras.Model):  # an AttributeError ('outputs') before
        def call(self, x):
            return keras.ops.ones((keras.ops.shape(x)[0], 1))

    with pytest.raises(TypeError, match="`student` must be a functional or Sequential"):
        RuleDistillation(Subclassed(), tokenizer=small_tv)
    model = RuleDistillation(_cnn(small_tv), tokenizer=small_tv)
    model.compile(optimizer="adam")
    for kwargs, match in (
        ({"steps_per_epoch": -3}, "`steps_per_epoch` must be >= 1"),
        ({"epochs": -1}, "`epochs` must be >= 1"),
        ({"validation_split": 1.0}, r"`validation_split` must be in \[0, 1\)"),
    ):
        with pytest.raises(ValueError, match=match):
            model.fit(sentences, y, verbose=0, **kwargs)
    with pytest.raises(ValueError, match="at least one training sentence, got 1"):
        model.fit(sentences[:1], y[:1], validation_split=0.5, verbose=0)
    model.fit(sentences, y, batch_size=16, validation_split=0.5, verbose=0)  # 48 of 96 train
    assert float(model._steps_per_epoch.numpy()) == 3 == model.optimizer.iterations.numpy()


def test_wrapper_reads_the_activation_of_the_output(small_data, small_tv):
    """The logits check reads the operation that makes the output: a Dense followed by
    keras.ops.sigmoid / keras.activations.softmax is a probability student (it was refused
    as logits: the last *layer* is the linear Dense), a Sequential built on an Input is taken
    (an AttributeError 'never been called' before) and a one-unit softmax (always 1) refused."""
    import keras

    from xplique_ext.text import RuleDistillation

    def head(out):
        inp = keras.Input(shape=(16,), dtype="int32")
        return keras.Model(
            inp, out(keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(vocab, 4)(inp)))
        )

    sentences, y = small_data
    vocab = small_tv.vocabulary_size()
    for student in (
        head(lambda h: keras.ops.sigmoid(keras.layers.Dense(1)(h))),
        head(lambda h: keras.activations.softmax(keras.layers.Dense(2)(h))),
        keras.Sequential(
            [
                keras.Input((16,), dtype="int32"),
                keras.layers.Embedding(vocab, 4),
                keras.layers.GlobalAveragePooling1D(),
                keras.layers.Dense(1, "sigmoid"),
            ]
        ),
    ):
        model = RuleDistillation(student, tokenizer=small_tv)
        model.compile(optimizer="adam")
        assert np.isfinite(model.fit(sentences, y, batch_size=48, verbose=0).history["loss"]).all()
    with pytest.raises(ValueError, match=r"\(None, 1\) of a softmax over one unit"):
        RuleDistillation(head(keras.layers.Dense(1, activation="softmax")), tokenizer=small_tv)
    with pytest.raises(TypeError, match="got a Sequential without them"):  # not "subclassed"
        RuleDistillation(keras.Sequential([keras.layers.Dense(1, "sigmoid")]), tokenizer=small_tv)


def test_dict_student_over_a_keras_hub_backbone(tiny_bert):
    """A student on a keras-hub backbone's dict: prepare() packs the sentences and their
    rule conjuncts with the preprocessor; pi = 0 is plain cross-entropy training here too
    (same weights as Keras' own fit on the packed inputs); the preprocessor is required."""
    pytest.importorskip("keras_hub")
    import keras

    from xplique_ext.text import RuleDistillation, build_hub_classifier

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad", "film", "but"]
    _, pre, backbone = tiny_bert(vocab, sequence_length=10, seed=2)
    s = ["good film but bad", "bad film but good", "good film", "bad film"]
    y = np.array([0, 1, 1, 0])
    with pytest.raises(ValueError, match="`tokenizer` is needed"):
        RuleDistillation(build_hub_classifier(backbone, "cnn", filters=2))
    prep = RuleDistillation(build_hub_classifier(backbone, "cnn", filters=2), tokenizer=pre)
    x = prep.prepare(s)
    np.testing.assert_array_equal(x["x"]["token_ids"], pre(s)["token_ids"])
    np.testing.assert_array_equal(
        x["x_rule"]["token_ids"], pre(["bad", "good", "", ""])["token_ids"]
    )
    np.testing.assert_array_equal(x["has_rule"][:, 0], [1, 1, 0, 0])
    weights = []
    for distil in (True, False):
        model = build_hub_classifier(backbone, "cnn", trainable=True, filters=2, dropout=0.0)
        if distil:
            trainer = RuleDistillation(model, tokenizer=pre, pi=0.0)
            trainer.compile(optimizer=keras.optimizers.SGD(0.1))
            trainer.fit(s, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
        else:
            model.compile(optimizer=keras.optimizers.SGD(0.1), loss="binary_crossentropy")
            with warnings.catch_warnings():  # the unused pooler: no gradient (Keras warns)
                warnings.simplefilter("ignore", UserWarning)
                model.fit(
                    pre(s),
                    y[:, None].astype("float32"),
                    batch_size=4,
                    epochs=1,
                    verbose=0,
                    shuffle=False,
                )
        weights.append(model.get_weights())
    for a, b in zip(*weights):
        np.testing.assert_allclose(a, b, atol=1e-6)
    assert any(np.abs(a - b).max() > 0 for a, b in zip(weights[0], backbone.get_weights()))


def test_rule_teacher_names_the_first_row_not_summing_to_one():
    message = r"`p_rule` rows must sum to 1 .* got a row summing to 0\.9$"
    with pytest.raises(ValueError, match=message):
        rule_teacher([[0.5, 0.5], [0.3, 0.7]], [[0.5, 0.5], [0.4, 0.5]])
    q = rule_teacher([[0.3, 0.7]], [[0.9, 0.1]], C=6, logic="average")
    expected = np.array([0.3, 0.7]) * np.exp(-6 * (1 - 0.5 * (1 + np.array([0.9, 0.1]))))
    np.testing.assert_allclose(q[0], expected / expected.sum(), rtol=1e-12)


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


@pytest.mark.parametrize("activation", ["tanh", "relu", "softplus"])
def test_students_that_return_no_probabilities_are_refused(small_data, small_tv, activation):
    """A tanh or relu student was trained as if it returned probabilities (the loss fell
    from 6.24 to 5.89 with the accuracy stuck at 0.594): refused, as a layer's activation
    or as an operation, before any training."""
    import keras

    from xplique_ext.text import RuleDistillation

    def head(out):
        inp = keras.Input(shape=(16,), dtype="int32")
        pooled = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(50, 4)(inp))
        return keras.Model(inp, out(pooled))

    match = rf"`student` must be a binary classifier .* of a {activation} activation"
    for units in (1, 2):
        with pytest.raises(ValueError, match=match):
            RuleDistillation(head(keras.layers.Dense(units, activation)), tokenizer=small_tv)
    operation = getattr(keras.ops, activation)
    with pytest.raises(ValueError, match=match):
        RuleDistillation(head(lambda h: operation(keras.layers.Dense(1)(h))), tokenizer=small_tv)


def test_a_student_of_the_wrong_shape_names_its_activation_too(small_tv):
    import keras

    from xplique_ext.text import RuleDistillation

    inp = keras.Input(shape=(16,), dtype="int32")
    pooled = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(50, 4)(inp))
    with pytest.raises(
        ValueError, match=r"got output shape \(None, 3\) of a tanh activation \(not"
    ):
        RuleDistillation(
            keras.Model(inp, keras.layers.Dense(3, "tanh")(pooled)), tokenizer=small_tv
        )
    with pytest.raises(ValueError, match=r"got output shape \(None, 3\)$"):
        RuleDistillation(
            keras.Model(inp, keras.layers.Dense(3, "sigmoid")(pooled)), tokenizer=small_tv
        )


def test_student_outputs_are_checked_before_training(small_data, small_tv):
    """An output the wrapper cannot read (a Lambda layer) is checked on the first batch of
    fit and evaluate, sentences and rule conjuncts: values outside [0, 1] are refused
    before any step (the optimizer has made none)."""
    import keras

    from xplique_ext.text import RuleDistillation

    sentences, y = small_data
    vocab = small_tv.vocabulary_size()
    inp = keras.Input(shape=(16,), dtype="int32")
    pooled = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(vocab, 4)(inp))
    shifted = keras.layers.Lambda(lambda t: t - 2.0)(keras.layers.Dense(1, "sigmoid")(pooled))
    model = RuleDistillation(keras.Model(inp, shifted), tokenizer=small_tv)
    model.compile(optimizer="adam")
    with pytest.raises(ValueError, match=r"`student` must return probabilities in \[0, 1\]"):
        model.fit(sentences, y, batch_size=16, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 0
    with pytest.raises(ValueError, match=r"`student` must return probabilities in \[0, 1\]"):
        model.evaluate(sentences, y, verbose=0)
