"""Local Lipschitz estimate of an explainer (Eq. 9-10 of the PERCY paper, after
Alvarez-Melis & Jaakkola 2018).

For an input s and its explanation E_s, with perturbations z drawn in the ball
||s - z||_2 <= epsilon (Eq. 9),

    L(s) = max_z ||E_s - E_z||_2 / ||s - z||_2                                  (Eq. 10)

**Lower is better** (stable explanations); the value has no universal scale and depends
on the model and the data.

* :class:`LocalLipschitzEstimate` works with any explainer of continuous inputs
  (Xplique's explainers, for instance): ``explainer(inputs, targets) -> explanations``.
* :class:`TextLocalLipschitzEstimate` works for text in the embedding space: z adds a
  perturbation to the embedding output of the sentence's tokens (padding untouched),
  epsilon = 0.1 by default, and E_z explains the model whose embedding output is shifted
  accordingly.

What it means for each framework on text
-----------------------------------------
* **IG** is a function of the embedding, so E_z is plainly IG at the perturbed embedding
  (with the same zero-embedding baseline).
* **LIME** and **SHAP** explain the *presence* of tokens, which z does not change: E_z is
  their explanation of the model f_z(mask) = f(embedding of the masked sentence + delta),
  i.e. how much the attributions move when the model's view of every perturbed sentence
  is shifted slightly. With the same seed, s and z use the same LIME neighbourhood and
  the same SHAP permutations (common random numbers), so the estimate measures the
  sensitivity of the explanation, not the Monte Carlo noise of the sampling.
"""

from __future__ import annotations

import numbers
from typing import Any, Optional

import numpy as np

from ..commons.metric import BaseMetric
from ..commons.params import ArrayLike, Callable_, InstanceOf, Interval, validate_params
from ..commons.random import input_rng, seed_to_int
from ..runtime import check_outputs
from .explainers import TokenAttributionExplainer
from .tokens import as_sentences

__all__ = ["LocalLipschitzEstimate", "TextLocalLipschitzEstimate", "sample_ball"]


#: The perturbations' parameters of both estimates.
_BALL = {
    "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
    "nb_samples": [Interval(numbers.Integral, 1, None)],
    "seed": [Interval(numbers.Integral, 0, None), None],
}


