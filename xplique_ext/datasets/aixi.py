"""AIXI-Shape and AIXI-Color: synthetic images whose exact explanation is known.

Two layouts draw the images:

* ``layout='authors'`` (default): the generators of the authors' release 1.0.0
  (``bin/shape.py``, ``bin/color.py``, ``uib_xsds/drawing.py``). AIXI-Shape puts 0 to 2
  circles, squares and crosses (uniform counts) in distinct cells of a 5 x 5 grid of
  ``S // 6`` pixel cells, with the sizes of ``drawing.py``; AIXI-Color draws exactly 6
  non-overlapping circles, each of an intensity drawn uniformly from three values, of radius
  10 to ``S // 4`` pixels (10 to 32 at 128 px), centres anywhere in the image (circles may be
  cut by the border), so that the counts per intensity range over 0 to 6.
* ``layout='free'``: this package's earlier layout: 0 to 2 objects of each pattern anywhere
  in the image, sides between 8 % and 20 % of the image, at least two background pixels apart.

The label of an image is a known function ``F`` of the normalised pattern counts
``g_i = count_i / max_count`` in [0, 1] (ssin, suum or class; Eq. 2-4), with ``max_count``
the layout's largest possible count of one pattern: 6 for the authors' AIXI-Color, 2 for
the others (the paper: "we normalized the output of g(p_i, x) to be in the range [0, 1]").

The ground truth (``convention='paper'``, default) is the paper's: "we consider the w_i of
each pattern the correct explanation", so every pixel of an object of pattern i holds w_i.
The exact Shapley value of each object for ``F`` is kept as a named option going beyond
the paper (``convention='object'``: painted on the object; ``'pixel'``: spread over it).

An :class:`AIXIData` holds the drawing (object labels and patterns) and the recipe
(dataset, function, layout, convention, weights); the images, labels, counts, object
values and ground truth are derived from them on first access.

References
----------
M. Miro-Nicolau, A. Jaume-i-Capo, G. Moya-Alcover. A novel approach to generate datasets
with XAI ground truth to evaluate image models (AIXI-Shape, AIXI-Color; Eq. 1-4);
https://github.com/miquelmn/aixi/releases/tag/1.0.0 (the generators).
"""

from __future__ import annotations

import json
import math
import numbers
import os
from functools import cache, cached_property, partial
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import cv2
import numpy as np

from ..commons import params
from ..commons.params import PATH, ArrayLike, Boolean, Callable_, Interval, Options, validate_params

__all__ = [
    "AIXIData",
    "ObjectMasks",
    "make_aixi_shape",
    "make_aixi_color",
    "load_aixi",
    "ssin",
    "suum",
    "class_function",
    "FUNCTIONS",
    "resolve_function",
    "apply_function",
    "WEIGHTS",
    "CLASS_WEIGHTS",
    "PAPER_WEIGHTS",
    "SHAPE_PATTERNS",
    "COLOR_PATTERNS",
    "COLOR_INTENSITIES",
    "LAYOUTS",
    "CONVENTIONS",
    "MIN_IMAGE_SIZE",
    "MAX_PER_PATTERN",
    "max_count",
    "min_image_size",
    "count_patterns",
    "exact_object_shapley",
]

#: Weights of ssin (Eq. 2) and suum (Eq. 3): the theoretical relative importances.
WEIGHTS: Tuple[float, float, float] = (0.55, 0.27, 0.18)
#: Weights (w1, w2) of the class function (Eq. 4).
CLASS_WEIGHTS: Tuple[float, float] = (1.0, 0.5)
#: The paper's ground truth: the weight painted on every object of each pattern. For
#: class, Eq. 4 weighs pattern 1 by +1 and pattern 2 by -0.5 (``w1 g1 - w2 g2``) and
#: ignores pattern 3; the sign says the direction of the effect (with ``sign='abs'``, the
#: default of :func:`~xplique_ext.metrics.emd` and ``kl_divergence``, it is (1, 0.5, 0)).
PAPER_WEIGHTS: Dict[str, Tuple[float, float, float]] = {
    "ssin": WEIGHTS,
    "suum": WEIGHTS,
    "class": (CLASS_WEIGHTS[0], -CLASS_WEIGHTS[1], 0.0),
}
#: Pattern names of AIXI-Shape, in the order of the weights.
SHAPE_PATTERNS: Tuple[str, str, str] = ("circle", "square", "cross")
#: Pattern names of AIXI-Color, in the order of the weights.
COLOR_PATTERNS: Tuple[str, str, str] = ("bright", "medium", "dark")
#: Intensities of the AIXI-Color patterns (the background is 0, AIXI-Shape objects are 1).
#: The authors draw the values 1, 2, 3 (of 255); we scale them to [0, 1].
COLOR_INTENSITIES: Tuple[float, float, float] = (1.0, 2.0 / 3.0, 1.0 / 3.0)
#: Layouts: the authors' generators of release 1.0.0 (default) and this package's earlier one.
LAYOUTS: Tuple[str, str] = ("authors", "free")
#: Ground-truth conventions: the paper's w_i (default), or each object's exact Shapley value
#: painted on the object ('object') or spread over its pixels ('pixel').
CONVENTIONS: Tuple[str, str, str] = ("paper", "object", "pixel")
#: At most this many objects of each pattern per image, except in the authors' AIXI-Color.
MAX_PER_PATTERN = 2
#: Smallest image side of the free layout and of the authors' AIXI-Color.
MIN_IMAGE_SIZE = 32
N_PATTERNS = 3
MAX_OBJECTS = 6  # objects per image in every layout
N_COLOR_CIRCLES = 6  # the authors' AIXI-Color: exactly six circles
GRID_SIDE = 5  # the authors' AIXI-Shape: a 5 x 5 grid of cells

_GAP = 2  # free layout: background pixels kept between two objects
_MARGIN = 1  # free layout: background pixels kept along the image border
_MIN_OBJECT = 7  # free layout: smallest object side in pixels
_CHUNK = 256  # images drawn from one generator: prefixes do not depend on n_samples
_CANDIDATES = 16  # free layout: random positions tried before the exact search
_FILL_CROSS_MAX = 0.52  # free layout: fill ratio crosses < 0.52 < circles
_FILL_CIRCLE_MAX = 0.86  # free layout: circles < 0.86 < squares (1.0)
_ATTEMPTS = 64  # authors' AIXI-Color: candidate circles drawn at once
_MAX_ATTEMPTS = 20000  # ... before the image is started again (never reached in practice)

