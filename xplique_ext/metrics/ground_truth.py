"""Ground-truth saliency: distances between explanations and exact ground-truth maps.

The measures of Miro-Nicolau et al. treat both maps as probability distributions and
compare them with the Earth Mover's Distance (Eq. 5) and the Kullback-Leibler divergence
(Eq. 6). The localisation measures users know from Quantus (relevance mass accuracy,
relevance rank accuracy, pointing game; Arras et al.) compare an explanation with a
ground-truth mask instead.

References
----------
M. Miro-Nicolau, A. Jaume-i-Capo, G. Moya-Alcover. A novel approach to generate datasets
with XAI ground truth to evaluate image models (Eq. 5-6).
Y. Rubner, C. Tomasi, L. J. Guibas. A metric for distributions with applications to image
databases. ICCV 1998 (the EMD).
L. Arras, A. Osman, W. Samek. CLEVR-XAI: A benchmark dataset for the ground truth
evaluation of neural network explanations. Information Fusion 81, 2022 (relevance mass
and rank accuracy).
J. Zhang et al. Top-down neural attention by excitation backprop. IJCV 2018 (pointing
game).
"""

from __future__ import annotations

import numbers
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from ..commons.params import (
    NO_VALIDATION,
    ArrayLike,
    Boolean,
    InstanceOf,
    Interval,
    Options,
    PairOf,
    validate_params,
)
from ..commons.progress import progress_bar
from ..commons.resize import area_downsample, fit_size
from ..commons.validation import check_finite, to_numpy
from ..commons.warnings import UndefinedScoreWarning, XpliqueExtWarning, warn
from ..runtime import check_finite_dataset
from ._emd_solver import METRICS, grid_transport_cost
from .base import BASE_PARAMETERS, BaseAttributionMetric

__all__ = [
    "emd",
    "kl_divergence",
    "relevance_mass_accuracy",
    "relevance_rank_accuracy",
    "pointing_game",
    "GroundTruthSaliency",
    "GroundTruthLocalisation",
    "LowModelAccuracyWarning",
    "ground_truth_leaderboard",
    "EMD_MAX_ARCS",
]

SIGNS = ("abs", "positive")
SOLVERS = ("auto", "dense", "column_generation")
_DEFAULT = "default"

# --------------------------------------------------------------------------- declarations
_MAP_SHAPES = "(H, W), (N, H, W), (N, H, W, 1) or (N, H, W, C)"
#: Maps: real numbers (bool masks too), finite, one (H, W) map or a batch; the ambiguous
#: (H, W, C) case and relations between two arguments stay in :func:`_as_maps` / `_pair`.
_MAPS = [ArrayLike("numeric", ndim=(2, 3, 4), shapes=_MAP_SHAPES, finite=True,
                   batch_hint=False)]
#: >= 2: a grid of one cell along an axis makes every displacement along it free (disjoint
#: maps would score 0); a grid that collapses an axis of the maps is refused by _reduce.
_RESIZE = [None, PairOf(Interval(numbers.Integral, 2, None),
                        description="a pair of integers >= 2 (height, width)")]
_N_JOBS = [Interval(numbers.Integral, 1, None), Options([-1], description="-1 (all cores)")]
_EPSILON = [Interval(numbers.Real, 0.0, None, closed="neither")]
LOCALISATION_SIGNS = ("abs", "positive", "raw")
_MIN_ACCURACY = [Interval(numbers.Real, None, 1.0)]
_TASK = [Options(["auto", "classification", "regression"])]


class LowModelAccuracyWarning(XpliqueExtWarning):
    """The model does not reproduce the targets well (accuracy, or R^2 for regression,
    below the threshold): the ground truth of F only holds for a model that learned F."""


# --------------------------------------------------------------------------- helpers
def _as_maps(x: Any, name: str) -> Tuple[np.ndarray, bool]:
    """(N, H, W) float64 maps from (H, W), (N, H, W), (N, H, W, 1) or (N, H, W, C)
    (channels summed); also says whether a single (H, W) map was given."""
    arr = to_numpy(x, name)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must hold real numbers, got dtype {arr.dtype}")
    arr = np.asarray(arr, dtype=np.float64)
    check_finite(arr, name)
    if arr.ndim == 2:
        return arr[None], True
    if arr.ndim == 3:
        a, b, c = arr.shape
        if c in (1, 3, 4) and c < min(a, b):
            raise ValueError(
                f"`{name}` of shape {arr.shape} is ambiguous: one map (H, W, C) with "
                f"{c} channel(s) and no batch axis, or {a} maps of {b}x{c} pixels? Pass "
                f"the batch axis: ({', '.join(map(str, (1,) + arr.shape))}) for one map "
                "with channels, or (N, H, W); a single map without its batch axis is "
                "accepted only as (H, W)"
            )
        return arr, False
    if arr.ndim == 4:
        return arr.sum(axis=-1), False
    raise ValueError(
        f"`{name}` must have shape (H, W), (N, H, W), (N, H, W, 1) or (N, H, W, C), got "
        f"shape {arr.shape}"
    )


def _pair(explanations: Any, ground_truth: Any, gt_name: str = "ground_truth"):
    phi, single_phi = _as_maps(explanations, "explanations")
    gt, single_gt = _as_maps(ground_truth, gt_name)
    if phi.shape != gt.shape:
        raise ValueError(
            f"`explanations` and `{gt_name}` must have the same shape once channels are "
            f"summed, got {phi.shape[1:] if single_phi else phi.shape} and "
            f"{gt.shape[1:] if single_gt else gt.shape}"
        )
    return phi, gt, single_phi and single_gt


def _apply_sign(maps: np.ndarray, sign: str) -> np.ndarray:
    if sign == "abs":
        return np.abs(maps)
    if sign == "positive":
        return np.maximum(maps, 0.0)
    return maps


