"""Ground-truth saliency: distances between explanations and exact ground-truth maps.

The measures of Miro-Nicolau et al. treat both maps as probability distributions and
compare them with the Earth Mover's Distance (Eq. 5) and the Kullback-Leibler divergence
(Eq. 6). The localisation measures users know from Quantus (relevance mass accuracy,
relevance rank accuracy, pointing game; Arras et al.) compare an explanation with a
ground-truth mask instead. A :class:`GroundTruthMeasure` is one of these measures with its
options (``GroundTruthMeasure("emd", resize=None)``); the metric classes and the
leaderboard take measures, the data (maps, masks, an ``AIXIData``) comes with the data.

How the EMD is solved: for 'euclidean' and 'manhattan' (metrics) the mass shared by both
maps stays in place: the optimum depends only on ``SM - SM_hat`` (Kantorovich-Rubinstein),
which shrinks the problem exactly. Small problems go to POT's ``ot.emd2`` on the supports;
large ones (e.g. 128x128 dense maps) to a network simplex over a sparse set of arcs
proposed by the optimal plan between 2x2-pooled maps, extended until every one of the
``|supply| x |demand|`` arcs has a non-negative reduced cost (optimal for the full
problem). Both are exact.

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
from functools import partial
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from ..commons.parallel import usable_cores
from ..commons.params import (
    NO_VALIDATION,
    ArrayLike,
    Boolean,
    InstanceOf,
    Interval,
    Options,
    PairOf,
    check_param,
    parameter_constraints,
    validate_params,
)
from ..commons.progress import progress_bar
from ..commons.resize import area_downsample, fit_size
from ..commons.warnings import UndefinedScoreWarning, XpliqueExtWarning, warn
from ._emd_solver import METRICS, grid_transport_cost
from .base import BASE_PARAMETERS, BaseAttributionMetric

__all__ = [
    "emd",
    "kl_divergence",
    "relevance_mass_accuracy",
    "relevance_rank_accuracy",
    "pointing_game",
    "GroundTruthMeasure",
    "GroundTruthSaliency",
    "GroundTruthLocalisation",
    "LowModelAccuracyWarning",
    "ground_truth_leaderboard",
    "EMD_MAX_ARCS",
]

#: Measure name -> the label of its column in :func:`ground_truth_leaderboard`.
LABELS = {
    "emd": "EMD",
    "kl": "KL",
    "mass_accuracy": "mass accuracy",
    "rank_accuracy": "rank accuracy",
    "pointing_game": "pointing game",
}
DISTANCES = ("emd", "kl")
LOCALISATION = ("mass_accuracy", "rank_accuracy", "pointing_game")

#: A float for one (H, W) map, else one score per map (N,).
Score = Union[float, np.ndarray]
#: Maps: real numbers (bool masks too), finite, one (H, W) map or a batch; the ambiguous
#: (H, W, C) case and relations between two arguments stay in :func:`_as_maps` / `_pair`.
_MAP = partial(
    ArrayLike,
    "numeric",
    ndim=(2, 3, 4),
    finite=True,
    batch_hint=False,
    shapes="(H, W), (N, H, W), (N, H, W, 1) or (N, H, W, C)",
)
_MAPS, _REFERENCE = [_MAP()], [_MAP(nonempty=True)]  # a metric's reference: at least one map
#: >= 2: a grid of one cell along an axis makes every displacement along it free (disjoint
#: maps would score 0); a grid that collapses an axis of the maps is refused by _reduce.
_RESIZE = [
    None,
    PairOf(
        Interval(numbers.Integral, 2, None), description="a pair of integers >= 2 (height, width)"
    ),
]
#: The arguments :func:`emd` and :func:`kl_divergence` share.
_DISTANCE_PARAMETERS = {
    "explanations": _MAPS,
    "ground_truth": _MAPS,
    "sign": [Options(["abs", "positive"])],
    "resize": _RESIZE,
}


class LowModelAccuracyWarning(XpliqueExtWarning):
    """The model does not reproduce the targets well (accuracy, or R^2 for regression,
    below the threshold): the ground truth of F only holds for a model that learned F."""


# --------------------------------------------------------------------------- helpers
def _as_maps(x: Any, name: str) -> Tuple[np.ndarray, bool]:
    """(N, H, W) float64 maps from (H, W), (N, H, W), (N, H, W, 1) or (N, H, W, C)
    (channels summed); also says whether a single (H, W) map was given."""
    arr = np.asarray(check_param(x, name, _MAPS), dtype=np.float64)
    if arr.ndim == 3 and arr.shape[2] in (1, 3, 4) and arr.shape[2] < min(arr.shape[:2]):
        a, b, c = arr.shape
        raise ValueError(
            f"`{name}` of shape {arr.shape} is ambiguous: one map (H, W, C) with {c} "
            f"channel(s) and no batch axis, or {a} maps of {b}x{c} pixels? Pass the "
            f"batch axis: ({', '.join(map(str, (1,) + arr.shape))}) for one map with "
            "channels, or (N, H, W); a single map without its batch axis is accepted "
            "only as (H, W)"
        )
    maps = arr[None] if arr.ndim == 2 else arr.sum(axis=-1) if arr.ndim == 4 else arr
    if 0 in maps.shape[1:]:
        raise ValueError(f"`{name}` must be maps of at least one pixel, got shape {arr.shape}")
    return maps, arr.ndim == 2


def _pair(explanations: Any, ground_truth: Any, gt_name: str = "ground_truth"):
    phi, single_phi = _as_maps(explanations, "explanations")
    gt, single_gt = _as_maps(ground_truth, gt_name)
    if phi.shape != gt.shape:
        raise ValueError(
            f"`explanations` and `{gt_name}` must have the same shape once channels "
            f"are summed, got {phi.shape[1:] if single_phi else phi.shape} and "
            f"{gt.shape[1:] if single_gt else gt.shape}"
        )
    return phi, gt, single_phi and single_gt


def _apply_sign(maps: np.ndarray, sign: str) -> np.ndarray:
    return np.abs(maps) if sign == "abs" else np.maximum(maps, 0.0) if sign == "positive" else maps


def _scale(maps: np.ndarray, top: Optional[np.ndarray] = None) -> np.ndarray:
    """Maps divided by ``top`` (N,) (default: each map's largest value), all-zero maps kept
    at 0: values of order 1 whatever the scale (no overflow near the float maximum)."""
    top = maps.max(axis=(1, 2), initial=0.0) if top is None else top
    return maps / np.where(top > 0, top, 1.0)[:, None, None]


def _warn_undefined(name: str, undefined: np.ndarray, why: str) -> None:
    if undefined.any():
        warn(
            f"{name}: {int(undefined.sum())} of {undefined.size} maps {why}; their score is NaN.",
            UndefinedScoreWarning,
        )


def _two_cells(extent: Tuple[int, int]) -> Tuple[int, int]:
    """The ``resize`` that keeps 2 cells on the shortest axis of maps of ``extent`` that
    has more than one pixel (each entry >= 2, as declared): any pair at least as large in
    both entries leaves no such axis a single cell under :func:`fit_size`."""
    shortest = min(e for e in extent if e > 1)
    return tuple(max(2, -(-2 * int(e) // shortest)) for e in extent)  # ceil, exact


def _distributions(name, explanations, ground_truth, sign, resize, normalize=True):
    """The maps made non-negative by ``sign``, scaled (each map by its largest value, or,
    with ``normalize=False``, both maps of a pair by their common largest value: returned
    as ``factor``), area-downsampled within ``resize`` and, with ``normalize``, divided by
    their mass. Returns (phi, gt, defined, factor, single, extent of the maps as given)."""
    phi, gt, single = _pair(explanations, ground_truth)
    extent, phi, gt = phi.shape[1:], _apply_sign(phi, sign), _apply_sign(gt, sign)
    factor = np.maximum(phi.max(axis=(1, 2), initial=0.0), gt.max(axis=(1, 2), initial=0.0))
    factor = np.ones(len(phi)) if normalize else factor  # 0 only for pairs left undefined
    phi, gt = _scale(phi, None if normalize else factor), _scale(gt, None if normalize else factor)
    size = fit_size(extent, resize)
    collapsed = [a for a in (0, 1) if size[a] == 1 and extent[a] > 1]
    if collapsed:
        raise ValueError(
            f"`resize`={resize!r} reduces maps of {extent[0]}x{extent[1]} pixels to "
            f"{size[0]}x{size[1]} cells (aspect ratio kept): the "
            f"{'vertical' if collapsed[0] == 0 else 'horizontal'} axis would be a "
            "single cell, along which every displacement is free; pass "
            f"resize={_two_cells(extent)} or larger in both entries (2 cells on "
            "the maps' shortest axis, aspect ratio kept) or None"
        )
    phi, gt = area_downsample(phi, size), area_downsample(gt, size)
    mass_phi, mass_gt = phi.sum(axis=(1, 2)), gt.sum(axis=(1, 2))
    defined = (mass_phi > 0) & (mass_gt > 0)
    _warn_undefined(name, ~defined, "sum to zero after `sign`")
    if normalize:
        phi, gt = _scale(phi, mass_phi), _scale(gt, mass_gt)
    return phi, gt, defined, factor, single, extent


#: Largest EMD problem solved: supply x demand pixels after the exact reduction (two
#: dense 128 x 128 maps: about 6.7e7 arcs, some seconds per pair on a CPU). Beyond it,
#: :func:`emd` refuses maps of more than 128 x 128 pixels, naming the ``resize`` to use.
EMD_MAX_ARCS = 7 * 10**7


def _check_problem_size(gt: np.ndarray, phi: np.ndarray, defined, metric: str, resize) -> None:
    """Refuse, before solving anything, pairs whose transport problem is too large (maps
    of at most 128 x 128 pixels are always solved, as the error's advice promises)."""
    sup, dem = (gt - phi, phi - gt) if metric != "sqeuclidean" else (gt, phi)
    arcs = np.where(defined, (sup > 0).sum(axis=(1, 2)) * (dem > 0).sum(axis=(1, 2)), 0)
    if gt.shape[1] * gt.shape[2] > 128 * 128 and arcs.max(initial=0) > EMD_MAX_ARCS:
        k = int(np.argmax(arcs > EMD_MAX_ARCS))  # the first map beyond the limit
        raise ValueError(
            f"`resize`={resize!r} leaves maps of {gt.shape[1]}x{gt.shape[2]} "
            f"pixels: map {k} is a transport problem of {arcs[k]:.2e} arcs (supply x "
            f"demand pixels), beyond the limit of {EMD_MAX_ARCS:.0e} solved "
            "exactly in bounded time (two dense 128x128 maps); pass resize=(128, "
            "128) or smaller (the default (32, 32) takes milliseconds)"
        )


# --------------------------------------------------------------------------- EMD / KL
_EMD_PARAMETERS = {
    **_DISTANCE_PARAMETERS,
    "ground_distance": [Options(METRICS)],
    "normalize": [Boolean()],
    "solver": [Options(["auto", "dense", "column_generation"])],
    "n_jobs": [Interval(numbers.Integral, 1, None), Options([-1], description="-1 (all cores)")],
    "progress": [Boolean()],
}


@validate_params(_EMD_PARAMETERS)
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
) -> Score:
    """Earth Mover's Distance between explanations and ground-truth maps (Eq. 5), exact.

    Lower is better: 0 for identical distributions, at most 1 with ``normalize=True``.

    Parameters
    ----------
    explanations
        Maps (N, H, W), (N, H, W, 1) or (N, H, W, C) (channels summed), or one map (H, W).
        A 3-D array whose last axis is 1, 3 or 4 and smaller than the others, such as one
        (H, W, 1) map without its batch axis, is ambiguous and refused.
    ground_truth
        Ground-truth maps of the same shape (e.g. ``AIXIData.ground_truth``).
    sign
        How maps are made non-negative: 'abs' (absolute value) or 'positive' (negative
        values set to 0). Applied after summing the channels, before resizing.
    resize
        Maps larger than ``(height, width)`` (values >= 2) are area-downsampled (mass kept)
        to the largest grid within it with their aspect ratio kept (:func:`~xplique_ext.
        commons.resize.fit_size`: 64x128 maps and (32, 32) give 16x32 cells). Distances
        stay in the original pixel units, between the centres of the regions the cells
        cover: the EMD approximates the full-resolution one (within the cells' diagonal, in
        units of the image diagonal), alike along both axes. A grid of one cell along an
        axis is refused (every displacement along it would be free). None: full
        resolution; a pair whose problem exceeds :data:`EMD_MAX_ARCS` (supply x demand
        pixels, about two dense 128 x 128 maps) is then refused before any solving.
    ground_distance
        Distance between pixel centres: 'euclidean', 'manhattan' or 'sqeuclidean', in
        units of the distance between the centres of two opposite corner pixels of the
        maps as given (before ``resize``): at most 1 between any two pixels.
    normalize
        Normalise both maps to sum 1 (distributions; the paper's setting). With False
        Eq. 5 applies as written: the cheapest transport of the smaller mass plus
        ``|sum(SM) - sum(SM_hat)| * max d`` (max d = 1 in these units).
    solver
        'auto', 'dense' (POT's network simplex on the supports) or 'column_generation'
        (our sparse, warm-started network simplex; see Notes). All are exact.
    n_jobs
        Number of threads solving pairs in parallel (-1: every core this process may use); same results.
    progress
        Show a progress bar over the maps (tqdm is imported only then).

    Returns
    -------
    distance
        A float for (H, W) inputs, else an array (N,), in [0, 1] with ``normalize=True``.
        NaN (with an :class:`UndefinedScoreWarning`) where a map is all zero after
        ``sign``. Each map is divided by its largest value before its mass is taken, so
        any positive multiple of a map (1e-300 to the float maximum, in any float dtype)
        gives the same distance; with ``normalize=False`` both maps of a pair are divided
        by their common largest value and the cost multiplied back, so
        ``emd(c a, c b) = c emd(a, b)`` at any scale.

    Notes
    -----
    With ``SM`` the ground truth and ``SM_hat`` the explanation (non-negative, normalised),

    .. math:: EMD = \\min_{f \\geq 0} \\sum_{i,j} f_{ij} d_{ij}
       \\quad \\text{s.t.} \\quad \\sum_j f_{ij} = SM_i,\\ \\sum_i f_{ij} = \\hat{SM}_j

    solved exactly (the optimum of the linear program, not an approximation such as
    Sinkhorn), as the module's notes describe.

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
    phi, gt, defined, factor, single, extent = _distributions(
        "emd", explanations, ground_truth, sign, resize, normalize
    )
    with np.errstate(over="ignore"):
        overflow = defined & ~np.isfinite(np.maximum(phi.sum((1, 2)), gt.sum((1, 2))) * factor)
    _warn_undefined("emd", overflow, "have a mass beyond the float64 range (normalize=False)")
    defined &= ~overflow
    _check_problem_size(gt, phi, defined, ground_distance, resize)

    def one(k: int) -> float:
        if not defined[k]:
            return float("nan")
        value = grid_transport_cost(gt[k], phi[k], ground_distance, solver=solver, extent=extent)
        return (value + (0.0 if normalize else abs(gt[k].sum() - phi[k].sum()))) * factor[k]

    bar = dict(enabled=progress, total=len(phi), desc="EMD", unit="map")
    with ThreadPoolExecutor(max_workers=usable_cores() if n_jobs == -1 else n_jobs) as pool:
        out = np.array(list(progress_bar(pool.map(one, range(len(phi))), **bar)), np.float64)
    return float(out[0]) if single else out


@validate_params(
    {**_DISTANCE_PARAMETERS, "epsilon": [Interval(numbers.Real, 0.0, 1.0, closed="neither")]}
)
def kl_divergence(
    explanations: Any,
    ground_truth: Any,
    *,
    sign: str = "abs",
    resize: Optional[Tuple[int, int]] = None,
    epsilon: float = float(np.finfo(np.float64).eps),
) -> Score:
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
        The regulariser of Eq. 6, in (0, 1) (default: float64 machine epsilon, as in the
        saliency benchmark code the paper follows); one of 1 or more would outweigh every
        probability, giving about ``log(epsilon)`` whatever the maps.

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
    phi, gt, defined, _, single, _ = _distributions(
        "kl_divergence", explanations, ground_truth, sign, resize
    )
    out = np.where(
        defined, np.sum(gt * np.log(gt / (phi + epsilon) + epsilon), axis=(1, 2)), np.nan
    )
    return float(out[0]) if single else out


# --------------------------------------------------------------------------- localisation
def _read_masks(masks: Any, name: str = "masks") -> np.ndarray:
    """The one reader of ground-truth masks: boolean arrays, or numbers that are all 0 or
    1 (read as False / True). Any other value is refused: a soft mask (a background of
    1e-3, a probability map) is not a region, and reading "non-zero = inside" would count
    its whole background as inside. Returns a boolean array of the shape given; the
    channels of (N, H, W, C) masks are merged later by :func:`_as_maps` (summed, then
    read as ``> 0``: a pixel is inside when any channel is)."""
    arr = check_param(masks, name, _MAPS)
    if arr.dtype.kind != "b":
        other = (arr != 0) & (arr != 1)
        if other.any():
            bad = arr[other]
            raise ValueError(
                f"`{name}` must be boolean masks (or numbers that are all 0 or 1), "
                f"got {int(other.sum())} value(s) other than 0 and 1 (from "
                f"{bad.min()!r} to {bad.max()!r}): soft masks are not read as "
                f"'non-zero = inside'; binarise them first, e.g. `{name} > 0.5`"
            )
    return arr.astype(bool)


_LOCALISATION_PARAMETERS = {
    "explanations": _MAPS,
    "masks": _MAPS,
    "sign": [Options(["abs", "positive", "raw"])],
}


def _localisation_inputs(explanations, masks, sign):
    """Flat maps (N, H W) after ``sign``, each divided by its largest |value| (rankings do
    not change; sums of maps near the float maximum, or of tiny ones, neither overflow nor
    underflow), flat boolean masks (N, H W), and whether one map was given."""
    phi, m, single = _pair(explanations, _read_masks(masks), "masks")
    phi = _apply_sign(phi, sign)
    phi = _scale(phi, np.abs(phi).max(axis=(1, 2), initial=0.0))
    flat = (len(phi), phi.shape[1] * phi.shape[2])  # also for no map at all
    return phi.reshape(flat), m.reshape(flat) != 0, single


@validate_params(_LOCALISATION_PARAMETERS)
def relevance_mass_accuracy(explanations: Any, masks: Any, *, sign: str = "abs") -> Score:
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
    total, inside = phi.sum(axis=1), (phi * m).sum(axis=1)
    # a signed total at rounding level is no total: never divide by rounding noise
    noise = phi.shape[1] * np.finfo(np.float64).eps * np.abs(phi).sum(axis=1)
    defined = (np.abs(total) > noise) & (total != 0) & m.any(axis=1)
    _warn_undefined(
        "relevance_mass_accuracy",
        ~defined,
        "have zero total relevance (or a "
        "signed total that cancels to rounding level) or an empty mask",
    )
    out = np.where(defined, inside / np.where(total != 0, total, 1.0), np.nan)
    return float(out[0]) if single else out


@validate_params(_LOCALISATION_PARAMETERS)
def relevance_rank_accuracy(explanations: Any, masks: Any, *, sign: str = "abs") -> Score:
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
    k = m.sum(axis=1)
    ranked_in_mask = np.take_along_axis(m, np.argsort(-phi, axis=1, kind="stable"), axis=1)
    hits = ranked_in_mask & (np.arange(phi.shape[1])[None, :] < k[:, None])
    defined = (k > 0) & (np.ptp(phi, axis=1) > 0)
    _warn_undefined("relevance_rank_accuracy", ~defined, "have an empty mask or a constant map")
    out = np.where(defined, hits.sum(axis=1) / np.maximum(k, 1), np.nan)
    return float(out[0]) if single else out


@validate_params(_LOCALISATION_PARAMETERS)
def pointing_game(explanations: Any, masks: Any, *, sign: str = "abs") -> Score:
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
    hit = m[np.arange(len(phi)), np.argmax(phi, axis=1)].astype(np.float64)
    defined = m.any(axis=1) & (np.ptp(phi, axis=1) > 0)
    _warn_undefined("pointing_game", ~defined, "have an empty mask or a constant map")
    out = np.where(defined, hit, np.nan)
    return float(out[0]) if single else out


# --------------------------------------------------------------------------- measures
_FUNCTIONS = {
    "emd": emd,
    "kl": kl_divergence,
    "mass_accuracy": relevance_mass_accuracy,
    "rank_accuracy": relevance_rank_accuracy,
    "pointing_game": pointing_game,
}


class GroundTruthMeasure:
    """One ground-truth measure with its options: the distance (or localisation measure)
    and the settings that belong to it, given once and applied to every pair of maps.

    Parameters
    ----------
    name
        'emd' (:func:`emd`, Eq. 5), 'kl' (:func:`kl_divergence`, Eq. 6), or, against
        masks, 'mass_accuracy' (:func:`relevance_mass_accuracy`), 'rank_accuracy'
        (:func:`relevance_rank_accuracy`) or 'pointing_game' (:func:`pointing_game`).
    **options
        The keyword options of that function, checked now: for 'emd' ``sign``,
        ``resize``, ``ground_distance``, ``normalize``, ``solver``, ``n_jobs``,
        ``progress``; for 'kl' ``sign``, ``resize``, ``epsilon``; for the localisation
        measures ``sign``. Unset options keep the function's defaults (EMD on maps
        reduced within (32, 32), KL at full resolution).

    Attributes
    ----------
    higher_is_better : bool
        False for the distances, True for the localisation measures.
    label : str
        'EMD', 'KL', 'mass accuracy', 'rank accuracy' or 'pointing game'.

    Examples
    --------
    >>> a = np.zeros((8, 8)); a[0, 0] = 1
    >>> b = np.zeros((8, 8)); b[7, 0] = 1
    >>> GroundTruthMeasure("emd", resize=None, ground_distance="manhattan")(a, b)
    0.5
    """

    @validate_params({"name": [Options(list(LABELS))]})
    def __init__(self, name: str = "emd", **options: Any):
        self.name, self.function = name, _FUNCTIONS[name]
        declared = dict(list(parameter_constraints(self.function).items())[2:])
        unknown = sorted(set(options) - set(declared))
        if unknown:
            raise TypeError(
                f"`options` of {name!r} must be among {sorted(declared)}, got {unknown}"
            )
        self.options = {k: check_param(v, k, declared[k]) for k, v in options.items()}
        self.higher_is_better, self.label = name in LOCALISATION, LABELS[name]

    def __call__(self, explanations: Any, reference: Any) -> Score:
        """The measure of each explanation against its reference (ground truth or mask)."""
        return self.function(explanations, reference, **self.options)

    def get_config(self) -> Union[str, dict]:
        """The name alone, or ``{'name': ..., **options}``: what the constructor takes."""
        return {"name": self.name, **self.options} if self.options else self.name

    def __repr__(self) -> str:
        options = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"GroundTruthMeasure({self.name!r}{options})"


def _measure(value: Any, names: Sequence[str], param: str = "measure") -> GroundTruthMeasure:
    """A measure given by name, as a :class:`GroundTruthMeasure` or as its config dict,
    refused unless it is one of ``names``."""
    value = GroundTruthMeasure(**value) if isinstance(value, dict) else value
    value = value if isinstance(value, GroundTruthMeasure) else GroundTruthMeasure(value)
    if value.name not in names:
        raise ValueError(f"`{param}` must be one of {list(names)}, got {value!r}")
    return value


# --------------------------------------------------------------------------- metric classes
def _agreement(y: np.ndarray, pred: np.ndarray, task: str) -> float:
    """scikit-learn's accuracy (classification: a single output thresholded at 0.5, else
    the argmax) or R^2 of all outputs pooled (``multioutput='variance_weighted'``, i.e.
    1 - sum of squared residuals / total sum of squares; constant targets give 1.0 for a
    perfect fit, else 0.0) of predictions ``pred`` (N, K) against targets ``y`` (N, K).
    'auto' reads targets in {0, 1} or one-hot as classes."""
    from sklearn.metrics import accuracy_score, r2_score

    if task == "auto":
        task = "classification" if y.shape[1] > 1 or np.isin(y, (0.0, 1.0)).all() else "regression"
    if task == "regression":
        return float(r2_score(y, pred, multioutput="variance_weighted"))
    if y.shape[1] == 1:
        return float(accuracy_score(y[:, 0] >= 0.5, pred[:, 0] >= 0.5))
    return float(accuracy_score(np.argmax(y, axis=1), np.argmax(pred, axis=1)))


_METRIC_PARAMETERS = {
    **{k: v for k, v in BASE_PARAMETERS.items() if k not in ("operator", "seed")},
    "min_accuracy": [Interval(numbers.Real, None, 1.0)],
    "task": [Options(["auto", "classification", "regression"])],
}


def _measure_param(names: Sequence[str]) -> list:
    return [
        Options(list(names)),
        InstanceOf(
            GroundTruthMeasure, dict, description=("a GroundTruthMeasure or its config dict")
        ),
    ]


class _GroundTruthBase(BaseAttributionMetric):
    """Shared constructor logic: stores the measure and the reference maps and checks that
    the model reproduces the targets."""

    _reference_name = "ground_truth"
    _config_attributes = {"measure": "measure_config"}

    def _setup(self, reference: Any, measure: Any, min_accuracy: float, task: str) -> None:
        self.measure = _measure(measure, LOCALISATION if self.higher_is_better else DISTANCES)
        spec = getattr(self.dataset, "element_spec", None)
        # a copy: the caller's array may change after this without changing the scores
        self.reference = _as_maps(reference, self._reference_name)[0].copy()
        self.min_accuracy, self.task, self.model_accuracy = min_accuracy, task, None  # declared
        batches = []
        if self.targets is not None or (isinstance(spec, (tuple, list)) and len(spec) == 2):
            # one pass: the model's outputs (iter_batches also counts a dataset's inputs)
            batches = [(self.model_outputs(x), y) for _, x, y in self.iter_batches()]
        if self.n_inputs is None:  # a dataset without targets: count its inputs
            self.n_inputs = sum(len(x) for _, x, _ in self.iter_batches())
        if len(self.reference) != self.n_inputs:
            raise ValueError(
                f"`{self._reference_name}` must hold one map per input: got "
                f"{len(self.reference)} maps for {self.n_inputs} inputs"
            )
        if batches:
            pred, y = (np.concatenate(part).astype(np.float64) for part in zip(*batches))
            pred, y = pred.reshape(len(pred), -1), y.reshape(len(pred), -1)
            self.model_accuracy = _agreement(y, pred, task)
        if self.model_accuracy is not None and self.model_accuracy < min_accuracy:
            warn(
                f"{type(self).__name__}: the model reproduces the targets with an agreement of "
                f"{self.model_accuracy:.3f} (accuracy, or R^2 for regression) < min_accuracy="
                f"{min_accuracy:g}; the ground truth describes F and holds only for a model that "
                "learned F (the paper requires > 0.93).",
                LowModelAccuracyWarning,
            )

    @classmethod
    def from_aixi(cls, model: Callable, data: Any, *, convention: str = "paper", **kwargs):
        """Build the metric on an :class:`~xplique_ext.datasets.AIXIData`: its images,
        targets and reference in ``convention``: 'paper' (default: the weight w_i of each
        pattern on its objects, the paper's ground truth, whatever ``data.convention``
        is), or the exact Shapley values, 'object' or 'pixel' (beyond the paper). The
        reference of :class:`GroundTruthSaliency` is that ground truth; that of
        :class:`GroundTruthLocalisation` the masks of the objects whose value in it is not
        zero. ``kwargs``: the other parameters of the class."""
        from ..datasets.aixi import AIXIData

        data = check_param(data, "data", [InstanceOf(AIXIData)])
        reference = (
            data.relevant_masks_for(convention)
            if cls.higher_is_better
            else (data.get_ground_truth(convention))
        )
        return cls(model, data.images, data.targets, **{cls._reference_name: reference}, **kwargs)

    @property
    def measure_config(self) -> Union[str, dict]:
        return self.measure.get_config()

    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """Score of each explanation (N, H, W[, C]) against its reference, shape (N,)."""
        return self.measure(explanations, self.reference)  # which checks the shapes


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
        Ground-truth maps (N, H, W) (or (N, H, W, 1)), e.g. ``AIXIData.ground_truth``
        (see :meth:`from_aixi`).
    measure
        'emd' (:func:`emd`, Eq. 5, maps reduced within (32, 32)), 'kl'
        (:func:`kl_divergence`, Eq. 6, full resolution), or a :class:`GroundTruthMeasure`
        of either with its options (``sign``, ``resize``, ``ground_distance``,
        ``normalize``, ``solver``, ``n_jobs``, ``progress``; ``epsilon`` for KL).
    min_accuracy
        A :class:`LowModelAccuracyWarning` is emitted when the model's accuracy on the
        targets (R^2 for regression targets) is below this value (paper: 0.93).
    task
        'auto', 'classification' or 'regression': how the agreement is measured. 'auto'
        treats targets in {0, 1} or one-hot as classes (a single output is thresholded
        at 0.5; use ``activation='sigmoid'`` for a logit output).
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
    ...                              ground_truth=data.ground_truth)
    >>> metric.evaluate(data.ground_truth)
    0.0
    """

    higher_is_better = False
    _data_params = BaseAttributionMetric._data_params + ("ground_truth",)

    @validate_params(
        {**_METRIC_PARAMETERS, "ground_truth": _REFERENCE, "measure": _measure_param(DISTANCES)}
    )
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        ground_truth: Any,
        measure: Any = "emd",
        min_accuracy: float = 0.93,
        task: str = "auto",
        activation: Optional[str] = None,
        strategy: Any = None,
    ):
        super().__init__(
            model, inputs, targets, batch_size, activation=activation, strategy=strategy
        )
        self._setup(ground_truth, measure, min_accuracy, task)
        self.ground_truth = self.reference


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
        (:func:`relevance_rank_accuracy`) or 'pointing_game' (:func:`pointing_game`), or
        a :class:`GroundTruthMeasure` of one of them with its ``sign`` ('abs', 'positive'
        or 'raw').
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

    @validate_params(
        {**_METRIC_PARAMETERS, "masks": _REFERENCE, "measure": _measure_param(LOCALISATION)}
    )
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        masks: Any,
        measure: Any = "mass_accuracy",
        min_accuracy: float = 0.93,
        task: str = "auto",
        activation: Optional[str] = None,
        strategy: Any = None,
    ):
        super().__init__(
            model, inputs, targets, batch_size, activation=activation, strategy=strategy
        )
        self._setup(_read_masks(masks), measure, min_accuracy, task)
        self.masks = self.reference != 0

    def _is_proportion(self) -> bool:
        """The pointing game's aggregate is a hit rate: :meth:`summary` gives the
        Wilson interval for it; the other measures get the bootstrap."""
        return self.measure.name == "pointing_game"


