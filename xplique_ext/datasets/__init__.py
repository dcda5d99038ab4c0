"""Synthetic datasets with exact ground-truth explanations.

AIXI-Shape and AIXI-Color (Miro-Nicolau et al.): images of objects whose label is a known
function of the pattern counts, with each object's exact Shapley value as ground truth.
"""

from .aixi import (
    CLASS_WEIGHTS,
    COLOR_INTENSITIES,
    COLOR_PATTERNS,
    FUNCTIONS,
    SHAPE_PATTERNS,
    WEIGHTS,
    AIXIData,
    ObjectMasks,
    class_function,
    count_patterns,
    exact_object_shapley,
    load_aixi,
    make_aixi_color,
    make_aixi_shape,
    ssin,
    suum,
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
    "WEIGHTS",
    "CLASS_WEIGHTS",
    "SHAPE_PATTERNS",
    "COLOR_PATTERNS",
    "COLOR_INTENSITIES",
    "count_patterns",
    "exact_object_shapley",
]
