"""Drawing AIXI objects: the three patterns of each dataset, their shapes and colours.

AIXI-Shape tells its patterns apart by shape (circle, square, cross, all of intensity 1);
AIXI-Color by intensity (circles of 1, 2/3 and 1/3). :func:`draw_object` draws one shape
into an object-label map with OpenCV; the layouts of :mod:`.aixi_layouts` draw with it.
"""

from __future__ import annotations

from functools import cache
from typing import Tuple

import cv2
import numpy as np

__all__ = ["SHAPE_PATTERNS", "COLOR_PATTERNS", "COLOR_INTENSITIES"]

#: Patterns per dataset: the length of the counts ``g`` and of the weights.
N_PATTERNS = 3
#: Pattern names of AIXI-Shape, in the order of the weights.
SHAPE_PATTERNS: Tuple[str, str, str] = ("circle", "square", "cross")
#: Pattern names of AIXI-Color, in the order of the weights.
COLOR_PATTERNS: Tuple[str, str, str] = ("bright", "medium", "dark")
#: Intensities of the AIXI-Color patterns (the background is 0, AIXI-Shape objects are 1).
#: The authors draw the values 1, 2, 3 (of 255); we scale them to [0, 1].
COLOR_INTENSITIES: Tuple[float, float, float] = (1.0, 2.0 / 3.0, 1.0 / 3.0)
#: The shapes :func:`draw_object` draws (AIXI-Shape's patterns, in order).
CIRCLE, SQUARE, CROSS = 0, 1, 2


def draw_object(
    label: np.ndarray, kind: int, y: int, x: int, side: int, bar: int, value: int
) -> None:
    """Draw one object (``kind``: CIRCLE, SQUARE or CROSS) with the label ``value`` in the
    box of ``side`` pixels at (y, x): the disc of radius ``(side - 1) // 2``, the filled
    box, or two bars ``bar`` pixels thick across its middle."""
    if kind == CIRCLE:
        r = (side - 1) // 2
        cv2.circle(label, (x + r, y + r), r, value, -1)
        return
    # a square is drawn as a cross whose bars fill the box
    offset = 0
    thickness = side
    if kind == CROSS:
        offset = (side - bar) // 2
        thickness = bar
    cv2.rectangle(label, (x, y + offset), (x + side - 1, y + offset + thickness - 1), value, -1)
    cv2.rectangle(label, (x + offset, y), (x + offset + thickness - 1, y + side - 1), value, -1)


@cache
def disc(radius: int) -> np.ndarray:
    """The filled ``cv2.circle`` of a radius, as drawn by both layouts."""
    return cv2.circle(np.zeros((2 * radius + 1,) * 2, np.uint8), (radius,) * 2, radius, 1, -1) > 0
