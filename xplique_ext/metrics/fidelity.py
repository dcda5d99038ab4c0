"""MuFidelity: correlation between the drop of the model's score when a random subset of
features is set to a baseline and the sum of the attributions of that subset."""

from __future__ import annotations

import numbers
from typing import Any, Callable, Optional, Union

import numpy as np
import tensorflow as tf

from ..commons.correlations import batched_pearson, batched_spearman
from ..commons.data import iterate_dataset
from ..commons.distribute import (
    ReplicaRunner,
    compiled_function,
    is_default_strategy,
    replica_shares,
)
from ..commons.outputs import model_output_errors
from ..commons.params import ArrayLike, Boolean, Callable_, Interval, Options, validate_params
from ..commons.progress import progress_bar
from ..commons.random import cell_permutations, make_rng, seed_to_int
from ..commons.validation import check_finite, to_numpy
from ..commons.warnings import DegenerateSettingWarning, UndefinedScoreWarning, warn
from .base import BASE_PARAMETERS, BaseAttributionMetric, _compile, score_graph_of

__all__ = ["MuFidelity", "correlation_std_error", "adaptive_checkpoints"]

CORRELATIONS = {"spearman": batched_spearman, "pearson": batched_pearson}
# warn (DegenerateSettingWarning) when at least this share of the Bernoulli subsets would
# be empty or full
DEGENERATE_SHARE = 0.25


def _subset_pool(rng: np.random.Generator, nb_samples: int, n_cells: int,
                 p: float) -> np.ndarray:
    """``nb_samples`` random subsets of ``n_cells`` cells (True = set to the baseline):
    each cell in the subset with probability ``p``, conditioned on the subset being
    neither empty nor full. Shape (nb_samples, n_cells).

    Where most draws are valid, an empty or full draw is simply drawn again; otherwise
    (tiny or huge ``p``, few cells) the size is drawn from the binomial law restricted to
    1 .. n_cells - 1 and the cells uniformly, which is the same law."""
    accept = 1.0 - (1.0 - p) ** n_cells - p ** n_cells
    if accept >= 0.5:
        pool = rng.random((nb_samples, n_cells)) < p
        for _ in range(64):  # each round leaves a bad row with probability < 1/2
            size = pool.sum(axis=1)
            bad = np.flatnonzero((size == 0) | (size == n_cells))
            if not len(bad):
                return pool
            pool[bad] = rng.random((len(bad), n_cells)) < p
    from scipy.stats import binom

    sizes = np.arange(1, n_cells)
    logp = binom.logpmf(sizes, n_cells, p)
    pmf = np.exp(logp - logp.max())
    k = rng.choice(sizes, size=nb_samples, p=pmf / pmf.sum())
    pool = np.zeros((nb_samples, n_cells), dtype=bool)
    for row, size in enumerate(k):
        pool[row, rng.choice(n_cells, size=size, replace=False)] = True
    return pool


def _rescaled_rows(phi: np.ndarray) -> np.ndarray:
    """``phi`` (B, ...) float64 with each row divided by the power of two nearest above its
    largest magnitude (rows of zeros unchanged): exact, leaves every correlation
    unchanged, and keeps the attribution sums away from overflow (1e300) and their
    squares away from underflow (1e-170)."""
    flat = np.abs(phi.reshape(len(phi), -1))
    peak = flat.max(axis=1) if flat.size else np.zeros(len(phi))
    _, exponent = np.frexp(np.where(peak > 0, peak, 1.0))
    shape = (len(phi),) + (1,) * (phi.ndim - 1)
    return np.ldexp(phi, (-exponent).reshape(shape))


def _cell_index(length: int, cells: int) -> np.ndarray:
    """Cell of each position when an axis of ``length`` is cut into ``cells`` parts, with
    the nearest-neighbour rule ``tf.image.resize`` uses (half-pixel centres)."""
    return np.minimum(((np.arange(length) + 0.5) * cells / length).astype(np.int64), cells - 1)


#: adaptive sampling (``nb_samples='auto'``): the first round draws this many subsets per
#: input, each later round brings an input's total to ADAPTIVE_GROWTH times the last one.
#: Not fewer: the standard error is estimated from the correlation itself, and after 32
#: subsets a lucky draw near 1 (plug-in SE near 0) stopped some inputs 8-9 SE away from
#: their 1000-subset score in benchmarks/mufidelity.py; after 50, within about 3 SE
ADAPTIVE_FIRST_ROUND = 50
ADAPTIVE_GROWTH = 1.5


