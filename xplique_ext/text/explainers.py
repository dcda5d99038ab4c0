"""Token attributions for binary text classifiers: LIME, SHAP and Integrated Gradients.

The three adapters share one interface::

    explainer = LimeTokenExplainer(model, tokenizer=None, batch_size=64, seed=0)
    attributions = explainer(sentences)   # list of (n_i,) arrays, n_i = len(s.split())

Each returns one attribution per whitespace token of each sentence (aligned with
``sentence.split()``) for the positive-class probability p(y=1|s). They

* are seeded: the same ``seed`` gives identical attributions on every call, whatever the
  batch size and the order or grouping of the sentences (each sentence's random numbers
  come from the seed and the sentence's text);
* pool the model calls of many sentences into batches of ``batch_size`` inputs;
* show a progress bar when ``progress=True`` (off by default; tqdm is imported only then).

These are the three frameworks of the PERCY paper (section 3.1): L-PERCY, S-PERCY and
I-PERCY are PERCY computed with their attributions.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..commons.params import Boolean, Interval, Options, Word, validate_params
from ..commons.progress import progress_bar
from ..commons.random import input_sequence, seed_to_int
from ..commons.warnings import XpliqueExtWarning, warn
from .classifier import CHUNK_ROWS, TEXT_MODEL, Prepared, as_text_classifier, pad_shifts

__all__ = [
    "TokenAttributionExplainer",
    "LimeTokenExplainer",
    "ShapTokenExplainer",
    "IntegratedGradientsTokenExplainer",
    "sentence_seed",
]


#: The parameters every token explainer declares (its classifier's and its own).
EXPLAINER_PARAMETERS = {  # the tokenizer is checked by Tokenizer, the strategy by resolve_strategy
    "model": TEXT_MODEL,
    "batch_size": [Interval(numbers.Integral, 1, None), None],
    "seed": [Interval(numbers.Integral, 0, None), None],
    "progress": [Boolean()],
    "mask_string": [Word()],
    "tokenizer": "no_validation",
    "strategy": "no_validation",
}


def sentence_seed(seed: int, sentence: str) -> int:
    """A 32-bit seed for one sentence, from the explainer's seed and the sentence text
    (:func:`~xplique_ext.commons.random.input_sequence`, the package's one way of drawing
    per input).

    Depending on the text (not on the position in the list) makes the attributions
    independent of the order and grouping of the sentences.
    """
    return int(input_sequence(seed, sentence).generate_state(1, dtype=np.uint32)[0])


class TokenAttributionExplainer:
    """Base class of the token attribution adapters.

    Parameters
    ----------
    model
        Binary text classifier: a Keras model on raw strings (``TextVectorization``
        inside) or on token ids (then pass ``tokenizer``); any callable works for LIME
        and SHAP. Output: sigmoid (N, 1) or two-class softmax (N, 2). A keras-hub
        ``TextClassifier`` task with its preprocessor (``BertTextClassifier``...) is
        accepted as it comes (see :mod:`xplique_ext.text.hub`: whole words perturbed,
        subword attributions summed per word). A :class:`xplique_ext.text.TextClassifier`
        is used as it is (leave ``tokenizer``, ``batch_size``, ``mask_string`` and
        ``strategy`` at their defaults: it has its own).
    tokenizer
        None, a ``TextVectorization`` layer or a callable (list of str -> ids (N, L));
        for a Keras model over a keras-hub backbone, its keras-hub preprocessor or
        tokenizer.
    batch_size
        Number of (perturbed) sentences per model call, pooled across sentences. None
        sends each prepared chunk (about 16k rows) at once.
    seed
        Seed of the explainer's randomness; None draws fresh randomness at every call.
    progress
        Show a tqdm progress bar (False by default; tqdm is imported only when True).
    mask_string
        String that replaces a masked token (LIME's default ``'UNKWORDZ'``).
    strategy
        ``tf.distribute.Strategy`` whose replicas share each batch of a Keras model's
        calls (None: the one in scope); same attributions as on one device.
    """

    #: the progress bar's label
    _desc = ""
    #: how many per-sentence values :meth:`_combine` returns after the attributions (kept
    #: by :meth:`_keep_extras`)
    _n_extras = 0

    @validate_params(EXPLAINER_PARAMETERS)
    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        batch_size: Optional[int] = 64,
        *,
        seed: Optional[int] = 0,
        progress: bool = False,
        mask_string: str = "UNKWORDZ",
        strategy: Any = None,
    ):
        self.classifier = as_text_classifier(
            model, tokenizer, batch_size=batch_size, mask_string=mask_string, strategy=strategy
        )
        self.model = self.classifier.model
        self.batch_size = self.classifier.batch_size
        self.seed = seed
        self.progress = progress

    def explain(self, sentences: Any) -> List[np.ndarray]:
        """Token attributions of each sentence.

        Parameters
        ----------
        sentences
            Sequence of N sentences (str).

        Returns
        -------
        attributions
            List of N float64 arrays; the i-th has one value per token of
            ``sentences[i].split()``.
        """
        prep = self.classifier.prepare(sentences)  # checks the sentences
        return self._explain(prep, seed_to_int(self.seed), shifts=None)

    __call__ = explain

    def _explain(
        self, prep: Prepared, seed: int, shifts: Optional[Sequence[np.ndarray]]
    ) -> List[np.ndarray]:
        """Attributions of prepared sentences (``shifts``: embedding shifts or None): each
        sentence's perturbations (a binary mask per row, :meth:`_draw`), the model's outputs
        on them pooled across sentences, and each sentence's estimate (:meth:`_combine`,
        whose extra values :meth:`_keep_extras` keeps: NaN for a sentence without tokens)."""
        out = [np.zeros(len(w)) for w in prep.words]
        extras = np.full((self._n_extras, len(out)), np.nan)  # one row per extra value
        sizes = [self._rows(len(w)) if w else 0 for w in prep.words]
        for group, bar in self._chunks(sizes, self._desc):
            masks = [
                self._draw(len(prep.words[i]), sentence_seed(seed, prep.sentences[i]))
                for i in group
            ]
            probas = self.classifier.masked_proba(
                prep,
                group,
                masks,
                shifts=None if shifts is None else [shifts[i] for i in group],
                progress=bar,
            )
            for i, mask, proba in zip(group, masks, probas):
                attributions, *values = self._combine(mask, proba)
                out[i] = attributions
                extras[:, i] = values
        self._keep_extras(*extras)
        return out

    def _keep_extras(self, *extras: np.ndarray) -> None:
        """Keep the extra values of :meth:`_combine`, one array (N,) each, as attributes."""

    def _chunks(self, sizes: Sequence[int], desc: str) -> Iterator[Tuple[List[int], Any]]:
        """Groups of consecutive sentences (those with ``sizes[i] > 0`` model inputs) of
        about ``CHUNK_ROWS`` inputs each, with the progress bar over ``sum(sizes)``
        inputs: the one batching path of the three explainers."""
        group = []
        rows = 0
        with progress_bar(
            enabled=self.progress, total=int(sum(sizes)), desc=desc, unit="input"
        ) as bar:
            for i, size in enumerate(sizes):
                if size:
                    group.append(i)
                rows += size
                if group and (rows >= CHUNK_ROWS or i == len(sizes) - 1):
                    yield group, bar
                    group = []
                    rows = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_size={self.batch_size}, seed={self.seed})"


# =========================================================================== LIME
class LimeFit(NamedTuple):
    """LIME's weighted ridge fit of one sentence: a weight per token (the attributions),
    the intercept and the R^2 score of the fit."""

    weights: np.ndarray
    intercept: float
    score: float


class LimeTokenExplainer(TokenAttributionExplainer):
    """LIME token attributions (``LimeTextExplainer`` with ``bow=False``), pooled.

    The neighbourhood of each sentence is drawn with LIME's own scheme -- the number of
    removed tokens uniform in {1, ..., n}, then which tokens uniformly, the first row
    being the sentence itself -- and the masked tokens are replaced by ``mask_string``
    (``bow=False``: positions, so a repeated word gets one weight per occurrence). The
    model calls of all sentences are pooled into batches; the weighted ridge fit is
    LIME's ``LimeBase.explain_instance_with_data`` of a ``LimeTextExplainer(bow=False,
    split_expression=str.split)`` created for each call from the seed, with every token
    kept (``feature_selection='none'``).

    Notes
    -----
    LIME fits g(z') = w0 + sum_i w_i z'_i to p(y=1|z) on the perturbations z, weighted
    by exp(-D(s, z)^2 / sigma^2) with D the cosine distance (x100) of the binary
    vectors (Eq. 1 of the PERCY paper); w_i is the attribution of token i.

    Parameters
    ----------
    model, tokenizer, batch_size, seed, progress, mask_string, strategy
        See :class:`TokenAttributionExplainer`.
    nb_samples
        Size of each sentence's neighbourhood (LIME's ``num_samples``), >= 2.
    kernel_width
        LIME's kernel width (25, the default of ``LimeTextExplainer``).

    References
    ----------
    Ribeiro, Singh & Guestrin, "Why should I trust you?", KDD 2016. Gupta, Bouadjenek &
    Robles-Kelly, "PERCY: a post-hoc explanation-based score for logic rule
    dissemination consistency assessment in sentiment classification", section 3.1.1.

    Examples
    --------
    >>> import numpy as np
    >>> from xplique_ext.text import BagOfWordsModel, LimeTokenExplainer
    >>> bow = BagOfWordsModel({"good": 2.0, "bad": -2.0})
    >>> lime = LimeTokenExplainer(bow, bow.tokenizer, nb_samples=200)
    >>> w = lime(["a good film", "bad"])
    >>> [a.shape for a in w], bool(w[0][1] > 0)
    ([(3,), (1,)], True)
    """

    _desc = "LIME"
    _n_extras = 2

    @validate_params(
        {
            **EXPLAINER_PARAMETERS,
            "nb_samples": [Interval(numbers.Integral, 2, None)],
            "kernel_width": [Interval(numbers.Real, 0, None, closed="neither")],
        }
    )
    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        batch_size: Optional[int] = 64,
        *,
        nb_samples: int = 1000,
        kernel_width: float = 25.0,
        seed: Optional[int] = 0,
        progress: bool = False,
        mask_string: str = "UNKWORDZ",
        strategy: Any = None,
    ):
        super().__init__(
            model,
            tokenizer,
            batch_size,
            seed=seed,
            progress=progress,
            mask_string=mask_string,
            strategy=strategy,
        )
        self.nb_samples = nb_samples
        self.kernel_width = kernel_width

    @staticmethod
    def neighbourhood(n: int, nb_samples: int, rng: np.random.Generator) -> np.ndarray:
        """LIME's binary neighbourhood (nb_samples, n): row 0 keeps every token; row r
        removes ``size_r`` ~ U{1..n} tokens chosen uniformly without replacement."""
        data = np.ones((nb_samples, n), dtype=bool)
        if n == 0 or nb_samples < 2:
            return data
        sizes = rng.integers(1, n + 1, nb_samples - 1)
        ranks = np.argsort(np.argsort(rng.random((nb_samples - 1, n)), axis=1), axis=1)
        data[1:] = ranks >= sizes[:, None]
        return data

    @staticmethod
    def distances(data: np.ndarray) -> np.ndarray:
        """LIME's distances: cosine distance to the all-ones first row, times 100."""
        return (1.0 - np.sqrt(data.sum(axis=1) / max(data.shape[1], 1))) * 100.0

    def fit(self, base: Any, data: np.ndarray, proba: np.ndarray) -> LimeFit:
        """LIME's weighted ridge fit (``LimeBase.explain_instance_with_data``) of p(y=1)
        on a binary neighbourhood: the weights (n,), the intercept and the R^2 score."""
        n = data.shape[1]
        labels = np.stack([1.0 - proba, proba], axis=1)
        intercept, exp, score, _ = base.explain_instance_with_data(
            data.astype(np.float64),
            labels,
            self.distances(data),
            label=1,
            num_features=n,
            feature_selection="none",
        )
        w = np.zeros(n)
        w[[j for j, _ in exp]] = [value for _, value in exp]
        return LimeFit(weights=w, intercept=float(np.ravel(intercept)[0]), score=float(score))

    def _rows(self, n: int) -> int:
        return self.nb_samples

    def _draw(self, n: int, seed: int) -> np.ndarray:
        return self.neighbourhood(n, self.nb_samples, np.random.default_rng(seed))

    def _explain(self, prep, seed, shifts):
        from lime.lime_text import LimeTextExplainer

        # only its LimeBase, the weighted ridge fit, is used (the masking is the classifier's)
        self._base = LimeTextExplainer(
            kernel_width=self.kernel_width, random_state=seed % (2**32)
        ).base
        return super()._explain(prep, seed, shifts)

    def _combine(self, data: np.ndarray, proba: np.ndarray) -> tuple:
        return self.fit(self._base, data, proba)

    def _keep_extras(self, intercepts: np.ndarray, scores: np.ndarray) -> None:
        self.intercepts_ = intercepts
        self.scores_ = scores


