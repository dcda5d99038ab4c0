"""MuFidelity: correlation between the drop of the model's score when a random subset of
features is set to a baseline and the sum of the attributions of that subset."""

from __future__ import annotations

import numbers
from typing import Any, Callable, Optional, Union

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
from .base import BASE_PARAMETERS, BaseAttributionMetric, score_function

__all__ = ["MuFidelity", "correlation_std_error", "adaptive_checkpoints"]

CORRELATIONS = {"spearman": batched_spearman, "pearson": batched_pearson}
# warn (DegenerateSettingWarning) when at least this share of the Bernoulli subsets would
# be empty or full
DEGENERATE_SHARE = 0.25
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
        self.grid_size, self.subset_percent = grid_size, subset_percent
        self.baseline_mode, self.correlation, self.progress = baseline_mode, correlation, progress
        self.nb_samples, self.target_se, self.max_samples = nb_samples, target_se, max_samples
        # the perturbation: a grid of cells over the inputs
        self._input_shape = self._peek_input_shape()
        self._cells_shape, self._row_cells, self._col_cells = self._grid(self._input_shape)
        self._warn_degenerate()
        # compiled once per model, operator, activation, strategy and grid geometry, and
        # shared by every MuFidelity on them: nb_samples, subsets, baselines and targets
        # are arguments, never baked into the graph
        geometry = (len(self._input_shape), self._cells_shape, self._row_cells, self._col_cells)
        functions = self._model_functions(
            "mufidelity",
            lambda live, activation: _fidelity_functions(
                score_function(live, activation), *geometry
            ),
            geometry,
            split={"perturbed": 4},
        )
        self._perturbed_fn, self._chunk_fn = functions["perturbed"], functions["chunk"]

    def _warn_degenerate(self) -> None:
        """DegenerateSettingWarning for settings that make the score ±1 or noise."""
        if self.nb_samples == 2:
            warn(
                "MuFidelity: `nb_samples`=2 makes every score +1, -1 or NaN (a correlation "
                "over 2 subsets); use at least a few dozen subsets",
                DegenerateSettingWarning,
            )
        n, p = int(np.prod(self._cells_shape)), self.subset_percent
        share = (1.0 - p) ** n + p**n
        if n == 1:
            warn(
                "MuFidelity: the perturbation grid has a single cell (`grid_size`="
                f"{self.grid_size} on inputs of shape {self._input_shape}): 100% of the "
                "random subsets are empty or full, so no correlation is defined and every "
                "score is NaN; use a finer `grid_size`",
                DegenerateSettingWarning,
            )
        elif share >= DEGENERATE_SHARE:
            sizes, pmf = _subset_sizes(n, p)
            warn(
                f"MuFidelity: with `subset_percent`={p:g} on {n} cells, {share:.1%} of "
                "the random subsets would be empty or full; they are drawn again (an empty "
                "or full subset never enters the correlation), so the subsets hold "
                f"{float((sizes * pmf).sum()):.3g} cells on average instead of {n * p:.3g}",
                DegenerateSettingWarning,
            )

    # ------------------------------------------------------------------ geometry
    def _peek_input_shape(self) -> tuple:
        if self.inputs is not None:
            if len(self.inputs) == 0:
                raise ValueError("`inputs` must hold at least one input, got 0")
            return tuple(self.inputs.shape[1:])
        for x, _ in runtime.iterate_dataset(self.dataset.take(1), 1, self._dataset_batched):
            return tuple(x.shape[1:])
        raise ValueError("`inputs` must hold at least one input, got an empty dataset")

    def _grid(self, shape: tuple):
        """Cells shape, and the cell index of each position along the (up to) two
        perturbed axes: tabular (F,) every feature its own cell; time series (T, F) a grid
        over time, every feature apart; images (H, W, C) a grid over H and W."""
        if len(shape) == 1:
            return (shape[0],), tuple(range(shape[0])), None
        if len(shape) not in (2, 3):
            raise ValueError(
                "`inputs` must be tabular (N, F), time series (N, T, F) or "
                f"images (N, H, W, C), got per-input shape {shape}"
            )
        g, (h, w) = self.grid_size, shape[:2]
        cells = (g or h, g or w) if len(shape) == 3 else (g or h, w)  # series: every feature
        if cells[0] > h or cells[1] > w:
            what = (
                f"the image size {min(h, w)} (inputs are {h}x{w})"
                if len(shape) == 3
                else (f"the series length {h}")
            )
            raise ValueError(f"`grid_size` must be at most {what}, got {g}")
        return cells, _cell_index(h, cells[0]), _cell_index(w, cells[1])

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
        rows, cols = (
            np.flatnonzero(np.diff(c, prepend=-1)) for c in (self._row_cells, self._col_cells)
        )
        return np.add.reduceat(np.add.reduceat(phi, rows, axis=1), cols, axis=2).reshape(b, -1)

    def _check_explanations(self, explanations: Any) -> np.ndarray:
        shape = self._input_shape
        allowed = list(
            dict.fromkeys([shape] + ([shape[:2], shape[:2] + (1,)] if len(shape) == 3 else []))
        )
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
        return self._evaluate(explanations)[0]

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

        scores, used = self._evaluate(explanations)
        std_error = correlation_std_error(scores, used, self.correlation)
        return pd.DataFrame({"score": scores, "std_error": std_error, "n_subsets": used})

    def _evaluate(self, explanations: Any):
        """Scores (N,) and subsets used (N,): validate, build the perturbation (a pool of
        random subsets of the grid's cells), score, correlate (see the class Notes)."""
        phi_all = self._check_explanations(explanations)
        adaptive = self.nb_samples == "auto"
        n_subsets = self.max_samples if adaptive else self.nb_samples
        n_cells = int(np.prod(self._cells_shape))
        if n_subsets * n_cells > _POOL_BUDGET:
            name = "max_samples" if adaptive else "nb_samples"
            raise ValueError(
                f"`{name}` x cells must be at most {_POOL_BUDGET} (the pool of random subsets "
                f"is held in memory, float64), got {n_subsets} subsets x {n_cells} cells: "
                f"lower `{name}`, or perturb a coarser grid (`grid_size`)"
            )
        seed = seed_to_int(self.seed)
        # the subsets (True = set to the baseline), neither empty nor full; each input sees
        # them through its own permutation of the cells, drawn from the seed and its content
        pool = (
            _subset_pool(make_rng(seed), n_subsets, n_cells, self.subset_percent)
            if n_cells > 1
            else None
        )
        total = None if adaptive or self.n_inputs is None else self.n_inputs * n_subsets
        with progress_bar(
            enabled=self.progress,
            total=total,
            unit="pert",
            desc="MuFidelity (adaptive)" if adaptive else "MuFidelity",
        ) as bar:
            scores, used, reasons = zip(
                *[
                    self._batch_evaluate(x, y, phi, pool, seed, bar)
                    for x, y, phi in self._explained_batches(phi_all)
                ]
            )
        scores, reasons = np.concatenate(scores), sum(reasons)
        undefined = int(np.isnan(scores).sum())
        if undefined:  # one warning: how many scores are NaN, and why
            why = "; ".join(f"{n} with {label}" for n, label in zip(reasons, UNDEFINED_CAUSES) if n)
            warn(
                f"MuFidelity: {undefined} of {len(scores)} samples have an undefined "
                f"correlation, set to NaN: {why}.",
                UndefinedScoreWarning,
            )
        return scores, np.concatenate(used)

    def _explained_batches(self, phi_all: np.ndarray):
        """``(x, y, phi)`` batch by batch (``batch_size`` inputs), each batch's
        explanations beside its inputs (checked finite); a ValueError when the
        explanations and the inputs differ in number."""
        seen = 0
        for start, x, y in self.iter_batches():
            seen = start + len(x)
            if seen > len(phi_all):
                break
            yield check_param(x, "inputs", [ArrayLike("any", finite=True)]), y, phi_all[start:seen]
        if seen != len(phi_all):
            raise ValueError(
                "`explanations` must hold one explanation per input: got "
                f"{len(phi_all)} explanations for {seen} inputs"
            )

    def _batch_evaluate(self, x, y, phi, pool, seed, bar):
        """One batch of inputs: (scores, subsets used, counts of the causes of undefined
        scores). A fixed ``nb_samples`` is one round over the whole pool; under
        ``nb_samples='auto'`` rounds bring each input to the next checkpoint until its
        standard error is at most ``target_se`` (an undefined one goes on)."""
        n, why = len(x), np.zeros(len(UNDEFINED_CAUSES), dtype=np.int64)
        if pool is None:  # a single cell: every subset is empty or full
            why[-1] = n
            return np.full(n, np.nan), np.zeros(n, np.int64), why
        n_cells = pool.shape[1]
        xf = x if x.dtype.kind == "f" else x.astype(np.float32)  # as Xplique: floats
        perms = cell_permutations(xf, n_cells, seed)  # (B, n_cells)
        # sum over the subset of input i: sum_c pool[p, perms[i, c]] * phi[i, c]
        cells = np.take_along_axis(self._explanation_cells(phi), np.argsort(perms, axis=1), axis=1)
        attrs = cells @ pool.T.astype(np.float64)  # (B, subsets)
        base = self.scores(xf, y)  # (B,)
        baselines = self._baselines(xf)
        drops = np.full((n, len(pool)), np.nan)
        used, active = np.zeros(n, dtype=np.int64), np.arange(n)
        corr_fn = CORRELATIONS[self.correlation]
        points = adaptive_checkpoints(len(pool)) if self.nb_samples == "auto" else [len(pool)]
        for done, point in zip([0, *points], points):
            if not len(active):
                break
            drops[active, done:point] = base[active, None] - self._perturbed_scores(
                xf[active], baselines[active], y[active], pool[done:point], perms[active], bar
            )
            used[active] = point
            se = correlation_std_error(
                corr_fn(drops[active, :point], attrs[active, :point]), point, self.correlation
            )
            active = active[~(se <= self.target_se)]  # NaN (undefined) goes on
        corr = np.full(n, np.nan)
        no_op = (xf == baselines).reshape(n, -1).all(axis=1)
        zero_phi = ~phi.reshape(n, -1).any(axis=1)
        for count in np.unique(used):
            rows = np.flatnonzero(used == count)
            d, a = drops[rows, :count], attrs[rows, :count]
            corr[rows] = corr_fn(d, a)
            why += _undefined_reasons(corr[rows], d, a, no_op[rows], zero_phi[rows])
        return corr, used, why

    def _perturbed_scores(self, x, baselines, y, subsets, perms, bar) -> np.ndarray:
        """Scores (B, k) of the inputs ``x`` with the k ``subsets`` (k, n_cells) set to
        their baselines, in perturbation batches of at most ``batch_size``: one graph for
        them all (under a strategy: one per replica), or with a progress bar on one device,
        one call per perturbation batch so that the bar advances with the work."""
        b, k = len(x), len(subsets)
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