_DATASET = [Options(["shape", "color"])]
#: What an AIXIData holds besides its drawing (saved with it).
_RECIPE = ("dataset", "function", "convention", "layout", "weights", "seed")
_LAYOUT = [Options(LAYOUTS)]
_CONVENTION = [Options(CONVENTIONS)]
_SEED = [Interval(numbers.Integral, 0, None), None]
_FUNCTION = [Options(["ssin", "suum", "class"]), Callable_()]
#: Normalised counts: finite (a model built on F meets g > 1 on perturbed images).
_G = [ArrayLike("real", dtype=np.float64, finite=True)]
#: The parameters of the generators (the recipe part is shared with AIXIData).
_MAKE = {
    "n_samples": [Interval(numbers.Integral, 1, None)],
    "image_size": [Interval(numbers.Integral, 1, None)],  # and the layout's minimum: _make
    "function": _FUNCTION,
    "seed": _SEED,
    "convention": _CONVENTION,
    "layout": _LAYOUT,
    "weights": [ArrayLike("real", ndim=1, finite=True, batch_hint=False), None],
}


@validate_params({"dataset": _DATASET, "layout": _LAYOUT})
def max_count(dataset: str, layout: str = "authors") -> int:
    """Largest possible count of one pattern in an image: the divisor of ``g``.

    6 for the authors' AIXI-Color (six circles, each of a random intensity), 2 otherwise.

    Examples
    --------
    >>> max_count("color"), max_count("shape"), max_count("color", "free")
    (6, 2, 2)
    """
    return _LAYOUT_TABLE[dataset, layout][2]


@validate_params({"dataset": _DATASET, "layout": _LAYOUT})
def min_image_size(dataset: str, layout: str = "authors") -> int:
    """Smallest image side a layout accepts: 64 for the authors' AIXI-Shape (its 5 x 5 grid
    needs cells of 10 pixels for the shapes to stay distinct), 32 otherwise."""
    return _LAYOUT_TABLE[dataset, layout][3]


# --------------------------------------------------------------------------- functions
def _as_g(g: np.ndarray) -> np.ndarray:
    if g.shape[-1:] != (N_PATTERNS,):
        raise ValueError(
            f"`g` must have a last axis of {N_PATTERNS} normalised pattern "
            f"counts, got shape {g.shape}"
        )
    return g


@validate_params({"g": _G})
def ssin(g: Any) -> np.ndarray:
    """ssin (Eq. 2): ``sum_i w_i sin(pi/2 g_i)`` with w = (0.55, 0.27, 0.18).

    Parameters
    ----------
    g
        Normalised pattern counts ``count_i / max_count`` in [0, 1], shape (..., 3).

    Returns
    -------
    F
        Shape (...,), values in [0, 1].

    Examples
    --------
    >>> float(ssin([1.0, 0.0, 0.5]))  # 0.55 + 0.18 sin(pi/4)
    0.677279...
    """
    return np.sin(0.5 * np.pi * _as_g(g)) @ np.asarray(WEIGHTS)


@validate_params({"g": _G})
def suum(g: Any) -> np.ndarray:
    """suum (Eq. 3): ``sum_i w_i g_i`` with w = (0.55, 0.27, 0.18).

    ``g`` (..., 3) and the values F (...,), in [0, 1], as in :func:`ssin`.

    Examples
    --------
    >>> float(suum([1.0, 0.5, 0.0]))
    0.685
    """
    return _as_g(g) @ np.asarray(WEIGHTS)


@validate_params({"g": _G})
def class_function(g: Any) -> np.ndarray:
    """class (Eq. 4): 1 when ``w1 g_1 - w2 g_2 >= 0`` (w1 = 1, w2 = 0.5), else 0.

    Only patterns 1 and 2 count; the third is ignored. Note ``F(empty image) = 1``. ``g``
    (..., 3) as in :func:`ssin`; the values F (...,) are 0.0 or 1.0.

    Examples
    --------
    >>> class_function([[0.5, 1.0, 0.0], [0.0, 0.5, 1.0]]).tolist()
    [1.0, 0.0]
    """
    g = _as_g(g)
    score = CLASS_WEIGHTS[0] * g[..., 0] - CLASS_WEIGHTS[1] * g[..., 1]
    return (score >= -1e-12).astype(np.float64)


#: The paper's functions of the normalised counts, by name.
FUNCTIONS: Dict[str, Callable[[Any], np.ndarray]] = {
    "ssin": ssin,
    "suum": suum,
    "class": class_function,
}


@validate_params({"function": _FUNCTION})
def resolve_function(function: Any) -> Tuple[str, Callable[[Any], np.ndarray]]:
    """The name and the callable of an AIXI function given by name or as a callable.

    Parameters
    ----------
    function
        'ssin', 'suum' or 'class' (:data:`FUNCTIONS`), or a callable F(g) of the
        normalised counts g (N, 3).

    Returns
    -------
    name, fn
        The function's name (a callable's ``__name__``, 'custom' without one) and the
        callable.

    Examples
    --------
    >>> resolve_function("suum")[0], resolve_function(np.sum)[0]
    ('suum', 'sum')
    """
    if callable(function):
        return getattr(function, "__name__", "custom"), function
    return function, FUNCTIONS[function]


@validate_params(
    {"fn": [Callable_()], "g": [ArrayLike("real", ndim=2, shapes=f"(N, {N_PATTERNS})")]}
)
def apply_function(fn: Callable, g: np.ndarray) -> np.ndarray:
    """F(g) for g (N, 3), checked: one finite value per row, returned as float64 (N,).

    Raises
    ------
    ValueError
        When ``fn`` fails on g, returns another shape, or non-finite values.
    TypeError
        When ``fn`` returns something other than numbers (complex numbers, strings).

    Examples
    --------
    >>> apply_function(suum, np.array([[1.0, 0.0, 0.0]])).shape
    (1,)
    """
    n = len(g)
    try:
        out = fn(g)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"`function` must map normalised counts g of shape (N, {N_PATTERNS}) to "
            f"N real values; calling it on g of shape {g.shape} failed: {err}"
        ) from None
    # numbers (bools read as 0 / 1), finite: a complex F is refused, not cut to its real part
    out = params.check_param(
        out, "function(g)", [ArrayLike("numeric", finite=True, dtype=np.float64)]
    )
    if out.shape not in ((n,), (n, 1)):
        raise ValueError(
            f"`function` must return one value per image, shape ({n},) for g of "
            f"shape {g.shape}, got shape {out.shape}"
        )
    return out.reshape(n)