def _reduce(maps: Sequence[np.ndarray], resize: Optional[Tuple[int, int]]) -> list:
    """Area-downsample each (N, H, W) stack of ``maps`` to :func:`fit_size` (the largest
    grid within ``resize`` with the maps' aspect ratio), refusing a grid that collapses an
    axis of the maps to a single cell."""
    shape = maps[0].shape[1:]
    size = fit_size(shape, resize)
    collapsed = [a for a in (0, 1) if size[a] == 1 and shape[a] > 1]
    if collapsed:
        raise ValueError(
            f"`resize`={resize!r} reduces maps of {shape[0]}x{shape[1]} pixels to "
            f"{size[0]}x{size[1]} cells (aspect ratio kept): the "
            f"{'vertical' if collapsed[0] == 0 else 'horizontal'} axis would be a single "
            "cell, along which every displacement is free; pass a larger `resize` (e.g. "
            "(32, 32)) or None"
        )
    return [area_downsample(m, size) for m in maps]


def _scale(maps: np.ndarray) -> np.ndarray:
    """Each (non-negative) map divided by its largest value, so that its mass (at most
    H W) cannot overflow float64 (maps near the float maximum); all-zero maps stay 0.
    Normalised distributions do not change."""
    top = maps.max(axis=(1, 2), initial=0.0)
    return maps / np.where(top > 0, top, 1.0)[:, None, None]


#: Largest EMD problem solved: supply x demand pixels after the exact reduction (two
#: dense 128 x 128 maps: about 6.7e7 arcs, some seconds per pair on a CPU). Beyond it,
#: :func:`emd` refuses, naming the ``resize`` to use.
EMD_MAX_ARCS = 7 * 10**7


def _check_problem_size(gt: np.ndarray, phi: np.ndarray, defined, metric: str, resize) -> None:
    """Refuse, before solving anything, pairs whose transport problem is too large."""
    if gt.shape[1] * gt.shape[2] <= 128 * 128:  # even two dense maps stay within the limit
        return
    reduce = metric in ("euclidean", "manhattan")
    for k in np.flatnonzero(defined):
        if reduce:
            d = gt[k] - phi[k]
            arcs = int((d > 0).sum()) * int((d < 0).sum())
        else:
            arcs = int((gt[k] > 0).sum()) * int((phi[k] > 0).sum())
        if arcs > EMD_MAX_ARCS:
            h, w = gt.shape[1:]
            raise ValueError(
                f"`resize`={resize!r} leaves maps of {h}x{w} pixels: map {k} is a transport "
                f"problem of {arcs:.2e} arcs (supply x demand pixels), beyond the limit of "
                f"{EMD_MAX_ARCS:.0e} solved exactly in bounded time (two dense 128x128 "
                "maps); pass resize=(128, 128) or smaller (the default (32, 32) takes "
                "milliseconds)"
            )


def _warn_undefined(name: str, undefined: int, total: int, why: str) -> None:
    if undefined:
        warn(
            f"{name}: {undefined} of {total} maps {why}; their score is NaN.",
            UndefinedScoreWarning,
        )


def _resolve_jobs(n_jobs: int) -> int:
    """A declared ``n_jobs`` (>= 1 or -1) as a number of threads."""
    if n_jobs == -1:
        import os

        return max(os.cpu_count() or 1, 1)
    return n_jobs


