"""AIXI-Shape and AIXI-Color: synthetic images whose exact explanation is known.

Every image holds up to two objects of each of three patterns (circles, squares and
crosses for AIXI-Shape; circles of three intensities for AIXI-Color), drawn with OpenCV
at random sizes and positions, never overlapping. The label of an image is a known
function ``F`` of the normalised pattern counts ``g_i = count_i / 2`` (ssin, suum or
class), and the ground-truth explanation of ``F`` is the exact Shapley value of each
object, painted on the object's pixels.

References
----------
M. Miro-Nicolau, A. Jaume-i-Capo, G. Moya-Alcover. A novel approach to generate datasets
with XAI ground truth to evaluate image models (AIXI-Shape, AIXI-Color; Eq. 1-4).
"""

from __future__ import annotations

import json
import math
import numbers
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import cv2
import numpy as np

from ..commons.validation import check_choice, check_int

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
    "WEIGHTS",
    "CLASS_WEIGHTS",
    "SHAPE_PATTERNS",
    "COLOR_PATTERNS",
    "COLOR_INTENSITIES",
    "MIN_IMAGE_SIZE",
    "MAX_PER_PATTERN",
    "count_patterns",
    "exact_object_shapley",
]

#: Weights of ssin (Eq. 2) and suum (Eq. 3): the theoretical relative importances.
WEIGHTS: Tuple[float, float, float] = (0.55, 0.27, 0.18)
#: Weights (w1, w2) of the class function (Eq. 4).
CLASS_WEIGHTS: Tuple[float, float] = (1.0, 0.5)
#: Pattern names of AIXI-Shape, in the order of the weights.
SHAPE_PATTERNS: Tuple[str, str, str] = ("circle", "square", "cross")
#: Pattern names of AIXI-Color, in the order of the weights.
COLOR_PATTERNS: Tuple[str, str, str] = ("bright", "medium", "dark")
#: Intensities of the AIXI-Color patterns (the background is 0, AIXI-Shape objects are 1).
COLOR_INTENSITIES: Tuple[float, float, float] = (1.0, 2.0 / 3.0, 1.0 / 3.0)
#: At most this many objects of each pattern per image, so ``g_i = count_i / 2``.
MAX_PER_PATTERN = 2
#: Smallest image side on which six objects of at least 7 pixels can be placed.
MIN_IMAGE_SIZE = 32
N_PATTERNS = 3
MAX_OBJECTS = N_PATTERNS * MAX_PER_PATTERN

_GAP = 2  # background pixels kept between two objects (distinct connected components)
_MARGIN = 1  # background pixels kept along the image border
_MIN_OBJECT = 7  # smallest object side in pixels (shapes stay recognisable)
_CHUNK = 256  # images drawn from one generator: prefixes do not depend on n_samples
_CANDIDATES = 16  # random positions tried before the exact free-position search
_FILL_CROSS_MAX = 0.52  # fill ratio (area / bounding box): crosses < 0.52 < circles
_FILL_CIRCLE_MAX = 0.86  # circles < 0.86 < squares (1.0)


# --------------------------------------------------------------------------- functions
def _as_g(g: Any) -> np.ndarray:
    g = np.asarray(g, dtype=np.float64)
    if g.shape[-1:] != (N_PATTERNS,):
        raise ValueError(
            f"`g` must have a last axis of {N_PATTERNS} normalised pattern counts, got shape "
            f"{g.shape}"
        )
    return g


def ssin(g: Any) -> np.ndarray:
    """ssin (Eq. 2): ``sum_i w_i sin(pi/2 g_i)`` with w = (0.55, 0.27, 0.18).

    Parameters
    ----------
    g
        Normalised pattern counts ``count_i / 2`` in [0, 1], shape (..., 3).

    Returns
    -------
    F
        Shape (...,), values in [0, 1].

    Examples
    --------
    >>> float(ssin([1.0, 0.0, 0.5]))  # 0.55 + 0.18 sin(pi/4)
    0.677279...
    """
    g = _as_g(g)
    return np.sin(0.5 * np.pi * g) @ np.asarray(WEIGHTS)


