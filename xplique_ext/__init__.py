"""xplique_ext: metrics that measure how good explanations are, for TensorFlow/Keras
models, in the style of Xplique.

Sub-packages
------------
metrics
    MuFidelity, ground-truth saliency (EMD/KL), PERCY, FiRe/Qs and the shared base.
commons
    Validation, streaming, randomness and correlation helpers.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