# --------------------------------------------------------------------------- EMD / KL
@validate_params({
    "explanations": _MAPS,
    "ground_truth": _MAPS,
    "sign": [Options(SIGNS)],
    "resize": _RESIZE,
    "ground_distance": [Options(METRICS)],
    "normalize": [Boolean()],
    "solver": [Options(SOLVERS)],
    "n_jobs": _N_JOBS,
    "progress": [Boolean()],
})
def emd(
    explanations: Any,
    ground_truth: Any,
    *,
    sign: str = "abs",
    resize: Optional[Tuple[int, int]] = (32, 32),
    ground_distance: str = "euclidean",
    normalize: bool = True,
    solver: str = "auto",
    n_jobs: int = 1,
    progress: bool = False,
) -> Union[float, np.ndarray]:
    """Earth Mover's Distance between explanations and ground-truth maps (Eq. 5), exact.

    Lower is better: 0 for identical distributions, at most 1 with ``normalize=True``.

    Parameters
    ----------
    explanations
        Maps of shape (N, H, W), (N, H, W, 1) or (N, H, W, C) (channels summed), or one
        map (H, W). A 3-D array whose last axis is 1, 3 or 4 and smaller than the others,
        such as one (H, W, 1) map without its batch axis, is ambiguous and refused.
    ground_truth
        Ground-truth maps of the same shape (e.g. ``AIXIData.ground_truth``).
    sign
        How maps are made non-negative: 'abs' (absolute value) or 'positive' (negative
        values set to 0). Applied after summing the channels, before resizing.
    resize
        Maps larger than ``(height, width)`` are area-downsampled (mass preserved) to
        the largest grid that fits within it with their aspect ratio kept
        (:func:`~xplique_ext.commons.resize.fit_size`: 64x128 maps and (32, 32) give
        16x32 cells); smaller maps are kept. Distances are still measured in the original
        pixel units, between the centres of the regions the cells cover, so the EMD
        approximates the full-resolution one (within the cells' diagonal, in units of the
        image diagonal) whatever the reduction, the same along both axes. Values must be
        >= 2, and a grid that would leave one cell along an axis of the maps is refused
        (every displacement along it would be free). None keeps full resolution; a pair
        whose transport problem exceeds :data:`EMD_MAX_ARCS` (supply x demand pixels,
        about two dense 128 x 128 maps) is then refused with a ValueError before any
        solving, rather than running for minutes.
    ground_distance
        Distance between pixel centres: 'euclidean', 'manhattan' or 'sqeuclidean', in
        units of the distance between the centres of two opposite corner pixels of the
        maps as given (before ``resize``), so the distance between any two pixels is at
        most 1.
    normalize
        Normalise both maps to sum 1 (distributions; the paper's setting). With False
        Eq. 5 applies as written: the cheapest transport of the smaller mass plus
        ``|sum(SM) - sum(SM_hat)| * max d`` (max d = 1 in these units).
    solver
        'auto', 'dense' (POT's network simplex on the supports) or 'column_generation'
        (our sparse, warm-started network simplex; see Notes). All are exact.
    n_jobs
        Number of threads solving pairs in parallel (-1: all cores); same results.
    progress
        Show a progress bar over the maps (tqdm is imported only then).

    Returns
    -------
    distance
        A float for (H, W) inputs, else an array (N,), in [0, 1] with ``normalize=True``.
        NaN (with an :class:`UndefinedScoreWarning`) where a map is all zero after
        ``sign``. Each map is divided by its largest value before its mass is taken, so
        any positive multiple of a map (1e-300 to the float maximum, in any float dtype)
        gives the same distance (``normalize=True``); with ``normalize=False`` both maps
        of a pair are divided by their common largest value and the cost multiplied back,
        so ``emd(c a, c b) = c emd(a, b)`` at any scale.

    Notes
    -----
    With ``SM`` the ground truth and ``SM_hat`` the explanation (non-negative, normalised),

    .. math:: EMD = \\min_{f \\geq 0} \\sum_{i,j} f_{ij} d_{ij}
       \\quad \\text{s.t.} \\quad \\sum_j f_{ij} = SM_i,\\ \\sum_i f_{ij} = \\hat{SM}_j

    solved exactly (the optimum of the linear program, not an approximation such as
    Sinkhorn). For 'euclidean' and 'manhattan' (metrics) the mass shared by both maps stays
    in place: the optimum depends only on ``SM - SM_hat`` (Kantorovich-Rubinstein), which
    shrinks the problem exactly. Small problems go to POT's ``ot.emd2`` on the supports;
    large ones (e.g. 128x128 dense maps) to a network simplex over a sparse set of arcs
    proposed by the optimal plan between 2x2-pooled maps, extended until every one of the
    ``|supply| x |demand|`` arcs has a non-negative reduced cost, i.e. until the solution is
    optimal for the full problem.

    References
    ----------
    Miro-Nicolau et al., Eq. 5; Rubner et al., ICCV 1998.

    Examples
    --------
    >>> a = np.zeros((8, 8)); a[0, 0] = 1
    >>> b = np.zeros((8, 8)); b[7, 7] = 1
    >>> emd(a, b, resize=None)
    1.0
    >>> emd(a, a, resize=None)
    0.0
    """
    phi, gt, single = _pair(explanations, ground_truth)
    jobs = _resolve_jobs(n_jobs)

    phi, gt = _apply_sign(phi, sign), _apply_sign(gt, sign)
    # Scaled first, so that the transport is solved on values of order 1 whatever the
    # maps' scale (masses near the float maximum cannot overflow, tiny ones do not reach
    # the solver's tolerances): each map by its own maximum for distributions, both maps
    # of a pair by their common maximum for Eq. 5 as written, which is homogeneous of
    # degree 1 in the masses (cost(c a, c b) = c cost(a, b); the factor is put back).
    factor = np.ones(len(phi))
    if normalize:
        phi, gt = _scale(phi), _scale(gt)
    else:
        top = np.maximum(phi.max(axis=(1, 2), initial=0.0), gt.max(axis=(1, 2), initial=0.0))
        factor = np.where(top > 0, top, 1.0)
        phi, gt = phi / factor[:, None, None], gt / factor[:, None, None]
    extent = phi.shape[1:]
    phi, gt = _reduce([phi, gt], resize)
    mass_phi = phi.sum(axis=(1, 2))
    mass_gt = gt.sum(axis=(1, 2))
    defined = (mass_phi > 0) & (mass_gt > 0)
    _warn_undefined("emd", int((~defined).sum()), len(phi), "sum to zero after `sign`")
    with np.errstate(over="ignore"):
        overflow = defined & ~np.isfinite(np.maximum(mass_phi, mass_gt) * factor)
    _warn_undefined(
        "emd",
        int(overflow.sum()),
        len(phi),
        "have a mass beyond the float64 range (normalize=False)",
    )
    defined &= ~overflow
    if normalize:
        phi = phi / np.where(mass_phi > 0, mass_phi, 1.0)[:, None, None]
        gt = gt / np.where(mass_gt > 0, mass_gt, 1.0)[:, None, None]
    _check_problem_size(gt, phi, defined, ground_distance, resize)

    def one(k: int) -> float:
        if not defined[k]:
            return float("nan")
        value = grid_transport_cost(
            gt[k], phi[k], ground_distance, solver=solver, extent=extent
        )
        if not normalize:
            value += abs(float(gt[k].sum()) - float(phi[k].sum())) * 1.0
        return value * factor[k]

    indices = range(len(phi))
    bar = dict(enabled=progress, total=len(phi), desc="EMD", unit="map")
    if jobs > 1 and len(phi) > 1:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            out = list(progress_bar(pool.map(one, indices), **bar))
    else:
        out = [one(k) for k in progress_bar(indices, **bar)]
    out = np.asarray(out, dtype=np.float64)
    return float(out[0]) if single else out


