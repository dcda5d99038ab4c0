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
from ..commons.params import ArrayLike, Interval, validate_params
from ..commons.random import seed_to_int
from .classifier import Prepared
from .tokens import as_sentences

__all__ = ["LocalLipschitzEstimate", "TextLocalLipschitzEstimate", "sample_ball"]


def sample_ball(rng: np.random.Generator, count: int, dim: int, epsilon: float) -> np.ndarray:
    """``count`` points drawn uniformly in the L2 ball of radius ``epsilon`` in R^dim."""
    direction = rng.standard_normal((count, dim))
    norms = np.linalg.norm(direction, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    radius = epsilon * rng.random((count, 1)) ** (1.0 / max(dim, 1))
    return direction / norms * radius


class LocalLipschitzEstimate(BaseMetric):
    """Local Lipschitz estimate (Eq. 9-10) of an explainer of continuous inputs.

    Parameters
    ----------
    inputs
        Inputs (N, ...) (NumPy array or tf.Tensor).
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
        Seed of the perturbations (each input's perturbations depend only on the seed and
        the input's index, whatever the batch size).

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
    undefined_reason = "every perturbation of the input has a zero norm in float32"
    _data_params = ("inputs", "targets")

    @validate_params({
        "inputs": [ArrayLike("real", ndim=(2, 3, 4, 5), shapes="(N, ...)", dtype=np.float32)],
        "targets": [ArrayLike("any"), None],  # one per input: checked below
        "batch_size": [Interval(numbers.Integral, 1, None), None],
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "nb_samples": [Interval(numbers.Integral, 1, None)],
        "seed": [Interval(numbers.Integral, 0, None), None],
    })
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
        self.inputs = inputs
        self.targets = targets
        if self.targets is not None and len(self.targets) != len(self.inputs):
            raise ValueError(
                f"`targets` must hold one target per input: got {len(self.targets)} targets "
                f"for {len(self.inputs)} inputs"
            )
        self.batch_size, self.epsilon = batch_size, epsilon
        self.nb_samples, self.seed = nb_samples, seed

    def _explain(self, explainer, x, y):
        size = self.batch_size or len(x)
        parts = []
        for s in range(0, len(x), size):
            xb = x[s : s + size]
            out = explainer(xb) if y is None else explainer(xb, y[s : s + size])
            parts.append(np.asarray(out.numpy() if hasattr(out, "numpy") else out))
        return np.concatenate(parts).reshape(len(x), -1).astype(np.float64)

    def detailed_evaluate(self, explainer: Any) -> np.ndarray:
        """L(s) of each input, shape (N,)."""
        if not callable(explainer):
            raise TypeError(f"`explainer` must be callable, got {type(explainer).__name__}")
        n, k = len(self.inputs), self.nb_samples
        seed = seed_to_int(self.seed)
        dim = int(np.prod(self.inputs.shape[1:]))
        deltas = (
            np.concatenate(
                [
                    sample_ball(np.random.default_rng([seed, i]), k, dim, self.epsilon)
                    for i in range(n)
                ]
            )
            if n
            else np.zeros((0, dim))
        )
        z = np.repeat(self.inputs, k, axis=0) + deltas.reshape(
            (n * k,) + self.inputs.shape[1:]
        ).astype(np.float32)
        y_rep = None if self.targets is None else np.repeat(self.targets, k, axis=0)
        e_x = self._explain(explainer, self.inputs, self.targets)
        e_z = self._explain(explainer, z, y_rep)
        num = np.linalg.norm(np.repeat(e_x, k, axis=0) - e_z, axis=1)
        # the actual distance of the (float32) perturbed inputs
        diff = z.reshape(n * k, -1).astype(np.float64) - np.repeat(
            self.inputs.reshape(n, -1).astype(np.float64), k, axis=0
        )
        den = np.linalg.norm(diff, axis=1)
        ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        return ratio.reshape(n, k).max(axis=1) if n else np.zeros(0)



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
        Seed of the perturbations (depends only on the seed and the sentence's index).

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
        "a sentence without tokens has no embedding to perturb (or all its perturbations "
        "have a zero norm)"
    )
    _data_params = ("sentences",)

    @validate_params({
        "sentences": "no_validation",  # checked by as_sentences
        "epsilon": [Interval(numbers.Real, 0, None, closed="neither")],
        "nb_samples": [Interval(numbers.Integral, 1, None)],
        "seed": [Interval(numbers.Integral, 0, None), None],
    })
    def __init__(
        self,
        sentences: Any,
        *,
        epsilon: float = 0.1,
        nb_samples: int = 5,
        seed: Optional[int] = 0,
    ):
        self.sentences = as_sentences(sentences, "sentences")
        self.epsilon, self.nb_samples, self.seed = epsilon, nb_samples, seed

    def detailed_evaluate(self, explainer: Any) -> np.ndarray:
        """L(s) of each sentence, shape (N,) (NaN for a sentence without tokens)."""
        from .explainers import TokenAttributionExplainer

        if not isinstance(explainer, TokenAttributionExplainer):
            raise TypeError(
                "`explainer` must be a token explainer of xplique_ext.text (LIME, SHAP or "
                f"IG adapter), got {type(explainer).__name__}"
            )
        clf = explainer.classifier
        clf._require_embedding("Text Lipschitz estimates")
        prep = clf.prepare(self.sentences)
        if not prep.compositional:
            raise ValueError(
                "Text Lipschitz estimates need a tokenizer that composes over whitespace "
                "tokens (see xplique_ext.text.tokens)"
            )
        dim = clf.embedding_dim()
        n, k = len(self.sentences), self.nb_samples
        seed = seed_to_int(self.seed)
        shifts, norms = [], np.zeros((n, k))
        for i in range(n):
            ones = np.ones((1, len(prep.words[i])), dtype=bool)
            _, owner = clf.masked_inputs(prep, i, ones)
            positions = np.flatnonzero(owner[0] >= 0)
            rng = np.random.default_rng([seed, i])
            delta = sample_ball(rng, k, len(positions) * dim, self.epsilon)
            norms[i] = np.linalg.norm(delta, axis=1)
            for j in range(k):
                s = np.zeros((owner.shape[1], dim), dtype=np.float32)
                s[positions] = delta[j].reshape(len(positions), dim)
                shifts.append(s)
        reps = [i for i in range(n) for _ in range(k)]
        rep = Prepared(
            sentences=[prep.sentences[i] for i in reps],
            words=[prep.words[i] for i in reps],
            pieces=[prep.pieces[i] for i in reps],
            mask_pieces=prep.mask_pieces,
            compositional=True,
        )
        run_seed = seed_to_int(explainer.seed)
        e_s = explainer._explain(prep, run_seed, shifts=None)
        e_z = explainer._explain(rep, run_seed, shifts=shifts)
        out = np.full(n, np.nan)
        for i in range(n):
            if not len(prep.words[i]):
                continue
            ratios = [
                np.linalg.norm(e_s[i] - e_z[i * k + j]) / norms[i, j]
                for j in range(k)
                if norms[i, j] > 0
            ]
            out[i] = max(ratios) if ratios else np.nan
        return out