def suum(g: Any) -> np.ndarray:
    """suum (Eq. 3): ``sum_i w_i g_i`` with w = (0.55, 0.27, 0.18).

    Parameters
    ----------
    g
        Normalised pattern counts ``count_i / 2`` in [0, 1], shape (..., 3).

    Returns
    -------
    F
        Shape (...,), values in [0, 1].

    Examples
    --------
    >>> float(suum([1.0, 0.5, 0.0]))
    0.685
    """
    g = _as_g(g)
    return g @ np.asarray(WEIGHTS)


def class_function(g: Any) -> np.ndarray:
    """class (Eq. 4): 1 when ``w1 g_1 - w2 g_2 >= 0`` (w1 = 1, w2 = 0.5), else 0.

    Only patterns 1 and 2 count; the third is ignored. Note ``F(empty image) = 1``.

    Parameters
    ----------
    g
        Normalised pattern counts ``count_i / 2`` in [0, 1], shape (..., 3).

    Returns
    -------
    F
        Shape (...,), values 0.0 or 1.0.

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


def _resolve_function(function: Any) -> Tuple[str, Callable[[Any], np.ndarray]]:
    if callable(function):
        return getattr(function, "__name__", "custom"), function
    check_choice(function, "function", list(FUNCTIONS))
    return function, FUNCTIONS[function]


# --------------------------------------------------------------------------- Shapley
def _enumerated_shapley(fn: Callable, patterns: Sequence[int]) -> np.ndarray:
    """Exact Shapley value of each object (player) of one image by enumerating all 2^m
    subsets; the value of a subset is F of the image where only those objects are drawn."""
    m = len(patterns)
    if m == 0:
        return np.zeros(0)
    subsets = (np.arange(2**m)[:, None] >> np.arange(m)[None, :]) & 1  # (2^m, m)
    counts = subsets @ np.eye(N_PATTERNS)[np.asarray(patterns)]  # (2^m, 3)
    values = np.asarray(fn(counts / MAX_PER_PATTERN), dtype=np.float64).reshape(2**m)
    size = subsets.sum(axis=1)
    weight = np.array(
        [
            math.factorial(s) * math.factorial(m - s - 1) / math.factorial(m) if s < m else 0.0
            for s in range(m + 1)
        ]
    )
    phi = np.zeros(m)
    index = np.arange(2**m)
    for i in range(m):
        without = index[(index >> i) & 1 == 0]
        phi[i] = np.sum(weight[size[without]] * (values[without | (1 << i)] - values[without]))
    return phi


def exact_object_shapley(function: Union[str, Callable], counts: Any) -> np.ndarray:
    """Exact Shapley value of one object of each pattern, for images with given counts.

    The players are the objects of the image and the value of a set of objects is F of
    the image where only those objects are drawn. By symmetry every object of a pattern
    has the same value. For ssin and suum it is ``term_i / count_i`` (F is a sum of
    terms symmetric in their objects, each 0 when its count is 0); for class (and any
    callable) it is computed by enumerating the at most 2^6 subsets.

    Parameters
    ----------
    function
        'ssin', 'suum', 'class' or a callable F(g) on normalised counts (..., 3).
    counts
        Pattern counts, shape (N, 3), integers in [0, 2].

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
    name, fn = _resolve_function(function)
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[1] != N_PATTERNS:
        raise ValueError(f"`counts` must have shape (N, {N_PATTERNS}), got {counts.shape}")
    if counts.size and (counts.min() < 0 or counts.max() > MAX_PER_PATTERN):
        raise ValueError(
            f"`counts` must be integers in [0, {MAX_PER_PATTERN}], got values in "
            f"[{counts.min()}, {counts.max()}]"
        )
    counts = counts.astype(np.int64)
    if name in ("ssin", "suum") and fn is FUNCTIONS[name]:
        g = counts / MAX_PER_PATTERN
        terms = np.asarray(WEIGHTS) * (np.sin(0.5 * np.pi * g) if name == "ssin" else g)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, terms / np.maximum(counts, 1), 0.0)
    # enumerate once per distinct count configuration (at most 3^3 = 27)
    configs, inverse = np.unique(counts, axis=0, return_inverse=True)
    table = np.zeros((len(configs), N_PATTERNS))
    for k, config in enumerate(configs):
        patterns = np.repeat(np.arange(N_PATTERNS), config)
        phi = _enumerated_shapley(fn, patterns)
        for p in range(N_PATTERNS):
            if config[p]:
                table[k, p] = phi[patterns == p][0]
    return table[np.asarray(inverse).reshape(-1)]