# =========================================================================== SHAP
class _TokenMasker:
    """shap masker over whitespace tokens: the "masked input" is the binary mask itself
    (True = token kept), turned into a sentence later by the pooled evaluator.

    It supports shap's delta masking (as shap's Tabular masker does): shap sends the
    token flips of a whole permutation at once and gets every mask of it in one array,
    instead of one masker call per mask.
    """

    supports_delta_masking = True
    immutable_outputs = True

    def __init__(self, n: int):
        self.n = n

    def __call__(self, mask, x):
        """Delta masks decoded (shap's MaskedModel sends a masker that supports delta
        masking nothing else): a value v >= 0 flips token v and ends a row, a negative value
        flips token -v-1 and continues the row, the no-op value flips nothing; rows start
        from "every token masked"."""
        from shap.utils import MaskedModel

        delta = np.asarray(mask, dtype=np.int64)
        ends = delta >= 0
        row = np.concatenate([[0], np.cumsum(ends)[:-1]])
        flip = np.where(ends, delta, -delta - 1)
        real = delta != MaskedModel.delta_mask_noop_value
        toggles = np.zeros((int(ends.sum()), self.n), dtype=np.int64)
        np.add.at(toggles, (row[real], flip[real]), 1)
        masks = (np.cumsum(toggles, axis=0) % 2).astype(bool)
        return (masks,), np.ones((len(masks), 1), dtype=bool)


