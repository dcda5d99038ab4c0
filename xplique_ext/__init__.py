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
explainers, models, plots
    Object-level LIME, the papers' Keras models, plot helpers.
commons
    Validation, streaming, randomness, correlations and warning classes.

Sub-packages are imported on demand (``from xplique_ext.metrics import MuFidelity``), so
that ``xplique_ext.rules`` works without loading TensorFlow.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