def sample_ball(rng: np.random.Generator, count: int, dim: int, epsilon: float) -> np.ndarray:
    """``count`` points drawn uniformly in the L2 ball of radius ``epsilon`` in R^dim."""
    direction = rng.standard_normal((count, dim))
    norms = np.linalg.norm(direction, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    radius = epsilon * rng.random((count, 1)) ** (1.0 / max(dim, 1))
    return direction / norms * radius


def _max_ratio(dist: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Eq. 10 per row: the largest ||E_s - E_z|| / ||s - z|| over the perturbations with a
    non-zero norm; NaN where none has one (fmax skips NaN and warns of no all-NaN row)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmax.reduce(np.where(norms > 0, dist / norms, np.nan), axis=1)


class LocalLipschitzEstimate(BaseMetric):
    """Local Lipschitz estimate (Eq. 9-10) of an explainer of continuous inputs.

    Parameters
    ----------
    inputs
        Inputs (N, ...) (NumPy array or tf.Tensor). Their precision is kept: float64
        inputs are perturbed and explained in float64, float32 ones in float32 (and float16
        in float16); integer inputs become float64 (every integer below 2**53 exact).
    targets
        Targets passed to the explainer as ``explainer(inputs, targets)``; None calls
        ``explainer(inputs)``.
    batch_size
        Number of (perturbed) inputs per explainer call.
    epsilon
        Radius of the L2 ball of perturbations (0.1 in the paper).
    nb_samples
        Number of perturbations z per input; the maximum of Eq. 10 is taken over them.
    seed
        Seed of the perturbations: each input's perturbations depend only on the seed and
        the input's values (:func:`~xplique_ext.commons.random.input_rng`), so an input
        gets the same estimate alone, in any order and whatever the batch size.

    Notes
    -----
    ||s - z|| is the distance between the input and its perturbation as the explainer
    receives it (rounded to the inputs' dtype). A perturbation that rounds to the input
    itself (epsilon below the inputs' precision, e.g. float16 inputs near 1e4) has no
    ratio and is skipped; an input whose perturbations all round to it scores NaN.

    Attributes
    ----------
    higher_is_better : bool
        False: a lower estimate means a more robust explainer.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(4, 3))
    >>> lle = LocalLipschitzEstimate(x, epsilon=0.1, nb_samples=5)
    >>> float(lle.evaluate(lambda z: 2.0 * z))   # a linear explainer: L = 2 exactly
    2.0
    """

    higher_is_better = False
    undefined_reason = (
        "every perturbation of the input rounds to the input itself in the inputs' dtype "
        "(epsilon is below their precision): ||s - z|| = 0"
    )
    _data_params = ("inputs", "targets")

    @validate_params(
        {
            **_BALL,
            "batch_size": [Interval(numbers.Integral, 1, None), None],
            "inputs": [ArrayLike("real", ndim=(2, 3, 4, 5), shapes="(N, ...)", finite=True)],
            "targets": [ArrayLike("any", ndim=(1, 2, 3, 4, 5), shapes="(N, ...)"), None],
        }
    )
    def __init__(
        self,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        epsilon: float = 0.1,
        nb_samples: int = 10,
        seed: Optional[int] = 0,
    ):
        if targets is not None and len(targets) != len(inputs):
            raise ValueError(
                f"`targets` must hold one target per input: got {len(targets)} "
                f"targets for {len(inputs)} inputs"
            )
        if inputs.dtype.kind != "f":  # integers: float64 holds every one below 2**53
            inputs = inputs.astype(np.float64)
        self.inputs = inputs
        self.targets = targets
        self.batch_size = batch_size
        self.epsilon = epsilon
        self.nb_samples = nb_samples
        self.seed = seed

    def _explain(self, explainer, x, y):
        size = self.batch_size or len(x)
        arrays = (x,) if y is None else (x, y)
        parts = []
        for start in range(0, len(x), size):
            batch = [a[start : start + size] for a in arrays]
            explanations = explainer(*batch)
            parts.append(check_outputs(explanations, len(batch[0]), name="explainer", finite=True))
        return np.concatenate(parts).reshape(len(x), -1).astype(np.float64)

    @validate_params({"explainer": [Callable_()]})
    def detailed_evaluate(self, explainer: Any) -> np.ndarray:
        """L(s) of each input, shape (N,)."""
        n = len(self.inputs)
        k = self.nb_samples
        seed = seed_to_int(self.seed)
        if not n:
            return np.zeros(0)
        dim = self.inputs[0].size
        x_rep = np.repeat(self.inputs, k, axis=0)
        # each input's perturbations from the seed and its values, never its position
        deltas = np.concatenate(
            [sample_ball(input_rng(seed, s), k, dim, self.epsilon) for s in self.inputs]
        )
        # perturbed in the inputs' own dtype (float64 stays float64)
        z = x_rep + deltas.reshape(x_rep.shape).astype(x_rep.dtype)
        y_rep = None if self.targets is None else np.repeat(self.targets, k, axis=0)
        e_x = self._explain(explainer, self.inputs, self.targets)
        num = np.linalg.norm(np.repeat(e_x, k, axis=0) - self._explain(explainer, z, y_rep), axis=1)
        # the actual distance of the perturbed inputs, as rounded to the inputs' dtype
        den = np.linalg.norm((z - x_rep.astype(np.float64)).reshape(n * k, -1), axis=1)
        return _max_ratio(num.reshape(n, k), den.reshape(n, k))


class TextLocalLipschitzEstimate(BaseMetric):
    """Local Lipschitz estimate (Eq. 9-10) of a token explainer, in the embedding space.

    z adds delta (||delta||_2 <= epsilon over all token positions and embedding
    dimensions) to the embedding output of the sentence's tokens; ``E_z`` is the
    explainer's attribution vector for the model whose embedding output is shifted by
    delta (see the module documentation for what this means for LIME and SHAP).

    Parameters
    ----------
    sentences
        N sentences.
    epsilon
        Radius of the ball in the embedding space (0.1 in the paper).
    nb_samples
        Number of perturbations per sentence.
    seed
        Seed of the perturbations: each sentence's perturbations depend only on the seed
        and the sentence's text (:func:`~xplique_ext.commons.random.input_rng`), so a
        sentence gets the same estimate alone, in any order or grouping.

    Examples
    --------
    >>> from xplique_ext.text import BagOfWordsModel, IntegratedGradientsTokenExplainer
    >>> bow = BagOfWordsModel({"good": 2.0, "bad": -2.0})
    >>> ig = IntegratedGradientsTokenExplainer(bow.to_keras(), bow.tokenizer, progress=False)
    >>> lle = TextLocalLipschitzEstimate(["a good film"], nb_samples=3)
    >>> lle.detailed_evaluate(ig).shape
    (1,)
    """

    higher_is_better = False
    undefined_reason = (
        "a sentence without tokens has no embedding to perturb (or all its "
        "perturbations have a zero norm)"
    )
    _data_params = ("sentences",)

    @validate_params({**_BALL, "sentences": "no_validation"})  # checked by as_sentences
    def __init__(
        self, sentences: Any, *, epsilon: float = 0.1, nb_samples: int = 5, seed: Optional[int] = 0
    ):
        self.sentences = as_sentences(sentences, "sentences")
        self.epsilon = epsilon
        self.nb_samples = nb_samples
        self.seed = seed

    @validate_params(
        {
            "explainer": [
                InstanceOf(
                    TokenAttributionExplainer,
                    description=(
                        "a token explainer of xplique_ext.text (LIME, SHAP or IG adapter)"
                    ),
                )
            ]
        }
    )
    def detailed_evaluate(self, explainer: Any) -> np.ndarray:
        """L(s) of each sentence, shape (N,) (NaN for a sentence without tokens)."""
        clf = explainer.classifier
        prep = clf.prepare(self.sentences)
        clf._require_embedding("Text Lipschitz estimates", prep)
        n = len(self.sentences)
        k = self.nb_samples
        seed = seed_to_int(self.seed)
        dim = clf.embedding_dim()
        shifts = []
        norms = np.zeros((n, k))
        for i in range(n):
            _, owner = clf.masked_inputs(prep, i, np.ones((1, len(prep.words[i])), dtype=bool))
            count = int((owner >= 0).sum())  # the token positions: the first ones (padding after)
            rng = input_rng(seed, self.sentences[i])  # the seed and the text, not the index
            delta = sample_ball(rng, k, count * dim, self.epsilon)
            norms[i] = np.linalg.norm(delta, axis=1)
            shifts.extend(delta.reshape(k, count, dim).astype(np.float32))  # padded with 0 later
        run_seed = seed_to_int(explainer.seed)
        e_s = explainer._explain(prep, run_seed, shifts=None)
        e_z = explainer._explain(clf.prepare(np.repeat(self.sentences, k)), run_seed, shifts=shifts)
        dist = np.array([np.linalg.norm(e - e_s[r // k]) for r, e in enumerate(e_z)]).reshape(n, k)
        return _max_ratio(dist, norms)  # NaN for a sentence without tokens
