"""Plot helpers (matplotlib is imported only when a plot is drawn)."""

from .attributions import plot_scored_explanations, plot_scores
from .causal import plot_causal_curves
from .ground_truth import plot_aixi_samples, plot_ground_truth_leaderboard, plot_sample_size_curve

__all__ = [
    "plot_scored_explanations",
    "plot_scores",
    "plot_aixi_samples",
    "plot_ground_truth_leaderboard",
    "plot_sample_size_curve",
    "plot_causal_curves",
]