@validate_params({
    "explanations": _MAPS,
    "ground_truth": _MAPS,
    "sign": [Options(SIGNS)],
    "resize": _RESIZE,
    "epsilon": _EPSILON,
})
def kl_divergence(
    explanations: Any,
    ground_truth: Any,
    *,
    sign: str = "abs",
    resize: Optional[Tuple[int, int]] = None,
    epsilon: float = float(np.finfo(np.float64).eps),
) -> Union[float, np.ndarray]:
    """Kullback-Leibler divergence KL(ground truth || explanation) of Eq. 6.

    Lower is better: 0 for identical distributions, unbounded above.

    Parameters
    ----------
    explanations
        Maps of shape (N, H, W), (N, H, W, 1) or (N, H, W, C) (channels summed), or one
        map (H, W); ambiguous 3-D shapes are refused as in :func:`emd`.
    ground_truth
        Ground-truth maps of the same shape.
    sign
        'abs' or 'positive', as in :func:`emd`.
    resize
        None (default: full resolution) or ``(height, width)``: area downsampling of
        larger maps to the largest grid within it with their aspect ratio kept, as in
        :func:`emd` (values >= 2; a grid of one cell along an axis is refused).
    epsilon
        The regulariser of Eq. 6, > 0 (default: float64 machine epsilon, as in the
        saliency benchmark code the paper follows).

    Returns
    -------
    divergence
        A float for (H, W) inputs, else an array (N,), in
        ``[-H W epsilon, log(1 / epsilon + epsilon)]`` (0 up to rounding for identical
        maps; at most 36.04 with the default epsilon); NaN (with an
        :class:`UndefinedScoreWarning`) where a map is all zero after ``sign``. Maps are
        scaled by their largest value before normalising (no overflow near the float
        maximum).

    Notes
    -----
    With ``SM`` the ground truth and ``SM_hat`` the explanation, both non-negative and
    normalised to sum 1 (the direction is KL(ground truth || explanation)):

    .. math:: KL = \\sum_x SM(x) \\log\\left(\\frac{SM(x)}{\\hat{SM}(x) + \\epsilon}
       + \\epsilon\\right)

    References
    ----------
    Miro-Nicolau et al., Eq. 6; Kullback and Leibler, 1951.

    Examples
    --------
    >>> p = np.array([[0.5, 0.5], [0.0, 0.0]])
    >>> bool(abs(kl_divergence(p, p)) < 1e-12)
    True
    >>> q = np.array([[0.25, 0.25], [0.25, 0.25]])
    >>> round(kl_divergence(q, p), 6)  # log 2: the truth p puts 1/2 where q puts 1/4
    0.693147
    """
    phi, gt, single = _pair(explanations, ground_truth)
    # scaled first: masses near the float maximum cannot overflow
    phi, gt = _reduce([_scale(_apply_sign(phi, sign)), _scale(_apply_sign(gt, sign))], resize)
    mass_phi = phi.sum(axis=(1, 2))
    mass_gt = gt.sum(axis=(1, 2))
    defined = (mass_phi > 0) & (mass_gt > 0)
    _warn_undefined("kl_divergence", int((~defined).sum()), len(phi), "sum to zero after `sign`")
    p = gt / np.where(mass_gt > 0, mass_gt, 1.0)[:, None, None]
    q = phi / np.where(mass_phi > 0, mass_phi, 1.0)[:, None, None]
    out = np.sum(p * np.log(p / (q + epsilon) + epsilon), axis=(1, 2))
    out = np.where(defined, out, np.nan)
    return float(out[0]) if single else out


# --------------------------------------------------------------------------- localisation
def _read_masks(masks: Any, name: str = "masks") -> np.ndarray:
    """The one reader of ground-truth masks: boolean arrays, or numbers that are all 0 or
    1 (read as False / True). Any other value is refused: a soft mask (a background of
    1e-3, a probability map) is not a region, and reading "non-zero = inside" would count
    its whole background as inside. Returns a boolean array of the shape given; the
    channels of (N, H, W, C) masks are merged later by :func:`_as_maps` (summed, then
    read as ``> 0``: a pixel is inside when any channel is)."""
    arr = to_numpy(masks, name)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must be boolean masks, got dtype {arr.dtype}")
    if arr.dtype.kind != "b":
        check_finite(arr, name)
        other = (arr != 0) & (arr != 1)
        if other.any():
            bad = arr[other]
            raise ValueError(
                f"`{name}` must be boolean masks (or numbers that are all 0 or 1), got "
                f"{int(other.sum())} value(s) other than 0 and 1 (from {bad.min()!r} to "
                f"{bad.max()!r}): soft masks are not read as 'non-zero = inside'; binarise "
                f"them first, e.g. `{name} > 0.5`"
            )
    return arr.astype(bool)


def _localisation_inputs(explanations, masks, sign):
    phi, m, single = _pair(explanations, _read_masks(masks), "masks")
    phi = _apply_sign(phi, sign)
    # divided by the largest |value| of each map: rankings do not change, and sums of
    # maps near the float maximum (or of tiny ones) neither overflow nor underflow
    top = np.abs(phi).max(axis=(1, 2), initial=0.0)
    return phi / np.where(top > 0, top, 1.0)[:, None, None], m != 0, single


@validate_params({"explanations": _MAPS, "masks": _MAPS,
                  "sign": [Options(LOCALISATION_SIGNS)]})
def relevance_mass_accuracy(
    explanations: Any, masks: Any, *, sign: str = "abs"
) -> Union[float, np.ndarray]:
    """Share of the relevance that falls inside the ground-truth mask (Arras et al.).

    Higher is better, in [0, 1] for non-negative maps.

    Parameters
    ----------
    explanations
        Maps (H, W), (N, H, W), (N, H, W, 1) or (N, H, W, C) (channels summed).
    masks
        Boolean ground-truth masks of the same shape, e.g. ``AIXIData.relevant_masks``,
        or numbers that are all 0 or 1. Soft masks (any other value, e.g. a background
        of 1e-3) are refused with a ValueError: binarise them first (``masks > 0.5``).
        Masks with channels count a pixel inside when any channel is.
    sign
        'abs', 'positive' (Arras et al.'s choice) or 'raw' (Quantus' default
        ``abs=False``: signed relevance).

    Returns
    -------
    score
        Float or array (N,); NaN (with a warning) when the total relevance is 0 (or, with
        'raw', cancels to rounding level: ``|sum R| <= n eps sum |R|`` for n pixels) or the
        mask is empty. Each map is divided by its largest ``|value|`` first: any positive
        multiple of a map gives the same score.

    Notes
    -----
    .. math:: \\text{mass accuracy} = \\frac{\\sum_{k \\in GT} R_k}{\\sum_k R_k}

    Examples
    --------
    >>> m = np.zeros((4, 4), bool); m[:2] = True
    >>> relevance_mass_accuracy(np.ones((4, 4)), m)
    0.5
    """
    phi, m, single = _localisation_inputs(explanations, masks, sign)
    total = phi.sum(axis=(1, 2))
    inside = (phi * m).sum(axis=(1, 2))
    # a signed total at rounding level is no total: never divide by rounding noise
    noise = phi[0].size * np.finfo(np.float64).eps * np.abs(phi).sum(axis=(1, 2))
    defined = (np.abs(total) > noise) & (total != 0) & m.any(axis=(1, 2))
    _warn_undefined(
        "relevance_mass_accuracy",
        int((~defined).sum()),
        len(phi),
        "have zero total relevance (or a signed total that cancels to rounding level) or "
        "an empty mask",
    )
    out = np.where(defined, inside / np.where(total != 0, total, 1.0), np.nan)
    return float(out[0]) if single else out


