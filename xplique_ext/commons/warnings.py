"""Warning classes of xplique_ext, so that users can filter them precisely."""

__all__ = ["XpliqueExtWarning", "UndefinedScoreWarning", "DegenerateSettingWarning"]


class XpliqueExtWarning(UserWarning):
    """Base class of every warning emitted by xplique_ext."""


class UndefinedScoreWarning(XpliqueExtWarning):
    """A per-sample score is undefined (for instance a correlation with a constant
    vector) and was set to NaN; aggregates skip it and say how many were skipped. The
    message gives the reason."""


class DegenerateSettingWarning(XpliqueExtWarning):
    """The metric's settings make the score degenerate or mostly noise (for instance
    MuFidelity with ``nb_samples=2``, a single grid cell, or a ``subset_percent`` so small
    that most random subsets are empty); the message states the expected share of
    affected subsets."""
