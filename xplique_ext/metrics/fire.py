"""FiRe and Qs, the scores of extracted symbolic knowledge (model-free metrics).

The implementation lives in :mod:`xplique_ext.rules.fire` so that the rule metrics need
no TensorFlow; this module is its public home among the metrics.
"""

from ..rules.fire import (
    FIRE_EXPONENT,
    FiRe,
    QsScore,
    fire_compensation_alpha,
    fire_equilibrium_alpha,
    fire_isoline,
    fire_score,
    qs_score,
)

__all__ = [
    "FIRE_EXPONENT",
    "FiRe",
    "QsScore",
    "fire_compensation_alpha",
    "fire_equilibrium_alpha",
    "fire_isoline",
    "fire_score",
    "qs_score",
]
