"""MuFidelity: correlation between the drop of the model's score when a random subset of
features is set to a baseline and the sum of the attributions of that subset."""

from __future__ import annotations

import numbers
from functools import partial
from typing import Any, Callable, NamedTuple, Optional, Union

import numpy as np
import tensorflow as tf

from .. import runtime
from ..commons.correlations import batched_pearson, batched_spearman, unit_rows
from ..commons.params import (
    ArrayLike,
    Boolean,
    Callable_,
    Interval,
    Options,
    check_param,
    validate_params,
)
from ..commons.progress import progress_bar
from ..commons.random import cell_permutations, make_rng, seed_to_int
from ..commons.warnings import DegenerateSettingWarning, UndefinedScoreWarning, warn
from .base import BASE_PARAMETERS, ExplanationMetric, score_function

__all__ = [
    "MuFidelity",
    "ForwardPasses",
    "correlation_std_error",
    "adaptive_checkpoints",
    "distinct_subsets",
]

CORRELATIONS = {"spearman": batched_spearman, "pearson": batched_pearson}
#: warn (DegenerateSettingWarning) when at least this share of the Bernoulli subsets would
#: be empty or full: at 7-12% such subsets (kept, as Xplique keeps them) moved scores by
#: up to 0.05, which is where the choice of ``subset_draws`` starts to matter
DEGENERATE_SHARE = 0.05
#: ``subset_draws``: 'conditioned' redraws an empty or full subset (the definition's
#: 0 < |S| < d), 'unconditioned' keeps it (Xplique's draws, for comparison)
SUBSET_DRAWS = ("conditioned", "unconditioned")
#: adaptive sampling (``nb_samples='auto'``): the first round draws this many subsets per
#: input, each later round brings an input's total to ADAPTIVE_GROWTH times the last one.
#: Not fewer: the standard error is estimated from the correlation itself, and after 32
#: subsets a lucky draw near 1 (plug-in SE near 0) stopped some inputs 8-9 SE away from
#: their 1000-subset score in benchmarks/mufidelity.py; after 50, within about 3 SE
ADAPTIVE_FIRST_ROUND = 50
ADAPTIVE_GROWTH = 1.5
#: the most random subsets per input (``nb_samples``, ``max_samples``): more is a typo
MAX_SUBSETS = 10**6
#: the most entries (subsets x cells) of the pool of subsets, held in float64: 2 GiB
_POOL_BUDGET = 2**28
#: correlations and their numbers of pairs (:func:`correlation_std_error`), as float64
REALS = ArrayLike("real", dtype=np.float64)
#: why a correlation is undefined, in the order :meth:`MuFidelity._undefined_reasons`
#: counts them (the last: a grid of one cell)
UNDEFINED_CAUSES = (
    "non-finite model scores (the model returned NaN or inf)",
    "non-finite attribution sums (overflow)",
    "inputs equal to the baseline (the perturbations change nothing)",
    "constant score drops over the subsets (the model's score does not change)",
    "an all-zero explanation (constant attribution sums)",
    "constant attribution sums over the subsets",
    "no valid subset (a single-cell grid: every subset is empty or full)",
)


def _subset_sizes(n_cells: int, p: float):
    """Sizes 1 .. n_cells - 1 and their probabilities: the binomial law of a subset's
    size restricted to subsets neither empty nor full."""
    from scipy.stats import binom

    sizes = np.arange(1, n_cells)
    logp = binom.logpmf(sizes, n_cells, p)
    pmf = np.exp(logp - logp.max())
    return sizes, pmf / pmf.sum()


def _subset_pool(rng: np.random.Generator, nb_samples: int, n_cells: int, p: float) -> np.ndarray:
    """``nb_samples`` random subsets of ``n_cells`` cells (True = set to the baseline):
    each cell in the subset with probability ``p``, conditioned on the subset being
    neither empty nor full. Shape (nb_samples, n_cells).

    Where most draws are valid, an empty or full draw is simply drawn again; otherwise
    (tiny or huge ``p``, few cells) the size is drawn from the binomial law restricted to
    1 .. n_cells - 1 and the cells uniformly, which is the same law."""
    if 1.0 - (1.0 - p) ** n_cells - p**n_cells >= 0.5:
        pool = rng.random((nb_samples, n_cells)) < p
        for _ in range(64):  # each round leaves a bad row with probability < 1/2
            bad = np.flatnonzero(np.isin(pool.sum(axis=1), (0, n_cells)))
            if not len(bad):
                return pool
            pool[bad] = rng.random((len(bad), n_cells)) < p
    sizes, pmf = _subset_sizes(n_cells, p)
    pool = np.zeros((nb_samples, n_cells), dtype=bool)
    for row, size in enumerate(rng.choice(sizes, size=nb_samples, p=pmf)):
        pool[row, rng.choice(n_cells, size=size, replace=False)] = True
    return pool


