"""Explainers: exhaustive object-level LIME / Kernel SHAP for images of a few objects."""

from .object_lime import ObjectLime, lime_kernel_weights, shapley_kernel_weights

__all__ = ["ObjectLime", "lime_kernel_weights", "shapley_kernel_weights"]
