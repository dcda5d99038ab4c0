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
import numbers
import os
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy as np

from ..commons.files import atomic_write
from ..commons.params import PATH, ArrayLike, Boolean, Interval, Options, validate_params
from .aixi_drawing import COLOR_INTENSITIES, COLOR_PATTERNS, N_PATTERNS, SHAPE_PATTERNS
from .aixi_functions import (
    CLASS_WEIGHTS,
    FUNCTION,
    FUNCTIONS,
    PAPER_WEIGHTS,
    WEIGHTS,
    apply_function,
    class_function,
    exact_object_shapley,
    resolve_function,
    ssin,
    suum,
)
from .aixi_layouts import (
    DATASET,
    LAYOUT,
    LAYOUTS,
    MAX_OBJECTS,
    MAX_PER_PATTERN,
    MIN_IMAGE_SIZE,
    MIN_OBJECT,
    count_patterns,
    draw_objects,
    max_count,
    min_image_size,
)

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

#: Ground-truth conventions: the paper's w_i (default), or each object's exact Shapley value
#: painted on the object ('object') or spread over its pixels ('pixel').
CONVENTIONS: Tuple[str, str, str] = ("paper", "object", "pixel")

#: What an AIXIData holds besides its drawing (saved with it).
_RECIPE = ("dataset", "function", "convention", "layout", "weights", "seed")
_CONVENTION = [Options(CONVENTIONS)]
_SEED = [Interval(numbers.Integral, 0, None), None]
#: The parameters of the generators (the recipe part is shared with AIXIData).
_MAKE = {
    "n_samples": [Interval(numbers.Integral, 1, None)],
    "image_size": [Interval(numbers.Integral, 1, None)],  # and the layout's minimum: _make
    "function": FUNCTION,
    "seed": _SEED,
    "convention": _CONVENTION,
    "layout": LAYOUT,
    "weights": [ArrayLike("real", ndim=1, finite=True, batch_hint=False), None],
}


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
        self.labels = labels
        self.n_objects = n_objects

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
            "dataset": DATASET,
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
        self.object_labels = object_labels.astype(np.uint8)
        self.object_patterns = object_patterns.astype(np.int8)
        labels = self.object_labels
        patterns = self.object_patterns
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
        self.dataset = dataset
        self.function = function
        self.convention = convention
        self.layout = layout
        self.seed = seed
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

        elements = self.images
        if with_targets:
            elements = (self.images, self.targets.reshape(-1, 1))
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
        with atomic_write(path, "wb") as handle:  # the old file kept whole if interrupted
            np.savez_compressed(
                handle,
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
            f"to place up to {MAX_OBJECTS} objects of at least {MIN_OBJECT} pixels without overlap"
        )
        if smallest > MIN_IMAGE_SIZE:
            why = "for the 5 x 5 grid of cells of at least 10 pixels"
        raise ValueError(
            f"`image_size` must be >= {smallest} {why} (layout={layout!r}), got {image_size}"
        )
    weights = _weights(*resolve_function(function), weights, convention)  # before the drawing
    _check_memory(n_samples, image_size)
    entropy = seed
    if seed is None:
        entropy = int(np.random.SeedSequence().entropy)
    labels, patterns = draw_objects(dataset, layout, n_samples, image_size, entropy)
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