# --------------------------------------------------------------------------- Shapley
def _enumerated_shapley(fn: Callable, patterns: np.ndarray, divisor: int) -> np.ndarray:
    """Exact Shapley value of each object (player) of one image by enumerating all 2^m
    subsets; the value of a subset is F of the image where only those objects are drawn."""
    m = len(patterns)
    index = np.arange(2**m)
    subsets = (index[:, None] >> np.arange(m)[None, :]) & 1  # (2^m, m)
    values = apply_function(fn, subsets @ np.eye(N_PATTERNS)[patterns] / divisor)
    size = subsets.sum(axis=1)
    weight = np.array([1 / (m * math.comb(m - 1, s)) for s in range(m)] + [0.0])  # s!(m-s-1)!/m!
    gain = values[index[:, None] | (1 << np.arange(m))] - values[:, None]  # (2^m, m): add i
    return np.sum(np.where(subsets == 0, weight[size][:, None] * gain, 0.0), axis=0)


@validate_params(
    {
        "function": _FUNCTION,
        "counts": [
            ArrayLike(
                "integer",
                ndim=2,
                shapes=f"(N, {N_PATTERNS})",
                within=Interval(numbers.Integral, 0, None),
            )
        ],
        "max_count": [Interval(numbers.Integral, 1, None)],
    }
)
def exact_object_shapley(
    function: Union[str, Callable], counts: Any, *, max_count: int = MAX_PER_PATTERN
) -> np.ndarray:
    """Exact Shapley value of one object of each pattern, for images with given counts.

    The players are the objects of the image and the value of a set of objects is F of
    the image where only those objects are drawn. By symmetry every object of a pattern
    has the same value, computed by enumerating the at most 2^12 subsets of the objects
    (for ssin and suum it equals ``term_i / count_i``: F is a sum of terms symmetric in
    their objects, each 0 when its count is 0).

    This goes beyond the paper, whose ground truth is the weight w_i of each pattern
    (``AIXIData.get_ground_truth('paper')``).

    Parameters
    ----------
    function
        'ssin', 'suum', 'class' or a callable F(g) on normalised counts (..., 3).
    counts
        Pattern counts, shape (N, 3), integers in [0, max_count], at most 12 objects per
        image.
    max_count
        The divisor of the counts (``g = counts / max_count``): 2, or 6 for the authors'
        AIXI-Color (see :func:`max_count`).

    Returns
    -------
    values
        Shape (N, 3): the value of one object of each pattern (0 where the count is 0).
        The values of an image's objects sum to ``F(I) - F(empty image)``.

    Examples
    --------
    >>> exact_object_shapley("class", [[1, 1, 0]]).tolist()  # circle +1/2, square -1/2
    [[0.5, -0.5, 0.0]]
    """
    fn = resolve_function(function)[1]
    if counts.shape[1] != N_PATTERNS:
        raise ValueError(f"`counts` must have shape (N, {N_PATTERNS}), got {counts.shape}")
    if counts.size and counts.max() > max_count:
        raise ValueError(
            f"`counts` must be integers in [0, {max_count}], got values in "
            f"[{counts.min()}, {counts.max()}]"
        )
    if counts.size and counts.sum(axis=1).max() > 12:
        raise ValueError(
            "`counts` must describe at most 12 objects per image (2^m subsets are "
            f"enumerated), got {int(counts.sum(axis=1).max())}"
        )
    # enumerate once per distinct count configuration
    configs, inverse = np.unique(counts.astype(np.int64), axis=0, return_inverse=True)
    table = np.zeros((len(configs), N_PATTERNS))
    for k, config in enumerate(configs):
        patterns = np.repeat(np.arange(N_PATTERNS), config)
        phi = _enumerated_shapley(fn, patterns, max_count)
        table[k, config > 0] = [phi[patterns == p][0] for p in np.flatnonzero(config)]
    return table[np.asarray(inverse).reshape(-1)]


# --------------------------------------------------------------------------- masks
class ObjectMasks:
    """One boolean mask per drawn object, computed on demand from the label maps.

    ``masks[i]`` is an array (m_i, H, W) holding the masks of the m_i objects of image i
    (in the order of ``AIXIData.object_patterns[i]``); ``masks.to_array()`` pads them to
    (N, 6, H, W). ``masks.labels`` is the compact storage: (N, H, W) uint8 with 0 for the
    background and k for the k-th object.
    """

    @validate_params(
        {
            "labels": [ArrayLike("integer", ndim=3, shapes="(N, H, W)")],
            "n_objects": [ArrayLike("integer", ndim=1, batch_hint=False)],
        }
    )
    def __init__(self, labels: np.ndarray, n_objects: np.ndarray):
        self.labels, self.n_objects = labels, n_objects

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> np.ndarray:
        if not isinstance(index, numbers.Integral):
            raise TypeError(f"`index` must be an integer, got {type(index).__name__}")
        return self.labels[index][None] == np.arange(1, self.n_objects[index] + 1)[:, None, None]

    def to_array(self) -> np.ndarray:
        """Masks padded with empty ones to shape (N, 6, H, W)."""
        return self.labels[:, None] == np.arange(1, MAX_OBJECTS + 1)[None, :, None, None]


def _per_object(labels: np.ndarray, values: np.ndarray, dtype: Any = np.float32) -> np.ndarray:
    """Paint per-object values (N, 6) on object labels (N, H, W), one image at a time (a
    look-up table: no temporary larger than one image)."""
    lut = np.pad(np.asarray(values, dtype), ((0, 0), (1, 0)))  # 0: the background
    out = np.empty(labels.shape, dtype)
    for i in range(len(labels)):
        out[i] = lut[i][labels[i]]
    return out