# --------------------------------------------------------------------------- masks
class ObjectMasks:
    """One boolean mask per drawn object, computed on demand from the label maps.

    ``masks[i]`` is an array (m_i, H, W) holding the masks of the m_i objects of image i
    (in the order of ``AIXIData.object_patterns[i]``); ``masks.to_array()`` pads them to
    (N, 6, H, W). ``masks.labels`` is the compact storage: (N, H, W) uint8 with 0 for the
    background and k for the k-th object.
    """

    def __init__(self, labels: np.ndarray, n_objects: np.ndarray):
        self.labels = labels
        self.n_objects = n_objects

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> np.ndarray:
        if not isinstance(index, numbers.Integral):
            raise TypeError(f"`index` must be an integer, got {type(index).__name__}")
        m = int(self.n_objects[index])
        return self.labels[index][None] == np.arange(1, m + 1)[:, None, None]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def to_array(self) -> np.ndarray:
        """Masks padded with empty ones to shape (N, 6, H, W)."""
        return self.labels[:, None] == np.arange(1, MAX_OBJECTS + 1)[None, :, None, None]

    def union(self) -> np.ndarray:
        """Union of each image's objects, shape (N, H, W)."""
        return self.labels > 0


# --------------------------------------------------------------------------- result
class AIXIData:
    """A generated AIXI dataset: images, labels, objects and exact ground truth.

    Attributes
    ----------
    images : np.ndarray
        (N, H, W, 1) float32 in [0, 1]; background 0.
    targets : np.ndarray
        (N,) float32: ``F(I)`` (0.0 / 1.0 for 'class').
    counts : np.ndarray
        (N, 3) int64: number of objects of each pattern.
    object_labels : np.ndarray
        (N, H, W) uint8: 0 on the background, k on the pixels of the k-th object.
    object_patterns : np.ndarray
        (N, 6) int8: pattern of the k-th object (-1 where there is none).
    object_values : np.ndarray
        (N, 6) float64: exact Shapley value of the k-th object (0 where there is none).
    object_areas : np.ndarray
        (N, 6) int64: number of pixels of the k-th object.
    object_masks : ObjectMasks
        One boolean mask per drawn object (see :class:`ObjectMasks`).
    ground_truth : np.ndarray
        (N, H, W) float32, in the convention chosen at generation (see
        :meth:`get_ground_truth`).
    """

    def __init__(
        self,
        *,
        images,
        targets,
        counts,
        object_labels,
        object_patterns,
        object_values,
        object_areas,
        dataset,
        function,
        convention,
        seed,
        function_name=None,
    ):
        self.images = images
        self.targets = targets
        self.counts = counts
        self.object_labels = object_labels
        self.object_patterns = object_patterns
        self.object_values = object_values
        self.object_areas = object_areas
        self.dataset = dataset
        self.function = function
        self.function_name = function_name or (
            function if isinstance(function, str) else getattr(function, "__name__", "custom")
        )
        self.convention = check_choice(convention, "convention", ("object", "pixel"))
        self.seed = seed
        self.ground_truth = self.get_ground_truth(convention)

    # ----------------------------------------------------------------- properties
    @property
    def pattern_names(self) -> Tuple[str, str, str]:
        """Names of the three patterns, in the order of the weights."""
        return SHAPE_PATTERNS if self.dataset == "shape" else COLOR_PATTERNS

    @property
    def image_size(self) -> int:
        return int(self.images.shape[1])

    @property
    def n_objects(self) -> np.ndarray:
        """(N,) number of objects in each image."""
        return (self.object_patterns >= 0).sum(axis=1)

    @property
    def object_masks(self) -> ObjectMasks:
        return ObjectMasks(self.object_labels, self.n_objects)

    @property
    def relevant_masks(self) -> np.ndarray:
        """(N, H, W) bool: the pixels of the objects whose ground-truth value is not zero
        (the region localisation measures such as the pointing game look for)."""
        relevant = np.concatenate([np.zeros((len(self), 1), bool), self.object_values != 0], axis=1)
        return np.take_along_axis(
            relevant, self.object_labels.reshape(len(self), -1).astype(np.int64), axis=1
        ).reshape(self.object_labels.shape)

    @property
    def has_ground_truth(self) -> np.ndarray:
        """(N,) bool: False where every object's value is 0 (an all-zero ground truth,
        e.g. 'class' images without squares, whose F never changes); distances to such
        a map are undefined (NaN)."""
        return np.any(self.object_values != 0, axis=1)

    def __len__(self) -> int:
        return len(self.images)

    def __repr__(self) -> str:
        return (
            f"AIXIData(dataset={self.dataset!r}, function={self.function_name!r}, "
            f"convention={self.convention!r}, n_samples={len(self)}, "
            f"image_size={self.image_size})"
        )

    def __getitem__(self, index) -> AIXIData:
        """A subset (slice, integer array or boolean mask) as a new AIXIData."""
        if isinstance(index, numbers.Integral):
            index = slice(int(index), int(index) + 1) if index != -1 else slice(-1, None)
        return AIXIData(
            images=self.images[index],
            targets=self.targets[index],
            counts=self.counts[index],
            object_labels=self.object_labels[index],
            object_patterns=self.object_patterns[index],
            object_values=self.object_values[index],
            object_areas=self.object_areas[index],
            dataset=self.dataset,
            function=self.function,
            convention=self.convention,
            seed=self.seed,
            function_name=self.function_name,
        )

    # ----------------------------------------------------------------- ground truth
    def get_ground_truth(self, convention: str = "object") -> np.ndarray:
        """Ground-truth saliency maps (N, H, W) float32.

        Parameters
        ----------
        convention
            'object': every pixel of an object carries the object's Shapley value (how
            region explanations such as LIME's are painted). 'pixel': the object's value
            is spread evenly over its pixels, so each map sums to ``F(I) - F(empty)``
            (``F(I)`` for ssin and suum, ``F(I) - 1`` for class).
        """
        check_choice(convention, "convention", ("object", "pixel"))
        values = self.object_values
        if convention == "pixel":
            values = np.where(self.object_areas > 0, values / np.maximum(self.object_areas, 1), 0.0)
        lut = np.concatenate([np.zeros((len(self), 1)), values], axis=1).astype(np.float32)
        flat = self.object_labels.reshape(len(self), -1).astype(np.int64)
        return np.take_along_axis(lut, flat, axis=1).reshape(self.object_labels.shape)

    # ----------------------------------------------------------------- exports
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

        batch_size = check_int(batch_size, "batch_size", minimum=1, allow_none=True)
        elements = (self.images, self.targets.reshape(-1, 1)) if with_targets else self.images
        ds = tf.data.Dataset.from_tensor_slices(elements)
        if shuffle:
            ds = ds.shuffle(len(self), seed=seed, reshuffle_each_iteration=True)
        return ds.batch(batch_size) if batch_size is not None else ds

    def save(self, path: Union[str, Path]) -> Path:
        """Save to a compressed ``.npz`` file (the extension is added when missing)."""
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_suffix(path.suffix + ".npz")
        if not isinstance(self.function, str):
            raise ValueError(
                "`function` must be one of 'ssin', 'suum', 'class' to save the "
                f"dataset, got the callable {self.function_name!r}"
            )
        meta = {
            "dataset": self.dataset,
            "function": self.function,
            "convention": self.convention,
            "seed": self.seed,
            "format": 1,
        }
        np.savez_compressed(
            path,
            images=self.images,
            targets=self.targets,
            counts=self.counts,
            object_labels=self.object_labels,
            object_patterns=self.object_patterns,
            object_values=self.object_values,
            object_areas=self.object_areas,
            meta=np.array(json.dumps(meta)),
        )
        return path

    @classmethod
    def load(cls, path: Union[str, Path]) -> AIXIData:
        """Load a dataset written by :meth:`save`."""
        with np.load(Path(path), allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            arrays = {k: f[k] for k in f.files if k != "meta"}
        return cls(
            dataset=meta["dataset"],
            function=meta["function"],
            convention=meta["convention"],
            seed=meta["seed"],
            **arrays,
        )


def load_aixi(path: Union[str, Path]) -> AIXIData:
    """Load a dataset written by :meth:`AIXIData.save`."""
    return AIXIData.load(path)


# --------------------------------------------------------------------------- drawing
def _size_range(image_size: int) -> Tuple[int, int]:
    low = max(_MIN_OBJECT, round(0.08 * image_size))
    high = max(low, round(0.2 * image_size))
    return low, high


def _draw(label: np.ndarray, kind: str, y: int, x: int, s: int, value: int) -> None:
    if kind == "circle":
        r = (s - 1) // 2
        cv2.circle(label, (x + r, y + r), r, value, -1, lineType=cv2.LINE_8)
    elif kind == "square":
        cv2.rectangle(label, (x, y), (x + s - 1, y + s - 1), value, -1)
    else:  # cross (plus sign) with arms about s/5 thick
        t = max(1, round(s / 5))
        o = (s - t) // 2
        cv2.rectangle(label, (x, y + o), (x + s - 1, y + o + t - 1), value, -1)
        cv2.rectangle(label, (x + o, y), (x + o + t - 1, y + s - 1), value, -1)


def _free_positions(occ: np.ndarray, s: int) -> np.ndarray:
    """Flat indices (over the valid top-left range) of the positions where a box of side
    ``s`` plus the gap touches no occupied pixel."""
    size = occ.shape[0]
    padded = np.pad(occ, _GAP)
    integral = cv2.integral(padded)
    w = s + 2 * _GAP
    lo, hi = _MARGIN, size - _MARGIN - s  # valid top-left coordinates (inclusive)
    ys = slice(lo, hi + 1)
    ye = slice(lo + w, hi + 1 + w)
    window = integral[ye, ye] - integral[ys, ye] - integral[ye, ys] + integral[ys, ys]
    return np.flatnonzero(window == 0)


def _generate_chunk(rng: np.random.Generator, image_size: int, kinds: Sequence[str]):
    """Draw _CHUNK images: labels (C, S, S) uint8, patterns (C, 6) int8."""
    c, size = _CHUNK, image_size
    low, high = _size_range(size)
    counts = rng.integers(0, MAX_PER_PATTERN + 1, size=(c, N_PATTERNS))
    sizes = rng.integers(low, high + 1, size=(c, MAX_OBJECTS))
    order = rng.permuted(np.tile(np.arange(MAX_OBJECTS), (c, 1)), axis=1)
    candidates = rng.random(size=(c, MAX_OBJECTS, _CANDIDATES, 2))
    labels = np.zeros((c, size, size), np.uint8)
    patterns = np.full((c, MAX_OBJECTS), -1, np.int8)
    occ = np.zeros((size, size), np.uint8)
    slots = np.repeat(np.arange(N_PATTERNS), MAX_PER_PATTERN)  # slot -> pattern
    for i in range(c):
        # which of the 6 slots (2 per pattern) are used, in a random placement order
        used = (np.arange(MAX_OBJECTS) % MAX_PER_PATTERN) < counts[i][slots]
        objs = [k for k in order[i] if used[k]]
        for _attempt in range(1000):
            occ[:] = 0
            boxes = []
            ok = True
            for k in objs:
                s = int(sizes[i, k])
                span = size - 2 * _MARGIN - s + 1
                pos = None
                if _attempt == 0:
                    for u in candidates[i, k]:
                        y = _MARGIN + int(u[0] * span)
                        x = _MARGIN + int(u[1] * span)
                        if not occ[
                            max(y - _GAP, 0) : y + s + _GAP, max(x - _GAP, 0) : x + s + _GAP
                        ].any():
                            pos = (y, x)
                            break
                if pos is None:
                    free = _free_positions(occ, s)
                    if free.size == 0:
                        ok = False
                        break
                    f = int(free[rng.integers(free.size)])
                    pos = (_MARGIN + f // span, _MARGIN + f % span)
                y, x = pos
                occ[y : y + s, x : x + s] = 1
                boxes.append((y, x, s, int(slots[k])))
            if ok:
                break
        else:  # pragma: no cover - only for sizes below MIN_IMAGE_SIZE
            raise RuntimeError(f"could not place the objects in a {size}x{size} image")
        for j, (y, x, s, p) in enumerate(boxes):
            _draw(labels[i], kinds[p], y, x, s, j + 1)
            patterns[i, j] = p
    return labels, patterns


def _make(
    dataset: str,
    n_samples: int,
    image_size: int,
    function: Any,
    seed: Optional[int],
    convention: str,
) -> AIXIData:
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    image_size = check_int(image_size, "image_size")
    if image_size < MIN_IMAGE_SIZE:
        raise ValueError(
            f"`image_size` must be >= {MIN_IMAGE_SIZE} to place up to {MAX_OBJECTS} objects "
            f"of at least {_MIN_OBJECT} pixels without overlap, got {image_size}"
        )
    name, fn = _resolve_function(function)
    check_choice(convention, "convention", ("object", "pixel"))
    seed = check_int(seed, "seed", minimum=0, allow_none=True)
    entropy = seed if seed is not None else int(np.random.SeedSequence().entropy)
    kinds = SHAPE_PATTERNS if dataset == "shape" else ("circle",) * N_PATTERNS

    n_chunks = -(-n_samples // _CHUNK)
    labels = np.empty((n_chunks * _CHUNK, image_size, image_size), np.uint8)
    patterns = np.empty((n_chunks * _CHUNK, MAX_OBJECTS), np.int8)
    stream = 0 if dataset == "shape" else 1
    for chunk in range(n_chunks):
        rng = np.random.default_rng([entropy, stream, chunk])
        part = slice(chunk * _CHUNK, (chunk + 1) * _CHUNK)
        labels[part], patterns[part] = _generate_chunk(rng, image_size, kinds)
    labels, patterns = labels[:n_samples], patterns[:n_samples]

    counts = np.stack([(patterns == p).sum(axis=1) for p in range(N_PATTERNS)], axis=1)
    flat = labels.reshape(n_samples, -1)
    areas = np.stack([(flat == k + 1).sum(axis=1) for k in range(MAX_OBJECTS)], axis=1)
    intensity = np.ones(N_PATTERNS) if dataset == "shape" else np.asarray(COLOR_INTENSITIES)
    lut = np.zeros((n_samples, MAX_OBJECTS + 1), np.float32)
    lut[:, 1:] = np.where(patterns >= 0, intensity[np.maximum(patterns, 0)], 0.0)
    images = np.take_along_axis(lut, flat.astype(np.int64), axis=1).reshape(
        n_samples, image_size, image_size, 1
    )
    g = counts / MAX_PER_PATTERN
    targets = np.asarray(fn(g), dtype=np.float32).reshape(n_samples)
    per_pattern = exact_object_shapley(function, counts)  # (N, 3)
    values = np.where(
        patterns >= 0,
        np.take_along_axis(per_pattern, np.maximum(patterns, 0).astype(np.int64), axis=1),
        0.0,
    )
    return AIXIData(
        images=images,
        targets=targets,
        counts=counts.astype(np.int64),
        object_labels=labels,
        object_patterns=patterns,
        object_values=values,
        object_areas=areas.astype(np.int64),
        dataset=dataset,
        function=function,
        convention=convention,
        seed=seed,
        function_name=name,
    )


_DOC_PARAMETERS = """
    Parameters
    ----------
    n_samples
        Number of images, >= 1.
    image_size
        Side of the square images in pixels, >= 32 (objects are scaled with the image:
        sides between max(7, 0.08 S) and max(7, 0.2 S) pixels).
    function
        'ssin' (Eq. 2), 'suum' (Eq. 3), 'class' (Eq. 4), or a callable F(g) of the
        normalised counts g (N, 3) in [0, 1] (its ground truth is then enumerated).
    seed
        Seed; the same seed gives identical arrays, and the first k images do not depend
        on ``n_samples``. None draws fresh entropy.
    convention
        Ground-truth convention of ``.ground_truth``: 'object' (every pixel of an object
        carries the object's Shapley value) or 'pixel' (the value is spread over the
        object's pixels, so the map sums to F(I) - F(empty)).

    Returns
    -------
    data : AIXIData
        images (N, H, W, 1), targets (N,), counts (N, 3), object_masks,
        ground_truth (N, H, W), ``as_dataset``, ``save`` / ``load``.
"""


def make_aixi_shape(
    n_samples: int,
    image_size: int = 128,
    function: Any = "ssin",
    seed: Optional[int] = None,
    *,
    convention: str = "object",
) -> AIXIData:
    """AIXI-Shape: circles, squares and crosses (0 to 2 of each), one intensity.

    Objects have random sizes and positions and never overlap (two background pixels at
    least between them). The label is ``F(g)`` with ``g_i = count_i / 2`` and patterns
    ordered (circle, square, cross); the ground truth is each object's exact Shapley
    value.
    {params}
    Examples
    --------
    >>> data = make_aixi_shape(8, image_size=32, function="suum", seed=0)
    >>> data.images.shape, data.ground_truth.shape
    ((8, 32, 32, 1), (8, 32, 32))
    >>> bool(np.allclose(data.get_ground_truth("pixel").sum(axis=(1, 2)), data.targets))
    True
    """
    return _make("shape", n_samples, image_size, function, seed, convention)


def make_aixi_color(
    n_samples: int,
    image_size: int = 128,
    function: Any = "ssin",
    seed: Optional[int] = None,
    *,
    convention: str = "object",
) -> AIXIData:
    """AIXI-Color: circles only, in three intensities (1, 2/3, 1/3) that are the patterns.

    0 to 2 circles of each intensity, random sizes and positions, no intersection. The
    label is ``F(g)`` with ``g_i`` the number of circles of intensity i divided by 2; the
    ground truth is each circle's exact Shapley value.
    {params}
    Examples
    --------
    >>> data = make_aixi_color(4, image_size=32, function="class", seed=3)
    >>> [round(float(v), 3) for v in np.unique(data.images)]
    [0.0, 0.333, 0.667, 1.0]
    """
    return _make("color", n_samples, image_size, function, seed, convention)


make_aixi_shape.__doc__ = make_aixi_shape.__doc__.replace("{params}", _DOC_PARAMETERS)
make_aixi_color.__doc__ = make_aixi_color.__doc__.replace("{params}", _DOC_PARAMETERS)


# --------------------------------------------------------------------------- counting
def count_patterns(images: Any, dataset: str = "shape") -> np.ndarray:
    """Count the objects of each pattern in images, from their pixels.

    Objects are the 8-connected components of the non-background pixels. On AIXI-Shape a
    component is classified by its fill ratio (area / bounding box): crosses below 0.52,
    circles below 0.86, squares above. On AIXI-Color by its mean intensity (nearest of
    1, 2/3, 1/3). This is what the function-as-model uses (see
    :class:`xplique_ext.models.AIXIFunctionModel`).

    Parameters
    ----------
    images
        (N, H, W) or (N, H, W, 1) images with background 0.
    dataset
        'shape' or 'color'.

    Returns
    -------
    counts
        (N, 3) int64.

    Examples
    --------
    >>> data = make_aixi_shape(16, image_size=32, seed=1)
    >>> bool((count_patterns(data.images) == data.counts).all())
    True
    """
    check_choice(dataset, "dataset", ("shape", "color"))
    images = np.asarray(images, dtype=np.float32)
    if images.ndim == 4 and images.shape[-1] == 1:
        images = images[..., 0]
    if images.ndim != 3:
        raise ValueError(f"`images` must have shape (N, H, W) or (N, H, W, 1), got {images.shape}")
    counts = np.zeros((len(images), N_PATTERNS), np.int64)
    levels = np.asarray(COLOR_INTENSITIES)
    for i, img in enumerate(images):
        binary = (img > 1e-6).astype(np.uint8)
        n, comp, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
        if n <= 1:
            continue
        stats = stats[1:]
        if dataset == "shape":
            fill = stats[:, cv2.CC_STAT_AREA] / (
                stats[:, cv2.CC_STAT_WIDTH] * stats[:, cv2.CC_STAT_HEIGHT]
            )
            pattern = np.where(fill < _FILL_CROSS_MAX, 2, np.where(fill < _FILL_CIRCLE_MAX, 0, 1))
        else:
            sums = np.bincount(comp.ravel(), weights=img.ravel(), minlength=n)[1:]
            mean = sums / stats[:, cv2.CC_STAT_AREA]
            pattern = np.argmin(np.abs(mean[:, None] - levels[None, :]), axis=1)
        counts[i] = np.bincount(pattern, minlength=N_PATTERNS)
    return counts
