"""xplique_ext: metrics that measure how good explanations are, for TensorFlow/Keras
models, in the style of Xplique.

Sub-packages
------------
metrics
    MuFidelity, ground-truth saliency (EMD/KL, localisation), PERCY, FiRe/Qs and the shared
    ``BaseAttributionMetric``.
rules
    Rule sets (PBM, ``.names``/``.data``), per-rule contingency tables and measures,
    FiRe/Qs scoring, scikit-learn tree adapters (no TensorFlow needed).
datasets
    AIXI-Shape and AIXI-Color synthetic images with exact ground-truth explanations.
text
    PERCY's token attributions (LIME, SHAP, Integrated Gradients), sentence generator,
    backbones, robustness and agreement.
callbacks
    ``ExplanationMetrics``: explanation scores in Keras' training logs.
compare
    ``compare``: explainers scored on the same inputs, with intervals, ranks and paired
    tests (Holm-corrected).
explainers, models, plots
    Object-level LIME, the papers' Keras models, plot helpers.
commons
    Validation, randomness, correlations and warning classes (no TensorFlow).
runtime
    The TensorFlow floor: strategies, compiled and replicated model functions (shared
    between metrics), model-output and dataset checks.

Sub-packages are imported on demand (``from xplique_ext.metrics import MuFidelity``, or
``xplique_ext.metrics`` after ``import xplique_ext``, PEP 562), so that ``xplique_ext.rules``
and the model-free ``xplique_ext.metrics.FiRe`` work without loading TensorFlow.

Imports point one way (a test checks it): ``commons`` <- ``runtime``, ``datasets``,
``models``, ``rules``, ``plots`` <- ``explainers``, ``text``, ``compare`` <- ``metrics`` <-
``cli``, ``callbacks``.
"""

from typing import TYPE_CHECKING

from .commons.lazy import lazy_exports

if TYPE_CHECKING:  # what IDEs and type checkers see; at run time, imported on first use
    from . import callbacks as callbacks
    from . import cli as cli
    from . import commons as commons
    from . import compare as compare
    from . import datasets as datasets
    from . import explainers as explainers
    from . import metrics as metrics
    from . import models as models
    from . import plots as plots
    from . import rules as rules
    from . import runtime as runtime
    from . import text as text

__version__ = "0.1.0"

_SUBMODULES = (
    "callbacks",
    "cli",
    "commons",
    "compare",
    "datasets",
    "explainers",
    "metrics",
    "models",
    "plots",
    "rules",
    "runtime",
    "text",
)
__getattr__, __dir__ = lazy_exports(__name__, {}, submodules=_SUBMODULES)

__all__ = ["__version__"]
