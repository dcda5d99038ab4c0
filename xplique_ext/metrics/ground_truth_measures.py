"""Ground-truth measures: distances and localisation scores between maps, model-free.

The measures of Miro-Nicolau et al. treat both maps as probability distributions and
compare them with the Earth Mover's Distance (Eq. 5) and the Kullback-Leibler divergence
(Eq. 6). The localisation measures users know from Quantus (relevance mass accuracy,
relevance rank accuracy, pointing game; Arras et al.) compare an explanation with a
ground-truth mask instead. A :class:`GroundTruthMeasure` is one of these measures with its
options (``GroundTruthMeasure("emd", resize=None)``); the metric classes of
:mod:`~xplique_ext.metrics.ground_truth` and
:func:`~xplique_ext.metrics.ground_truth_leaderboard` take measures.

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
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from ..commons.parallel import usable_cores
from ..commons.params import (
    ArrayLike,
    Boolean,
    Interval,
    Options,
    PairOf,
    check_param,
    parameter_constraints,
    validate_params,
)
from ..commons.progress import progress_bar
from ..commons.resize import area_downsample, fit_size
from ..commons.warnings import UndefinedScoreWarning, warn
from ._emd_solver import METRICS, grid_transport_cost

__all__ = [
    "emd",
    "kl_divergence",
    "relevance_mass_accuracy",
    "relevance_rank_accuracy",
    "pointing_game",
    "GroundTruthMeasure",
    "EMD_MAX_ARCS",
]


class MeasureDeclaration(NamedTuple):
    """What a measure declares once, and every leaderboard, comparison and plot reads."""

    label: str  # the label of its column in :func:`ground_truth_leaderboard`
    higher_is_better: bool  # its direction
    reference: str  # what it compares the maps with: 'ground_truth' maps or 'masks'
    proportion: bool  # each score is a 0/1 outcome: its mean is a proportion


#: Measure name -> its declaration: the one place that says a measure's direction.
DECLARATIONS = {
    "emd": MeasureDeclaration(
        "EMD", higher_is_better=False, reference="ground_truth", proportion=False
    ),
    "kl": MeasureDeclaration(
        "KL", higher_is_better=False, reference="ground_truth", proportion=False
    ),
    "mass_accuracy": MeasureDeclaration(
        "mass accuracy", higher_is_better=True, reference="masks", proportion=False
    ),
    "rank_accuracy": MeasureDeclaration(
        "rank accuracy", higher_is_better=True, reference="masks", proportion=False
    ),
    "pointing_game": MeasureDeclaration(
        "pointing game", higher_is_better=True, reference="masks", proportion=True
    ),
}
#: Measure name -> the label of its column in :func:`ground_truth_leaderboard`.
LABELS = {name: declared.label for name, declared in DECLARATIONS.items()}
#: Measure label -> its declared ``higher_is_better``: the ``directions`` of plots of
#: ``per_sample`` scores (:func:`~xplique_ext.plots.plot_ground_truth_leaderboard`).
DIRECTIONS = {declared.label: declared.higher_is_better for declared in DECLARATIONS.values()}
#: The distances to ground-truth maps (lower is better).
DISTANCES = tuple(name for name, d in DECLARATIONS.items() if d.reference == "ground_truth")
#: The localisation measures against ground-truth masks (higher is better).
LOCALISATION = tuple(name for name, d in DECLARATIONS.items() if d.reference == "masks")

#: A float for one (H, W) map, else one score per map (N,).
Score = Union[float, np.ndarray]
#: Maps: real numbers (bool masks too), finite, one (H, W) map or a batch; the ambiguous
#: (H, W, C) case and relations between two arguments stay in :func:`read_maps` / `_pair`.
map_constraint = partial(
    ArrayLike,
    "numeric",
    ndim=(2, 3, 4),
    finite=True,
    batch_hint=False,
    shapes="(H, W), (N, H, W), (N, H, W, 1) or (N, H, W, C)",
)
MAPS = [map_constraint()]
#: A metric's reference: at least one map.
REFERENCE_MAPS = [map_constraint(nonempty=True)]
#: >= 2: a grid of one cell along an axis makes every displacement along it free (disjoint
#: maps would score 0); a grid that collapses an axis of the maps is refused by
#: :func:`_distributions`.
_RESIZE = [
    None,
    PairOf(
        Interval(numbers.Integral, 2, None), description="a pair of integers >= 2 (height, width)"
    ),
]
#: The arguments :func:`emd` and :func:`kl_divergence` share.
_DISTANCE_PARAMETERS = {
    "explanations": MAPS,
    "ground_truth": MAPS,
    "sign": [Options(["abs", "positive"])],
    "resize": _RESIZE,
}


# --------------------------------------------------------------------------- helpers
def read_maps(x: Any, name: str) -> Tuple[np.ndarray, bool]:
    """(N, H, W) float64 maps from (H, W), (N, H, W), (N, H, W, 1) or (N, H, W, C)
    (channels summed); also says whether a single (H, W) map was given."""
    arr = np.asarray(check_param(x, name, MAPS), dtype=np.float64)
    if arr.ndim == 3 and arr.shape[2] in (1, 3, 4) and arr.shape[2] < min(arr.shape[:2]):
        n_maps, height, width = arr.shape
        raise ValueError(
            f"`{name}` of shape {arr.shape} is ambiguous: one map (H, W, C) with {width} "
            f"channel(s) and no batch axis, or {n_maps} maps of {height}x{width} pixels? Pass the "
            f"batch axis: ({', '.join(map(str, (1,) + arr.shape))}) for one map with "
            "channels, or (N, H, W); a single map without its batch axis is accepted "
            "only as (H, W)"
        )
    if arr.ndim == 2:
        maps = arr[None]
    elif arr.ndim == 4:
        maps = arr.sum(axis=-1)
    else:
        maps = arr
    if 0 in maps.shape[1:]:
        raise ValueError(f"`{name}` must be maps of at least one pixel, got shape {arr.shape}")
    return maps, arr.ndim == 2


def _pair(explanations: Any, ground_truth: Any, gt_name: str = "ground_truth"):
    phi, single_phi = read_maps(explanations, "explanations")
    gt, single_gt = read_maps(ground_truth, gt_name)
    if phi.shape != gt.shape:
        raise ValueError(
            f"`explanations` and `{gt_name}` must have the same shape once channels "
            f"are summed, got {phi.shape[1:] if single_phi else phi.shape} and "
            f"{gt.shape[1:] if single_gt else gt.shape}"
        )
    return phi, gt, single_phi and single_gt


def _apply_sign(maps: np.ndarray, sign: str) -> np.ndarray:
    """The maps after ``sign``: 'abs', 'positive' (negative values set to 0) or 'raw'."""
    if sign == "abs":
        return np.abs(maps)
    if sign == "positive":
        return np.maximum(maps, 0.0)
    return maps


def _scale(maps: np.ndarray, top: Optional[np.ndarray] = None) -> np.ndarray:
    """Maps divided by ``top`` (N,) (default: each map's largest value), all-zero maps kept
    at 0: values of order 1 whatever the scale (no overflow near the float maximum)."""
    if top is None:
        top = maps.max(axis=(1, 2), initial=0.0)
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


class _Distributions(NamedTuple):
    """Pairs of maps ready for a distance (see :func:`_distributions`)."""

    explanations: np.ndarray  # (N, h, w) after sign, scaling and resizing
    ground_truth: np.ndarray  # (N, h, w), likewise
    defined: np.ndarray  # (N,) bool: both maps of the pair have some mass
    factor: np.ndarray  # (N,) the scale to multiply a distance back by (1 when normalised)
    single: bool  # one (H, W) map was given: the distance is a float
    extent: Tuple[int, int]  # (H, W) of the maps as given, before resizing


def _distributions(name, explanations, ground_truth, sign, resize, normalize=True):
    """The maps made non-negative by ``sign``, scaled (each map by its largest value, or,
    with ``normalize=False``, both maps of a pair by their common largest value: returned
    as ``factor``), area-downsampled within ``resize`` and, with ``normalize``, divided by
    their mass."""
    phi, gt, single = _pair(explanations, ground_truth)
    extent = phi.shape[1:]
    phi = _apply_sign(phi, sign)
    gt = _apply_sign(gt, sign)
    if normalize:  # each map scaled by its own largest value
        factor = np.ones(len(phi))
        phi = _scale(phi)
        gt = _scale(gt)
    else:  # both maps of a pair by their common largest value (0 only for undefined pairs)
        factor = np.maximum(phi.max(axis=(1, 2), initial=0.0), gt.max(axis=(1, 2), initial=0.0))
        phi = _scale(phi, factor)
        gt = _scale(gt, factor)
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
    phi = area_downsample(phi, size)
    gt = area_downsample(gt, size)
    mass_phi = phi.sum(axis=(1, 2))
    mass_gt = gt.sum(axis=(1, 2))
    defined = (mass_phi > 0) & (mass_gt > 0)
    _warn_undefined(name, ~defined, "sum to zero after `sign`")
    if normalize:
        phi = _scale(phi, mass_phi)
        gt = _scale(gt, mass_gt)
    return _Distributions(phi, gt, defined, factor, single, extent)


#: Largest EMD problem solved: supply x demand pixels after the exact reduction (two
#: dense 128 x 128 maps: about 6.7e7 arcs, some seconds per pair on a CPU). Beyond it,
#: :func:`emd` refuses maps of more than 128 x 128 pixels, naming the ``resize`` to use.
EMD_MAX_ARCS = 7 * 10**7


def _check_problem_size(gt: np.ndarray, phi: np.ndarray, defined, metric: str, resize) -> None:
    """Refuse, before solving anything, pairs whose transport problem is too large (maps
    of at most 128 x 128 pixels are always solved, as the error's advice promises)."""
    if metric == "sqeuclidean":  # no shared mass is removed: every pixel of each map
        supply = gt
        demand = phi
    else:  # the shared mass stays in place (see the module's notes)
        supply = gt - phi
        demand = phi - gt
    arcs = np.where(defined, (supply > 0).sum(axis=(1, 2)) * (demand > 0).sum(axis=(1, 2)), 0)
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
    pairs = _distributions("emd", explanations, ground_truth, sign, resize, normalize)
    phi = pairs.explanations
    gt = pairs.ground_truth
    factor = pairs.factor
    with np.errstate(over="ignore"):
        overflow = pairs.defined & ~np.isfinite(
            np.maximum(phi.sum((1, 2)), gt.sum((1, 2))) * factor
        )
    _warn_undefined("emd", overflow, "have a mass beyond the float64 range (normalize=False)")
    defined = pairs.defined & ~overflow
    _check_problem_size(gt, phi, defined, ground_distance, resize)

    def one(k: int) -> float:
        if not defined[k]:
            return float("nan")
        value = grid_transport_cost(
            gt[k], phi[k], ground_distance, solver=solver, extent=pairs.extent
        )
        leftover = 0.0  # Eq. 5 without normalising: the unmatched mass travels max d = 1
        if not normalize:
            leftover = abs(gt[k].sum() - phi[k].sum())
        return (value + leftover) * factor[k]

    workers = n_jobs
    if n_jobs == -1:
        workers = usable_cores()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        distances = progress_bar(
            pool.map(one, range(len(phi))), enabled=progress, total=len(phi), desc="EMD", unit="map"
        )
        out = np.array(list(distances), np.float64)
    if pairs.single:
        return float(out[0])
    return out


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
    pairs = _distributions("kl_divergence", explanations, ground_truth, sign, resize)
    phi = pairs.explanations
    gt = pairs.ground_truth
    divergence = np.sum(gt * np.log(gt / (phi + epsilon) + epsilon), axis=(1, 2))
    out = np.where(pairs.defined, divergence, np.nan)
    if pairs.single:
        return float(out[0])
    return out


# --------------------------------------------------------------------------- localisation
def read_masks(masks: Any, name: str = "masks") -> np.ndarray:
    """The one reader of ground-truth masks: boolean arrays, or numbers that are all 0 or
    1 (read as False / True). Any other value is refused: a soft mask (a background of
    1e-3, a probability map) is not a region, and reading "non-zero = inside" would count
    its whole background as inside. Returns a boolean array of the shape given; the
    channels of (N, H, W, C) masks are merged later by :func:`read_maps` (summed, then
    read as ``> 0``: a pixel is inside when any channel is)."""
    arr = check_param(masks, name, MAPS)
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
    "explanations": MAPS,
    "masks": MAPS,
    "sign": [Options(["abs", "positive", "raw"])],
}


def _localisation_inputs(explanations, masks, sign):
    """Flat maps (N, H W) after ``sign``, each divided by its largest |value| (rankings do
    not change; sums of maps near the float maximum, or of tiny ones, neither overflow nor
    underflow), flat boolean masks (N, H W), and whether one map was given."""
    phi, m, single = _pair(explanations, read_masks(masks), "masks")
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
    total = phi.sum(axis=1)
    inside = (phi * m).sum(axis=1)
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

#: The two maps every measure compares; its other parameters are its options.
_MAPS_ARGUMENTS = ("explanations", "ground_truth", "masks")


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
    declaration : MeasureDeclaration
        Its entry of :data:`DECLARATIONS`; the four read-only attributes below read it.
    higher_is_better : bool
        False for the distances, True for the localisation measures (from
        :data:`DECLARATIONS`, which every leaderboard, comparison and plot reads).
    label : str
        'EMD', 'KL', 'mass accuracy', 'rank accuracy' or 'pointing game'.
    reference : str
        'ground_truth' (the distances) or 'masks' (the localisation measures): what the
        maps are compared with.
    proportion : bool
        Whether each score is a 0/1 outcome (the pointing game): its mean is a
        proportion.

    Examples
    --------
    >>> a = np.zeros((8, 8)); a[0, 0] = 1
    >>> b = np.zeros((8, 8)); b[7, 0] = 1
    >>> GroundTruthMeasure("emd", resize=None, ground_distance="manhattan")(a, b)
    0.5
    """

    @validate_params({"name": [Options(list(LABELS))]})
    def __init__(self, name: str = "emd", **options: Any):
        self.name = name
        self.function = _FUNCTIONS[name]
        declared = {
            option: constraints
            for option, constraints in parameter_constraints(self.function).items()
            if option not in _MAPS_ARGUMENTS
        }
        unknown = sorted(set(options) - set(declared))
        if unknown:
            raise TypeError(
                f"`options` of {name!r} must be among {sorted(declared)}, got {unknown}"
            )
        self.options = {k: check_param(v, k, declared[k]) for k, v in options.items()}
        self.declaration = DECLARATIONS[name]

    @property
    def higher_is_better(self) -> bool:
        """Its direction, as :data:`DECLARATIONS` declares it."""
        return self.declaration.higher_is_better

    @property
    def label(self) -> str:
        """The label of its column in a leaderboard."""
        return self.declaration.label

    @property
    def reference(self) -> str:
        """What it compares the maps with: 'ground_truth' maps or 'masks'."""
        return self.declaration.reference

    @property
    def proportion(self) -> bool:
        """Whether each score is a 0/1 outcome (its mean is a proportion)."""
        return self.declaration.proportion

    def __call__(self, explanations: Any, reference: Any) -> Score:
        """The measure of each explanation against its reference (ground truth or mask)."""
        return self.function(explanations, reference, **self.options)

    def get_config(self) -> Union[str, dict]:
        """The name alone, or ``{'name': ..., **options}``: what the constructor takes."""
        return {"name": self.name, **self.options} if self.options else self.name

    def __repr__(self) -> str:
        options = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"GroundTruthMeasure({self.name!r}{options})"


def as_measure(value: Any, names: Sequence[str], param: str = "measure") -> GroundTruthMeasure:
    """A measure given by name, as a :class:`GroundTruthMeasure` or as its config dict,
    refused unless it is one of ``names``."""
    if isinstance(value, dict):
        value = GroundTruthMeasure(**value)
    elif not isinstance(value, GroundTruthMeasure):
        value = GroundTruthMeasure(value)
    if value.name not in names:
        raise ValueError(f"`{param}` must be one of {list(names)}, got {value!r}")
    return value
