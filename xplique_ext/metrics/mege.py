r"""MeGe and ReCo: the representativity and the consistency of an explainer across models
trained on different splits of the data (Fel, Vigouroux et al., 2022), as Xplique's
``metrics/representativity.py``.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Dict, NamedTuple, Optional

import numpy as np

from .. import runtime
from ..commons.correlations import batched_spearman
from ..commons.metric import BaseMetric
from ..commons.params import ArrayLike, Callable_, InstanceOf, Interval, validate_params
from ..commons.warnings import UndefinedScoreWarning, warn
from .base import BASE_PARAMETERS, TARGETS
from .explainer_base import ModelEngine, check_explainer_output, explain_function

__all__ = ["MeGe", "MeGeScore"]

_NO_PAIR = (
    "no pair of models (one of which never saw the input) predicts the same class for it, "
    "one of them correctly"
)


class MeGeScore(float):
    """MeGe's aggregate score, a float, with ReCo beside it: ``score.reco``. As Xplique's
    ``MeGe.evaluate`` returns the pair, it also unpacks: ``mege, reco = metric.evaluate(...)``.
    """

    reco: float

    def __new__(cls, mege: float, reco: float) -> MeGeScore:
        score = super().__new__(cls, mege)
        score.reco = float(reco)
        return score

    def __iter__(self):
        return iter((float(self), self.reco))

    def __repr__(self) -> str:
        return f"MeGeScore(mege={float(self)!r}, reco={self.reco!r})"


class PairDistances(NamedTuple):
    """The Spearman distances (Eq. 1) of each input's explanations by the model that never
    saw it and by each model, and the pairs that count."""

    #: (N, k): the distance to model j's explanation
    distances: np.ndarray
    #: (N, k): pairs where both models predict the same class, one of them correctly (S=)
    equal: np.ndarray
    #: (N, k): pairs where they predict different classes, one of them correctly (S!=)
    different: np.ndarray


def _spearman_distance(phi_a: np.ndarray, phi_b: np.ndarray) -> np.ndarray:
    """:math:`\\sqrt{1 - |\\rho|}` of each pair of explanations, as Xplique: channels of
    a map with more than two axes averaged, NaN set to 0, flattened; NaN for a constant
    explanation."""
    if phi_a.ndim > 3:
        phi_a = phi_a.mean(axis=-1)
        phi_b = phi_b.mean(axis=-1)
    rows_a = np.nan_to_num(phi_a.reshape(len(phi_a), -1).astype(np.float64), nan=0.0)
    rows_b = np.nan_to_num(phi_b.reshape(len(phi_b), -1).astype(np.float64), nan=0.0)
    return np.sqrt(1.0 - np.abs(batched_spearman(rows_a, rows_b)))


def _reco(s_equal: np.ndarray, s_different: np.ndarray) -> float:
    """ReCo (Eq. 5): the best TPR + TNR - 1 over thresholds gamma, read over one in
    ``len // 20 + 1`` of the sorted distances, as Xplique does."""
    total = np.concatenate([s_equal, s_different])
    reco = 0.0
    step = len(total) // 20 + 1
    for gamma in np.sort(total)[::step]:
        tp = np.sum(s_equal < gamma)
        tn = np.sum(s_different > gamma)
        fp = np.sum(s_different < gamma)
        fn = np.sum(s_equal > gamma)
        tpr = tp / (tp + fn + 1e-10)
        tnr = tn / (tn + fp + 1e-10)
        reco = max(reco, tpr + tnr - 1.0)
    return float(reco)