def _cell_index(length: int, cells: int) -> np.ndarray:
    """Cell of each position when an axis of ``length`` is cut into ``cells`` parts, with
    the nearest-neighbour rule ``tf.image.resize`` uses (half-pixel centres)."""
    return tuple(
        np.minimum(((np.arange(length) + 0.5) * cells / length).astype(int), cells - 1).tolist()
    )


class Subsets(NamedTuple):
    """The pool of random subsets of an evaluation, with its repeats found: the pool
    keeps every subset in its order (each one counts in the correlation), and each
    distinct subset is evaluated by the model once per input."""

    #: (n_pool, n_cells) booleans, True where the cell is set to the baseline
    pool: np.ndarray
    #: (n_pool,) the distinct subset of each row, numbered by first occurrence
    distinct_id: np.ndarray
    #: (n_distinct,) the row where each distinct subset first occurs, ascending
    first_row: np.ndarray

    def n_distinct_before(self, row: int) -> int:
        """How many distinct subsets the rows ``0 .. row - 1`` hold."""
        return int(np.searchsorted(self.first_row, row))


def distinct_subsets(pool: np.ndarray) -> Subsets:
    """The :class:`Subsets` of ``pool`` (n_pool, n_cells): rows compared bit for bit.

    Examples
    --------
    >>> subsets = distinct_subsets(np.array([[1, 0], [0, 1], [1, 0]], dtype=bool))
    >>> subsets.distinct_id.tolist(), subsets.first_row.tolist()
    ([0, 1, 0], [0, 1])
    """
    packed = np.ascontiguousarray(np.packbits(pool, axis=1))
    rows = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first_row, sorted_id = np.unique(rows, return_index=True, return_inverse=True)
    order = np.argsort(first_row)  # distinct subsets by first occurrence
    id_by_first_occurrence = np.empty_like(order)
    id_by_first_occurrence[order] = np.arange(len(order))
    return Subsets(
        pool=pool,
        distinct_id=id_by_first_occurrence[sorted_id.ravel()],
        first_row=first_row[order],
    )


class ForwardPasses(NamedTuple):
    """The perturbed inputs of an evaluation (:attr:`MuFidelity.forward_passes_`)."""

    #: perturbed inputs sent to the model: each distinct subset once per input
    evaluated: int
    #: perturbed inputs the correlations use: every subset of every input
    perturbations: int


class ScoreDrops(NamedTuple):
    """The drops of the model's score of a batch of inputs over their subsets."""

    #: (B, n_pool) ``f(x) - f(x_S)``, NaN beyond the subsets an input used
    drops: np.ndarray
    #: (B,) how many subsets each input used
    n_subsets: np.ndarray
    forward_passes: ForwardPasses


class MuFidelityScores(NamedTuple):
    """The scores of an evaluation, with the number of subsets behind each."""

    #: (N,) one score per input, NaN where undefined
    scores: np.ndarray
    #: (N,) subsets used: ``nb_samples``, or the stopping point under 'auto'
    n_subsets: np.ndarray


class Geometry(NamedTuple):
    """The grid of cells over the inputs: what the compiled perturbation bakes in (the
    static part of the key of MuFidelity's compiled functions)."""

    #: rank of one input (1 tabular, 2 time series, 3 images)
    rank: int
    #: number of cells along the (up to) two perturbed axes
    cells_shape: tuple
    #: cell index of each position along the first perturbed axis
    row_cells: tuple
    #: cell index of each position along the second perturbed axis (None: tabular)
    col_cells: Optional[tuple]

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.cells_shape))


class FidelityFunctions(NamedTuple):
    """MuFidelity's compiled functions (see :func:`_fidelity_functions`)."""

    #: the scores (b, nb_samples) of every perturbed input of a batch, ``size`` at a time
    perturbed: Callable
    #: the scores of one perturbation batch
    chunk: Callable


