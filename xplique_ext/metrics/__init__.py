"""Metrics of xplique_ext: every metric class of the package imports from here, wherever
its code lives. Model-based metrics share Xplique's interface:
``Metric(model, inputs, targets=None, batch_size=64, ...)``, ``evaluate``,
``detailed_evaluate`` and ``__call__``.

Names load on first use (PEP 562): ``from xplique_ext.metrics import FiRe`` loads neither
TensorFlow nor numba; ``MuFidelity`` and the other model-based metrics load TensorFlow.
This is the one public home of FiRe, Qs and the ``fire_*`` functions; they are implemented
in :mod:`xplique_ext.rules.fire` (floor 1, no TensorFlow), where the rule metrics use them.
``RuleMetrics`` lives in :mod:`xplique_ext.rules.evaluation` and the Local Lipschitz
estimates in :mod:`xplique_ext.text.lipschitz`, beside the code they score.
"""

from typing import TYPE_CHECKING

from ..commons.lazy import lazy_exports

if TYPE_CHECKING:  # what IDEs and type checkers see; at run time the table below
    from ..rules.evaluation import RuleMetrics
    from ..rules.fire import (
        FiRe,
        QsScore,
        fire_compensation_alpha,
        fire_equilibrium_alpha,
        fire_isoline,
        fire_score,
        qs_score,
    )
    from ..text.lipschitz import LocalLipschitzEstimate, TextLocalLipschitzEstimate
    from .average_x import (
        AverageDropMetric,
        AverageGainMetric,
        AverageIncreaseMetric,
        BaseAverageXMetric,
    )
    from .base import BaseAttributionMetric, ExplanationMetric
    from .complexity import Complexity, Sparseness
    from .deletion import Deletion, Insertion
    from .explainer_base import BaseComplexityMetric, ExplainerMetric
    from .fidelity import MuFidelity
    from .ground_truth import (
        GroundTruthLocalisation,
        GroundTruthSaliency,
        LowModelAccuracyWarning,
    )
    from .ground_truth_measures import (
        GroundTruthMeasure,
        emd,
        kl_divergence,
        pointing_game,
        relevance_mass_accuracy,
        relevance_rank_accuracy,
    )
    from .leaderboard import ground_truth_leaderboard
    from .mege import MeGe
    from .percy import PERCY, NoRuleKeywordWarning
    from .randomization import (
        ModelRandomizationMetric,
        ModelRandomizationStrategy,
        ProgressiveLayerRandomization,
        RandomLogitMetric,
    )
    from .stability import AverageStability

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".base": ["BaseAttributionMetric", "ExplanationMetric"],
        ".fidelity": ["MuFidelity"],
        "..rules.fire": [
            "FiRe",
            "QsScore",
            "fire_compensation_alpha",
            "fire_equilibrium_alpha",
            "fire_isoline",
            "fire_score",
            "qs_score",
        ],
        ".ground_truth": [
            "GroundTruthLocalisation",
            "GroundTruthSaliency",
            "LowModelAccuracyWarning",
        ],
        ".ground_truth_measures": [
            "GroundTruthMeasure",
            "emd",
            "kl_divergence",
            "pointing_game",
            "relevance_mass_accuracy",
            "relevance_rank_accuracy",
        ],
        ".leaderboard": ["ground_truth_leaderboard"],
        ".percy": ["PERCY", "NoRuleKeywordWarning"],
        "..rules.evaluation": ["RuleMetrics"],
        "..text.lipschitz": ["LocalLipschitzEstimate", "TextLocalLipschitzEstimate"],
        ".deletion": ["Deletion", "Insertion"],
        ".average_x": [
            "AverageDropMetric",
            "AverageGainMetric",
            "AverageIncreaseMetric",
            "BaseAverageXMetric",
        ],
        ".explainer_base": ["ExplainerMetric", "BaseComplexityMetric"],
        ".complexity": ["Complexity", "Sparseness"],
        ".stability": ["AverageStability"],
        ".randomization": [
            "ModelRandomizationMetric",
            "ModelRandomizationStrategy",
            "ProgressiveLayerRandomization",
            "RandomLogitMetric",
        ],
        ".mege": ["MeGe"],
    },
)
__all__ = [
    "BaseAttributionMetric",
    "MuFidelity",
    "FiRe",
    "QsScore",
    "fire_equilibrium_alpha",
    "fire_compensation_alpha",
    "fire_isoline",
    "fire_score",
    "qs_score",
    "PERCY",
    "NoRuleKeywordWarning",
    "GroundTruthSaliency",
    "GroundTruthLocalisation",
    "GroundTruthMeasure",
    "LowModelAccuracyWarning",
    "emd",
    "kl_divergence",
    "ground_truth_leaderboard",
    "relevance_mass_accuracy",
    "relevance_rank_accuracy",
    "pointing_game",
    "RuleMetrics",
    "LocalLipschitzEstimate",
    "TextLocalLipschitzEstimate",
    "ExplanationMetric",
    "Deletion",
    "Insertion",
    "AverageDropMetric",
    "AverageIncreaseMetric",
    "AverageGainMetric",
    "BaseAverageXMetric",
    "ExplainerMetric",
    "BaseComplexityMetric",
    "Complexity",
    "Sparseness",
    "AverageStability",
    "RandomLogitMetric",
    "ModelRandomizationMetric",
    "ModelRandomizationStrategy",
    "ProgressiveLayerRandomization",
    "MeGe",
]