class ShapTokenExplainer(TokenAttributionExplainer):
    """SHAP token attributions from shap's ``PermutationExplainer``, pooled.

    A plain token masker over the whitespace tokens: a masked token is replaced by
    ``mask_string`` (model-agnostic, so it works with Keras 3 where shap's
    DeepExplainer does not). shap draws the antithetic permutations (seeded per sentence
    from ``seed``); the masks it asks for are recorded, evaluated by the model pooled
    across sentences, and combined with the permutation estimator of shap's
    ``PermutationExplainer``: each token's value is the average, over the forward and
    reverse pass of each permutation, of p(with token) - p(without token).

    Notes
    -----
    SHAP values satisfy f(s) = phi_0 + sum_i phi_i (Eq. 2 of the PERCY paper), with
    phi_0 = p(y=1 | every token masked). ``expected_values_`` holds phi_0 of each
    sentence after a call.

    shap's permutation explainer seeds NumPy's *global* generator; the adapter saves and
    restores the global state around each sentence, so user code sees no change.

    Parameters
    ----------
    model, tokenizer, batch_size, seed, progress, mask_string, strategy
        See :class:`TokenAttributionExplainer`.
    n_permutations
        Number of antithetic permutations per sentence (shap's default ``max_evals='auto'``
        is 10); a sentence of n tokens costs n_permutations * (2n + 1) model inputs.

    References
    ----------
    Lundberg & Lee, "A unified approach to interpreting model predictions", NeurIPS 2017.
    PERCY paper, section 3.1.2.

    Examples
    --------
    >>> from xplique_ext.text import BagOfWordsModel, ShapTokenExplainer
    >>> bow = BagOfWordsModel({"good": 2.0, "bad": -2.0})
    >>> phi = ShapTokenExplainer(bow, bow.tokenizer, n_permutations=2, progress=False)(
    ...     ["a good film"])
    >>> bool(phi[0][1] > 0), float(phi[0][0]) == 0.0
    (True, True)
    """

    _desc = "SHAP"
    _n_extras = 1

    @validate_params(
        {**EXPLAINER_PARAMETERS, "n_permutations": [Interval(numbers.Integral, 1, None)]}
    )
    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        batch_size: Optional[int] = 64,
        *,
        n_permutations: int = 10,
        seed: Optional[int] = 0,
        progress: bool = False,
        mask_string: str = "UNKWORDZ",
        strategy: Any = None,
    ):
        super().__init__(
            model,
            tokenizer,
            batch_size,
            seed=seed,
            progress=progress,
            mask_string=mask_string,
            strategy=strategy,
        )
        self.n_permutations = n_permutations

    def _rows(self, n: int) -> int:
        return self.n_permutations * (2 * n + 1)

    def _draw(self, n: int, seed: int) -> np.ndarray:
        """The masks shap's permutation explainer asks to evaluate, recorded."""
        import shap

        blocks = []

        def record(masks):  # the model for shap: records the masks it is asked to evaluate
            blocks.append(np.asarray(masks, dtype=bool))
            return np.zeros(len(masks))

        state = np.random.get_state()
        try:
            explainer = shap.PermutationExplainer(record, _TokenMasker(n), seed=seed)
            explainer(np.zeros((1, n)), max_evals=self._rows(n), silent=True)
        finally:
            np.random.set_state(state)
        return np.concatenate(blocks)  # n_permutations * (2n + 1) masks: _combine reshapes them

    def _combine(self, masks: np.ndarray, y: np.ndarray) -> tuple:
        """shap's permutation estimator on recorded masks and their outputs."""
        n = masks.shape[1]
        masks = masks.reshape(self.n_permutations, 2 * n + 1, n)
        y = y.reshape(self.n_permutations, -1)
        flips = masks[:, 1:] ^ masks[:, :-1]  # exactly one token changes per step
        if not np.all(flips.sum(axis=2) == 1):  # pragma: no cover
            raise RuntimeError("shap's permutation masks do not flip one token per step")
        token = flips.argmax(axis=2)  # (P, 2n)
        turned_on = np.take_along_axis(masks[:, 1:], token[..., None], axis=2)[..., 0]
        delta = np.where(turned_on, 1.0, -1.0) * (y[:, 1:] - y[:, :-1])
        values = np.bincount(token.ravel(), weights=delta.ravel(), minlength=n)
        return values / (2 * self.n_permutations), float(y[-1, 0])

    def _keep_extras(self, expected_values: np.ndarray) -> None:
        self.expected_values_ = expected_values


