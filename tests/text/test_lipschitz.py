"""Local Lipschitz estimates (Eq. 9-10, ``xplique_ext/text/lipschitz.py``): known answers for
continuous inputs, the embedding space for text, and the inputs and explainer outputs
they refuse."""

import numpy as np
import pytest

from xplique_ext.text import (
    BagOfWordsModel,
    IntegratedGradientsTokenExplainer,
    LimeTokenExplainer,
    LocalLipschitzEstimate,
    ShapTokenExplainer,
    TextLocalLipschitzEstimate,
)


# ----------------------------------------------------------------------------- Lipschitz
def test_lipschitz_known_answers_for_continuous_inputs():
    x = np.random.default_rng(0).normal(size=(5, 2, 3))
    lle = LocalLipschitzEstimate(x, epsilon=0.1, nb_samples=8, seed=1)
    np.testing.assert_allclose(lle.detailed_evaluate(lambda z: 3.0 * z), 3.0, rtol=1e-5)
    assert lle.evaluate(lambda z: np.zeros_like(z)) == 0.0
    # a quadratic explainer E(x) = x^2: L(s) <= max |2x| + epsilon, close to it
    got = lle.detailed_evaluate(lambda z: z**2)
    bound = 2 * np.abs(x).reshape(5, -1).max(axis=1) + 0.1
    assert np.all(got <= bound * 1.001) and np.all(got > 0)
    assert LocalLipschitzEstimate.higher_is_better is False


def test_lipschitz_targets_batching_and_seed():
    x = np.random.default_rng(1).normal(size=(7, 4))
    y = np.arange(7)
    seen = []

    def explainer(inputs, targets):
        seen.append(len(inputs))
        return inputs * (1.0 + targets[:, None]) ** 0.5 + np.sin(inputs)

    a = LocalLipschitzEstimate(x, y, batch_size=3, nb_samples=4, seed=3).detailed_evaluate(
        explainer
    )
    assert max(seen) == 3
    b = LocalLipschitzEstimate(x, y, batch_size=None, nb_samples=4, seed=3).detailed_evaluate(
        explainer
    )
    np.testing.assert_allclose(a, b, rtol=1e-6)
    c = LocalLipschitzEstimate(x, y, nb_samples=4, seed=4).detailed_evaluate(explainer)
    assert not np.allclose(a, c)


def test_lipschitz_keeps_the_inputs_precision():
    """float64 inputs are perturbed and explained in float64: the explainer 3z scores 3 to
    float64 rounding (3.0000048 when cast to float32), and inputs near 1e8 get finite
    scores (NaN blamed on "a zero norm" that was the library's own cast)."""
    x = np.random.default_rng(0).normal(size=(5, 2, 3))
    seen = []

    def triple(z):
        seen.append(z.dtype)
        return 3.0 * z

    lle = LocalLipschitzEstimate(x, epsilon=0.1, nb_samples=8, seed=1)
    np.testing.assert_allclose(lle.detailed_evaluate(triple), 3.0, rtol=1e-12)
    assert set(seen) == {np.dtype(np.float64)}
    far = LocalLipschitzEstimate(1e8 + x, epsilon=0.1, nb_samples=8, seed=1)
    np.testing.assert_allclose(far.detailed_evaluate(lambda z: 2.0 * z), 2.0, rtol=1e-12)
    # float32 inputs stay float32; integer inputs become float64 (exact below 2**53)
    seen.clear()
    LocalLipschitzEstimate(x.astype(np.float32), nb_samples=2).detailed_evaluate(triple)
    assert set(seen) == {np.dtype(np.float32)}
    ints = np.arange(2**40, 2**40 + 6).reshape(3, 2)
    lle = LocalLipschitzEstimate(ints, nb_samples=4, seed=1)
    assert lle.inputs.dtype == np.float64 and (lle.inputs == ints).all()
    np.testing.assert_allclose(lle.detailed_evaluate(lambda z: 2.0 * z), 2.0, rtol=1e-9)


def test_lipschitz_nan_names_the_inputs_precision():
    # float16 near 1e4: every perturbation of 1e-3 rounds to the input itself
    lle = LocalLipschitzEstimate(np.full((2, 3), 1e4, np.float16), epsilon=1e-3, nb_samples=3)
    assert np.isnan(lle.detailed_evaluate(lambda z: z)).all()
    with pytest.warns(UserWarning, match="rounds to the input itself in the inputs' dtype"):
        lle.evaluate(lambda z: z)


def test_lipschitz_of_an_input_alone_or_in_any_order():
    """Each input's perturbations come from the seed and its values: scoring a subset of
    the inputs, the inputs in another order, or an input twice, gives each input the same
    estimate (they were drawn from the input's index)."""
    x = np.random.default_rng(1).normal(size=(6, 4))

    def explainer(z):
        return np.sin(3 * z) * z

    ref = LocalLipschitzEstimate(x, nb_samples=5, seed=3).detailed_evaluate(explainer)
    for order in ([5, 1], [3], [5, 4, 3, 2, 1, 0], [2, 2, 0]):
        got = LocalLipschitzEstimate(x[order], nb_samples=5, seed=3).detailed_evaluate(explainer)
        np.testing.assert_array_equal(got, ref[order])


