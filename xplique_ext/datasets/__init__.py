"""Synthetic datasets with exact ground-truth explanations.

AIXI-Shape and AIXI-Color (Miro-Nicolau et al.): images of objects whose label is a known
function of the pattern counts, drawn as the authors' release 1.0.0 draws them, with the
paper's ground truth (the weight w_i of each pattern painted on its objects) or, beyond the
paper, each object's exact Shapley value. :mod:`.aixi` holds the datasets and exports every
public name; :mod:`.aixi_drawing` draws the objects, :mod:`.aixi_layouts` places them and
counts them back, :mod:`.aixi_functions` holds the functions F and their Shapley values.
"""

from .aixi import (
    CLASS_WEIGHTS,
    COLOR_INTENSITIES,
    COLOR_PATTERNS,
    CONVENTIONS,
    FUNCTIONS,
    LAYOUTS,
    MAX_PER_PATTERN,
    MIN_IMAGE_SIZE,
    PAPER_WEIGHTS,
    SHAPE_PATTERNS,
    WEIGHTS,
    AIXIData,
    ObjectMasks,
    apply_function,
    class_function,
    count_patterns,
    exact_object_shapley,
    load_aixi,
    make_aixi_color,
    make_aixi_shape,
    max_count,
    min_image_size,
    resolve_function,
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