# --------------------------------------------------------------------------- leaderboard
@validate_params(
    {
        "explanations": [InstanceOf(dict, description="a dict explainer name -> maps")],
        "ground_truth": NO_VALIDATION,  # maps or an AIXIData: checked by the measures
        "masks": [*_MAPS, None],
        "measures": [InstanceOf(list, tuple, description="a list of measures"), None],
        "convention": [Options(["paper", "object", "pixel"])],
        "confidence": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
        "seed": [Interval(numbers.Integral, 0, None), None],
    }
)
def ground_truth_leaderboard(
    explanations: dict,
    ground_truth: Any,
    *,
    masks: Any = None,
    measures: Optional[Sequence[Any]] = None,
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
    measures
        The measures, as names or :class:`GroundTruthMeasure` with their options (e.g.
        ``[GroundTruthMeasure("emd", resize=None, n_jobs=-1), "kl"]``); default: 'emd'
        (maps reduced within (32, 32)) and 'kl' (full resolution), and the three
        localisation measures when there are masks. Their labels must differ.
    convention
        With an ``AIXIData``: 'paper' (default; the paper's ground truth, w_i on each
        object of pattern i) or 'object' / 'pixel' (exact Shapley values, beyond the
        paper).
    confidence
        Level of the intervals over the images, in (0, 1).
    seed
        Seed of the bootstrap intervals and permutation tests.

    Returns
    -------
    table : pandas.DataFrame
        One row per explainer, sorted by its first measure (best first): the mean of each
        measure (EMD and KL: lower is better; localisation: higher is better), then, for
        each measure, the bounds of its interval over the images (``'<measure> ci_low'``,
        ``'<measure> ci_high'``: BCa bootstrap, Wilson for the pointing game). NaN scores
        (all-zero maps) are skipped in the means. ``table.attrs['comparisons']`` maps each
        measure to the :class:`~xplique_ext.compare.ComparisonFrame` of the explainers
        (paired tests, Holm-corrected: which explainers do not differ).
    per_sample : dict
        Measure label -> explainer name -> scores (N,), for plots and tests.

    Examples
    --------
    >>> truth = np.zeros((2, 8, 8)); truth[:, 2, 2] = 1
    >>> table, _ = ground_truth_leaderboard({"exact": truth, "flat": np.ones((2, 8, 8))},
    ...                                     truth)
    >>> list(table.index)
    ['exact', 'flat']
    """
    import pandas as pd

    from ..compare import compare_scores
    from ..datasets.aixi import AIXIData

    if not explanations:
        raise ValueError("`explanations` must be a non-empty dict explainer name -> maps, got {}")
    if isinstance(ground_truth, AIXIData):
        masks = ground_truth.relevant_masks_for(convention) if masks is None else masks
        ground_truth = ground_truth.get_ground_truth(convention)
    # maps (N, H, W[, C]): one score per map, compared across explainers
    check_param(
        ground_truth,
        "ground_truth",
        [_MAP(ndim=(3, 4), shapes="(N, H, W) or (N, H, W, C)", batch_hint=True, nonempty=True)],
    )
    if measures is not None and not measures:
        raise ValueError(
            "`measures` must name at least one measure (None: the defaults), got an empty list"
        )
    names = (*DISTANCES, *(LOCALISATION if masks is not None else ()))
    measures = [_measure(m, names, "measures") for m in (names if measures is None else measures)]
    if len({m.label for m in measures}) < len(measures):
        raise ValueError(f"`measures` must have distinct labels, got {measures}")
    per_sample, comparisons = {}, {}
    table = pd.DataFrame(index=pd.Index(list(explanations), name="explainer"))
    for m in measures:
        reference = masks if m.higher_is_better else ground_truth
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NaN scores are skipped; the tests are noisy
            scores = per_sample[m.label] = {k: m(phi, reference) for k, phi in explanations.items()}
            comparisons[m.label] = compare_scores(
                scores,
                higher_is_better=m.higher_is_better,
                confidence=confidence,
                seed=seed,
                proportion=m.name == "pointing_game",
                name=m.label,
            )
            direction = "higher" if m.higher_is_better else "lower"
            # NaN scores are skipped; all-NaN scores give a NaN mean (its warning is ignored)
            table[f"{m.label} ({direction} is better)"] = [np.nanmean(s) for s in scores.values()]
    for label, frame in comparisons.items():
        table[[f"{label} ci_low", f"{label} ci_high"]] = frame.explainers[["ci_low", "ci_high"]]
    table = table.sort_values(table.columns[0])
    table.attrs["comparisons"] = comparisons
    return table, per_sample