@validate_params({"r": [REALS], "m": [REALS], "correlation": [Options(CORRELATIONS)]})
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
    factor = 1.0 if correlation == "pearson" else np.sqrt(1.0 + r * r / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = (1.0 - r * r) * factor / np.sqrt(m - 3.0)
    return np.where(m > 3, se, np.nan)


@validate_params(
    {
        "max_samples": [Interval(numbers.Integral, 1, None)],
        "first": [Interval(numbers.Integral, 1, None)],
        "growth": [Interval(numbers.Real, 1.0, None, closed="neither")],
    }
)
def adaptive_checkpoints(
    max_samples: int, first: int = ADAPTIVE_FIRST_ROUND, growth: float = ADAPTIVE_GROWTH
) -> list:
    """The numbers of subsets after which adaptive sampling checks an input's standard
    error: ``first``, then each times ``growth`` (rounded up), up to ``max_samples``.

    Examples
    --------
    >>> adaptive_checkpoints(200)
    [50, 75, 113, 170, 200]
    """
    points = [min(first, max_samples)]
    while points[-1] < max_samples:
        points.append(min(max_samples, int(np.ceil(points[-1] * growth))))
    return points


class MuFidelity(ExplanationMetric):
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
    subset_draws
        'conditioned' (default): an empty or full subset is drawn again, so every subset
        holds 0 < |S| < d cells, as the definition asks. 'unconditioned': the subsets
        are kept as drawn, empty and full ones included, as Xplique draws them, to
        reproduce Xplique's scores for comparison (see Notes).

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
    conditioned on being neither empty nor full (``subset_draws='conditioned'``, the
    default). Xplique keeps such subsets; ``subset_draws='unconditioned'`` keeps them too,
    to reproduce Xplique's draws. The difference moves the score once such subsets are a
    few percent of the draws (by up to 0.05 at 7-12%): settings where at least 5% of the
    unconditioned draws would be empty or full (a small ``subset_percent`` on a coarse
    grid, a large one on tabular data, a grid of one cell), and ``nb_samples=2``, raise a
    :class:`~xplique_ext.commons.warnings.DegenerateSettingWarning` that states the share
    and names ``subset_draws``; with a single cell no subset is valid and every score is
    NaN, whatever ``subset_draws``.

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

    *Repeated subsets.* On a small grid the same subset is often drawn several times (9
    cells and 30 subsets: about 5 of them repeat). Each distinct subset is evaluated by
    the model once per input, and its score serves every repeat: the repeats' drops tie
    exactly, and each repeat still counts in the correlation, so the score is that of the
    subsets as drawn. :attr:`forward_passes_` says how many perturbed inputs the model
    scored, out of how many the correlations use.

    *What is invariant.* For a seed, the subsets, their order and each input's
    permutation of the cells do not depend on the batch size, the order of the inputs,
    the input type (array, tensor, dataset) nor on a ``tf.distribute`` strategy. The
    scores are then exactly the same whenever the model gives each input the same outputs
    whatever the batch it sits in: a float64 model, or a float32 model on a processor
    whose kernels do not depend on the batch's shape. Many float32 models are not such
    models: their outputs change in the last bits with the batch's shape (the kernels
    block and vectorise by shape, and that choice differs between processors). Then a
    Pearson score, and a Spearman score whose drops of distinct subsets nearly tie, moves
    with the batch size within the model's round-off (a few units of float32's eps on the
    outputs, carried through the drops into the correlation); a repeated subset still
    ties exactly, since it is evaluated once.

    Inputs must have a batch axis. For a Keras model whose input rank is known, a single
    input without it is refused; for a plain callable an (H, W, C) array cannot be told
    from H time series, and is read as time series. Non-finite inputs are refused, batch
    by batch for a streamed dataset. Multi-input models are not supported.

    Higher is better.

    Attributes
    ----------
    forward_passes_ : ForwardPasses or None
        The perturbed inputs of the last evaluation: ``evaluated`` (sent to the model:
        each distinct subset once per input) and ``perturbations`` (used by the
        correlations: every subset of every input); None before the first evaluation.

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

    @validate_params(
        {
            **BASE_PARAMETERS,
            "grid_size": [Interval(numbers.Integral, 1, None), None],
            "subset_percent": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
            "baseline_mode": [Interval(numbers.Real, None, None), Callable_()],
            "nb_samples": [Interval(numbers.Integral, 2, MAX_SUBSETS), Options(["auto"])],
            "correlation": [Options(CORRELATIONS)],
            "progress": [Boolean()],
            "target_se": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
            "max_samples": [Interval(numbers.Integral, 4, MAX_SUBSETS)],
            "subset_draws": [Options(SUBSET_DRAWS)],
        }
    )
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
        subset_draws: str = "conditioned",
    ):
        super().__init__(
            model,
            inputs,
            targets,
            batch_size,
            operator=operator,
            activation=activation,
            seed=seed,
            strategy=strategy,
        )
        self.grid_size = grid_size
        self.subset_percent = subset_percent
        self.baseline_mode = baseline_mode
        self.correlation = correlation
        self.progress = progress
        self.nb_samples = nb_samples
        self.target_se = target_se
        self.max_samples = max_samples
        self.subset_draws = subset_draws
        #: the model calls of the last evaluation (see :class:`ForwardPasses`)
        self.forward_passes_: Optional[ForwardPasses] = None
        # the perturbation: a grid of cells over the inputs
        self._input_shape = self._peek_input_shape()
        self._geometry = self._grid(self._input_shape)
        self._warn_degenerate()
        # compiled once per model, operator, activation, strategy and grid geometry (the
        # static part of the key: the perturbation's graph bakes the geometry in), and
        # shared by every MuFidelity on them: nb_samples, subsets, baselines and targets
        # are arguments, never baked into the graph
        functions = self._model_functions(
            "mufidelity", partial(_fidelity_functions, geometry=self._geometry), self._geometry
        )
        self._perturbed_fn = functions.perturbed
        self._chunk_fn = functions.chunk

    def _warn_degenerate(self) -> None:
        """DegenerateSettingWarning for settings that make the score ±1 or noise."""
        if self.nb_samples == 2:
            warn(
                "MuFidelity: `nb_samples`=2 makes every score +1, -1 or NaN (a correlation "
                "over 2 subsets); use at least a few dozen subsets",
                DegenerateSettingWarning,
            )
        n = self._geometry.n_cells
        p = self.subset_percent
        share = (1.0 - p) ** n + p**n
        if n == 1:
            warn(
                "MuFidelity: the perturbation grid has a single cell (`grid_size`="
                f"{self.grid_size} on inputs of shape {self._input_shape}): 100% of the "
                "random subsets are empty or full, so no correlation is defined and every "
                "score is NaN; use a finer `grid_size`",
                DegenerateSettingWarning,
            )
        elif share >= DEGENERATE_SHARE and self.subset_draws == "conditioned":
            sizes, pmf = _subset_sizes(n, p)
            warn(
                f"MuFidelity: with `subset_percent`={p:g} on {n} cells, {share:.1%} of "
                "the random subsets would be empty or full; they are drawn again (an empty "
                "or full subset never enters the correlation), so the subsets hold "
                f"{float((sizes * pmf).sum()):.3g} cells on average instead of {n * p:.3g}, "
                "and the score differs from Xplique's, which keeps them; "
                "`subset_draws='unconditioned'` keeps them too, for comparison",
                DegenerateSettingWarning,
            )
        elif share >= DEGENERATE_SHARE:
            warn(
                f"MuFidelity: with `subset_percent`={p:g} on {n} cells, {share:.1%} of "
                "the random subsets are empty or full and are kept as drawn "
                "(`subset_draws='unconditioned'`, Xplique's draws): they carry no "
                "information about the explanation; `subset_draws='conditioned'` draws "
                "them again",
                DegenerateSettingWarning,
            )

    # ------------------------------------------------------------------ geometry
    def _grid(self, shape: tuple) -> Geometry:
        """The grid of cells over inputs of per-input ``shape``: tabular (F,) every feature
        its own cell; time series (T, F) a grid over time, every feature apart; images
        (H, W, C) a grid over H and W."""
        if len(shape) == 1:
            return Geometry(
                rank=1, cells_shape=(shape[0],), row_cells=tuple(range(shape[0])), col_cells=None
            )
        if len(shape) not in (2, 3):
            raise ValueError(
                "`inputs` must be tabular (N, F), time series (N, T, F) or "
                f"images (N, H, W, C), got per-input shape {shape}"
            )
        g = self.grid_size
        h, w = shape[:2]
        if len(shape) == 3:
            cells = (g or h, g or w)
        else:
            cells = (g or h, w)  # series: every feature its own column of cells
        if len(shape) == 3:
            what = f"the image size {min(h, w)} (inputs are {h}x{w})"
        else:
            what = f"the series length {h}"
        if cells[0] > h or cells[1] > w:
            raise ValueError(f"`grid_size` must be at most {what}, got {g}")
        return Geometry(
            rank=len(shape),
            cells_shape=cells,
            row_cells=_cell_index(h, cells[0]),
            col_cells=_cell_index(w, cells[1]),
        )

    def _explanation_cells(self, phi: np.ndarray) -> np.ndarray:
        """Sum of the attributions inside each cell, (B, ...) -> (B, n_cells), on rows
        rescaled by an exact power of two (the score does not depend on the scale)."""
        if len(self._input_shape) == 3 and phi.ndim == 4:
            phi = phi.sum(axis=-1)  # (B, H, W, 1) or (B, H, W, C)
        b = len(phi)
        phi = unit_rows(phi.reshape(b, -1).astype(np.float64)).reshape(phi.shape)
        if len(self._input_shape) == 1:
            return phi
        # each cell a run of rows and of columns: sums per run, in an order that does not
        # depend on how many explanations are summed at once, to the last bit (tested;
        # a BLAS product such as einsum's does)
        rows = np.flatnonzero(np.diff(self._geometry.row_cells, prepend=-1))
        cols = np.flatnonzero(np.diff(self._geometry.col_cells, prepend=-1))
        return np.add.reduceat(np.add.reduceat(phi, rows, axis=1), cols, axis=2).reshape(b, -1)

    def _check_explanations(self, explanations: Any) -> np.ndarray:
        shape = self._input_shape
        allowed = [shape]
        if len(shape) == 3:  # images: maps (H, W) and (H, W, 1) as well as (H, W, C)
            allowed += [shape[:2], shape[:2] + (1,)]
        allowed = list(dict.fromkeys(allowed))
        phi = check_param(
            explanations,
            "explanations",
            [
                ArrayLike(
                    "real",
                    ndim=sorted({len(s) + 1 for s in allowed}),
                    finite=True,
                    batch_hint=False,
                )
            ],
        )  # (N, T) for series (N, T, F) misses F, not N
        if self.n_inputs is not None and len(phi) != self.n_inputs:
            raise ValueError(
                "`explanations` must hold one explanation per input: got "
                f"{len(phi)} explanations for {self.n_inputs} inputs"
            )
        if tuple(phi.shape[1:]) not in allowed:
            raise ValueError(
                f"`explanations` must have one of the per-input shapes {allowed} to "
                f"match inputs of shape {shape}, got {tuple(phi.shape[1:])}"
            )
        return phi

    def _baselines(self, x: np.ndarray) -> np.ndarray:
        """Baseline inputs, in the (floating-point) dtype of ``x`` (whose range they must
        fit: a baseline that overflows it is refused); a callable ``baseline_mode`` is
        called with a single input (the documented contract)."""
        big = float(np.finfo(x.dtype).max)
        if not callable(self.baseline_mode):
            return np.full_like(
                x,
                check_param(
                    self.baseline_mode, "baseline_mode", [Interval(numbers.Real, -big, big)]
                ),
            )
        out = np.empty_like(x)
        for i, xi in enumerate(x):
            b = check_param(
                self.baseline_mode(xi.copy()),
                "baseline_mode(x)",
                [ArrayLike("numeric", within=Interval(numbers.Real, -big, big))],
            )
            if b.shape != xi.shape:
                raise ValueError(
                    "`baseline_mode` callable must return an array of the "
                    f"input's shape {xi.shape}, got shape {b.shape}"
                )
            out[i] = b
        return out

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
        return self._mufidelity(explanations).scores

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

        result = self._mufidelity(explanations)
        std_error = correlation_std_error(result.scores, result.n_subsets, self.correlation)
        return pd.DataFrame(
            {"score": result.scores, "std_error": std_error, "n_subsets": result.n_subsets}
        )

    def _mufidelity(self, explanations: Any) -> MuFidelityScores:
        r"""MuFidelity of each input, the formula of the class Notes read top to bottom:
        for each input :math:`x` and each of its random subsets :math:`S`, the sum of the
        attributions :math:`\sum_{i \in S} \phi_i` and the drop of the model's score
        :math:`f(x) - f(x_S)`; the score is their correlation over the subsets.

        The inputs go batch by batch (``batch_size`` inputs); one warning at the end says
        how many scores are undefined (NaN), and why. Sets :attr:`forward_passes_`."""
        phi_all = self._check_explanations(explanations)
        n_cells = self._geometry.n_cells
        seed = seed_to_int(self.seed)  # drawn once: fresh entropy for seed=None
        subsets = self._draw_subsets(n_cells, seed)
        scores = []
        n_subsets = []
        causes = np.zeros(len(UNDEFINED_CAUSES), dtype=np.int64)
        passes = ForwardPasses(evaluated=0, perturbations=0)
        with self._progress_bar() as bar:
            for x, y, phi in self._explained_batches(phi_all):
                n = len(x)
                if subsets is None:  # a single cell: every subset is empty or full
                    scores.append(np.full(n, np.nan))
                    n_subsets.append(np.zeros(n, np.int64))
                    causes[-1] += n
                    continue
                xf = x if x.dtype.kind == "f" else x.astype(np.float32)  # as Xplique: floats
                # input i sees subset S through its own permutation of the cells
                perms = cell_permutations(xf, n_cells, seed)  # (B, n_cells)
                # sum_{i in S} phi_i: sum_c pool[S, perms[i, c]] * phi[i, c]
                attribution_sums = self._attribution_sums(phi, perms, subsets.pool)
                base = self.scores(xf, y)  # f(x), (B,)
                baselines = self._baselines(xf)
                # f(x) - f(x_S), NaN beyond the subsets each input used
                drops = self._score_drops(
                    xf, y, base, baselines, perms, attribution_sums, subsets, bar
                )
                # corr_S(sum_{i in S} phi_i, f(x) - f(x_S)), with why it is undefined
                unchanged = (xf == baselines).reshape(n, -1).all(axis=1)
                batch_scores, batch_causes = self._correlations(
                    drops.drops, attribution_sums, drops.n_subsets, unchanged, phi
                )
                scores.append(batch_scores)
                n_subsets.append(drops.n_subsets)
                causes += batch_causes
                passes = ForwardPasses(
                    evaluated=passes.evaluated + drops.forward_passes.evaluated,
                    perturbations=passes.perturbations + drops.forward_passes.perturbations,
                )
        self.forward_passes_ = passes
        scores = np.concatenate(scores)
        self._warn_undefined(scores, causes)
        return MuFidelityScores(scores=scores, n_subsets=np.concatenate(n_subsets))

    def _draw_subsets(self, n_cells: int, seed: int) -> Optional[Subsets]:
        """The pool of random subsets every input sees (through its own permutation of
        the cells), drawn from the seed: ``nb_samples`` of them, or ``max_samples`` under
        ``nb_samples='auto'``; None for a grid of one cell (no subset is valid)."""
        adaptive = self.nb_samples == "auto"
        n_pool = self.max_samples if adaptive else self.nb_samples
        if n_pool * n_cells > _POOL_BUDGET:
            name = "max_samples" if adaptive else "nb_samples"
            raise ValueError(
                f"`{name}` x cells must be at most {_POOL_BUDGET} (the pool of random subsets "
                f"is held in memory, float64), got {n_pool} subsets x {n_cells} cells: "
                f"lower `{name}`, or perturb a coarser grid (`grid_size`)"
            )
        if n_cells == 1:
            return None
        rng = make_rng(seed)
        if self.subset_draws == "unconditioned":  # Xplique's draws, empty and full kept
            return distinct_subsets(rng.random((n_pool, n_cells)) < self.subset_percent)
        return distinct_subsets(_subset_pool(rng, n_pool, n_cells, self.subset_percent))

    def _progress_bar(self):
        """The progress bar of an evaluation (a no-op unless ``progress``), counting the
        perturbed inputs."""
        adaptive = self.nb_samples == "auto"
        total = None
        if not adaptive and self.n_inputs is not None:
            total = self.n_inputs * self.nb_samples
        description = "MuFidelity (adaptive)" if adaptive else "MuFidelity"
        return progress_bar(enabled=self.progress, total=total, unit="pert", desc=description)

    def _warn_undefined(self, scores: np.ndarray, causes: np.ndarray) -> None:
        """One UndefinedScoreWarning when scores are NaN: how many, and why."""
        undefined = int(np.isnan(scores).sum())
        if not undefined:
            return
        why = "; ".join(f"{n} with {label}" for n, label in zip(causes, UNDEFINED_CAUSES) if n)
        warn(
            f"MuFidelity: {undefined} of {len(scores)} samples have an undefined "
            f"correlation, set to NaN: {why}.",
            UndefinedScoreWarning,
        )

    def _explained_batches(self, phi_all: np.ndarray):
        """``(x, y, phi)`` batch by batch (``batch_size`` inputs), each batch's
        explanations beside its inputs (checked finite); a ValueError when the
        explanations and the inputs differ in number."""
        for batch in self.explained_batches(phi_all):
            x = check_param(batch.x, "inputs", [ArrayLike("any", finite=True)])
            yield x, batch.y, batch.phi

    def _attribution_sums(self, phi: np.ndarray, perms: np.ndarray, pool: np.ndarray) -> np.ndarray:
        """The sum of the attributions of each subset of the pool (B, n_pool), input ``i``
        seeing the pool through its permutation of the cells ``perms[i]``."""
        cells = self._explanation_cells(phi)  # (B, n_cells)
        cells_in_pool_order = np.take_along_axis(cells, np.argsort(perms, axis=1), axis=1)
        return cells_in_pool_order @ pool.T.astype(np.float64)

    def _score_drops(
        self, x, y, base, baselines, perms, attribution_sums, subsets, bar
    ) -> ScoreDrops:
        """The drops ``f(x) - f(x_S)`` (B, n_pool) of the inputs ``x`` (whose scores ``f(x)``
        are ``base``) over the subsets of the pool (NaN beyond the subsets an input used).

        A fixed ``nb_samples`` is one round over the whole pool; under
        ``nb_samples='auto'`` rounds bring each input to the next checkpoint until its
        standard error is at most ``target_se`` (an undefined one goes on).

        Each distinct subset is evaluated once per input, and a subset that repeats in the
        pool reuses its score: its drop ties exactly with the first one's, whatever the
        shape of the batch does to the model's last bits (on a small grid many subsets
        repeat). Every subset of the pool still counts in the correlation."""
        n = len(x)
        n_pool = len(subsets.pool)
        # f(x_S) of each distinct subset, for each input that has used it
        distinct_scores = np.full((n, len(subsets.first_row)), np.nan)
        drops = np.full((n, n_pool), np.nan)
        n_subsets = np.zeros(n, dtype=np.int64)
        active = np.arange(n)
        evaluated = 0
        perturbations = 0
        adaptive = self.nb_samples == "auto"
        checkpoints = adaptive_checkpoints(n_pool) if adaptive else [n_pool]
        for done, point in zip([0, *checkpoints], checkpoints):
            if not len(active):
                break
            # the distinct subsets first met in this round: ids are numbered by first
            # occurrence in the pool, so they are the ids from first_new to last_new
            first_new = subsets.n_distinct_before(done)
            last_new = subsets.n_distinct_before(point)
            new_subsets = subsets.pool[subsets.first_row[first_new:last_new]]
            if len(new_subsets):
                distinct_scores[active, first_new:last_new] = self._perturbed_scores(
                    x[active], baselines[active], y[active], new_subsets, perms[active], bar
                )
            repeats = (point - done) - len(new_subsets)
            if repeats:
                bar.update(len(active) * repeats)  # perturbations served without a model call
            evaluated += len(active) * len(new_subsets)
            perturbations += len(active) * (point - done)
            round_ids = subsets.distinct_id[done:point]
            drops[active, done:point] = (
                base[active, None] - distinct_scores[np.ix_(active, round_ids)]
            )
            n_subsets[active] = point
            if adaptive:
                active = self._still_uncertain(active, drops, attribution_sums, point)
        return ScoreDrops(
            drops=drops,
            n_subsets=n_subsets,
            forward_passes=ForwardPasses(evaluated=evaluated, perturbations=perturbations),
        )

    def _still_uncertain(self, active, drops, attribution_sums, point) -> np.ndarray:
        """The inputs of ``active`` whose score over their first ``point`` subsets has a
        standard error above ``target_se``, or is undefined (NaN): they go on."""
        correlate = CORRELATIONS[self.correlation]
        corr = correlate(drops[active, :point], attribution_sums[active, :point])
        se = correlation_std_error(corr, point, self.correlation)
        goes_on = np.isnan(se) | (se > self.target_se)
        return active[goes_on]

    def _correlations(self, drops, attribution_sums, n_subsets, unchanged, phi):
        """The correlation of each input (B,) over the subsets it used, and the counts of
        the causes of the undefined ones (:data:`UNDEFINED_CAUSES`; ``unchanged``: the
        inputs equal to their baseline)."""
        n = len(drops)
        correlate = CORRELATIONS[self.correlation]
        scores = np.full(n, np.nan)
        causes = np.zeros(len(UNDEFINED_CAUSES), dtype=np.int64)
        zero_phi = ~phi.reshape(n, -1).any(axis=1)
        for count in np.unique(n_subsets):
            rows = np.flatnonzero(n_subsets == count)
            row_drops = drops[rows, :count]
            row_sums = attribution_sums[rows, :count]
            scores[rows] = correlate(row_drops, row_sums)
            causes += _undefined_reasons(
                scores[rows], row_drops, row_sums, unchanged[rows], zero_phi[rows]
            )
        return scores, causes

    def _perturbed_scores(self, x, baselines, y, subsets, perms, bar) -> np.ndarray:
        """Scores (B, k) of the inputs ``x`` with the k ``subsets`` (k, n_cells) set to
        their baselines, in perturbation batches of at most ``batch_size``: one graph for
        them all (under a strategy: one per replica), or with a progress bar on one device,
        one call per perturbation batch so that the bar advances with the work."""
        b = len(x)
        k = len(subsets)
        total = b * k
        size = total if self.batch_size is None else min(self.batch_size, total)
        args = (
            *map(tf.convert_to_tensor, (x, baselines, y)),
            tf.constant(perms, tf.int32),
            tf.constant(subsets, tf.float32),
            tf.constant(k, tf.int32),
        )
        with runtime.model_output_errors():
            if not (self.progress and runtime.is_default_strategy(self.strategy)):
                size = runtime.replica_shares(size, self.strategy.num_replicas_in_sync)
                scores = self._perturbed_fn(*args, tf.constant(size, tf.int32))
                bar.update(total)
                return np.asarray(scores).reshape(b, k)
            parts = []
            for start in range(0, total, size):
                n = min(size, total - start)
                parts.append(self._chunk_fn(*args, tf.constant(start), tf.constant(n)))
                bar.update(n)
        return np.concatenate(parts).reshape(b, k)


