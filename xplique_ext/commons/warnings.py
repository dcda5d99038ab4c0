"""Warning classes of xplique_ext, so that users can filter them precisely."""

__all__ = ["XpliqueExtWarning", "UndefinedScoreWarning"]


class XpliqueExtWarning(UserWarning):
    """Base class of every warning emitted by xplique_ext."""


class UndefinedScoreWarning(XpliqueExtWarning):
    """A per-sample score is undefined (for instance a correlation with a constant
    vector) and was set to NaN; aggregates skip it and say how many were skipped."""
