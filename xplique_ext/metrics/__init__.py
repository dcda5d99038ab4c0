"""Metrics of xplique_ext. Model-based metrics share Xplique's interface:
``Metric(model, inputs, targets=None, batch_size=64, ...)``, ``evaluate``,
``detailed_evaluate`` and ``__call__``."""

from .base import BaseAttributionMetric
from .fidelity import MuFidelity
from .fire import FiRe, QsScore, fire_compensation_alpha, fire_equilibrium_alpha
from .ground_truth import (
    GroundTruthLocalisation,
    GroundTruthSaliency,
    LowModelAccuracyWarning,
    emd,
    ground_truth_leaderboard,
    kl_divergence,
    pointing_game,
    relevance_mass_accuracy,
    relevance_rank_accuracy,
)
from .percy import PERCY, NoRuleKeywordWarning

__all__ = [
    "BaseAttributionMetric",
    "MuFidelity",
    "FiRe",
    "QsScore",
    "fire_equilibrium_alpha",
    "fire_compensation_alpha",
    "PERCY",
    "NoRuleKeywordWarning",
    "GroundTruthSaliency",
    "GroundTruthLocalisation",
    "LowModelAccuracyWarning",
    "emd",
    "kl_divergence",
    "ground_truth_leaderboard",
    "relevance_mass_accuracy",
    "relevance_rank_accuracy",
    "pointing_game",
]