def test_text_lipschitz_of_a_sentence_alone_or_in_any_order(bow_all):
    """A sentence's perturbations of the embedding come from the seed and its text."""
    bow = bow_all.to_keras()
    sents = ["the plot was dull but superb", "good", "a dull film but a good end"]
    ig = IntegratedGradientsTokenExplainer(bow, bow_all.tokenizer, steps=16, progress=False)
    ref = TextLocalLipschitzEstimate(sents, nb_samples=3, seed=0).detailed_evaluate(ig)
    for order in ([2, 0], [1], [2, 1, 0], [0, 0]):
        got = TextLocalLipschitzEstimate([sents[i] for i in order], nb_samples=3, seed=0)
        np.testing.assert_allclose(got.detailed_evaluate(ig), ref[order], rtol=1e-5)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(epsilon=0.0), ValueError, "`epsilon` must be in"),
        (dict(nb_samples=0), ValueError, "`nb_samples` must be >= 1"),
        (dict(targets=np.zeros(2)), ValueError, "one target per input"),
    ],
)
def test_lipschitz_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        LocalLipschitzEstimate(np.zeros((3, 2)), **kwargs)
    with pytest.raises(ValueError, match="shape"):
        LocalLipschitzEstimate(np.zeros(3))


def test_text_lipschitz_in_embedding_space(lexicon, bow_all):
    bow = bow_all.to_keras()
    sents = ["the plot was dull but superb", "good"]
    ig = IntegratedGradientsTokenExplainer(bow, bow_all.tokenizer, steps=32, progress=False)
    lle = TextLocalLipschitzEstimate(sents, nb_samples=3, seed=0)
    values = lle.detailed_evaluate(ig)
    assert values.shape == (2,) and np.all(np.isfinite(values)) and np.all(values >= 0)
    np.testing.assert_array_equal(values, lle.detailed_evaluate(ig))  # seeded
    for cls, kw in (
        (LimeTokenExplainer, dict(nb_samples=100)),
        (ShapTokenExplainer, dict(n_permutations=2)),
    ):
        v = lle.detailed_evaluate(cls(bow, bow_all.tokenizer, progress=False, **kw))
        assert np.all(np.isfinite(v)) and np.all(v >= 0)
    # a model whose output does not depend on the embedding: every explanation is stable
    with pytest.raises(TypeError, match="token explainer"):
        lle.detailed_evaluate(lambda s: s)
    with pytest.raises(ValueError, match="Embedding layer"):
        lle.detailed_evaluate(LimeTokenExplainer(bow_all, bow_all.tokenizer, progress=False))


def test_text_lipschitz_of_ig_on_linear_embedding_model():
    """For p = sigmoid(sum of a 1-d embedding), IG moves smoothly: the estimate is small
    and shrinks with epsilon (it is a local, first-order quantity)."""

    bow = BagOfWordsModel({"good": 0.5, "bad": -0.5})
    ig = IntegratedGradientsTokenExplainer(bow.to_keras(), bow.tokenizer, progress=False)
    big = TextLocalLipschitzEstimate(["good bad good"], epsilon=1.0, nb_samples=5)
    small = TextLocalLipschitzEstimate(["good bad good"], epsilon=0.1, nb_samples=5)
    lb, ls = big.evaluate(ig), small.evaluate(ig)
    assert 0 < ls < 1.0 and 0 < lb < 1.0


def test_lipschitz_with_an_xplique_explainer():
    """Any explainer of continuous inputs: Xplique's GradientInput on f(x) = 2 * sum(x)
    explains 2 * x, so L = 2 exactly."""
    import keras
    from xplique.attributions import GradientInput

    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1, use_bias=False)])
    model.layers[-1].set_weights([np.full((6, 1), 2.0, np.float32)])
    x = np.random.default_rng(2).normal(size=(4, 6)).astype(np.float32)
    explainer = GradientInput(model, batch_size=8)
    lle = LocalLipschitzEstimate(x, np.ones((4, 1), np.float32), batch_size=3, nb_samples=3)
    np.testing.assert_allclose(lle.detailed_evaluate(explainer), 2.0, rtol=1e-4)


def test_lipschitz_refuses_non_finite_inputs_and_unsized_targets():
    # NaN inputs gave NaN scores blamed on "a zero norm"; a scalar target a bare len() error
    with pytest.raises(ValueError, match="`inputs` must be an array of finite values only"):
        LocalLipschitzEstimate(np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match=r"`targets` must be an array of shape \(N, ...\)"):
        LocalLipschitzEstimate(np.zeros((2, 3)), targets=5)


def test_lipschitz_checks_the_explainer_outputs():
    lle = LocalLipschitzEstimate(np.ones((4, 3)), nb_samples=2)
    # one row per batch instead of one per input: a bare reshape error (or, when the sizes
    # divided, explanations silently paired with the wrong inputs)
    with pytest.raises(ValueError, match="`explainer` must return one output per input"):
        lle.detailed_evaluate(lambda z: z.mean(axis=0))
    with pytest.raises(ValueError, match="`explainer` must return finite outputs"):
        lle.detailed_evaluate(lambda z: z * np.nan)


def test_lipschitz_skips_only_the_perturbations_of_zero_norm():
    # near 1e6, float32 rounds a perturbation below 0.03 to zero: with 10 perturbations some
    # vanish and others do not; one of them made L NaN (the documented NaN is for an input
    # whose perturbations ALL vanish)
    lle = LocalLipschitzEstimate(np.full((3, 1), 1e6), epsilon=0.1, nb_samples=10)
    np.testing.assert_allclose(lle.detailed_evaluate(lambda z: 2.0 * z), 2.0)