# =========================================================================== IG
def _quadrature(steps: int, method: str):
    """Nodes alpha in [0, 1] and weights; the endpoints 0 and 1 are always included
    (weight 0 when the rule does not use them) to measure p(baseline) and p(s)."""
    if method == "trapezoid":
        weights = np.full(steps + 1, 1.0 / steps)
        weights[[0, -1]] *= 0.5
        return np.linspace(0.0, 1.0, steps + 1), weights
    x, w = np.polynomial.legendre.leggauss(steps)
    nodes = np.concatenate([[0.0], (x + 1) / 2, [1.0]])
    return nodes, np.concatenate([[0.0], w / 2, [0.0]])


class _Path(NamedTuple):
    """Rows of the integration path: the sentence (in its group) of each row, the point
    alpha of the path from the baseline to the sentence, and its quadrature weight."""

    sentence: np.ndarray
    alpha: np.ndarray
    weight: np.ndarray


class IntegratedGradientsTokenExplainer(TokenAttributionExplainer):
    """Integrated Gradients on the embedding output, summed per token.

    The baseline replaces the embedding of every token of the sentence by zeros (the
    zero-embedding baseline; padding positions keep their embedding, so they receive
    no attribution). The score of a position is the sum over the embedding dimension of
    IG; the score of a whitespace token is the sum over its pieces when the tokenizer
    splits words into subwords. By the completeness axiom the token scores sum to
    p(y=1|s) - p(y=1|baseline); ``convergence_delta_`` holds the gap left by the
    numerical integration after a call.

    Notes
    -----
    IG_i = (x_i - x'_i) * integral_0^1 dp(x' + alpha (x - x')) / dx_i d(alpha) (Eq. 3 of
    the PERCY paper), integrated with the trapezoid rule on ``steps`` intervals, refined
    per sentence up to ``tolerance`` (or Gauss-Legendre with ``steps`` nodes). ReLU and
    max-pooling make the integrand only piecewise smooth, so the error decreases like
    1/steps rather than 1/steps^2: a fixed number of steps that suits one sentence can
    miss 1e-3 on another, hence the adaptive refinement. ``steps_used_`` holds the
    number of intervals each sentence needed. IG has no randomness: ``seed`` is accepted for
    a uniform interface and has no effect.

    Needs a Keras model with an ``Embedding`` layer (found automatically, also inside a
    model on raw strings). Tokens beyond the model's sequence length get 0 (for a keras-hub
    classifier, the words whose pieces lie beyond the preprocessor's sequence length).

    On a keras-hub transformer (see :mod:`xplique_ext.text.hub`) the path runs along
    the token embeddings of the word pieces, from the ``[MASK]`` token embedding (the
    baseline; position and segment embeddings, ``[CLS]`` and ``[SEP]`` unchanged) to the
    pieces' own; the attribution of a word is the sum over its pieces, and
    ``baseline_proba_`` is p(y=1) of the sentence with every piece replaced by
    ``[MASK]``.

    Parameters
    ----------
    model, tokenizer, batch_size, seed, progress, strategy
        See :class:`TokenAttributionExplainer`.
    steps
        Number of integration intervals (trapezoid) or nodes (Gauss-Legendre).
    method
        'trapezoid' or 'gausslegendre'.
    tolerance
        Target of the completeness gap |sum_i IG_i - (p(s) - p(baseline))|. With the
        trapezoid rule, the sentences above it are refined by halving the step (only the
        new midpoints are evaluated) until they meet it or reach ``max_steps``; a warning
        says how many still miss it. None: no refinement and no check.
    max_steps
        Largest number of intervals the refinement may reach.

    References
    ----------
    Sundararajan, Taly & Yan, "Axiomatic attribution for deep networks", ICML 2017.
    PERCY paper, section 3.1.3.

    Examples
    --------
    >>> from xplique_ext.text import BagOfWordsModel, IntegratedGradientsTokenExplainer
    >>> bow = BagOfWordsModel({"good": 2.0, "bad": -2.0})
    >>> ig = IntegratedGradientsTokenExplainer(bow.to_keras(), bow.tokenizer, progress=False)
    >>> a = ig(["a good film"])[0]
    >>> bool(a[1] > 0), float(abs(ig.convergence_delta_[0])) < 1e-3
    (True, True)
    """

    @validate_params(
        {
            **{k: v for k, v in EXPLAINER_PARAMETERS.items() if k != "mask_string"},
            "steps": [Interval(numbers.Integral, 1, None)],
            "method": [Options(["trapezoid", "gausslegendre"])],
            "tolerance": [Interval(numbers.Real, 0, None, closed="neither"), None],
            "max_steps": [Interval(numbers.Integral, 1, None)],
        }
    )  # >= steps: below
    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        batch_size: Optional[int] = 64,
        *,
        steps: int = 64,
        method: str = "trapezoid",
        tolerance: Optional[float] = 1e-3,
        max_steps: int = 1024,
        seed: Optional[int] = 0,
        progress: bool = False,
        strategy: Any = None,
    ):
        super().__init__(
            model, tokenizer, batch_size, seed=seed, progress=progress, strategy=strategy
        )
        if max_steps < steps:
            raise ValueError(f"`max_steps` must be >= {steps} (`steps`), got {max_steps}")
        self.steps = steps
        self.method = method
        self.tolerance = tolerance
        self.max_steps = max_steps
        self.classifier._require_embedding("Integrated Gradients")

    def _explain(self, prep, seed, shifts):
        self.classifier._require_embedding("Integrated Gradients", prep)
        nodes, weights = _quadrature(self.steps, self.method)
        n = len(prep.words)
        out: List[np.ndarray] = [np.zeros(len(w)) for w in prep.words]
        self.convergence_delta_ = np.zeros(n)
        self.steps_used_ = np.zeros(n, dtype=np.int64)
        self.baseline_proba_ = np.full(n, np.nan)
        self.proba_ = np.full(n, np.nan)
        clf = self.classifier
        sizes = [len(nodes) if len(w) else 0 for w in prep.words]
        for group, bar in self._chunks(sizes, "IG"):
            # model inputs, token of each position (-1: padding), embedding shifts (G, L, D)
            x, own = clf.stacked_inputs(
                prep, group, [np.ones((1, len(prep.words[i])), bool) for i in group]
            )
            if shifts is None:
                shift = np.zeros(own.shape + (clf.embedding_dim(),), np.float32)
            else:
                shift = pad_shifts([shifts[i] for i in group], own.shape[1])
            g = np.arange(len(group))
            path = _Path(
                sentence=np.repeat(g, len(nodes)),
                alpha=np.tile(nodes, len(g)),
                weight=np.tile(weights, len(g)),
            )
            pos, p_end = self._integrate(x, own, shift, path, bar)  # p(baseline), p(s)
            target = p_end[:, 1] - p_end[:, 0]
            steps = self._refine(pos, target, x, own, shift, bar)
            for j, i in zip(g, group):
                real = own[j] >= 0
                size = len(prep.words[i])
                out[i] = np.bincount(own[j][real], weights=pos[j][real], minlength=size)[:size]
                self.baseline_proba_[i] = p_end[j, 0]
                self.proba_[i] = p_end[j, 1]
                self.convergence_delta_[i] = out[i].sum() - target[j]
                self.steps_used_[i] = steps[j]
        bad = int(np.sum(np.abs(self.convergence_delta_) > (self.tolerance or np.inf)))
        if bad:
            warn(
                f"Integrated Gradients: for {bad} of {n} sentences the attributions miss p(s) - "
                f"p(baseline) by more than tolerance={self.tolerance:g} (max "
                f"{np.max(np.abs(self.convergence_delta_)):.2e}); raise `max_steps`"
                + (" or use method='trapezoid'" if self.method != "trapezoid" else ""),
                XpliqueExtWarning,
            )
        return out

    def _integrate(self, x, own, shift, path, bar) -> Tuple[np.ndarray, np.ndarray]:
        """Sum of weight * contribution per position (G, L) over the rows of ``path`` (a
        :class:`_Path`), and p1 at alpha = 0 and 1 (G, 2) where a row has them."""
        clf = self.classifier
        acc = np.zeros(own.shape)
        p_end = np.zeros((len(own), 2))
        for sl in clf._batches(len(path.sentence)):
            rows = path.sentence[sl]
            a = path.alpha[sl]
            if clf.takes_ids:
                xb = x[rows]
            else:
                xb = [x[r] for r in rows]
            if clf.takes_ids or clf.align_tokenizer.sequence_length:
                w = own.shape[1]
            else:  # raw strings of free length: as wide as the longest row of the batch
                w = int((own[rows] >= 0).sum(axis=1).max())
            mask = (own[rows, :w] >= 0).astype(np.float32)
            contrib, p1 = clf.ig_batch(xb, a, mask, shift[rows, :w])
            np.add.at(acc[:, :w], rows, path.weight[sl, None] * contrib[:, :w])
            p_end[rows[a == 0.0], 0] = p1[a == 0.0]
            p_end[rows[a == 1.0], 1] = p1[a == 1.0]
            bar.update(len(rows))
        return acc, p_end

    def _refine(self, pos, target, x, own, shift, bar) -> np.ndarray:
        """Halve the trapezoid step of the sentences whose completeness gap exceeds the
        tolerance (only the new midpoints are evaluated: T_2n = T_n / 2 + h/2 * sum of f
        at the midpoints), until they meet it or reach ``max_steps``; updates ``pos`` and
        returns the number of intervals of each sentence."""
        steps = np.full(len(pos), self.steps, dtype=np.int64)
        while self.method == "trapezoid" and self.tolerance is not None:
            gap = np.abs(pos.sum(axis=1) - target)
            todo = np.flatnonzero((gap > self.tolerance) & (steps < self.max_steps))
            if not len(todo):
                break
            n = np.repeat(steps[todo], steps[todo])
            within = np.concatenate([np.arange(k) for k in steps[todo]])
            if self.progress:  # the silent stand-in has no total
                bar.total += len(n)
            path = _Path(
                sentence=np.repeat(todo, steps[todo]),
                alpha=(2 * within + 1) / (2.0 * n),
                weight=1.0 / (2 * n),
            )
            midpoint_sums, _ = self._integrate(x, own, shift, path, bar)
            pos[todo] = pos[todo] / 2 + midpoint_sums[todo]
            steps[todo] *= 2
        return steps