@validate_params({"explanations": _MAPS, "masks": _MAPS,
                  "sign": [Options(LOCALISATION_SIGNS)]})
def relevance_rank_accuracy(
    explanations: Any, masks: Any, *, sign: str = "abs"
) -> Union[float, np.ndarray]:
    """Share of the K most relevant pixels that lie in the mask, K = mask size
    (Arras et al.). Higher is better, in [0, 1].

    Parameters
    ----------
    explanations
        Maps (H, W), (N, H, W), (N, H, W, 1) or (N, H, W, C) (channels summed).
    masks
        Boolean ground-truth masks of the same shape (or 0/1 numbers; soft masks are
        refused, as in :func:`relevance_mass_accuracy`).
    sign
        'abs', 'positive' or 'raw'.

    Returns
    -------
    score
        Float or array (N,); NaN (with a warning) for an empty mask or a constant map
        (no ranking). Ties are broken by pixel order (row-major).

    Notes
    -----
    .. math:: \\text{rank accuracy} = \\frac{|P_{top K} \\cap GT|}{K}, \\quad K = |GT|

    Examples
    --------
    >>> m = np.zeros((4, 4), bool); m[0, :2] = True
    >>> phi = np.zeros((4, 4)); phi[0, 0] = 2; phi[3, 3] = 1
    >>> relevance_rank_accuracy(phi, m)
    0.5
    """
    phi, m, single = _localisation_inputs(explanations, masks, sign)
    n = len(phi)
    flat = phi.reshape(n, -1)
    mflat = m.reshape(n, -1)
    k = mflat.sum(axis=1)
    order = np.argsort(-flat, axis=1, kind="stable")
    ranked_in_mask = np.take_along_axis(mflat, order, axis=1)
    hits = np.where(np.arange(flat.shape[1])[None, :] < k[:, None], ranked_in_mask, False)
    constant = np.ptp(flat, axis=1) == 0
    defined = (k > 0) & ~constant
    _warn_undefined(
        "relevance_rank_accuracy", int((~defined).sum()), n, "have an empty mask or a constant map"
    )
    out = np.where(defined, hits.sum(axis=1) / np.maximum(k, 1), np.nan)
    return float(out[0]) if single else out


@validate_params({"explanations": _MAPS, "masks": _MAPS,
                  "sign": [Options(LOCALISATION_SIGNS)]})
def pointing_game(explanations: Any, masks: Any, *, sign: str = "abs") -> Union[float, np.ndarray]:
    """1.0 when the most relevant pixel lies in the ground-truth mask, else 0.0
    (Zhang et al.). Higher is better; its mean is the hit rate.

    Parameters
    ----------
    explanations, masks, sign
        As in :func:`relevance_rank_accuracy`.

    Returns
    -------
    hit
        Float or array (N,); NaN (with a warning) for an empty mask or a constant map
        (no maximum). With tied maxima the first pixel (row-major) is used.

    Examples
    --------
    >>> m = np.zeros((4, 4), bool); m[1, 1] = True
    >>> phi = np.zeros((4, 4)); phi[1, 1] = 3
    >>> pointing_game(phi, m)
    1.0
    """
    phi, m, single = _localisation_inputs(explanations, masks, sign)
    n = len(phi)
    flat = phi.reshape(n, -1)
    mflat = m.reshape(n, -1)
    top = np.argmax(flat, axis=1)
    hit = mflat[np.arange(n), top].astype(np.float64)
    defined = mflat.any(axis=1) & (np.ptp(flat, axis=1) > 0)
    _warn_undefined(
        "pointing_game", int((~defined).sum()), n, "have an empty mask or a constant map"
    )
    out = np.where(defined, hit, np.nan)
    return float(out[0]) if single else out


# --------------------------------------------------------------------------- metric classes
def _model_agreement(metric: BaseAttributionMetric, task: str) -> Optional[float]:
    """Accuracy (classification) or R^2 (regression) of the model on the targets; None
    when no targets are known."""
    has_targets = metric.targets is not None
    if metric.dataset is not None and not has_targets:
        spec = metric.dataset.element_spec
        has_targets = isinstance(spec, (tuple, list)) and len(spec) == 2
    if not has_targets:
        return None
    ys, preds = [], []
    for _, x, y in metric.iter_batches():
        preds.append(metric.model_outputs(x))
        ys.append(np.asarray(y, dtype=np.float64))
    y = np.concatenate(ys).reshape(len(np.concatenate(preds)), -1)
    pred = np.concatenate(preds).astype(np.float64).reshape(len(y), -1)
    if task == "auto":
        task = "classification" if y.shape[1] > 1 or np.isin(y, (0.0, 1.0)).all() else "regression"
    return _agreement(y, pred, task)


def _agreement(y: np.ndarray, pred: np.ndarray, task: str) -> float:
    """scikit-learn's accuracy (classification: a single output thresholded at 0.5, else
    the argmax) or R^2 of all outputs pooled (``multioutput='variance_weighted'``, i.e.
    1 - sum of squared residuals / total sum of squares; constant targets give 1.0 for a
    perfect fit, else 0.0) of predictions ``pred`` (N, K) against targets ``y`` (N, K)."""
    from sklearn.metrics import accuracy_score, r2_score

    if task == "classification":
        if y.shape[1] == 1:
            return float(accuracy_score(y[:, 0] >= 0.5, pred[:, 0] >= 0.5))
        return float(accuracy_score(np.argmax(y, axis=1), np.argmax(pred, axis=1)))
    return float(r2_score(y, pred, multioutput="variance_weighted"))


