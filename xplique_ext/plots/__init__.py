"""Plot helpers (matplotlib is imported only when a plot is drawn)."""

from .attributions import plot_scored_explanations, plot_scores

__all__ = ["plot_scored_explanations", "plot_scores"]