def _undefined_reasons(corr, drops, attrs, no_op, zero_phi) -> np.ndarray:
    """Count the NaN correlations by their first cause (the first six of
    :data:`UNDEFINED_CAUSES`): non-finite drops, non-finite attribution sums, inputs
    equal to their baseline, constant drops, an all-zero explanation, constant
    attribution sums."""
    nan = np.isnan(corr)
    out = np.zeros(len(UNDEFINED_CAUSES), dtype=np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        const_drop = np.ptp(drops, axis=1) == 0
        const_attr = np.ptp(attrs, axis=1) == 0
    causes = (
        ~np.isfinite(drops).all(axis=1),
        ~np.isfinite(attrs).all(axis=1),
        const_drop & no_op,
        const_drop,
        zero_phi,
        const_attr,
    )
    for j, cause in enumerate(causes):
        out[j] = int((nan & cause).sum())
        nan &= ~cause
    out[-2] += int(nan.sum())  # any other degenerate row (zero variance after rounding)
    return out


def _fidelity_functions(live: Callable, activation: Optional[str], geometry: Geometry):
    """MuFidelity's :class:`FidelityFunctions` for the operator's score of the activated
    model (reached through ``live()``) and the grid ``geometry``: ``perturbed`` (the
    scores (b, nb_samples) of every perturbed input of a batch, ``size`` at a time, also
    what each replica runs) and ``chunk`` (one perturbation batch)."""
    score = score_function(live, activation)
    cells_shape = geometry.cells_shape

    def perturb(x, baseline, cell_masks, sample_ids):
        """Perturbed inputs: input ``sample_ids[k]`` with the cells where
        ``cell_masks[k]`` (*cells_shape) is 1 set to the baseline. Compiled with XLA,
        which fuses the gathers and the blend into one pass over memory."""
        m = tf.gather(cell_masks, geometry.row_cells, axis=1)
        if geometry.col_cells is not None:
            m = tf.gather(m, geometry.col_cells, axis=2)
        if geometry.rank == 3:
            m = m[..., tf.newaxis]
        xs = tf.gather(x, sample_ids)
        return xs + tf.cast(m, xs.dtype) * (tf.gather(baseline, sample_ids) - xs)

    perturb_fn = runtime.compiled_function(perturb, jit_compile=True)

    def chunk(x, baseline, y, perms, masks, nb_samples, start, size):
        """Operator scores of the perturbed inputs ``start .. start + size`` of the flat
        (input, subset) grid of the batch. ``masks`` (nb_samples, n_cells) are 1 where
        the feature is set to the baseline; input ``i`` sees them through its
        permutation of the cells ``perms[i]``."""
        idx = start + tf.range(size)
        sample_ids = idx // nb_samples
        cell_masks = tf.gather(
            tf.gather(masks, idx % nb_samples), tf.gather(perms, sample_ids), batch_dims=1
        )
        cell_masks = tf.reshape(cell_masks, tf.concat([[size], cells_shape], axis=0))
        out = score(perturb_fn(x, baseline, cell_masks, sample_ids), tf.gather(y, sample_ids))
        # float64 holds every model dtype exactly: scores are never cast down
        return tf.cast(tf.reshape(out, [-1]), tf.float64)

    @runtime.split_across_replicas("x", "baseline", "y", "perms")
    def perturbed(x, baseline, y, perms, masks, nb_samples, size):
        """Scores of all the perturbed inputs of a batch of inputs, one perturbation
        batch after the other inside a single graph (no overlap: at most ``size``
        perturbed inputs exist at once; the last batch holds only the perturbations
        left). Under a strategy, each replica gets its share of the inputs (``x``,
        ``baseline``, ``y``, ``perms``) and every subset."""
        total = tf.shape(x)[0] * nb_samples
        n_chunks = (total + size - 1) // size
        results = tf.TensorArray(tf.float64, size=n_chunks, infer_shape=False)
        for i in tf.range(n_chunks):  # AutoGraph makes it a tf.while_loop
            tf.autograph.experimental.set_loop_options(parallel_iterations=1)
            start = i * size
            this_size = tf.minimum(size, total - start)
            scores = chunk(x, baseline, y, perms, masks, nb_samples, start, this_size)
            results = results.write(i, scores)
        return tf.reshape(results.concat(), [-1, nb_samples])

    return FidelityFunctions(perturbed=perturbed, chunk=chunk)
