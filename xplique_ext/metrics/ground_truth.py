"""Ground-truth metrics: a model's explanations against exact ground-truth maps or masks.

:class:`GroundTruthSaliency` scores explanations by their distance to ground-truth saliency
maps (the EMD or the KL divergence of Miro-Nicolau et al.), :class:`GroundTruthLocalisation`
by how well they localise ground-truth masks (relevance mass or rank accuracy, pointing
game). Both check first that the model reproduces the targets: the ground truth describes
the function F, and holds only for a model that learned F. The measures themselves live in
:mod:`~xplique_ext.metrics.ground_truth_measures`.

References
----------
M. Miro-Nicolau, A. Jaume-i-Capo, G. Moya-Alcover. A novel approach to generate datasets
with XAI ground truth to evaluate image models (Eq. 5-6).
L. Arras, A. Osman, W. Samek. CLEVR-XAI: A benchmark dataset for the ground truth
evaluation of neural network explanations. Information Fusion 81, 2022.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from ..commons.params import InstanceOf, Interval, Options, check_param, validate_params
from ..commons.warnings import XpliqueExtWarning, warn
from .base import BASE_PARAMETERS, BaseAttributionMetric
from .ground_truth_measures import (
    DISTANCES,
    LOCALISATION,
    REFERENCE_MAPS,
    GroundTruthMeasure,
    as_measure,
    read_maps,
    read_masks,
)

__all__ = [
    "GroundTruthSaliency",
    "GroundTruthLocalisation",
    "LowModelAccuracyWarning",
]


class LowModelAccuracyWarning(XpliqueExtWarning):
    """The model does not reproduce the targets well (accuracy, or R^2 for regression,
    below the threshold): the ground truth of F only holds for a model that learned F."""


# --------------------------------------------------------------------------- metric classes
def _agreement(y: np.ndarray, pred: np.ndarray, task: str) -> float:
    """scikit-learn's accuracy (classification: a single output thresholded at 0.5, else
    the argmax) or R^2 of all outputs pooled (``multioutput='variance_weighted'``, i.e.
    1 - sum of squared residuals / total sum of squares; constant targets give 1.0 for a
    perfect fit, else 0.0) of predictions ``pred`` (N, K) against targets ``y`` (N, K).
    'auto' reads targets in {0, 1} or one-hot as classes."""
    from sklearn.metrics import accuracy_score, r2_score

    if task == "auto":
        task = "classification" if y.shape[1] > 1 or np.isin(y, (0.0, 1.0)).all() else "regression"
    if task == "regression":
        return float(r2_score(y, pred, multioutput="variance_weighted"))
    if y.shape[1] == 1:
        return float(accuracy_score(y[:, 0] >= 0.5, pred[:, 0] >= 0.5))
    return float(accuracy_score(np.argmax(y, axis=1), np.argmax(pred, axis=1)))


_METRIC_PARAMETERS = {
    **{k: v for k, v in BASE_PARAMETERS.items() if k not in ("operator", "seed")},
    "min_accuracy": [Interval(numbers.Real, None, 1.0)],
    "task": [Options(["auto", "classification", "regression"])],
}


def _measure_param(names: Sequence[str]) -> list:
    return [
        Options(list(names)),
        InstanceOf(GroundTruthMeasure, dict, description="a GroundTruthMeasure or its config dict"),
    ]


class _GroundTruthBase(BaseAttributionMetric):
    """Shared constructor logic: stores the measure and the reference maps and checks that
    the model reproduces the targets."""

    _reference_name = "ground_truth"
    _config_attributes = {"measure": "measure_config"}

    def _setup(self, reference: Any, measure: Any, min_accuracy: float, task: str) -> None:
        names = DISTANCES
        if self.higher_is_better:
            names = LOCALISATION
        self.measure = as_measure(measure, names)
        spec = getattr(self.dataset, "element_spec", None)
        # a copy: the caller's array may change after this without changing the scores
        maps, _ = read_maps(reference, self._reference_name)
        self.reference = maps.copy()
        self.min_accuracy = min_accuracy
        self.task = task
        self.model_accuracy = None  # measured below when there are targets
        outputs = []
        targets = []
        if self.targets is not None or (isinstance(spec, (tuple, list)) and len(spec) == 2):
            # one pass: the model's outputs (iter_batches also counts a dataset's inputs)
            for _, x, y in self.iter_batches():
                outputs.append(self.model_outputs(x))
                targets.append(y)
        if self.n_inputs is None:  # a dataset without targets: count its inputs
            self.n_inputs = sum(len(x) for _, x, _ in self.iter_batches())
        if len(self.reference) != self.n_inputs:
            raise ValueError(
                f"`{self._reference_name}` must hold one map per input: got "
                f"{len(self.reference)} maps for {self.n_inputs} inputs"
            )
        if outputs:
            pred = np.concatenate(outputs).astype(np.float64)
            y = np.concatenate(targets).astype(np.float64)
            pred = pred.reshape(len(pred), -1)
            y = y.reshape(len(pred), -1)
            self.model_accuracy = _agreement(y, pred, task)
        if self.model_accuracy is not None and self.model_accuracy < min_accuracy:
            warn(
                f"{type(self).__name__}: the model reproduces the targets with an agreement of "
                f"{self.model_accuracy:.3f} (accuracy, or R^2 for regression) < min_accuracy="
                f"{min_accuracy:g}; the ground truth describes F and holds only for a model that "
                "learned F (the paper requires > 0.93).",
                LowModelAccuracyWarning,
            )

    @classmethod
    def from_aixi(cls, model: Callable, data: Any, *, convention: str = "paper", **kwargs):
        """Build the metric on an :class:`~xplique_ext.datasets.AIXIData`: its images,
        targets and reference in ``convention``: 'paper' (default: the weight w_i of each
        pattern on its objects, the paper's ground truth, whatever ``data.convention``
        is), or the exact Shapley values, 'object' or 'pixel' (beyond the paper). The
        reference of :class:`GroundTruthSaliency` is that ground truth; that of
        :class:`GroundTruthLocalisation` the masks of the objects whose value in it is not
        zero. ``kwargs``: the other parameters of the class."""
        from ..datasets.aixi import AIXIData

        data = check_param(data, "data", [InstanceOf(AIXIData)])
        if cls.higher_is_better:
            reference = data.relevant_masks_for(convention)
        else:
            reference = data.get_ground_truth(convention)
        return cls(model, data.images, data.targets, **{cls._reference_name: reference}, **kwargs)

    @property
    def measure_config(self) -> Union[str, dict]:
        return self.measure.get_config()

    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """Score of each explanation (N, H, W[, C]) against its reference, shape (N,)."""
        return self.measure(explanations, self.reference)  # which checks the shapes


class GroundTruthSaliency(_GroundTruthBase):
    """Distance between explanations and exact ground-truth saliency maps (EMD or KL).

    One distance per input; ``evaluate`` returns their mean. Lower is better.

    Parameters
    ----------
    model
        The model explained (Keras model or callable, outputs (N, K)); used to check that
        it reproduces the targets.
    inputs
        Inputs (N, H, W, C) as an array, tensor or ``tf.data.Dataset``.
    targets
        The labels F(I) (N,), (N, K) one-hot or class ids; None skips the accuracy check.
    batch_size
        Batch size of the model calls.
    ground_truth
        Ground-truth maps (N, H, W) (or (N, H, W, 1)), e.g. ``AIXIData.ground_truth``
        (see :meth:`from_aixi`).
    measure
        'emd' (:func:`emd`, Eq. 5, maps reduced within (32, 32)), 'kl'
        (:func:`kl_divergence`, Eq. 6, full resolution), or a :class:`GroundTruthMeasure`
        of either with its options (``sign``, ``resize``, ``ground_distance``,
        ``normalize``, ``solver``, ``n_jobs``, ``progress``; ``epsilon`` for KL).
    min_accuracy
        A :class:`LowModelAccuracyWarning` is emitted when the model's accuracy on the
        targets (R^2 for regression targets) is below this value (paper: 0.93).
    task
        'auto', 'classification' or 'regression': how the agreement is measured. 'auto'
        treats targets in {0, 1} or one-hot as classes (a single output is thresholded
        at 0.5; use ``activation='sigmoid'`` for a logit output).
    activation
        As in :class:`~xplique_ext.metrics.BaseAttributionMetric`: applied to the model's
        outputs before the accuracy check.
    strategy
        ``tf.distribute.Strategy`` sharing the model calls (the accuracy check) among its
        replicas; None: the one in scope. See
        :class:`~xplique_ext.metrics.BaseAttributionMetric`.

    Attributes
    ----------
    model_accuracy : float or None
        The agreement measured at construction.

    Notes
    -----
    detailed_evaluate(phi)[i] = D(ground_truth[i], phi[i]) with D the EMD of Eq. 5 or
    the KL divergence KL(ground truth || explanation) of Eq. 6.

    No ``operator`` and no ``seed`` (giving either is a TypeError): the
    scores compare the explanations with maps fixed in advance, so nothing is drawn at
    random, and the ground truth describes the model's output F itself, so the accuracy
    check compares those outputs with the targets (accuracy or R^2); an operator's score
    g(f, x, y), such as the probability of the target class, is not a prediction to
    check.

    References
    ----------
    Miro-Nicolau et al., Eq. 5-6.

    Examples
    --------
    >>> from xplique_ext.datasets import make_aixi_shape
    >>> from xplique_ext.models import AIXIFunctionModel
    >>> data = make_aixi_shape(4, image_size=64, function="suum", seed=1)
    >>> model = AIXIFunctionModel("suum", dataset="shape")
    >>> metric = GroundTruthSaliency(model, data.images, data.targets,
    ...                              ground_truth=data.ground_truth)
    >>> metric.evaluate(data.ground_truth)
    0.0
    """

    higher_is_better = False
    _data_params = BaseAttributionMetric._data_params + ("ground_truth",)

    @validate_params(
        {**_METRIC_PARAMETERS, "ground_truth": REFERENCE_MAPS, "measure": _measure_param(DISTANCES)}
    )
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        ground_truth: Any,
        measure: Any = "emd",
        min_accuracy: float = 0.93,
        task: str = "auto",
        activation: Optional[str] = None,
        strategy: Any = None,
    ):
        super().__init__(
            model, inputs, targets, batch_size, activation=activation, strategy=strategy
        )
        self._setup(ground_truth, measure, min_accuracy, task)
        self.ground_truth = self.reference


class GroundTruthLocalisation(_GroundTruthBase):
    """Localisation of explanations against ground-truth masks, as in Quantus: relevance
    mass accuracy, relevance rank accuracy or the pointing game. Higher is better.

    Parameters
    ----------
    model, inputs, targets, batch_size
        As in :class:`GroundTruthSaliency` (the model is only used for the accuracy
        check).
    masks
        Boolean masks (N, H, W) of the relevant region, e.g. ``AIXIData.relevant_masks``
        (the objects whose ground-truth value is not zero), or 0/1 numbers; soft masks
        are refused (see :func:`relevance_mass_accuracy`).
    measure
        'mass_accuracy' (:func:`relevance_mass_accuracy`), 'rank_accuracy'
        (:func:`relevance_rank_accuracy`) or 'pointing_game' (:func:`pointing_game`), or
        a :class:`GroundTruthMeasure` of one of them with its ``sign`` ('abs', 'positive'
        or 'raw').
    min_accuracy, task, activation, strategy
        As in :class:`GroundTruthSaliency` (which says why there is no ``operator`` nor
        ``seed``).

    Notes
    -----
    mass accuracy = sum of relevance in the mask / total relevance; rank accuracy =
    share of the K = |mask| most relevant pixels inside the mask; pointing game = 1 when
    the most relevant pixel is inside the mask.

    References
    ----------
    Arras et al., Information Fusion 2022; Zhang et al., IJCV 2018.

    Examples
    --------
    >>> from xplique_ext.datasets import make_aixi_color
    >>> from xplique_ext.models import AIXIFunctionModel
    >>> data = make_aixi_color(4, image_size=32, function="ssin", seed=1)
    >>> metric = GroundTruthLocalisation(AIXIFunctionModel("ssin", dataset="color"),
    ...                                  data.images, data.targets,
    ...                                  masks=data.relevant_masks)
    >>> metric.evaluate(data.ground_truth)
    1.0
    """

    higher_is_better = True
    _reference_name = "masks"
    _data_params = BaseAttributionMetric._data_params + ("masks",)

    @validate_params(
        {**_METRIC_PARAMETERS, "masks": REFERENCE_MAPS, "measure": _measure_param(LOCALISATION)}
    )
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        masks: Any,
        measure: Any = "mass_accuracy",
        min_accuracy: float = 0.93,
        task: str = "auto",
        activation: Optional[str] = None,
        strategy: Any = None,
    ):
        super().__init__(
            model, inputs, targets, batch_size, activation=activation, strategy=strategy
        )
        self._setup(read_masks(masks), measure, min_accuracy, task)
        self.masks = self.reference != 0

    def _is_proportion(self) -> bool:
        """The pointing game's aggregate is a hit rate: :meth:`summary` gives the
        Wilson interval for it; the other measures get the bootstrap."""
        return self.measure.name == "pointing_game"