class MeGe(BaseMetric):
    r"""MeGe (representativity) and ReCo (consistency) of an explainer (Fel, Vigouroux et
    al., 2022).

    The inputs are cut into ``k_splits`` splits; model :math:`f_i` is trained on every
    split but split :math:`i`. For an input of split :math:`s` and each pair of models
    :math:`(f_s, f_j)` (one never saw the input), at least one of which predicts the
    input's class, the distance between their explanations is

    .. math::
        \delta = \sqrt{1 - |\rho_{\mathrm{Spearman}}(\phi_{f_s}(x), \phi_{f_j}(x))|}

    It goes to :math:`S^=` when both models predict the same class, to :math:`S^{\ne}`
    otherwise. The input's score is :math:`1 / (1 + \overline{\delta}_{S^=})`, and
    ReCo is :math:`\max_\gamma \mathrm{TPR}_\gamma + \mathrm{TNR}_\gamma - 1` over
    thresholds :math:`\gamma` separating :math:`S^=` from :math:`S^{\ne}`.

    **Higher is better** (MeGe in (0, 1]: 1 when every model explains alike).

    Parameters
    ----------
    learning_algorithm
        ``learning_algorithm(x_train, y_train, x_test, y_test)`` returning a trained
        model (a Keras model or a callable on a batch); called ``k_splits`` times, when
        the metric is built, as in Xplique.
    inputs
        Inputs (N, ...), an array or a tf.Tensor; ``k_splits`` must divide N.
    targets
        Labels, one-hot (N, K) or class ids (N,): required.
    batch_size
        Number of inputs explained, or predicted, at once; None: all at once.
    k_splits
        Number of splits, and of models (Xplique's default, 4).
    strategy
        ``tf.distribute.Strategy`` of the metric's own model calls (each model's
        predicted classes, through the engine of
        :class:`~xplique_ext.metrics.base.BaseAttributionMetric`); None: the one in scope
        when the metric is built. The learning algorithm and the explainers run wherever
        they run: the metric calls them as they are and cannot distribute them (build
        the metric inside ``strategy.scope()`` for the models to be created there).

    Notes
    -----
    ``evaluate(explainer_class, explainer_params=None)`` builds
    ``explainer_class(model, **explainer_params)`` for each model, as in Xplique, and
    returns a :class:`MeGeScore`: a float that also unpacks as Xplique's pair,
    ``mege, reco = metric.evaluate(Saliency)``. The float is the mean of the inputs'
    scores (:meth:`detailed_evaluate`), so that :meth:`summary` gives it an interval;
    Xplique pools every distance of :math:`S^=` before taking :math:`1 / (1 + \cdot)`.
    The two are equal when every input's distances are equal, and otherwise differ by the
    weighting of the inputs. ReCo pools every distance, as Xplique. An input with no
    distance in :math:`S^=` has an undefined score: NaN, with the reason.

    References
    ----------
    Fel, Vigouroux, Cadène & Serre, *How Good is your Explanation? Algorithmic Stability
    Measures to Assess the Quality of Explanations for Deep Neural Networks*, WACV 2022.
    https://arxiv.org/abs/2009.04521
    """

    higher_is_better = True
    undefined_reason = _NO_PAIR
    _data_params = ("learning_algorithm", "inputs", "targets", "strategy")

    @validate_params(
        {
            "learning_algorithm": [Callable_()],
            "inputs": [ArrayLike("numeric", finite=True)],
            "targets": [TARGETS, None],
            "batch_size": [Interval(numbers.Integral, 1, None), None],
            "k_splits": [Interval(numbers.Integral, 2, None)],
            "strategy": BASE_PARAMETERS["strategy"],  # checked by resolve_strategy
        }
    )
    def __init__(
        self,
        learning_algorithm: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        k_splits: int = 4,
        *,
        strategy: Any = None,
    ):
        if targets is None:
            raise ValueError(
                "`targets` is required: MeGe trains its models on (inputs, targets), got None"
            )
        if len(targets) != len(inputs):
            raise ValueError(
                f"`targets` must hold one target per input: got {len(targets)} targets for "
                f"{len(inputs)} inputs"
            )
        if len(inputs) % k_splits:
            raise ValueError(
                f"`k_splits` must divide the number of inputs, got {k_splits} splits for "
                f"{len(inputs)} inputs"
            )
        self.learning_algorithm = learning_algorithm
        self.inputs = inputs
        self.targets = targets
        self.batch_size = batch_size
        self.k_splits = k_splits
        self.strategy = runtime.resolve_strategy(strategy)
        self.split_len = len(inputs) // k_splits
        self.models = [self._train(i) for i in range(k_splits)]
        self.reco_: Optional[float] = None

    def _train(self, held_out: int) -> Any:
        """Model ``held_out``, trained on every split but that one."""
        split = np.arange(len(self.inputs)) // self.split_len
        train = split != held_out
        return self.learning_algorithm(
            self.inputs[train], self.targets[train], self.inputs[~train], self.targets[~train]
        )

    def _labels(self) -> np.ndarray:
        targets = np.asarray(self.targets)
        return targets.argmax(axis=1) if targets.ndim == 2 else targets.astype(np.int64)

    def _predictions_and_explanations(self, explainer_class, explainer_params):
        """Each model's predicted classes (k, N) and explanations (k, N, ...): the model
        calls go through the engine (batched, compiled, checked)."""
        predictions = []
        explanations = []
        for model in self.models:
            engine = ModelEngine(model, self.inputs, None, self.batch_size, strategy=self.strategy)
            outputs = engine.model_outputs(self.inputs)
            predictions.append(outputs.argmax(axis=1))
            y = runtime.as_model_targets(np.asarray(self.targets), outputs.shape[1])
            explainer = explainer_class(model, **explainer_params)
            explain = explain_function(explainer)
            size = self.batch_size or len(self.inputs)
            parts = [
                check_explainer_output(
                    explain(self.inputs[s : s + size], y[s : s + size]),
                    self.inputs[s : s + size],
                    explainer,
                )
                for s in range(0, len(self.inputs), size)
            ]
            explanations.append(np.concatenate(parts))
        return np.stack(predictions), np.stack(explanations)

    def _pair_distances(self, predictions: np.ndarray, explanations: np.ndarray):
        """The distances of Eq. 1 between the explanations of each input by the model that
        never saw it and by every other model, and which of them join S= and S!=."""
        labels = self._labels()
        rows = np.arange(len(self.inputs))
        held_out = rows // self.split_len  # the model trained without the input's split
        phi_held_out = explanations[held_out, rows]
        distances = np.stack(
            [_spearman_distance(phi_held_out, explanations[j]) for j in range(self.k_splits)],
            axis=1,
        )
        predicted = predictions.T  # (N, k)
        predicted_held_out = predicted[rows, held_out][:, None]
        other_model = np.arange(self.k_splits)[None, :] != held_out[:, None]
        # at least one of the two models predicts the input's class
        one_correct = (predicted_held_out == labels[:, None]) | (predicted == labels[:, None])
        scored = other_model & one_correct
        same = predicted == predicted_held_out
        return PairDistances(distances=distances, equal=scored & same, different=scored & ~same)

    @validate_params(
        {
            "explainer_class": [Callable_()],
            "explainer_params": [InstanceOf(dict, description="a dict"), None],
        }
    )
    def detailed_evaluate(
        self, explainer_class: Callable, explainer_params: Optional[Dict] = None
    ) -> np.ndarray:
        """Each input's representativity :math:`1 / (1 + \\overline{\\delta}_{S^=})`,
        (N,); sets :attr:`reco_` (ReCo over every distance)."""
        explainer_params = explainer_params or {}
        predictions, explanations = self._predictions_and_explanations(
            explainer_class, explainer_params
        )
        pairs = self._pair_distances(predictions, explanations)
        # NaN distances (constant explanations) are left out, as Xplique does
        defined = ~np.isnan(pairs.distances)
        in_equal = pairs.equal & defined
        count = in_equal.sum(axis=1)
        total = np.where(in_equal, pairs.distances, 0.0).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(count > 0, 1.0 / (1.0 + total / count), np.nan)
        s_equal = pairs.distances[in_equal]
        s_different = pairs.distances[pairs.different & defined]
        self.reco_ = _reco(s_equal, s_different)
        undefined = int(np.isnan(scores).sum())
        if undefined:
            warn(
                f"MeGe: {undefined} of {len(scores)} inputs have an undefined score, set to "
                f"NaN: {_NO_PAIR} (or their explanations are constant).",
                UndefinedScoreWarning,
            )
        return scores

    def evaluate(
        self, explainer_class: Callable, explainer_params: Optional[Dict] = None
    ) -> MeGeScore:
        """MeGe, the mean of the defined scores of :meth:`detailed_evaluate`, with ReCo:
        a :class:`MeGeScore` (a float that unpacks as ``mege, reco``)."""
        mege = super().evaluate(explainer_class, explainer_params)
        return MeGeScore(mege, self.reco_)
