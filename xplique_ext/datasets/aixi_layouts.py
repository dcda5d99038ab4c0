"""AIXI layouts: where each image's objects go, and how many of each pattern it holds.

Two layouts draw the images (see :mod:`.aixi`): the authors' generators of release 1.0.0
(``layout='authors'``, default) and this package's earlier one (``layout='free'``). Each
draws the images of a chunk of ``CHUNK`` from one random generator, into object labels
(N, S, S) uint8 and object patterns (N, 6) int8. :func:`count_patterns` reads the counts
back from the pixels, exactly, for either layout.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, NamedTuple, Sequence, Tuple

import cv2
import numpy as np

from ..commons.params import ArrayLike, Options, validate_params
from .aixi_drawing import CIRCLE, COLOR_INTENSITIES, CROSS, N_PATTERNS, SQUARE, disc, draw_object

__all__ = [
    "LAYOUTS",
    "MIN_IMAGE_SIZE",
    "MAX_PER_PATTERN",
    "max_count",
    "min_image_size",
    "count_patterns",
]

#: Layouts: the authors' generators of release 1.0.0 (default) and this package's earlier one.
LAYOUTS: Tuple[str, str] = ("authors", "free")
#: At most this many objects of each pattern per image, except in the authors' AIXI-Color.
MAX_PER_PATTERN = 2
#: Smallest image side of the free layout and of the authors' AIXI-Color.
MIN_IMAGE_SIZE = 32
#: Object slots per image in every layout (2 per pattern, or the six circles of AIXI-Color).
MAX_OBJECTS = 6
#: Smallest object side of the free layout, in pixels.
MIN_OBJECT = 7
#: Images drawn from one random generator: the first images do not depend on ``n_samples``.
CHUNK = 256

N_COLOR_CIRCLES = 6  # the authors' AIXI-Color: exactly six circles
GRID_SIDE = 5  # the authors' AIXI-Shape: a 5 x 5 grid of cells
_GAP = 2  # free layout: background pixels kept between two objects
_MARGIN = 1  # free layout: background pixels kept along the image border
_CANDIDATES = 16  # free layout: random positions tried before the exact search
_FILL_CROSS_MAX = 0.52  # free layout: fill ratio crosses < 0.52 < circles
_FILL_CIRCLE_MAX = 0.86  # free layout: circles < 0.86 < squares (1.0)
_ATTEMPTS = 64  # authors' AIXI-Color: candidate circles drawn at once
_MAX_ATTEMPTS = 20000  # ... before the image is started again (never reached in practice)

#: The datasets, as a parameter constraint.
DATASET = [Options(["shape", "color"])]
#: The layouts, as a parameter constraint.
LAYOUT = [Options(LAYOUTS)]


@validate_params({"dataset": DATASET, "layout": LAYOUT})
def max_count(dataset: str, layout: str = "authors") -> int:
    """Largest possible count of one pattern in an image: the divisor of ``g``.

    6 for the authors' AIXI-Color (six circles, each of a random intensity), 2 otherwise.

    Examples
    --------
    >>> max_count("color"), max_count("shape"), max_count("color", "free")
    (6, 2, 2)
    """
    return LAYOUT_TABLE[dataset, layout].max_count


@validate_params({"dataset": DATASET, "layout": LAYOUT})
def min_image_size(dataset: str, layout: str = "authors") -> int:
    """Smallest image side a layout accepts: 64 for the authors' AIXI-Shape (its 5 x 5 grid
    needs cells of 10 pixels for the shapes to stay distinct), 32 otherwise."""
    return LAYOUT_TABLE[dataset, layout].min_image_size


def _free_positions(occ: np.ndarray, s: int) -> np.ndarray:
    """Flat indices (over the valid top-left range) of the positions where a box of side
    ``s`` plus the gap touches no occupied pixel."""
    w = s + 2 * _GAP
    valid = slice(_MARGIN, occ.shape[0] - _MARGIN - s + 1)  # top-left corners
    window = cv2.boxFilter(
        np.pad(occ, _GAP).astype(np.float32),
        -1,
        (w, w),
        anchor=(0, 0),
        normalize=False,
        borderType=cv2.BORDER_CONSTANT,
    )  # exact sums
    return np.flatnonzero(window[valid, valid] == 0)


def _first_free_candidate(occ: np.ndarray, candidates: np.ndarray, span: int, s: int):
    """The first of the candidate top-left corners (pairs of fractions of ``span``) where a
    box of side ``s`` plus the gap touches no occupied pixel, as (y, x); None if none."""
    for u in candidates:
        y = _MARGIN + int(u[0] * span)
        x = _MARGIN + int(u[1] * span)
        if not occ[max(y - _GAP, 0) : y + s + _GAP, max(x - _GAP, 0) : x + s + _GAP].any():
            return y, x
    return None


def _draw_free(
    rng: np.random.Generator, labels: np.ndarray, patterns: np.ndarray, kinds: Sequence[int]
) -> None:
    """The free layout: draw the first ``len(labels)`` images of a chunk of CHUNK into
    ``labels`` (k, S, S) uint8 and ``patterns`` (k, 6) int8 (the random draws do not
    depend on k, so a prefix of the images does not depend on ``n_samples``); ``kinds``:
    the object drawn for each pattern."""
    c = CHUNK
    size = labels.shape[1]
    low = max(MIN_OBJECT, round(0.08 * size))
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
            occ[:] = 0
            labels[i] = 0
            for j, k in enumerate(objs):
                s = int(sizes[i, k])
                p = int(slots[k])
                span = size - 2 * _MARGIN - s + 1
                pos = None
                if attempt == 0:  # the random candidates first, then the exact search
                    pos = _first_free_candidate(occ, candidates[i, k], span, s)
                if pos is None:
                    free = _free_positions(occ, s)
                    if free.size == 0:
                        break  # start this image again, with exact searches only
                    f = int(free[rng.integers(free.size)])
                    pos = (_MARGIN + f // span, _MARGIN + f % span)
                occ[pos[0] : pos[0] + s, pos[1] : pos[1] + s] = 1
                draw_object(labels[i], kinds[p], *pos, s, max(1, round(s / 5)), j + 1)
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
    c = CHUNK
    size = labels.shape[1]
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
            quotient, remainder = divmod(int(cells[i, k]), GRID_SIDE)
            col = cell * quotient
            row = cell * remainder
            dy = pick(u[i, k, 0], a, (cell - a) // 2)
            dx = pick(u[i, k, 1], a, (cell - a) // 2)
            room = cell - max(dx, dy)
            v_long = u[i, k, 2]
            v_short = u[i, k, 3]
            side = pick(v_long, a, max(room, b))  # a square
            bar = 0
            if p == CIRCLE:
                side = 2 * min(pick(v_long, a, max(room // 2, b)), room // 2) + 1
            while p == CROSS:
                side = pick(v_long, 1, room)
                bar = 2 * (pick(v_short, a, max(b, side // 2)) // 2)
                if side != bar:
                    break
                v_long, v_short = rng.random(2)  # a cross that would be a square: draw again
            draw_object(labels[i], p, row + dy, col + dx, side, bar, k + 1)
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
    r_low = max(2, (10 * size + 64) // 128)
    r_high = size // 4
    for i in range(len(labels)):
        label = labels[i]
        placed = 0
        attempts = _MAX_ATTEMPTS
        while placed < N_COLOR_CIRCLES:
            if attempts >= _MAX_ATTEMPTS:  # the start, or a dead end (never met): start again
                label[:] = 0
                patterns[i] = -1
                placed = 0
                attempts = 0
            values = rng.integers(0, N_PATTERNS, _ATTEMPTS).tolist()
            radii = rng.integers(r_low, r_high + 1, _ATTEMPTS).tolist()
            centres = rng.integers(0, size + 1, (_ATTEMPTS, 2)).tolist()
            for value, r, (cx, cy) in zip(values, radii, centres):
                # kept when the square around the circle, one pixel wider, is empty
                y0 = max(cy - r - 1, 0)
                x0 = max(cx - r - 1, 0)
                if not label[y0 : cy + r + 2, x0 : cx + r + 2].any():
                    cv2.circle(label, (cx, cy), r, placed + 1, -1)
                    patterns[i, placed] = value
                    placed += 1
                    if placed == N_COLOR_CIRCLES:
                        break
            attempts += _ATTEMPTS


class Layout(NamedTuple):
    """How one dataset is drawn in one layout."""

    #: The stream of its random draws (distinct for each (dataset, layout)).
    stream: int
    #: Draws a chunk of images: ``draw(rng, labels, patterns)``, into labels of zeros and
    #: patterns of -1.
    draw: Callable[[np.random.Generator, np.ndarray, np.ndarray], None]
    #: The largest count of one pattern in an image (the divisor of g).
    max_count: int
    #: The smallest image side it accepts.
    min_image_size: int


#: (dataset, layout) -> its :class:`Layout`.
LAYOUT_TABLE = {
    ("shape", "free"): Layout(
        stream=0,
        draw=partial(_draw_free, kinds=(CIRCLE, SQUARE, CROSS)),
        max_count=MAX_PER_PATTERN,
        min_image_size=MIN_IMAGE_SIZE,
    ),
    ("color", "free"): Layout(
        stream=1,
        draw=partial(_draw_free, kinds=(CIRCLE, CIRCLE, CIRCLE)),
        max_count=MAX_PER_PATTERN,
        min_image_size=MIN_IMAGE_SIZE,
    ),
    ("shape", "authors"): Layout(
        stream=2, draw=_draw_authors_shape, max_count=MAX_PER_PATTERN, min_image_size=64
    ),
    ("color", "authors"): Layout(
        stream=3,
        draw=_draw_authors_color,
        max_count=N_COLOR_CIRCLES,
        min_image_size=MIN_IMAGE_SIZE,
    ),
}


def draw_objects(
    dataset: str, layout: str, n_samples: int, image_size: int, entropy: int
) -> Tuple[np.ndarray, np.ndarray]:
    """The object labels (N, S, S) uint8 (0: background, k: the k-th object) and the object
    patterns (N, 6) int8 (-1: no object) of ``n_samples`` images drawn in ``layout``, each
    chunk of :data:`CHUNK` images from its own generator seeded by ``entropy``."""
    stream = LAYOUT_TABLE[dataset, layout].stream
    draw = LAYOUT_TABLE[dataset, layout].draw
    labels = np.zeros((n_samples, image_size, image_size), np.uint8)  # no object yet
    patterns = np.full((n_samples, MAX_OBJECTS), -1, np.int8)
    for start in range(0, n_samples, CHUNK):
        rng = np.random.default_rng([entropy, stream, start // CHUNK])
        draw(rng, labels[start : start + CHUNK], patterns[start : start + CHUNK])
    return labels, patterns


# --------------------------------------------------------------------------- counting
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
        "dataset": DATASET,
        "layout": LAYOUT,
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
    >>> from xplique_ext.datasets import make_aixi_shape
    >>> data = make_aixi_shape(16, image_size=64, seed=1)
    >>> bool((count_patterns(data.images) == data.counts).all())
    True
    """
    if images.ndim == 4 and images.shape[-1] == 1:
        images = images[..., 0]
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
            pattern = np.where(fill < _FILL_CIRCLE_MAX, CIRCLE, SQUARE)
            pattern = np.where(fill < _FILL_CROSS_MAX, CROSS, pattern)
        else:
            pattern = np.where(area == width * height, SQUARE, CROSS)  # a full box is a square
            for j in np.flatnonzero((pattern == CROSS) & (height == width) & (height % 2 == 1)):
                crop = comp[top[j] : top[j] + height[j], left[j] : left[j] + width[j]] == j + 1
                if np.array_equal(crop, disc(int(height[j]) // 2)):
                    pattern[j] = CIRCLE
        counts[i] = np.bincount(pattern, minlength=N_PATTERNS)
    return counts
