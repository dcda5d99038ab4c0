"""Helpers shared by every metric family: validation, data streaming, randomness,
correlations and warnings."""

from .correlations import batched_pearson, batched_spearman
from .random import cell_permutations, content_keys, make_rng, seed_to_int
from .validation import check_choice, check_finite, check_float, check_int, to_numpy
from .warnings import DegenerateSettingWarning, UndefinedScoreWarning, XpliqueExtWarning

__all__ = [
    "batched_pearson",
    "batched_spearman",
    "cell_permutations",
    "content_keys",
    "make_rng",
    "seed_to_int",
    "check_choice",
    "check_finite",
    "check_float",
    "check_int",
    "to_numpy",
    "DegenerateSettingWarning",
    "UndefinedScoreWarning",
    "XpliqueExtWarning",
]