class _GroundTruthBase(BaseAttributionMetric):
    """Shared constructor logic: stores the reference maps and checks that the model
    reproduces the targets."""

    _reference_name = "ground_truth"

    def _setup_reference(
        self, reference: Any, min_accuracy: float, task: str, progress: bool = False
    ) -> None:
        if self.dataset is not None:
            check_finite_dataset(self.dataset, "inputs")
        maps, _ = _as_maps(reference, self._reference_name)
        if self.n_inputs is not None and len(maps) != self.n_inputs:
            raise ValueError(
                f"`{self._reference_name}` must hold one map per input: got {len(maps)} maps "
                f"for {self.n_inputs} inputs"
            )
        self.reference = maps
        self.min_accuracy, self.task, self.progress = min_accuracy, task, progress  # declared
        self.model_accuracy = _model_agreement(self, self.task)
        if self.model_accuracy is not None and self.model_accuracy < self.min_accuracy:
            warn(
                f"{type(self).__name__}: the model reproduces the targets with an "
                f"agreement of {self.model_accuracy:.3f} (accuracy, or R^2 for regression) "
                f"< min_accuracy={self.min_accuracy:g}; the ground truth describes F and "
                "holds only for a model that learned F (the paper requires > 0.93).",
                LowModelAccuracyWarning,
            )

    def _explanations(self, explanations: Any) -> np.ndarray:
        maps, _ = _as_maps(explanations, "explanations")
        if maps.shape != self.reference.shape:
            raise ValueError(
                f"`explanations` must have shape {self.reference.shape} (N, H, W) like "
                f"`{self._reference_name}` once channels are summed, got {maps.shape}"
            )
        return maps


class GroundTruthSaliency(_GroundTruthBase):
    """Distance between explanations and exact ground-truth saliency maps (EMD or KL).

    One distance per input; ``evaluate`` returns their mean. Lower is better.

    Parameters
    ----------
    model
        The model explained (Keras model or callable, outputs (N, K)); used to check that
        it reproduces the targets.
    inputs
        Inputs (N, H, W, C) as an array, tensor or ``tf.data.Dataset``.
    targets
        The labels F(I) (N,), (N, K) one-hot or class ids; None skips the accuracy check.
    batch_size
        Batch size of the model calls.
    ground_truth
        Ground-truth maps (N, H, W) (or (N, H, W, 1)), e.g. ``AIXIData.ground_truth``.
    measure
        'emd' (:func:`emd`, Eq. 5) or 'kl' (:func:`kl_divergence`, Eq. 6).
    sign
        'abs' or 'positive': how maps are made non-negative.
    resize
        Downsampling of the maps before comparing them, to the largest grid within it
        that keeps their aspect ratio (see :func:`emd`); default (32, 32) for 'emd' and
        None (full resolution) for 'kl'. Values >= 2.
    ground_distance
        'euclidean', 'manhattan' or 'sqeuclidean' (EMD only).
    normalize
        EMD only: compare distributions (True) or apply Eq. 5 with its mass penalty.
    epsilon
        KL only: the regulariser of Eq. 6.
    min_accuracy
        A :class:`LowModelAccuracyWarning` is emitted when the model's accuracy on the
        targets (R^2 for regression targets) is below this value (paper: 0.93).
    task
        'auto', 'classification' or 'regression': how the agreement is measured. 'auto'
        treats targets in {0, 1} or one-hot as classes (a single output is thresholded
        at 0.5; use ``activation='sigmoid'`` for a logit output).
    solver, n_jobs
        EMD solver and parallel threads (see :func:`emd`).
    progress
        Show a progress bar over the maps (default False; tqdm is imported only then).
    activation
        As in :class:`~xplique_ext.metrics.BaseAttributionMetric`: applied to the model's
        outputs before the accuracy check.
    strategy
        ``tf.distribute.Strategy`` sharing the model calls (the accuracy check) among its
        replicas; None: the one in scope. See
        :class:`~xplique_ext.metrics.BaseAttributionMetric`.

    Attributes
    ----------
    model_accuracy : float or None
        The agreement measured at construction.

    Notes
    -----
    detailed_evaluate(phi)[i] = D(ground_truth[i], phi[i]) with D the EMD of Eq. 5 or
    the KL divergence KL(ground truth || explanation) of Eq. 6.

    No ``operator`` and no ``seed`` (giving either is a TypeError): the
    scores compare the explanations with maps fixed in advance, so nothing is drawn at
    random, and the ground truth describes the model's output F itself, so the accuracy
    check compares those outputs with the targets (accuracy or R^2); an operator's score
    g(f, x, y), such as the probability of the target class, is not a prediction to
    check.

    References
    ----------
    Miro-Nicolau et al., Eq. 5-6.

    Examples
    --------
    >>> from xplique_ext.datasets import make_aixi_shape
    >>> from xplique_ext.models import AIXIFunctionModel
    >>> data = make_aixi_shape(4, image_size=64, function="suum", seed=1)
    >>> model = AIXIFunctionModel("suum", dataset="shape")
    >>> metric = GroundTruthSaliency(model, data.images, data.targets,
    ...                              ground_truth=data.ground_truth, progress=False)
    >>> metric.evaluate(data.ground_truth)
    0.0
    """

    higher_is_better = False
    _data_params = BaseAttributionMetric._data_params + ("ground_truth",)

    @validate_params({
        **{k: v for k, v in BASE_PARAMETERS.items() if k not in ("operator", "seed")},
        "ground_truth": _MAPS,
        "measure": [Options(["emd", "kl"])],
        "sign": [Options(SIGNS)],
        "resize": [*_RESIZE, Options([_DEFAULT], description=f"{_DEFAULT!r} (by measure)")],
        "ground_distance": [Options(METRICS)],
        "normalize": [Boolean()],
        "epsilon": _EPSILON,
        "min_accuracy": _MIN_ACCURACY,
        "task": _TASK,
        "solver": [Options(SOLVERS)],
        "n_jobs": _N_JOBS,
        "progress": [Boolean()],
    })
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        ground_truth: Any,
        measure: str = "emd",
        sign: str = "abs",
        resize: Any = _DEFAULT,
        ground_distance: str = "euclidean",
        normalize: bool = True,
        epsilon: float = float(np.finfo(np.float64).eps),
        min_accuracy: float = 0.93,
        task: str = "auto",
        solver: str = "auto",
        n_jobs: int = 1,
        progress: bool = False,
        activation: Optional[str] = None,
        strategy: Any = None,
    ):
        super().__init__(model, inputs, targets, batch_size, activation=activation, strategy=strategy)
        self.measure, self.sign = measure, sign  # declared and converted above
        if isinstance(resize, str) and resize == _DEFAULT:
            resize = (32, 32) if measure == "emd" else None
        self.resize = resize
        self.ground_distance, self.normalize = ground_distance, normalize
        self.epsilon, self.solver = epsilon, solver
        self.n_jobs = _resolve_jobs(n_jobs)
        self._setup_reference(ground_truth, min_accuracy, task, progress)
        self.ground_truth = self.reference

    @classmethod
    def from_aixi(
        cls, model: Callable, data: Any, *, convention: str = "paper", **kwargs
    ) -> GroundTruthSaliency:
        """Build the metric on an :class:`~xplique_ext.datasets.AIXIData`: its images,
        targets and ground truth.

        Parameters
        ----------
        model
            The model explained.
        data
            An ``AIXIData``.
        convention
            The ground truth compared with: 'paper' (default: the weight w_i of each
            pattern on its objects, the paper's ground truth, whatever ``data.convention``
            is), or the exact Shapley values, 'object' or 'pixel' (beyond the paper).
        **kwargs
            The other parameters of :class:`GroundTruthSaliency`.
        """
        truth = data.get_ground_truth(convention)
        return cls(model, data.images, data.targets, ground_truth=truth, **kwargs)

    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """Distance of each explanation (N, H, W[, C]) to its ground truth, shape (N,)."""
        phi = self._explanations(explanations)
        if self.measure == "emd":
            return emd(
                phi,
                self.reference,
                sign=self.sign,
                resize=self.resize,
                ground_distance=self.ground_distance,
                normalize=self.normalize,
                solver=self.solver,
                n_jobs=self.n_jobs,
                progress=self.progress,
            )
        return kl_divergence(
            phi, self.reference, sign=self.sign, resize=self.resize, epsilon=self.epsilon
        )