# --------------------------------------------------------------------------- result
class AIXIData:
    """A generated AIXI dataset: the objects drawn, their images, labels and ground truth.

    The drawing (``object_labels``, ``object_patterns``) and the recipe (``dataset``,
    ``function``, ``layout``, ``convention``, ``weights``, ``seed``) define the dataset;
    the other attributes are derived from them on first access.

    Parameters
    ----------
    object_labels
        (N, H, W) uint8: 0 on the background, k on the pixels of the k-th object.
    object_patterns
        (N, 6) int8: pattern of the k-th object (-1 where there is none).
    dataset
        'shape' or 'color'.
    function
        'ssin', 'suum', 'class' or a callable F(g).
    convention
        The ground truth held by ``ground_truth``: 'paper', 'object' or 'pixel' (see
        :meth:`get_ground_truth`).
    layout
        'authors' or 'free' (how the images were drawn).
    weights
        (3,) the weight painted on each pattern's objects by the 'paper' convention, or
        None (unknown for a callable ``function``).
    seed
        The seed the dataset was drawn with (kept for the record).

    Attributes
    ----------
    images : np.ndarray
        (N, H, W, 1) float32 in [0, 1]; background 0.
    targets : np.ndarray
        (N,) float32: ``F(g)`` with ``g = counts / max_count`` (0.0 / 1.0 for 'class').
    counts : np.ndarray
        (N, 3) int64: number of objects of each pattern.
    object_values : np.ndarray
        (N, 6) float64: exact Shapley value of the k-th object (0 where there is none).
    object_weights : np.ndarray
        (N, 6) float64: the paper's weight w_i of the k-th object's pattern (0 where there
        is none); NaN for a callable ``function`` given without ``weights``.
    object_areas : np.ndarray
        (N, 6) int64: number of pixels of the k-th object.
    object_masks : ObjectMasks
        One boolean mask per drawn object (see :class:`ObjectMasks`).
    max_count : int
        The divisor of the counts in ``g`` (6 for the authors' AIXI-Color, else 2).
    ground_truth : np.ndarray
        (N, H, W) float32, in the dataset's ``convention`` (see :meth:`get_ground_truth`).
    """

    @validate_params(
        {
            "object_labels": [
                ArrayLike(
                    "integer",
                    ndim=3,
                    shapes="(N, H, W)",  # 0: no object
                    within=Interval(numbers.Integral, 0, MAX_OBJECTS),
                )
            ],
            "object_patterns": [
                ArrayLike(
                    "integer",
                    ndim=2,
                    shapes=f"(N, {MAX_OBJECTS})",  # -1: none
                    within=Interval(numbers.Integral, -1, N_PATTERNS - 1),
                )
            ],
            "dataset": _DATASET,
            **{k: _MAKE[k] for k in _RECIPE if k != "dataset"},
        }
    )
    def __init__(
        self,
        object_labels: Any,
        object_patterns: Any,
        *,
        dataset: str,
        function: Any,
        convention: str = "paper",
        layout: str = "authors",
        weights: Any = None,
        seed: Optional[int] = None,
    ):
        self.max_count = max_count(dataset, layout)
        # copies: the caller's arrays stay theirs
        labels = self.object_labels = object_labels.astype(np.uint8)
        patterns = self.object_patterns = object_patterns.astype(np.int8)
        # a drawing that describes images: one pattern row per label map naming the drawn
        # objects (labels and patterns in range: declared), at most max_count of one pattern
        if patterns.shape[1:] != (MAX_OBJECTS,):
            raise ValueError(
                f"`object_patterns` must have shape (N, {MAX_OBJECTS}): one pattern "
                f"per object slot, got shape {patterns.shape}"
            )
        if 0 in labels.shape[1:]:  # OpenCV crashes on images of no pixel
            raise ValueError(
                f"`object_labels` must be images of at least one pixel, got shape {labels.shape}"
            )
        if len(labels) != len(patterns):
            raise ValueError(
                f"`object_labels` and `object_patterns` must describe the same "
                f"images, got {len(labels)} label maps and {len(patterns)} rows"
            )
        if self.counts.max(initial=0) > self.max_count:
            raise ValueError(
                f"`object_patterns` must hold at most {self.max_count} objects of "
                f"one pattern per image, got {self.counts.max()}"
            )
        mismatch = np.argwhere((self.object_areas > 0) != (patterns >= 0))
        if len(mismatch):
            i, k = mismatch[0]
            pixels = "no" if patterns[i, k] >= 0 else "some"
            raise ValueError(
                f"`object_labels` must draw exactly the objects `object_patterns` "
                f"declares: in image {i}, object {k + 1} has pattern "
                f"{patterns[i, k]} but {pixels} pixels"
            )
        self.dataset, self.function, self.convention = dataset, function, convention
        self.layout, self.seed = layout, seed
        self.function_name, self._fn = resolve_function(function)
        self.weights = _weights(self.function_name, self._fn, weights, convention)

    @property
    def pattern_names(self) -> Tuple[str, str, str]:
        """Names of the three patterns, in the order of the weights."""
        return SHAPE_PATTERNS if self.dataset == "shape" else COLOR_PATTERNS

    @property
    def image_size(self) -> int:
        return int(self.object_labels.shape[1])

    @property
    def n_objects(self) -> np.ndarray:
        """(N,) number of objects in each image."""
        return (self.object_patterns >= 0).sum(axis=1)

    @cached_property
    def counts(self) -> np.ndarray:
        return (self.object_patterns[..., None] == np.arange(N_PATTERNS)).sum(axis=1)

    @cached_property
    def images(self) -> np.ndarray:
        level = np.ones(N_PATTERNS) if self.dataset == "shape" else np.asarray(COLOR_INTENSITIES)
        # an empty slot (pattern -1) has no pixel: the level it reads is never painted
        return _per_object(self.object_labels, level[self.object_patterns])[..., None]

    @cached_property
    def targets(self) -> np.ndarray:
        return apply_function(self._fn, self.counts / self.max_count).astype(np.float32)

    @cached_property
    def object_values(self) -> np.ndarray:
        one = exact_object_shapley(self.function, self.counts, max_count=self.max_count)
        pattern = np.maximum(self.object_patterns, 0).astype(np.int64)
        return np.where(self.object_patterns >= 0, np.take_along_axis(one, pattern, 1), 0.0)

    @cached_property
    def object_areas(self) -> np.ndarray:
        return np.array(
            [np.bincount(lab.ravel(), minlength=MAX_OBJECTS + 1)[1:] for lab in self.object_labels],
            np.int64,
        ).reshape(-1, MAX_OBJECTS)

    @property
    def object_masks(self) -> ObjectMasks:
        return ObjectMasks(self.object_labels, self.n_objects)

    @property
    def object_weights(self) -> np.ndarray:
        """(N, 6) the paper's weight of each object's pattern (0 where there is none)."""
        w = np.full(N_PATTERNS, np.nan) if self.weights is None else self.weights
        return np.where(self.object_patterns >= 0, w[self.object_patterns], 0.0)

    @validate_params({"convention": [*_CONVENTION, None]})
    def object_ground_truth(self, convention: Optional[str] = None) -> np.ndarray:
        """(N, 6) the value painted on each object in a convention (default: the
        dataset's): its pattern's weight ('paper'), its Shapley value ('object'), or its
        Shapley value divided by its area ('pixel')."""
        convention = convention or self.convention
        if convention == "paper":  # refused without weights (those of a callable function)
            _weights(self.function_name, self._fn, self.weights, convention)
            return self.object_weights
        if convention == "object":
            return self.object_values
        areas = self.object_areas
        return np.where(areas > 0, self.object_values / np.maximum(areas, 1), 0.0)

    @validate_params({"convention": _CONVENTION})
    def get_ground_truth(self, convention: str = "paper") -> np.ndarray:
        """Ground-truth saliency maps (N, H, W) float32.

        Parameters
        ----------
        convention
            'paper' (default): every pixel of an object of pattern i holds the weight
            w_i, the paper's ground truth ("we consider the w_i of each pattern the
            correct explanation"): (0.55, 0.27, 0.18) for ssin and suum, (1, -0.5, 0)
            for class (Eq. 4). The next two go beyond the paper, with each object's exact
            Shapley value for F: 'object' paints it on every pixel of the object (how
            region explanations such as LIME's are painted); 'pixel' spreads it evenly
            over the object's pixels, so each map sums to ``F(I) - F(empty)``
            (``F(I)`` for ssin and suum, ``F(I) - 1`` for class).
        """
        return _per_object(self.object_labels, self.object_ground_truth(convention))

    @cached_property
    def ground_truth(self) -> np.ndarray:
        return self.get_ground_truth(self.convention)

    def relevant_masks_for(self, convention: Optional[str] = None) -> np.ndarray:
        """(N, H, W) bool: the objects whose value in ``convention`` (default: the
        dataset's) is not zero."""
        return _per_object(self.object_labels, self.object_ground_truth(convention) != 0, bool)

    #: (N, H, W) bool: the pixels of the objects whose ground-truth value (in the dataset's
    #: convention) is not zero: the region localisation measures such as the pointing game
    #: look for.
    relevant_masks = property(relevant_masks_for)

    @property
    def has_ground_truth(self) -> np.ndarray:
        """(N,) bool: False where every object's value (in the dataset's convention) is 0,
        an all-zero ground truth (an image without objects; for 'class', also one holding
        only crosses, and in the Shapley conventions one without squares, whose F never
        changes): distances to such a map are undefined (NaN)."""
        return np.any(self.object_ground_truth() != 0, axis=1)

    def _recipe(self) -> Dict[str, Any]:
        return {k: getattr(self, k) for k in _RECIPE}

    def __len__(self) -> int:
        return len(self.object_labels)

    def __repr__(self) -> str:
        return (
            f"AIXIData(dataset={self.dataset!r}, layout={self.layout!r}, "
            f"function={self.function_name!r}, convention={self.convention!r}, "
            f"n_samples={len(self)}, image_size={self.image_size})"
        )

    def __getitem__(self, index) -> AIXIData:
        """A subset (an integer gives a dataset of one image; a slice, a boolean mask or
        an index array select several)."""
        index = [int(index)] if isinstance(index, numbers.Integral) else index
        return AIXIData(self.object_labels[index], self.object_patterns[index], **self._recipe())

    @validate_params(
        {
            "batch_size": [Interval(numbers.Integral, 1, None), None],
            "with_targets": [Boolean()],
            "shuffle": [Boolean()],
            "seed": _SEED,
        }
    )
    def as_dataset(
        self,
        batch_size: Optional[int] = 64,
        *,
        with_targets: bool = True,
        shuffle: bool = False,
        seed: Optional[int] = None,
    ):
        """The images (and targets, shape (N, 1)) as a batched ``tf.data.Dataset``.

        Parameters
        ----------
        batch_size
            Batch size; None yields unbatched elements.
        with_targets
            Yield ``(image, target)`` pairs (True) or images only.
        shuffle
            Shuffle the order once per epoch with a generator seeded by ``seed``.
        """
        import tensorflow as tf

        elements = (self.images, self.targets.reshape(-1, 1)) if with_targets else self.images
        ds = tf.data.Dataset.from_tensor_slices(elements)
        if shuffle:
            ds = ds.shuffle(len(self), seed=seed, reshuffle_each_iteration=True)
        return ds.batch(batch_size) if batch_size is not None else ds

    def save(self, path: Union[str, Path]) -> Path:
        """Save to a compressed ``.npz`` file (the extension is added when missing): the
        drawing and the recipe, from which :meth:`load` derives the rest."""
        path = Path(path)
        path = path if path.suffix == ".npz" else path.with_suffix(path.suffix + ".npz")
        if not isinstance(self.function, str):
            raise ValueError(
                "`function` must be one of 'ssin', 'suum', 'class' to save the "
                f"dataset, got the callable {self.function_name!r}"
            )
        meta = {
            **self._recipe(),
            "max_count": self.max_count,
            "format": 2,
            "weights": None if self.weights is None else self.weights.tolist(),
        }
        np.savez_compressed(
            path,
            object_labels=self.object_labels,
            object_patterns=self.object_patterns,
            meta=np.array(json.dumps(meta)),
        )
        return path

    @classmethod
    @validate_params({"path": [PATH]})
    def load(cls, path: Union[str, Path]) -> AIXIData:
        """Load a dataset written by :meth:`save`."""
        try:
            with np.load(Path(path), allow_pickle=False) as f:
                meta = json.loads(str(f["meta"]))
                labels, patterns = f["object_labels"], f["object_patterns"]
        except (ValueError, KeyError, TypeError):  # not an .npz written by save (or a .npy)
            meta = {"format": "none (another file)"}
        if meta.get("format") != 2:
            raise ValueError(
                f"`path` must be a file written by AIXIData.save (format 2), got "
                f"format {meta.get('format', 1)} in {str(path)!r}"
            )
        return cls(labels, patterns, **{k: meta[k] for k in _RECIPE})