def _fidelity_functions(
    score: Callable, rank: int, cells_shape: tuple, row_cells: tuple, col_cells: Optional[tuple]
) -> dict:
    """MuFidelity's functions for one operator score ``score(x, y)`` and grid geometry
    (``rank`` of an input, ``cells_shape``, cell index of each position along the
    perturbed axes): ``perturbed`` (the scores (b, nb_samples) of every perturbed input
    of a batch, ``size`` at a time, also what each replica runs) and ``chunk`` (one
    perturbation batch)."""

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

    def perturbed(x, baseline, y, perms, masks, nb_samples, size):
        """Scores of all the perturbed inputs of a batch of inputs, one perturbation
        batch after the other inside a single graph (no overlap: at most ``size``
        perturbed inputs exist at once; the last batch holds only the perturbations
        left)."""
        total = tf.shape(x)[0] * nb_samples
        n_chunks = (total + size - 1) // size
        results = tf.TensorArray(tf.float64, size=n_chunks, infer_shape=False)
        for i in tf.range(n_chunks):  # AutoGraph makes it a tf.while_loop
            tf.autograph.experimental.set_loop_options(parallel_iterations=1)
            start = i * size
            results = results.write(
                i,
                chunk(
                    x, baseline, y, perms, masks, nb_samples, start, tf.minimum(size, total - start)
                ),
            )
        return tf.reshape(results.concat(), [-1, nb_samples])

    return {"perturbed": perturbed, "chunk": chunk}
