"""Helpers shared by every metric family: validation, randomness, correlations,
aggregation and warnings. No TensorFlow here: the TensorFlow runtime (strategies,
compiled functions, model-output and dataset checks) is :mod:`xplique_ext.runtime`.

Names load on first use (PEP 562), so that importing one helper module does not import
the others (``commons`` is the floor every other sub-package stands on).
"""

from typing import TYPE_CHECKING

from .lazy import lazy_exports

if TYPE_CHECKING:  # what IDEs and type checkers see; at run time the table below
    from .correlations import batched_pearson, batched_spearman
    from .metric import BaseMetric, nan_aware_mean
    from .progress import progress_bar
    from .random import cell_permutations, make_rng, seed_to_int
    from .warnings import DegenerateSettingWarning, UndefinedScoreWarning, XpliqueExtWarning

_EXPORTS = {
    ".metric": ["BaseMetric", "nan_aware_mean"],
    ".progress": ["progress_bar"],
    ".correlations": ["batched_pearson", "batched_spearman"],
    ".random": ["cell_permutations", "make_rng", "seed_to_int"],
    ".warnings": ["DegenerateSettingWarning", "UndefinedScoreWarning", "XpliqueExtWarning"],
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = [
    "BaseMetric",
    "nan_aware_mean",
    "progress_bar",
    "batched_pearson",
    "batched_spearman",
    "cell_permutations",
    "make_rng",
    "seed_to_int",
    "DegenerateSettingWarning",
    "UndefinedScoreWarning",
    "XpliqueExtWarning",
]
