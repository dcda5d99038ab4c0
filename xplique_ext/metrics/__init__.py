"""Metrics of xplique_ext. Model-based metrics share Xplique's interface:
``Metric(model, inputs, targets=None, batch_size=64, ...)``, ``evaluate``,
``detailed_evaluate`` and ``__call__``."""

from .base import BaseAttributionMetric
from .fidelity import MuFidelity

__all__ = [
    "BaseAttributionMetric",
    "MuFidelity",
]