#: Load a dataset written by :meth:`AIXIData.save` (the same as :meth:`AIXIData.load`).
load_aixi = AIXIData.load


# --------------------------------------------------------------------------- drawing
def _draw(label: np.ndarray, kind: int, y: int, x: int, side: int, bar: int, value: int) -> None:
    """Draw one object (0: circle, 1: square, 2: cross) in the box of ``side`` pixels at
    (y, x): the disc of radius ``(side - 1) // 2``, the filled box, or two bars ``bar``
    pixels thick across its middle."""
    if kind == 0:
        r = (side - 1) // 2
        cv2.circle(label, (x + r, y + r), r, value, -1)
    else:
        o, t = (0, side) if kind == 1 else ((side - bar) // 2, bar)
        cv2.rectangle(label, (x, y + o), (x + side - 1, y + o + t - 1), value, -1)
        cv2.rectangle(label, (x + o, y), (x + o + t - 1, y + side - 1), value, -1)


def _free_positions(occ: np.ndarray, s: int) -> np.ndarray:
    """Flat indices (over the valid top-left range) of the positions where a box of side
    ``s`` plus the gap touches no occupied pixel."""
    w, valid = s + 2 * _GAP, slice(_MARGIN, occ.shape[0] - _MARGIN - s + 1)  # top-left corners
    window = cv2.boxFilter(
        np.pad(occ, _GAP).astype(np.float32),
        -1,
        (w, w),
        anchor=(0, 0),
        normalize=False,
        borderType=cv2.BORDER_CONSTANT,
    )  # exact sums
    return np.flatnonzero(window[valid, valid] == 0)


def _draw_free(
    rng: np.random.Generator, labels: np.ndarray, patterns: np.ndarray, kinds: Sequence[int]
) -> None:
    """The free layout: draw the first ``len(labels)`` images of a chunk of _CHUNK into
    ``labels`` (k, S, S) uint8 and ``patterns`` (k, 6) int8 (the random draws do not
    depend on k, so a prefix of the images does not depend on ``n_samples``); ``kinds``:
    the object drawn for each pattern."""
    c, size = _CHUNK, labels.shape[1]
    low = max(_MIN_OBJECT, round(0.08 * size))
    high = max(low, round(0.2 * size))
    counts = rng.integers(0, MAX_PER_PATTERN + 1, size=(c, N_PATTERNS))
    sizes = rng.integers(low, high + 1, size=(c, MAX_OBJECTS))
    order = rng.permuted(np.tile(np.arange(MAX_OBJECTS), (c, 1)), axis=1)
    candidates = rng.random(size=(c, MAX_OBJECTS, _CANDIDATES, 2))
    occ = np.zeros((size, size), np.uint8)
    slots = np.repeat(np.arange(N_PATTERNS), MAX_PER_PATTERN)  # slot -> pattern
    for i in range(len(labels)):
        # which of the 6 slots (2 per pattern) are used, in a random placement order
        used = (np.arange(MAX_OBJECTS) % MAX_PER_PATTERN) < counts[i][slots]
        objs = [k for k in order[i] if used[k]]
        for attempt in range(1000):
            occ[:], labels[i] = 0, 0
            for j, k in enumerate(objs):
                s, p = int(sizes[i, k]), int(slots[k])
                span = size - 2 * _MARGIN - s + 1
                tries = (
                    [
                        (_MARGIN + int(u[0] * span), _MARGIN + int(u[1] * span))
                        for u in candidates[i, k]
                    ]
                    if attempt == 0
                    else []
                )
                pos = next(
                    (
                        (y, x)
                        for y, x in tries
                        if not occ[
                            max(y - _GAP, 0) : y + s + _GAP, max(x - _GAP, 0) : x + s + _GAP
                        ].any()
                    ),
                    None,
                )
                if pos is None:
                    free = _free_positions(occ, s)
                    if free.size == 0:
                        break  # start this image again, with exact searches only
                    f = int(free[rng.integers(free.size)])
                    pos = (_MARGIN + f // span, _MARGIN + f % span)
                occ[pos[0] : pos[0] + s, pos[1] : pos[1] + s] = 1
                _draw(labels[i], kinds[p], *pos, s, max(1, round(s / 5)), j + 1)
                patterns[i, j] = p
            else:
                break  # every object placed
        else:  # pragma: no cover - only for sizes below MIN_IMAGE_SIZE
            raise RuntimeError(f"could not place the objects in a {size}x{size} image")


def _draw_authors_shape(rng: np.random.Generator, labels: np.ndarray, patterns: np.ndarray):
    """The authors' AIXI-Shape (``drawing.polygons`` with ``grid_divs=5``): 0-2 objects per
    pattern (``random.randint(0, 2)``), each in its own cell of a 5 x 5 grid, drawn at a
    random displacement ``(dx, dy)`` in ``[a, (cell - a) // 2]`` from the cell's corner:

    * circle: radius in ``[a, max((cell - max(dx, dy)) // 2, b)]`` (``cv2.circle``);
    * square: side in ``[a, max(cell - max(dx, dy), b)]``;
    * cross: two bars, ``long`` in ``[1, cell - max(dx, dy)]`` and ``short`` in
      ``[a, max(b, long // 2)]``, sliced as in ``drawing.py`` (bar width
      ``2 (short // 2)``). A cross whose long side equals its bar width is a plain square
      in the authors' code; we draw a new (long, short) pair for it, so that every cross
      differs from every square.

    Cells of ``S // 6`` pixels (``drawing.py``: ``image.shape[0] // (grid_divs + 1)``) and
    the constants a = 5 and b = 6 of ``drawing.py`` scaled by S / 128 (exact at 128 px; at
    least 2 and 3 pixels). At 128 px: cells of 21 px, radii 5-8, squares 5-16, crosses 1-16.
    """
    c, size = _CHUNK, labels.shape[1]
    cell = size // (GRID_SIDE + 1)
    a = max(2, (5 * size) // 128)
    b = max(a + 1, (6 * size) // 128)
    counts = rng.integers(0, MAX_PER_PATTERN + 1, size=(c, N_PATTERNS))
    cells = rng.permuted(np.tile(np.arange(GRID_SIDE**2), (c, 1)), axis=1)[:, :MAX_OBJECTS]
    u = rng.random((c, MAX_OBJECTS, 4))

    def pick(v: float, low: int, high: int) -> int:  # uniform integer in [low, high]
        return low + min(int(v * (high - low + 1)), high - low)

    for i in range(len(labels)):
        for k, p in enumerate(np.repeat(np.arange(N_PATTERNS), counts[i])):
            col, row = (cell * v for v in divmod(int(cells[i, k]), GRID_SIDE))
            dy, dx = (pick(v, a, (cell - a) // 2) for v in u[i, k, :2])
            room, (v_long, v_short) = cell - max(dx, dy), u[i, k, 2:]
            side, bar = pick(v_long, a, max(room, b)), 0  # a square
            if p == 0:
                side = 2 * min(pick(v_long, a, max(room // 2, b)), room // 2) + 1
            while p == 2:
                side = pick(v_long, 1, room)
                bar = 2 * (pick(v_short, a, max(b, side // 2)) // 2)
                if side != bar:
                    break
                v_long, v_short = rng.random(2)
            _draw(labels[i], p, row + dy, col + dx, side, bar, k + 1)
            patterns[i, k] = p


def _draw_authors_color(rng: np.random.Generator, labels: np.ndarray, patterns: np.ndarray):
    """The authors' AIXI-Color (``drawing.circles(values=[1, 2, 3], num_of_circles=6,
    overlapped=False)``): each attempt draws an intensity (uniform over the three), a radius
    and a centre anywhere in ``[0, S]`` x ``[0, S]`` (circles may be cut by the border), and
    is kept when the square around the circle is still empty, until six circles are drawn.

    The authors' test leaves the last row and column of the square unchecked, so two of
    their circles can touch; ours checks the square one pixel wider on every side, so the
    circles never touch (each one stays a separate connected component, which the counting
    from the pixels needs). Radii: ``random.randint(10, min(shape) // 4)`` at 128 px (10 to
    32), the lower bound scaled by S / 128 elsewhere (at least 2).
    """
    size = labels.shape[1]
    r_low, r_high = max(2, (10 * size + 64) // 128), size // 4
    for i in range(len(labels)):
        label, placed, attempts = labels[i], 0, _MAX_ATTEMPTS
        while placed < N_COLOR_CIRCLES:
            if attempts >= _MAX_ATTEMPTS:  # the start, or a dead end (never met): start again
                label[:], patterns[i], placed, attempts = 0, -1, 0, 0
            values = rng.integers(0, N_PATTERNS, _ATTEMPTS).tolist()
            radii = rng.integers(r_low, r_high + 1, _ATTEMPTS).tolist()
            centres = rng.integers(0, size + 1, (_ATTEMPTS, 2)).tolist()
            for value, r, (cx, cy) in zip(values, radii, centres):
                # kept when the square around the circle, one pixel wider, is empty
                y0, x0 = max(cy - r - 1, 0), max(cx - r - 1, 0)
                if not label[y0 : cy + r + 2, x0 : cx + r + 2].any():
                    cv2.circle(label, (cx, cy), r, placed + 1, -1)
                    patterns[i, placed] = value
                    placed += 1
                    if placed == N_COLOR_CIRCLES:
                        break
            attempts += _ATTEMPTS


#: (dataset, layout) -> the stream of its random draws, its drawer (into labels of zeros and
#: patterns of -1), the largest count of one pattern (the divisor of g) and the smallest
#: image side it accepts.
_LAYOUT_TABLE = {
    ("shape", "free"): (0, partial(_draw_free, kinds=(0, 1, 2)), MAX_PER_PATTERN, MIN_IMAGE_SIZE),
    ("color", "free"): (1, partial(_draw_free, kinds=(0, 0, 0)), MAX_PER_PATTERN, MIN_IMAGE_SIZE),
    ("shape", "authors"): (2, _draw_authors_shape, MAX_PER_PATTERN, 64),
    ("color", "authors"): (3, _draw_authors_color, N_COLOR_CIRCLES, MIN_IMAGE_SIZE),
}


def _check_memory(n_samples: int, image_size: int) -> None:
    """Refuse a dataset whose arrays cannot fit in this machine's memory, before any
    allocation (images and ground truth float32, object labels uint8: 9 bytes a pixel)."""
    need = n_samples * image_size * image_size * 9
    try:
        have = int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return
    if need > have:
        raise ValueError(
            f"`n_samples`={n_samples} images of `image_size`={image_size} need about "
            f"{need / 2**30:,.1f} GiB (images and ground truth in float32, object "
            f"labels in uint8), more than this machine's {have / 2**30:,.1f} GiB of "
            "memory; generate at most "
            f"{max(have // (image_size * image_size * 9), 1):,} images per call (the "
            "first images of a call do not depend on `n_samples`, so parts drawn "
            "with different seeds can be generated and saved one by one)"
        )


def _weights(name: str, fn: Callable, weights: Any, convention: str) -> Optional[np.ndarray]:
    """The weights painted on each pattern's objects: those given, else the paper's for a
    named function; refused where the paper's convention needs them and none is known."""
    if weights is not None and np.shape(weights) != (N_PATTERNS,):
        raise ValueError(
            f"`weights` must be {N_PATTERNS} finite numbers (the weight painted "
            f"on each pattern's objects), got {np.asarray(weights).tolist()!r}"
        )
    if weights is None and name in FUNCTIONS and fn is FUNCTIONS[name]:
        weights = PAPER_WEIGHTS[name]
    if convention == "paper" and weights is None:
        raise ValueError(
            "`weights` must be given with a callable `function` for the paper's "
            "ground truth (convention='paper': the weight w_i painted on each object "
            "of pattern i), got None; pass weights=(w1, w2, w3), or "
            "convention='object' or 'pixel' for the exact Shapley values"
        )
    return None if weights is None else np.asarray(weights, dtype=np.float64)


def _make(dataset, n_samples, image_size, function, seed, convention, layout, weights):
    smallest = min_image_size(dataset, layout)
    if image_size < smallest:
        why = (
            "for the 5 x 5 grid of cells of at least 10 pixels"
            if smallest > MIN_IMAGE_SIZE
            else f"to place up to {MAX_OBJECTS} objects of at least {_MIN_OBJECT} pixels "
            "without overlap"
        )
        raise ValueError(
            f"`image_size` must be >= {smallest} {why} (layout={layout!r}), got {image_size}"
        )
    weights = _weights(*resolve_function(function), weights, convention)  # before the drawing
    _check_memory(n_samples, image_size)
    entropy = seed if seed is not None else int(np.random.SeedSequence().entropy)
    stream, draw = _LAYOUT_TABLE[dataset, layout][:2]
    labels = np.zeros((n_samples, image_size, image_size), np.uint8)  # no object yet
    patterns = np.full((n_samples, MAX_OBJECTS), -1, np.int8)
    for start in range(0, n_samples, _CHUNK):
        rng = np.random.default_rng([entropy, stream, start // _CHUNK])
        draw(rng, labels[start : start + _CHUNK], patterns[start : start + _CHUNK])
    data = AIXIData(
        labels,
        patterns,
        dataset=dataset,
        function=function,
        weights=weights,
        seed=seed,
        convention=convention,
        layout=layout,
    )
    data.targets  # noqa: B018 - F is checked on the counts now, not on first access
    return data


@validate_params(_MAKE)
def make_aixi_shape(
    n_samples: int,
    image_size: int = 128,
    function: Any = "ssin",
    seed: Optional[int] = None,
    *,
    convention: str = "paper",
    layout: str = "authors",
    weights: Any = None,
) -> AIXIData:
    """AIXI-Shape: circles, squares and crosses (0 to 2 of each), one intensity.

    With the authors' layout, the objects sit in distinct cells of a 5 x 5 grid of
    ``S // 6`` pixel cells, with the sizes of the authors' ``drawing.py`` (at 128 px:
    circle radius 5-8, square side 5-16, cross side 1-16). The label is ``F(g)`` with
    ``g_i = count_i / 2``, patterns ordered (circle, square, cross).

    Parameters
    ----------
    n_samples
        Number of images, >= 1. A dataset larger than the machine's memory is refused
        with a ValueError before anything is allocated.
    image_size
        Side of the square images in pixels (the paper: 128). The authors' layout scales
        with the image: exact at 128 px, lengths scaled by S / 128 elsewhere; AIXI-Shape
        needs S >= 64 there, the rest S >= 32.
    function
        'ssin' (Eq. 2), 'suum' (Eq. 3), 'class' (Eq. 4), or a callable F(g) of the
        normalised counts g (N, 3) in [0, 1] returning N values.
    seed
        Seed; the same seed gives identical arrays, and the first k images do not depend
        on ``n_samples``. None draws fresh entropy.
    convention
        Ground truth held by ``.ground_truth``: 'paper' (default; every pixel of an
        object of pattern i holds w_i, the paper's ground truth), or, going beyond the
        paper, each object's exact Shapley value for F painted on the object ('object')
        or spread over its pixels ('pixel', so the map sums to F(I) - F(empty)).
    layout
        'authors' (default): the generators of the authors' release 1.0.0; 'free': this
        package's earlier layout (0-2 objects per pattern anywhere in the image, sides
        8-20 % of the image, two background pixels apart).
    weights
        The weight of each pattern painted by the 'paper' convention; default: the
        function's (0.55, 0.27, 0.18) for ssin and suum, (1, -0.5, 0) for class. Needed
        with a callable ``function`` and ``convention='paper'``.

    Returns
    -------
    data : AIXIData
        images (N, H, W, 1), targets (N,), counts (N, 3), object_masks,
        ground_truth (N, H, W), ``get_ground_truth(convention)``, ``as_dataset``,
        ``save`` / ``load``.

    Notes
    -----
    ``g_i = count_i / max_count`` with ``max_count`` the layout's largest count of one
    pattern (6 for the authors' AIXI-Color, 2 otherwise; :func:`max_count`), so that g,
    ssin and suum lie in [0, 1] as the paper requires.

    Examples
    --------
    >>> data = make_aixi_shape(8, image_size=64, function="suum", seed=0)
    >>> data.images.shape, data.ground_truth.shape
    ((8, 64, 64, 1), (8, 64, 64))
    >>> [round(float(v), 2) for v in np.unique(data.ground_truth)]  # the paper's w_i
    [0.0, 0.18, 0.27, 0.55]
    >>> pixel = data.get_ground_truth("pixel")  # exact Shapley values, beyond the paper
    >>> bool(np.allclose(pixel.sum(axis=(1, 2)), data.targets))
    True
    """
    return _make("shape", n_samples, image_size, function, seed, convention, layout, weights)


@validate_params(_MAKE)
def make_aixi_color(
    n_samples: int,
    image_size: int = 128,
    function: Any = "ssin",
    seed: Optional[int] = None,
    *,
    convention: str = "paper",
    layout: str = "authors",
    weights: Any = None,
) -> AIXIData:
    """AIXI-Color: circles only, in three intensities (1, 2/3, 1/3) that are the patterns.

    With the authors' layout, exactly six circles that never touch, each of an intensity
    drawn uniformly from the three, radius 10 to 32 px at 128 px, centres anywhere (cut by
    the border); counts per intensity 0 to 6 and ``g_i = count_i / 6``. With the free
    layout, 0 to 2 circles of each intensity and ``g_i = count_i / 2``.

    Parameters
    ----------
    n_samples, image_size, function, seed, convention, layout, weights
        As in :func:`make_aixi_shape` (AIXI-Color takes images of 32 px and more in both
        layouts).

    Returns
    -------
    data : AIXIData
        As in :func:`make_aixi_shape`.

    Examples
    --------
    >>> data = make_aixi_color(4, image_size=32, function="class", seed=3)
    >>> [round(float(v), 3) for v in np.unique(data.images)]
    [0.0, 0.333, 0.667, 1.0]
    >>> data.counts.sum(axis=1).tolist()  # six circles in every image
    [6, 6, 6, 6]
    """
    return _make("color", n_samples, image_size, function, seed, convention, layout, weights)


# --------------------------------------------------------------------------- counting
@cache
def _disc(radius: int) -> np.ndarray:
    """The filled ``cv2.circle`` of a radius, as drawn by both layouts."""
    return cv2.circle(np.zeros((2 * radius + 1,) * 2, np.uint8), (radius,) * 2, radius, 1, -1) > 0


@validate_params(
    {
        "images": [
            ArrayLike(
                "real",
                ndim=(3, 4),
                shapes="(N, H, W) or (N, H, W, 1)",
                dtype=np.float32,
                finite=True,
            )
        ],
        "dataset": _DATASET,
        "layout": _LAYOUT,
    }
)
def count_patterns(images: Any, dataset: str = "shape", *, layout: str = "authors") -> np.ndarray:
    """Count the objects of each pattern in images, from their pixels.

    Objects are the 8-connected components of the non-background pixels. On AIXI-Color a
    component's pattern is its mean intensity (nearest of 1, 2/3, 1/3). On AIXI-Shape,
    with the authors' layout, a component that fills its bounding box is a square, one
    equal to a filled OpenCV disc is a circle, anything else a cross (exact for the
    generated shapes); with the free layout the fill ratio (area / bounding box) decides:
    crosses below 0.52, circles below 0.86, squares above. This is what the
    function-as-model uses (see :class:`xplique_ext.models.AIXIFunctionModel`).

    Parameters
    ----------
    images
        (N, H, W) or (N, H, W, 1) images with background 0.
    dataset
        'shape' or 'color'.
    layout
        'authors' or 'free': the layout the images were drawn with.

    Returns
    -------
    counts
        (N, 3) int64.

    Examples
    --------
    >>> data = make_aixi_shape(16, image_size=64, seed=1)
    >>> bool((count_patterns(data.images) == data.counts).all())
    True
    """
    images = images[..., 0] if images.ndim == 4 and images.shape[-1] == 1 else images
    if images.ndim != 3 or 0 in images.shape[1:]:  # OpenCV crashes on images of no pixel
        raise ValueError(
            f"`images` must have shape (N, H, W) or (N, H, W, 1) with H, W >= 1, got {images.shape}"
        )
    counts = np.zeros((len(images), N_PATTERNS), np.int64)
    for i, img in enumerate(images):
        binary = (img > 1e-6).astype(np.uint8)
        n, comp, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
        left, top, width, height, area = stats[1:].T  # cv2.CC_STAT_LEFT ... CC_STAT_AREA
        if dataset == "color":
            sums = np.bincount(comp.ravel(), weights=img.ravel(), minlength=n)[1:]
            pattern = np.argmin(np.abs((sums / area)[:, None] - COLOR_INTENSITIES), axis=1)
        elif layout == "free":
            fill = area / (width * height)
            pattern = np.where(fill < _FILL_CROSS_MAX, 2, np.where(fill < _FILL_CIRCLE_MAX, 0, 1))
        else:
            pattern = np.where(area == width * height, 1, 2)  # a full box is a square
            for j in np.flatnonzero((pattern == 2) & (height == width) & (height % 2 == 1)):
                crop = comp[top[j] : top[j] + height[j], left[j] : left[j] + width[j]] == j + 1
                if np.array_equal(crop, _disc(int(height[j]) // 2)):
                    pattern[j] = 0
        counts[i] = np.bincount(pattern, minlength=N_PATTERNS)
    return counts