_LOCALISATION = {
    "mass_accuracy": relevance_mass_accuracy,
    "rank_accuracy": relevance_rank_accuracy,
    "pointing_game": pointing_game,
}


class GroundTruthLocalisation(_GroundTruthBase):
    """Localisation of explanations against ground-truth masks, as in Quantus: relevance
    mass accuracy, relevance rank accuracy or the pointing game. Higher is better.

    Parameters
    ----------
    model, inputs, targets, batch_size
        As in :class:`GroundTruthSaliency` (the model is only used for the accuracy
        check).
    masks
        Boolean masks (N, H, W) of the relevant region, e.g. ``AIXIData.relevant_masks``
        (the objects whose ground-truth value is not zero), or 0/1 numbers; soft masks
        are refused (see :func:`relevance_mass_accuracy`).
    measure
        'mass_accuracy' (:func:`relevance_mass_accuracy`), 'rank_accuracy'
        (:func:`relevance_rank_accuracy`) or 'pointing_game' (:func:`pointing_game`).
    sign
        'abs', 'positive' or 'raw'.
    min_accuracy, task, activation, strategy
        As in :class:`GroundTruthSaliency` (which says why there is no ``operator`` nor
        ``seed``).

    Notes
    -----
    mass accuracy = sum of relevance in the mask / total relevance; rank accuracy =
    share of the K = |mask| most relevant pixels inside the mask; pointing game = 1 when
    the most relevant pixel is inside the mask.

    References
    ----------
    Arras et al., Information Fusion 2022; Zhang et al., IJCV 2018.

    Examples
    --------
    >>> from xplique_ext.datasets import make_aixi_color
    >>> from xplique_ext.models import AIXIFunctionModel
    >>> data = make_aixi_color(4, image_size=32, function="ssin", seed=1)
    >>> metric = GroundTruthLocalisation(AIXIFunctionModel("ssin", dataset="color"),
    ...                                  data.images, data.targets,
    ...                                  masks=data.relevant_masks)
    >>> metric.evaluate(data.ground_truth)
    1.0
    """

    higher_is_better = True
    _reference_name = "masks"
    _data_params = BaseAttributionMetric._data_params + ("masks",)

    @validate_params({
        **{k: v for k, v in BASE_PARAMETERS.items() if k not in ("operator", "seed")},
        "masks": _MAPS,
        "measure": [Options(list(_LOCALISATION))],
        "sign": [Options(LOCALISATION_SIGNS)],
        "min_accuracy": _MIN_ACCURACY,
        "task": _TASK,
    })
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        masks: Any,
        measure: str = "mass_accuracy",
        sign: str = "abs",
        min_accuracy: float = 0.93,
        task: str = "auto",
        activation: Optional[str] = None,
        strategy: Any = None,
    ):
        super().__init__(model, inputs, targets, batch_size, activation=activation, strategy=strategy)
        self.measure, self.sign = measure, sign  # declared above
        self._setup_reference(_read_masks(masks), min_accuracy, task)
        self.masks = self.reference != 0

    @classmethod
    def from_aixi(
        cls, model: Callable, data: Any, *, convention: str = "paper", **kwargs
    ) -> GroundTruthLocalisation:
        """Build the metric on an :class:`~xplique_ext.datasets.AIXIData`: its images,
        targets and the masks of the objects whose ground-truth value in ``convention``
        ('paper' by default; 'object' or 'pixel': Shapley values) is not zero."""
        masks = data.relevant_masks_for(convention)
        return cls(model, data.images, data.targets, masks=masks, **kwargs)

    def _is_proportion(self) -> bool:
        """The pointing game's aggregate is a hit rate: :meth:`summary` gives the
        Wilson interval for it; the other measures get the bootstrap."""
        return self.measure == "pointing_game"

    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """Localisation score of each explanation (N, H, W[, C]), shape (N,)."""
        phi = self._explanations(explanations)
        return _LOCALISATION[self.measure](phi, self.masks, sign=self.sign)


