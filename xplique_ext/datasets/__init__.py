"""Synthetic datasets with exact ground-truth explanations.

AIXI-Shape and AIXI-Color (Miro-Nicolau et al.): images of objects whose label is a known
function of the pattern counts, drawn as the authors' release 1.0.0 draws them, with the
paper's ground truth (the weight w_i of each pattern painted on its objects) or, beyond the
paper, each object's exact Shapley value. The package exports what :mod:`.aixi` exports.
"""

from .aixi import *  # noqa: F403 - exactly the names of aixi.__all__
from .aixi import __all__  # noqa: F401