@validate_params({
    "r": [ArrayLike("real")],
    "m": [ArrayLike("real")],
    "correlation": [Options(CORRELATIONS)],
})
def correlation_std_error(r: Any, m: Any, correlation: str = "spearman") -> np.ndarray:
    r"""Approximate standard error of a correlation ``r`` over ``m`` pairs.

    Pearson, through Fisher's z: :math:`z = \operatorname{artanh} r` has standard
    error :math:`1 / \sqrt{m - 3}`, which the delta method carries back to :math:`r`:

    .. math::

        \operatorname{SE}(r) \approx \frac{1 - r^2}{\sqrt{m - 3}} \qquad (1)

    Spearman: Bonett and Wright's (2000) variance of Fisher's z of a rank correlation,
    :math:`(1 + r_s^2 / 2) / (m - 3)`, carried back the same way:

    .. math::

        \operatorname{SE}(r_s) \approx (1 - r_s^2)
            \sqrt{\frac{1 + r_s^2 / 2}{m - 3}} \qquad (2)

    Both are approximations (Eq. 1 is exact asymptotically for bivariate normal pairs);
    MuFidelity's pairs are i.i.d. draws of random subsets, so the approximation concerns
    the shape of their joint law only. NaN where ``r`` is NaN or ``m <= 3``.

    Parameters
    ----------
    r
        Correlations, any shape.
    m
        Number of pairs (subsets) behind each correlation, broadcast against ``r``.
    correlation
        'spearman' or 'pearson'.

    Returns
    -------
    se
        Array of the broadcast shape.

    References
    ----------
    Fisher, *Frequency distribution of the values of the correlation coefficient in
    samples from an indefinitely large population*, Biometrika 10 (1915) 507-521.
    Bonett and Wright, *Sample size requirements for estimating Pearson, Kendall and
    Spearman correlations*, Psychometrika 65 (2000) 23-28.

    Examples
    --------
    >>> float(correlation_std_error(0.5, 103, "pearson"))
    0.075
    """
    r = np.asarray(r, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    factor = 1.0 if correlation == "pearson" else np.sqrt(1.0 + r * r / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = (1.0 - r * r) * factor / np.sqrt(m - 3.0)
    return np.where(m > 3, se, np.nan)


#: the most random subsets per input (``nb_samples``, ``max_samples``): more is a typo
MAX_SUBSETS = 10**6
#: the most entries (subsets x cells) of the pool of subsets, held in float64: 2 GiB
_POOL_BUDGET = 2**28


def _check_pool_size(nb_subsets: int, n_cells: int, name: str) -> None:
    """Refuse a pool of subsets too large for memory, naming the parameter."""
    if nb_subsets * n_cells > _POOL_BUDGET:
        raise ValueError(
            f"`{name}` x cells must be at most {_POOL_BUDGET} (the pool of random subsets "
            f"is held in memory, float64), got {nb_subsets} subsets x {n_cells} cells: "
            f"lower `{name}`, or perturb a coarser grid (`grid_size`)"
        )


@validate_params({
    "max_samples": [Interval(numbers.Integral, 1, None)],
    "first": [Interval(numbers.Integral, 1, None), None],
    "growth": [Interval(numbers.Real, 1.0, None, closed="neither"), None],
})
def adaptive_checkpoints(max_samples: int, first: Optional[int] = None,
                         growth: Optional[float] = None) -> list:
    """The numbers of subsets after which adaptive sampling checks an input's standard
    error: ``first``, then each times ``growth`` (rounded up), up to ``max_samples``.

    Examples
    --------
    >>> adaptive_checkpoints(200)
    [50, 75, 113, 170, 200]
    """
    first = ADAPTIVE_FIRST_ROUND if first is None else first
    growth = ADAPTIVE_GROWTH if growth is None else growth
    points = [min(first, max_samples)]
    while points[-1] < max_samples:
        points.append(min(max_samples, int(np.ceil(points[-1] * growth))))
    return points


class MuFidelity(BaseAttributionMetric):
    r"""Faithfulness correlation (MuFidelity) of Bhatt et al. (2020), with Xplique's
    signature and defaults.

    For each input, ``nb_samples`` random subsets :math:`S` of features (pixels, or
    superpixels of a ``grid_size`` x ``grid_size`` grid) are set to a baseline, and the
    score is the correlation, over the subsets, between the drop of the model's score and
    the sum of the attributions of the subset. The better the explanation, the higher the
    score (in [-1, 1]).

    Parameters
    ----------
    model
        Keras model or callable, output (N, K).
    inputs
        Images (N, H, W, C), tabular data (N, F) or time series (N, T, F), as a NumPy
        array, a tf.Tensor or a ``tf.data.Dataset`` of ``x`` or ``(x, y)`` (streamed).
    targets
        One-hot (N, K), class ids (N,) or regression targets; None uses the predicted class.
    batch_size
        Number of perturbed inputs sent to the model at once; at most that many exist at
        any moment. None evaluates all perturbations of all inputs at once.
    grid_size
        Images: cut each image into ``grid_size`` x ``grid_size`` superpixels; None is the
        original pixel-wise metric. Time series: cut the time axis into ``grid_size``
        segments (per feature). Ignored for tabular data.
    subset_percent
        Probability that each feature (or superpixel) belongs to the subset set to the
        baseline, in (0, 1); 0.2 removes 20% of the image on average, as in Xplique.
        Subsets that would be empty or full are never used (see Notes).
    baseline_mode
        Baseline value, or a callable applied to a single input (shape of one input, in
        floating point) returning the baseline input of the same shape. Perturbed inputs
        are computed in floating point (float32 for integer inputs such as uint8), so the
        baseline is never cast to the inputs' dtype.
    nb_samples
        Number of random subsets per input (2 to 10**6; 2 always gives +1, -1 or NaN and
        warns), or 'auto': adaptive sampling (see Notes), which stops drawing subsets for
        an input once its score's standard error is at most ``target_se``.
    operator
        ``g(f, x, y)`` returning one scalar per sample; default ``f(x)[y]``. Also
        Xplique's task names ('classification', 'regression', ...) and ``Tasks`` members.
    activation
        None, 'sigmoid' or 'softmax', applied to the model's output.
    seed
        Seed of the random subsets. Each input gets its own subsets: a pool of
        ``nb_samples`` random subsets seen through a permutation of the cells drawn from
        the seed and the input's content, so the scores do not depend on the batch size
        nor on the order of the inputs.
    correlation
        'spearman' (Xplique's choice, rank correlation) or 'pearson' (the original
        definition of Bhatt et al., 2020).
    progress
        Show a progress bar that advances per perturbation batch (False by default; tqdm
        is only imported then).
    strategy
        ``tf.distribute.Strategy`` (None: the one in scope). Each batch of inputs is cut
        into one share per replica; every replica builds and scores the perturbations of
        its share, ``ceil(batch_size / replicas)`` perturbed inputs at a time (so
        ``batch_size`` stays the global perturbation batch). Same scores as on one device,
        in input order, with any number of inputs and replicas.
    target_se
        With ``nb_samples='auto'``: the standard error, in (0, 1), at which an input
        stops (0.02 by default). Ignored for a fixed ``nb_samples``.
    max_samples
        With ``nb_samples='auto'``: the most subsets an input may use (4 to 10**6;
        1000 by default). Ignored for a fixed ``nb_samples``.

    Notes
    -----
    .. math::

        \mu F(f, g, x) = \operatorname{corr}_{S \in \binom{[d]}{|S|}}
            \Big( \sum_{i \in S} g(f, x)_i,\; f(x) - f(x_{[x_S = \bar{x}_S]}) \Big)

    A sample whose score drops or attribution sums are constant over the subsets has an
    undefined correlation: :meth:`detailed_evaluate` returns NaN for it with an
    :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning` (Xplique silently counts
    it as 0), and :meth:`evaluate` averages the others and says how many were skipped and
    why (constant drops, constant attribution sums, or a model returning NaN/inf).

    The definition correlates over subsets :math:`S` with :math:`0 < |S| < d`: an empty
    subset (drop 0, sum 0) or a full one carries no information about the explanation.
    Each subset is drawn cell by cell with probability ``subset_percent`` as in Xplique,
    conditioned on being neither empty nor full. Settings where at least 25% of the
    unconditioned draws would be empty or full (a tiny ``subset_percent``, a grid of one
    cell), and ``nb_samples=2``, raise a
    :class:`~xplique_ext.commons.warnings.DegenerateSettingWarning` that states the share;
    with a single cell no subset is valid and every score is NaN.

    The perturbed scores are kept in float64 (never cast down: a float64 model whose
    outputs carry a large offset keeps its drops). The attribution sums and the
    correlations are computed on rows rescaled by an exact power of two, so the score
    does not depend on the explanation's scale (times 1e-170 or 1e300 in float64 gives
    the same score).

    *Uncertainty.* :meth:`details` gives each score's approximate standard error over
    the random subsets (:func:`correlation_std_error`: Fisher's z for Pearson, Bonett
    and Wright's approximation for Spearman) and the number of subsets it used;
    :meth:`summary` gives the interval of the mean over the inputs.

    *Adaptive sampling* (``nb_samples='auto'``). A pool of ``max_samples`` subsets is
    drawn from the seed; every input sees the first subsets of it (through its own
    permutation of the cells, as above), in rounds that bring its count to 50, 75, 113,
    ... (:func:`adaptive_checkpoints`); after each round an input whose standard error
    is at most ``target_se`` stops, the others go on, up to ``max_samples``. An input
    whose correlation is still undefined (constant drops) goes on too. Each input's
    subsets and stopping point depend only on the seed, its own content and its own
    scores: not on the batch size nor on the other inputs. With ``max_samples`` equal to
    a fixed ``nb_samples`` and no early stop, the scores are those of that fixed
    setting.

    Inputs must have a batch axis. For a Keras model whose input rank is known, a single
    input without it is refused; for a plain callable an (H, W, C) array cannot be told
    from H time series, and is read as time series. Non-finite inputs are refused, batch
    by batch for a streamed dataset. Multi-input models are not supported.

    Higher is better.

    References
    ----------
    Bhatt, Weller and Moura, *Evaluating and Aggregating Feature-based Model
    Explanations*, IJCAI 2020 (definition 3). https://arxiv.org/abs/2005.00631

    Examples
    --------
    >>> import numpy as np, keras
    >>> from xplique_ext.metrics import MuFidelity
    >>> x = np.random.default_rng(0).random((4, 8, 8, 1)).astype("float32")
    >>> model = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Flatten(),
    ...                           keras.layers.Dense(1, use_bias=False,
    ...                                              kernel_initializer="ones")])
    >>> metric = MuFidelity(model, x, np.ones(4), grid_size=None, nb_samples=50, seed=0,
    ...                     progress=False)
    >>> round(metric.evaluate(x[..., 0]), 6)   # f = sum(x) and phi = x: a perfect score
    1.0
    """

    higher_is_better = True

    @validate_params({
        **BASE_PARAMETERS,
        "grid_size": [Interval(numbers.Integral, 1, None), None],
        "subset_percent": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
        "baseline_mode": [Interval(numbers.Real, None, None), Callable_()],
        "nb_samples": [Interval(numbers.Integral, 2, MAX_SUBSETS), Options(["auto"])],
        "correlation": [Options(CORRELATIONS)],
        "progress": [Boolean()],
        "target_se": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
        "max_samples": [Interval(numbers.Integral, 4, MAX_SUBSETS)],
    })
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        grid_size: Optional[int] = 9,
        subset_percent: float = 0.2,
        baseline_mode: Union[Callable, float] = 0.0,
        nb_samples: int = 200,
        operator: Union[None, str, Callable] = None,
        activation: Optional[str] = None,
        *,
        seed: Optional[int] = None,
        correlation: str = "spearman",
        progress: bool = False,
        strategy: Any = None,
        target_se: float = 0.02,
        max_samples: int = 1000,
    ):
        super().__init__(
            model, inputs, targets, batch_size,
            operator=operator, activation=activation, seed=seed, strategy=strategy,
        )
        self.grid_size = grid_size  # values declared and converted by @validate_params
        self.subset_percent = subset_percent
        self.baseline_mode = baseline_mode
        self.nb_samples = nb_samples
        self.target_se = target_se
        self.max_samples = max_samples
        self.correlation = correlation
        self.progress = progress
        if self.inputs is not None and self.inputs.dtype.kind not in "biuf":
            raise TypeError(
                "`inputs` must hold numbers (bool, integer or float dtype), got dtype "
                f"{self.inputs.dtype}"
            )
        self._input_shape = self._peek_input_shape()
        self._cells_shape, self._row_cells, self._col_cells = self._grid(self._input_shape)
        self._warn_degenerate()
        # compiled once per model, operator, activation, strategy and grid geometry, and
        # shared by every MuFidelity on them: nb_samples, subsets, baselines and targets
        # are arguments, never baked into the graph
        row = tuple(int(i) for i in self._row_cells)
        col = None if self._col_cells is None else tuple(int(i) for i in self._col_cells)
        geometry = (len(self._input_shape), tuple(self._cells_shape), row, col)
        self._all_scores_fn, self._chunk_scores_fn, runner = self._shared(
            "mufidelity", geometry,
            lambda live, activation, strategy: _fidelity_functions(
                live, activation, strategy, *geometry),
        )
        if runner is not None:
            self._replica_runner = runner
            self._all_scores_fn = self._distributed_all_scores

    def _warn_degenerate(self) -> None:
        """DegenerateSettingWarning for settings that make the score ±1 or noise."""
        if self.nb_samples == 2:
            warn(
                "MuFidelity: `nb_samples`=2 makes every score +1, -1 or NaN (a correlation "
                "over 2 subsets); use at least a few dozen subsets",
                DegenerateSettingWarning,
            )
        n = int(np.prod(self._cells_shape))
        p = self.subset_percent
        share = (1.0 - p) ** n + p ** n
        if n == 1:
            warn(
                "MuFidelity: the perturbation grid has a single cell (`grid_size`="
                f"{self.grid_size} on inputs of shape {self._input_shape}): 100% of the "
                "random subsets are empty or full, so no correlation is defined and every "
                "score is NaN; use a finer `grid_size`",
                DegenerateSettingWarning,
            )
        elif share >= DEGENERATE_SHARE:
            warn(
                f"MuFidelity: with `subset_percent`={p:g} on {n} cells, {share:.1%} of "
                "the random subsets would be empty or full; they are drawn again (an empty "
                "or full subset never enters the correlation), so the subsets hold "
                f"{self._mean_subset_size(n, p):.3g} cells on average instead of "
                f"{n * p:.3g}",
                DegenerateSettingWarning,
            )

    @staticmethod
    def _mean_subset_size(n: int, p: float) -> float:
        from scipy.stats import binom

        sizes = np.arange(1, n)
        logp = binom.logpmf(sizes, n, p)
        pmf = np.exp(logp - logp.max())
        return float((sizes * pmf).sum() / pmf.sum())

    # ------------------------------------------------------------------ geometry
    def _peek_input_shape(self) -> tuple:
        if self.inputs is not None:
            if len(self.inputs) == 0:
                raise ValueError("`inputs` must hold at least one input, got 0")
            return tuple(self.inputs.shape[1:])
        try:
            x, _ = next(iter(self._iter_dataset_once()))
        except StopIteration:
            raise ValueError(
                "`inputs` must hold at least one input, got an empty dataset"
            ) from None
        return tuple(x.shape[1:])

    def _iter_dataset_once(self):
        return iterate_dataset(self.dataset.take(1), 1, self._dataset_batched)

    def _grid(self, shape: tuple):
        """Cells shape, and the cell index of each position along the (up to) two
        perturbed axes."""
        if len(shape) == 1:  # tabular (F,): every feature is its own cell
            return (shape[0],), np.arange(shape[0]), None
        if len(shape) == 2:  # time series (T, F): grid over time, every feature apart
            t, f = shape
            g = t if self.grid_size is None else self.grid_size
            if g > t:
                raise ValueError(
                    f"`grid_size` must be at most the series length {t}, got {g}"
                )
            return (g, f), _cell_index(t, g), np.arange(f)
        if len(shape) == 3:  # images (H, W, C)
            h, w = shape[:2]
            if self.grid_size is None:
                return (h, w), np.arange(h), np.arange(w)
            if self.grid_size > min(h, w):
                raise ValueError(
                    f"`grid_size` must be at most the image size {min(h, w)} "
                    f"(inputs are {h}x{w}), got {self.grid_size}"
                )
            g = self.grid_size
            return (g, g), _cell_index(h, g), _cell_index(w, g)
        raise ValueError(
            "`inputs` must be tabular (N, F), time series (N, T, F) or images "
            f"(N, H, W, C), got per-input shape {shape}"
        )

    def _explanation_cells(self, phi: np.ndarray) -> np.ndarray:
        """Sum of the attributions inside each cell: (B, *cells_shape) -> (B, n_cells)."""
        shape = self._input_shape
        if len(shape) == 3:
            if phi.ndim == 4:
                phi = phi.sum(axis=-1)  # (B, H, W, 1) or (B, H, W, C)
        b = len(phi)
        phi = _rescaled_rows(phi.astype(np.float64, copy=False))
        if len(shape) == 1:
            return phi.reshape(b, -1)
        n0, n1 = self._cells_shape
        rows = np.zeros((n0, phi.shape[1]))
        rows[self._row_cells, np.arange(phi.shape[1])] = 1.0
        cols = np.zeros((n1, phi.shape[2]))
        cols[self._col_cells, np.arange(phi.shape[2])] = 1.0
        return np.einsum("gh,bhw,kw->bgk", rows, phi, cols, optimize=True).reshape(b, -1)

    def _check_explanations(self, explanations: Any) -> np.ndarray:
        phi = to_numpy(explanations, "explanations")
        if phi.dtype.kind not in "fiu":
            raise TypeError(f"`explanations` must be numeric, got dtype {phi.dtype}")
        if self.n_inputs is not None and len(phi) != self.n_inputs:
            raise ValueError(
                "`explanations` must hold one explanation per input: got "
                f"{len(phi)} explanations for {self.n_inputs} inputs"
            )
        shape = self._input_shape
        per = tuple(phi.shape[1:])
        allowed = [shape]
        if len(shape) == 3:
            allowed += [shape[:2], shape[:2] + (1,)]
        if per not in allowed:
            raise ValueError(
                "`explanations` must have one of the per-input shapes "
                f"{[tuple(a) for a in allowed]} to match inputs of shape {shape}, got {per}"
            )
        return phi

    # ------------------------------------------------------------------ model calls
    def _baselines(self, x: np.ndarray) -> np.ndarray:
        """Baseline inputs, in the (floating-point) dtype of ``x``."""
        if not callable(self.baseline_mode):
            return np.full_like(x, self.baseline_mode)
        # the documented contract: called with a single input
        out = np.empty_like(x)
        for i, xi in enumerate(x):
            b = self.baseline_mode(xi.copy())
            b = to_numpy(b, "baseline_mode") if b is not None else np.asarray(b)
            if b.dtype.kind not in "biuf":
                raise TypeError(
                    "`baseline_mode` callable must return a numeric array of the input's "
                    f"shape {xi.shape}, got {type(b).__name__} of dtype {b.dtype}"
                )
            if b.shape != xi.shape:
                raise ValueError(
                    "`baseline_mode` callable must return an array of the input's shape "
                    f"{xi.shape}, got shape {b.shape}"
                )
            out[i] = b
        check_finite(out, "baseline_mode")
        return out

    @staticmethod
    def _as_float(x: np.ndarray) -> np.ndarray:
        """Inputs in floating point (float32 for bool/integer inputs), as Xplique does."""
        return x if x.dtype.kind == "f" else x.astype(np.float32)

    # ------------------------------------------------------------------ evaluation
    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """MuFidelity of each input.

        Parameters
        ----------
        explanations
            Attributions, one per input: (N, H, W), (N, H, W, 1) or (N, H, W, C) for
            images, (N, F) for tabular data, (N, T, F) for time series. NumPy array or
            tf.Tensor, finite values only.

        Returns
        -------
        scores
            Array of shape (N,), in [-1, 1]; NaN where the correlation is undefined (an
            :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning` gives the
            reason).
        """
        if self.nb_samples == "auto":
            return self._adaptive_evaluate(explanations)[0]
        phi_all = self._check_explanations(explanations)
        n_cells = int(np.prod(self._cells_shape))
        seed = seed_to_int(self.seed)
        single_cell = n_cells < 2
        if not single_cell:
            # a pool of random subsets (True = set to the baseline), neither empty nor
            # full; each input sees it through its own permutation of the cells, drawn
            # from the seed and the input's content
            _check_pool_size(self.nb_samples, n_cells, "nb_samples")
            removed = _subset_pool(make_rng(seed), self.nb_samples, n_cells,
                                   self.subset_percent)
            removed_f = removed.astype(np.float64)
            masks = tf.constant(removed, tf.float32)

        per_chunk = self.batch_size
        results = []
        reasons = np.zeros(7, dtype=np.int64)
        bar = None
        if self.progress:
            total = None if self.n_inputs is None else self.n_inputs * self.nb_samples
            bar = progress_bar(enabled=True, total=total, desc="MuFidelity", unit="pert")
        try:
            # batch_size inputs at a time: their nb_samples subsets fill whole
            # perturbation batches of batch_size
            for x, y, phi in self._explained_batches(phi_all):
                if single_cell:
                    results.append(np.full(len(x), np.nan))
                    reasons[6] += len(x)
                    continue
                xf = self._as_float(x)  # uint8 and float32 copies get the same subsets
                perms = cell_permutations(xf, n_cells, seed)  # (B, n_cells)
                # sum over the subset of input i: sum_c pool[p, perms[i, c]] * phi[i, c]
                cells = np.take_along_axis(
                    self._explanation_cells(phi), np.argsort(perms, axis=1), axis=1
                )
                attrs = cells @ removed_f.T  # (B, nb_samples)
                base = self.scores(xf, y)  # (B,)
                drops = self._drops(xf, y, base, masks, perms, per_chunk, bar)
                corr = CORRELATIONS[self.correlation](drops, attrs)
                reasons[:6] += self._undefined_reasons(
                    corr, drops, attrs,
                    lambda xf=xf: (xf == self._baselines(xf)).reshape(len(xf), -1).all(axis=1),
                    ~phi.reshape(len(phi), -1).any(axis=1),
                )
                results.append(corr)
        finally:
            if bar is not None:
                bar.close()
        scores = np.concatenate(results) if results else np.zeros(0)
        _warn_undefined_correlations(scores, reasons)
        return scores

    def _explained_batches(self, phi_all: np.ndarray):
        """``(x, y, phi)`` batch by batch (``batch_size`` inputs), each batch's
        explanations beside its inputs, both checked finite; a ValueError when the
        explanations and the inputs differ in number (both sampling paths read this)."""
        seen = 0
        for start, x, y in self.iter_batches(self.batch_size):
            phi = phi_all[start:start + len(x)]
            if len(phi) != len(x):
                raise ValueError(
                    "`explanations` must hold one explanation per input: got "
                    f"{len(phi_all)} explanations for more inputs"
                )
            check_finite(phi, "explanations")
            check_finite(x, "inputs")
            seen += len(x)
            yield x, y, phi
        if seen != len(phi_all):
            raise ValueError(
                "`explanations` must hold one explanation per input: got "
                f"{len(phi_all)} explanations for {seen} inputs"
            )

    # ------------------------------------------------------------------ uncertainty
    def details(self, explanations: Any):
        """The per-input scores with their uncertainty.

        Parameters
        ----------
        explanations
            As in :meth:`detailed_evaluate`.

        Returns
        -------
        pandas.DataFrame
            One row per input: ``score`` (as :meth:`detailed_evaluate`), ``std_error``
            (its approximate standard error over the random subsets,
            :func:`correlation_std_error`; NaN where the score is) and ``n_subsets``
            (subsets used: ``nb_samples``, or the input's stopping point under
            ``nb_samples='auto'``).
        """
        import pandas as pd

        if self.nb_samples == "auto":
            scores, used = self._adaptive_evaluate(explanations)
        else:
            scores = self.detailed_evaluate(explanations)
            used = np.full(len(scores), self.nb_samples, dtype=np.int64)
        return pd.DataFrame({
            "score": scores,
            "std_error": correlation_std_error(scores, used, self.correlation),
            "n_subsets": used,
        })

    def _adaptive_evaluate(self, explanations: Any):
        """Scores (N,) and subsets used (N,) under ``nb_samples='auto'``: rounds of
        subsets from one pool of ``max_samples``, an input stopping once its standard
        error is at most ``target_se`` (see the class Notes)."""
        phi_all = self._check_explanations(explanations)
        n_cells = int(np.prod(self._cells_shape))
        seed = seed_to_int(self.seed)
        points = adaptive_checkpoints(self.max_samples)
        if n_cells >= 2:
            _check_pool_size(self.max_samples, n_cells, "max_samples")
            pool = _subset_pool(make_rng(seed), self.max_samples, n_cells,
                                self.subset_percent)
            pool_f = pool.astype(np.float64)
        scores, used_all = [], []
        reasons = np.zeros(7, dtype=np.int64)
        bar = progress_bar(enabled=True, total=None, desc="MuFidelity (adaptive)",
                           unit="pert") if self.progress else None
        try:
            for x, y, phi in self._explained_batches(phi_all):
                if n_cells < 2:
                    scores.append(np.full(len(x), np.nan))
                    used_all.append(np.zeros(len(x), dtype=np.int64))
                    reasons[6] += len(x)
                    continue
                corr, used, why = self._adaptive_batch(x, y, phi, pool, pool_f, points,
                                                       seed, bar)
                scores.append(corr)
                used_all.append(used)
                reasons[:6] += why
        finally:
            if bar is not None:
                bar.close()
        out = np.concatenate(scores) if scores else np.zeros(0)
        used = np.concatenate(used_all) if used_all else np.zeros(0, dtype=np.int64)
        _warn_undefined_correlations(out, reasons)
        return out, used

    def _adaptive_batch(self, x, y, phi, pool, pool_f, points, seed, bar):
        """Adaptive rounds for one batch of inputs: (scores, subsets used, counts of
        the causes of undefined scores)."""
        n = len(x)
        n_cells = pool.shape[1]
        xf = self._as_float(x)
        perms = cell_permutations(xf, n_cells, seed)
        cells = np.take_along_axis(self._explanation_cells(phi), np.argsort(perms, axis=1),
                                   axis=1)
        attrs = cells @ pool_f.T  # (n, max_samples): cheap next to the model calls
        base = self.scores(xf, y)
        baselines = self._baselines(xf)
        drops = np.full((n, self.max_samples), np.nan)
        used = np.zeros(n, dtype=np.int64)
        active = np.arange(n)
        corr_fn = CORRELATIONS[self.correlation]
        done = 0
        for point in points:
            if not len(active):
                break
            block = tf.constant(pool[done:point], tf.float32)
            drops[active, done:point] = self._block_drops(
                xf[active], baselines[active], y[active], base[active], block,
                perms[active])
            if bar is not None:
                bar.update(len(active) * (point - done))
            used[active] = point
            r = corr_fn(drops[active, :point], attrs[active, :point])
            se = correlation_std_error(r, point, self.correlation)
            active = active[~(se <= self.target_se)]  # NaN (undefined) goes on
            done = point
        corr = np.full(n, np.nan)
        why = np.zeros(6, dtype=np.int64)
        no_op = (xf == baselines).reshape(n, -1).all(axis=1)
        zero_phi = ~phi.reshape(n, -1).any(axis=1)
        for count in np.unique(used):
            rows = np.flatnonzero(used == count)
            d, a = drops[rows, :count], attrs[rows, :count]
            corr[rows] = corr_fn(d, a)
            why += self._undefined_reasons(corr[rows], d, a, lambda rows=rows: no_op[rows],
                                           zero_phi[rows])
        return corr, used, why

    def _block_drops(self, x, baselines, y, base, masks, perms) -> np.ndarray:
        """Score drops (B, k) of the inputs ``x`` for the k subsets ``masks`` (k,
        n_cells), in perturbation batches of at most ``batch_size``."""
        b, k = len(x), int(masks.shape[0])
        total = b * k
        size = total if self.batch_size is None else min(self.batch_size, total)
        with model_output_errors():
            scores = self._all_scores_fn(
                tf.convert_to_tensor(x), tf.convert_to_tensor(baselines),
                tf.convert_to_tensor(y), masks, tf.constant(perms, tf.int32),
                tf.constant(k, tf.int32), tf.constant(size, tf.int32),
                tf.constant(total, tf.int32),
            )
        return base[:, None] - np.asarray(scores, dtype=np.float64).reshape(b, k)

    @staticmethod
    def _undefined_reasons(corr, drops, attrs, no_op, zero_phi) -> np.ndarray:
        """Count the NaN correlations by their first cause: non-finite drops, non-finite
        attribution sums, inputs equal to their baseline (``no_op()``, computed only when
        a score is NaN), constant drops, an all-zero explanation (``zero_phi``), constant
        attribution sums."""
        nan = np.isnan(corr)
        if not nan.any():
            return np.zeros(6, dtype=np.int64)
        bad_drop = ~np.isfinite(drops).all(axis=1)
        bad_attr = ~np.isfinite(attrs).all(axis=1)
        with np.errstate(invalid="ignore"):
            const_drop = np.ptp(drops, axis=1) == 0
            const_attr = np.ptp(attrs, axis=1) == 0
        causes = (bad_drop, bad_attr, const_drop & no_op(), const_drop, zero_phi, const_attr)
        out = np.zeros(6, dtype=np.int64)
        left = nan.copy()
        for j, cause in enumerate(causes):
            out[j] = int((left & cause).sum())
            left &= ~cause
        out[5] += int(left.sum())  # any other degenerate row (zero variance after rounding)
        return out

    def _drops(self, x, y, base, masks, perms, per_chunk, bar) -> np.ndarray:
        """Score drops (B, nb_samples) for every subset of every input of the batch,
        computed in perturbation batches of at most ``per_chunk`` (the last one only as
        large as the work left)."""
        b = len(x)
        total = b * self.nb_samples
        size = total if per_chunk is None else min(per_chunk, total)
        args = (
            tf.convert_to_tensor(x), tf.convert_to_tensor(self._baselines(x)),
            tf.convert_to_tensor(y), masks, tf.constant(perms, tf.int32),
            tf.constant(self.nb_samples, tf.int32),
        )
        if bar is None or not is_default_strategy(self.strategy):
            # one graph for all the perturbation batches (under a strategy: one per replica)
            with model_output_errors():
                scores = self._all_scores_fn(*args, tf.constant(size, tf.int32),
                                             tf.constant(total, tf.int32))
            if bar is not None:
                bar.update(total)
        else:  # one call per perturbation batch, so that the bar advances with the work
            parts = []
            for start in range(0, total, size):
                n = min(size, total - start)
                with model_output_errors():
                    parts.append(np.asarray(self._chunk_scores_fn(
                        *args, tf.constant(start, tf.int32), tf.constant(n, tf.int32))))
                bar.update(n)
            scores = np.concatenate(parts)
        return base[:, None] - np.asarray(scores, dtype=np.float64).reshape(b, self.nb_samples)

    # ------------------------------------------------------------------ tf.distribute
    def _distributed_all_scores(self, x, baseline, y, masks, perms, nb_samples, size, total):
        """Drop-in for the compiled ``all_scores`` under a tf.distribute strategy: the
        inputs of the batch are shared among the replicas, and each replica scores the
        perturbations of its share in batches of ``ceil(size / replicas)``."""
        per_replica = replica_shares(int(size), self._replica_runner.replicas)
        out = self._replica_runner(
            x, baseline, y, perms,
            shared=(masks, nb_samples, tf.constant(per_replica, tf.int32)),
        )
        return np.asarray(out).reshape(-1)[: int(total)]


def _warn_undefined_correlations(scores: np.ndarray, reasons: np.ndarray) -> None:
    """One UndefinedScoreWarning naming how many scores are NaN and why (``reasons``:
    counts of the seven causes, in the order of the labels below)."""
    undefined = int(np.isnan(scores).sum())
    if not undefined:
        return
    labels = (
        "non-finite model scores (the model returned NaN or inf)",
        "non-finite attribution sums (overflow)",
        "inputs equal to the baseline (the perturbations change nothing)",
        "constant score drops over the subsets (the model's score does not change)",
        "an all-zero explanation (constant attribution sums)",
        "constant attribution sums over the subsets",
        "no valid subset (a single-cell grid: every subset is empty or full)",
    )
    why = "; ".join(f"{n} with {label}" for n, label in zip(reasons, labels) if n)
    warn(
        f"MuFidelity: {undefined} of {len(scores)} samples have an undefined "
        f"correlation, set to NaN: {why}.",
        UndefinedScoreWarning,
    )


def _fidelity_functions(live, activation, strategy, rank, cells_shape, row_cells,
                        col_cells):
    """MuFidelity's compiled functions for one model, operator, activation, strategy and
    grid geometry (``rank`` of an input, ``cells_shape``, cell index of each position
    along the perturbed axes): ``(all_scores, chunk_scores, runner)``, ``runner`` being a
    :class:`ReplicaRunner` under a non-default strategy, else None. They hold the model
    and the operator through ``live()`` only (see ``BaseAttributionMetric._shared``)."""
    score = score_graph_of(live, activation)
    row_cells = np.asarray(row_cells, dtype=np.int64)
    col_cells = None if col_cells is None else np.asarray(col_cells, dtype=np.int64)

    def perturb(x, baseline, cell_masks, sample_ids):
        """Perturbed inputs: input ``sample_ids[k]`` with the cells where
        ``cell_masks[k]`` (*cells_shape) is 1 set to the baseline. Compiled with XLA,
        which fuses the gathers and the blend into one pass over memory."""
        m = tf.gather(cell_masks, row_cells, axis=1)
        if col_cells is not None:
            m = tf.gather(m, col_cells, axis=2)
        if rank == 3:
            m = m[..., tf.newaxis]
        xs = tf.gather(x, sample_ids)
        m = tf.cast(m, xs.dtype)
        return xs + m * (tf.gather(baseline, sample_ids) - xs)

    perturb_fn = compiled_function(perturb, jit_compile=True)

    def chunk_scores(x, baseline, y, masks, perms, nb_samples, start, size):
        """Operator scores of the perturbed inputs ``start .. start + size`` of the flat
        (input, subset) grid of the batch. ``masks`` (nb_samples, n_cells) are 1 where
        the feature is set to the baseline; input ``i`` sees them through its
        permutation of the cells ``perms[i]``."""
        idx = start + tf.range(size)
        sample_ids = idx // nb_samples
        cell_masks = tf.gather(tf.gather(masks, idx % nb_samples),
                               tf.gather(perms, sample_ids), batch_dims=1)
        cell_masks = tf.reshape(cell_masks, tf.concat([[size], cells_shape], axis=0))
        out = score(perturb_fn(x, baseline, cell_masks, sample_ids),
                    tf.gather(y, sample_ids))
        # float64 holds every model dtype exactly: scores are never cast down
        return tf.cast(tf.reshape(out, [-1]), tf.float64)

    def all_scores(x, baseline, y, masks, perms, nb_samples, size, total):
        """Scores of all the perturbed inputs of a batch of inputs, one perturbation
        batch after the other inside a single graph (no overlap: at most ``size``
        perturbed inputs exist at once; the last batch holds only the perturbations
        left)."""
        n_chunks = (total + size - 1) // size
        results = tf.TensorArray(tf.float64, size=n_chunks, infer_shape=False)

        def body(i, results):
            start = i * size
            out = chunk_scores(x, baseline, y, masks, perms, nb_samples, start,
                               tf.minimum(size, total - start))
            return i + 1, results.write(i, out)

        _, results = tf.while_loop(
            lambda i, _: i < n_chunks, body, (tf.constant(0), results),
            parallel_iterations=1,
        )
        return results.concat()

    single = _compile(all_scores)
    chunk = _compile(chunk_scores)
    if is_default_strategy(strategy):
        return single, chunk, None

    def replica_scores(x, baseline, y, perms, masks, nb_samples, size):
        """What one replica computes: the scores (b, nb_samples) of every perturbed
        input of its share of the inputs, ``size`` at a time."""
        total = tf.shape(x)[0] * nb_samples
        out = all_scores(x, baseline, y, masks, perms, nb_samples, size, total)
        return tf.reshape(out, [-1, nb_samples])

    def single_replica_scores(x, baseline, y, perms, masks, nb_samples, size):
        nb = int(nb_samples)
        total = tf.constant(len(x) * nb, tf.int32)
        out = single(x, baseline, y, masks, perms, nb_samples, size, total)
        return np.asarray(out).reshape(len(x), nb)

    return single, chunk, ReplicaRunner(replica_scores, strategy,
                                        fallback=single_replica_scores)