# --------------------------------------------------------------------------- leaderboard
@validate_params({
    "explanations": [InstanceOf(dict, description="a dict explainer name -> maps")],
    "ground_truth": NO_VALIDATION,  # maps or an AIXIData: checked by emd
    "masks": [*_MAPS, None],
    "sign": [Options(SIGNS)],
    "resize": _RESIZE,
    "kl_resize": _RESIZE,
    "n_jobs": _N_JOBS,
    "progress": [Boolean()],
    "convention": [Options(["paper", "object", "pixel"])],
    "confidence": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
    "seed": [Interval(numbers.Integral, 0, None), None],
})
def ground_truth_leaderboard(
    explanations: dict,
    ground_truth: Any,
    *,
    masks: Any = None,
    sign: str = "abs",
    resize: Optional[Tuple[int, int]] = (32, 32),
    kl_resize: Optional[Tuple[int, int]] = None,
    n_jobs: int = 1,
    progress: bool = False,
    convention: str = "paper",
    confidence: float = 0.95,
    seed: Optional[int] = 0,
):
    """Rank explainers by their distance to the exact ground truth.

    Parameters
    ----------
    explanations
        Explainer name -> maps (N, H, W[, C]).
    ground_truth
        Ground-truth maps (N, H, W), or an :class:`~xplique_ext.datasets.AIXIData`, whose
        ground truth in ``convention`` is then used, with its relevant-object masks when
        ``masks`` is None.
    masks
        Optional boolean masks (N, H, W) (e.g. ``AIXIData.relevant_masks``): adds the
        localisation measures (mass accuracy, rank accuracy, pointing game).
    convention
        With an ``AIXIData``: 'paper' (default; the paper's ground truth, w_i on each
        object of pattern i) or 'object' / 'pixel' (exact Shapley values, beyond the
        paper).
    sign, resize, n_jobs, progress
        As in :func:`emd` (``resize`` for the EMD).
    kl_resize
        ``resize`` of :func:`kl_divergence` (default None: full resolution).
    confidence
        Level of the intervals over the images, in (0, 1).
    seed
        Seed of the bootstrap intervals and permutation tests.

    Returns
    -------
    table : pandas.DataFrame
        One row per explainer, sorted by mean EMD (best first): mean EMD and KL (lower
        is better), and the localisation means (higher is better) when ``masks`` is
        given; then, for each measure, the bounds of its interval over the images
        (``'<measure> ci_low'``, ``'<measure> ci_high'``: BCa bootstrap, Wilson for the
        pointing game). NaN scores (all-zero maps) are skipped in the means.
        ``table.attrs['comparisons']`` maps each measure to the
        :class:`~xplique_ext.compare.ComparisonFrame` of the explainers (paired tests,
        Holm-corrected: which explainers do not differ).
    per_sample : dict
        Measure name -> explainer name -> scores (N,), for plots and tests.

    Examples
    --------
    >>> truth = np.zeros((2, 8, 8)); truth[:, 2, 2] = 1
    >>> table, _ = ground_truth_leaderboard({"exact": truth, "flat": np.ones((2, 8, 8))},
    ...                                     truth)
    >>> list(table.index)
    ['exact', 'flat']
    """
    import pandas as pd

    if not explanations:
        raise ValueError("`explanations` must be a non-empty dict explainer name -> maps, "
                         "got {}")
    if hasattr(ground_truth, "get_ground_truth") and hasattr(ground_truth, "object_labels"):
        data = ground_truth
        ground_truth = data.get_ground_truth(convention)
        if masks is None:
            masks = data.relevant_masks_for(convention)
    per_sample = {"EMD": {}, "KL": {}}
    if masks is not None:
        per_sample.update({"mass accuracy": {}, "rank accuracy": {}, "pointing game": {}})
    for name, phi in explanations.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedScoreWarning)
            per_sample["EMD"][name] = emd(
                phi, ground_truth, sign=sign, resize=resize, n_jobs=n_jobs, progress=progress
            )
            per_sample["KL"][name] = kl_divergence(phi, ground_truth, sign=sign, resize=kl_resize)
            if masks is not None:
                per_sample["mass accuracy"][name] = relevance_mass_accuracy(phi, masks)
                per_sample["rank accuracy"][name] = relevance_rank_accuracy(phi, masks)
                per_sample["pointing game"][name] = pointing_game(phi, masks)
    rows = {
        name: {
            f"{m} ({'lower' if m in ('EMD', 'KL') else 'higher'} is better)": float(
                np.nanmean(per_sample[m][name])
            )
            if np.any(np.isfinite(per_sample[m][name]))
            else float("nan")
            for m in per_sample
        }
        for name in explanations
    }
    table = pd.DataFrame.from_dict(rows, orient="index")
    comparisons = _leaderboard_comparisons(per_sample, confidence, seed)
    for m, frame in comparisons.items():
        bounds = frame.explainers
        table[f"{m} ci_low"] = bounds["ci_low"]
        table[f"{m} ci_high"] = bounds["ci_high"]
    table = table.sort_values(table.columns[0])
    table.index.name = "explainer"
    table.attrs["comparisons"] = comparisons
    return table, per_sample


def _leaderboard_comparisons(per_sample: dict, confidence: float, seed: Optional[int]):
    """Measure -> :class:`~xplique_ext.compare.ComparisonFrame` of the explainers."""
    from ..compare import compare_scores

    out = {}
    for m, by_name in per_sample.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[m] = compare_scores(
                by_name, higher_is_better=m not in ("EMD", "KL"),
                proportion=m == "pointing game", confidence=confidence, seed=seed, name=m,
            )
    return out
