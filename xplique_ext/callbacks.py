"""Keras callbacks: explanation quality measured during training.

:class:`ExplanationMetrics` explains a fixed probe set with the model's current weights at
the end of chosen epochs, scores the explanations with xplique_ext's (or Xplique's)
metrics and writes the scores into Keras' ``logs``, so that ``History``, ``CSVLogger``,
``TensorBoard``, ``EarlyStopping`` and ``ModelCheckpoint`` see them like any other metric.
"""

from __future__ import annotations

import numbers
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import keras
import numpy as np

from . import runtime
from .commons.params import (
    ArrayLike,
    Boolean,
    Callable_,
    InstanceOf,
    Interval,
    check_param,
    validate_params,
)
from .commons.warnings import warn

__all__ = ["ExplanationMetrics"]


def _spec_name(spec: Any) -> str:
    """A readable name for a metric or explainer given as a class, a factory or an
    instance: ``MuFidelity``, ``functools.partial(MuFidelity, ...)`` -> ``MuFidelity``."""
    target = getattr(spec, "func", spec)  # functools.partial
    name = getattr(target, "__name__", "<lambda>")  # a class or a function; an instance has none
    return type(target).__name__ if name == "<lambda>" else name


def _named(specs: Any, what: str, valid: Callable[[Any], bool], expected: str) -> Dict[str, Any]:
    """``{name: spec}`` from a mapping, a single spec or a list / tuple of specs; a
    TypeError names the entry that is not ``valid`` (``expected`` says what it must be)."""
    if isinstance(specs, Mapping):
        named = dict(specs)
        bad = [key for key in named if not (isinstance(key, str) and key)]
        if bad:
            raise TypeError(f"`{what}` keys must be non-empty strings, got {bad[0]!r}")
    else:
        named = {}
        for spec in specs if isinstance(specs, (list, tuple)) else [specs]:
            name = _spec_name(spec)
            if name in named:
                raise ValueError(
                    f"`{what}` holds two entries named {name!r}: pass a dict "
                    "{name: entry} to name them apart"
                )
            named[name] = spec
    if not named:
        raise ValueError(f"`{what}` must hold at least one entry, got none")
    for key, spec in named.items():
        if not valid(spec):
            raise TypeError(f"`{what}[{key!r}]` must be {expected}, got {type(spec).__name__}")
    return named


X_PROBE = [ArrayLike("numeric", finite=True, nonempty=True)]
Y_PROBE = [ArrayLike("numeric", ndim=(1, 2), shapes="(N,) or (N, K)", finite=True)]


def _read_probe(x_probe: Any) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """The probe inputs (a copy) and the targets an ``(x, y)`` dataset holds (or None)."""
    if runtime.is_dataset(x_probe):
        if int(x_probe.cardinality()) < 0:
            raise ValueError(
                "`x_probe` must be a finite dataset (a probe set is read whole once), "
                "got a dataset of infinite or unknown cardinality; use .take(n)"
            )
        batched = runtime.dataset_is_batched(x_probe)
        x, y = next(runtime.iterate_dataset(x_probe, None, batched, "x_probe"), (None, None))
        if x is None:  # the whole dataset is one batch: none when it is empty
            raise ValueError("`x_probe` must hold at least one input, got an empty dataset")
    else:
        x = x_probe
        y = None
    x = np.array(check_param(x, "x_probe", X_PROBE), copy=True)
    if x.ndim < 2:
        raise ValueError(
            f"`x_probe` must have a batch axis and a feature axis, got shape {x.shape}"
        )
    return x, y


class ExplanationMetrics(keras.callbacks.Callback):
    """Score the explanations of a fixed probe set at the end of chosen training epochs.

    At the end of each chosen epoch the callback (1) explains ``x_probe`` for ``y_probe``
    with the explainer that ``explainer_factory(model)`` returned, using the current
    weights, (2) scores these explanations with each metric and (3) writes the scores into
    the epoch's ``logs`` under the metric's name. ``History`` (``model.fit``'s return
    value), ``CSVLogger``, ``TensorBoard``, ``EarlyStopping`` and ``ModelCheckpoint`` then
    record or monitor them like ``loss`` and ``accuracy``.

    Parameters
    ----------
    explainer_factory
        ``explainer_factory(model)`` returns the explainer: an Xplique explainer (anything
        with ``.explain(x, y)``) or a callable ``explainer(x, y)`` returning explanations
        of shape (N, ...). An Xplique explainer class is a factory already
        (``Saliency``); bind options with ``functools.partial(IntegratedGradients,
        steps=16)`` or a lambda. A dict ``{name: factory}`` compares several explainers;
        the log keys are then ``"{explainer}_{metric}"``.
    metrics
        The metrics, as a dict ``{log key: metric}`` or a list (keys: the metrics' class
        names). Each metric is one of

        - a metric class, built as ``Metric(model, x_probe, y_probe)`` (xplique_ext's
          or Xplique's metrics, which share this constructor);
        - a factory ``f(model, x_probe, y_probe)`` returning a metric, such as
          ``functools.partial(MuFidelity, nb_samples=50, seed=0)`` or a lambda for a
          metric with other arguments (``GroundTruthSaliency``'s ground truth);
        - a metric already built on the model being trained.

        A metric is anything with ``evaluate(explanations) -> float``.
    x_probe
        The probe inputs, a NumPy array or tf.Tensor of shape (N, ...), or a finite
        ``tf.data.Dataset`` of ``x`` or ``(x, y)`` (read once). The callback keeps its
        own copy: the probe set stays fixed.
    y_probe
        Targets of the probe inputs: class ids (N,) or one-hot (N, K) for a classifier,
        regression targets (N,) or (N, K). Class ids are turned into one-hot vectors
        (Xplique's explainers and metrics expect them). None explains and scores each
        epoch's predicted class: the explainer receives it as one-hot targets, the
        metrics are built with ``targets=None``.
    every
        Which epochs are scored: an int ``k`` scores every ``k``-th epoch (epochs ``k,
        2k, ...`` as Keras prints them), or a collection of 0-based epoch indices (the
        ``epoch`` argument of the callbacks, ``History.epoch``). The other epochs log NaN
        under the same keys, so that every epoch has the same columns (``CSVLogger``
        fixes its columns at the first epoch).
    log_interval
        False (default) logs the scores alone. True, or a confidence level in (0, 1)
        (True: 0.95), also logs the bounds of each score's confidence interval over the
        probe inputs, under ``"{key}_ci_low"`` and ``"{key}_ci_high"``, from the metric's
        :meth:`~xplique_ext.commons.metric.BaseMetric.summary` (bootstrap, or Wilson for
        a proportion); the score is then the summary's mean, which equals ``evaluate``.
        Every metric must then have ``summary`` (xplique_ext's metrics do; Xplique's do
        not).
    interval_resamples
        Bootstrap resamples of those intervals (>= 100; 999 by default, enough for a 95%
        interval and cheap next to the metrics).

    Attributes
    ----------
    metrics_ : dict
        The built metrics, ``{log key: metric}`` (after training starts).
    explainers_ : dict
        The built explainers, ``{name: explainer}``.
    timings_ : list of (int, float)
        ``(epoch, seconds)`` spent by the callback at each scored epoch.

    Notes
    -----
    Cost. The explainers and the metrics are built once, when training starts, and
    reused at every scored epoch: they hold a reference to the model, whose weights Keras
    updates in place, so no tracing or set-up is repeated. A scored epoch costs one
    explanation of the probe set per explainer (Saliency: one batched gradient;
    Occlusion: one forward pass per patch position) plus each metric's evaluation
    (MuFidelity: ``N * nb_samples`` forward passes, batched). Measured on a 2-core CPU
    with a small CNN, 32 probe images 16x16, Xplique's ``Saliency`` and
    ``MuFidelity(grid_size=4, nb_samples=50)``: 0.02-0.08 s per scored epoch, plus about
    2 s of tracing at the first one. ``timings_`` gives the figures of your run. Keep the
    probe set small and raise ``every`` for expensive explainers or metrics.

    Place the callback before ``CSVLogger`` and ``TensorBoard`` in ``callbacks=[...]``:
    Keras calls callbacks in order and they read the ``logs`` that earlier callbacks
    wrote (``History`` and the progress bar always come last).

    The explainers run the model in inference mode (``training=False``): dropout and
    batch normalisation behave as at test time.

    Examples
    --------
    >>> import functools, keras, numpy as np
    >>> from xplique_ext.callbacks import ExplanationMetrics
    >>> from xplique_ext.metrics import MuFidelity
    >>> rng = np.random.default_rng(0)
    >>> x = rng.random((64, 8, 8, 1)).astype("float32")
    >>> y = (x[:, :4].mean(axis=(1, 2, 3)) > 0.5).astype("int64")
    >>> model = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Flatten(),
    ...                           keras.layers.Dense(2)])
    >>> model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    >>> def saliency(model):   # or xplique.attributions.Saliency
    ...     def explain(x, y):
    ...         import tensorflow as tf
    ...         x = tf.convert_to_tensor(x)
    ...         with tf.GradientTape() as tape:
    ...             tape.watch(x)
    ...             out = tf.reduce_sum(model(x) * y, axis=-1)
    ...         return tape.gradient(out, x).numpy()
    ...     return explain
    >>> callback = ExplanationMetrics(
    ...     saliency,
    ...     {"mufidelity": functools.partial(MuFidelity, grid_size=4, nb_samples=20,
    ...                                      seed=0, progress=False)},
    ...     x[:8], y[:8])
    >>> history = model.fit(x, y, epochs=2, verbose=0, callbacks=[callback])
    >>> len(history.history["mufidelity"])
    2
    """

    @validate_params(
        {
            "explainer_factory": [
                Callable_(),
                InstanceOf(dict, Mapping, description=("a dict name -> factory")),
            ],  # each factory checked below
            "metrics": "no_validation",  # classes, factories or built metrics: checked below
            "x_probe": "no_validation",  # an array or a finite dataset: read below
            "y_probe": Y_PROBE + [None],  # one per probe input: checked below
            "every": [
                Interval(numbers.Integral, 1, None),
                InstanceOf(
                    list,
                    tuple,
                    set,
                    frozenset,
                    range,
                    np.ndarray,
                    description="a collection of epoch numbers",
                ),
            ],
            "log_interval": [Boolean(), Interval(numbers.Real, 0, 1, closed="neither")],
            "interval_resamples": [Interval(numbers.Integral, 100, None)],
        }
    )
    def __init__(
        self,
        explainer_factory: Union[Callable, Mapping[str, Callable]],
        metrics: Any,
        x_probe: Any,
        y_probe: Any = None,
        every: Union[int, Iterable[int]] = 1,
        *,
        log_interval: Union[bool, float] = False,
        interval_resamples: int = 999,
    ):
        super().__init__()
        self._factories = (
            _named(
                explainer_factory,
                "explainer_factory",
                callable,
                "a callable factory(model) -> explainer",
            )
            if isinstance(explainer_factory, Mapping)
            else {"": explainer_factory}
        )  # callable: declared
        self._metric_specs = _named(
            metrics,
            "metrics",
            lambda spec: callable(spec) or hasattr(spec, "evaluate"),
            "a metric class, a factory f(model, x_probe, y_probe) or a built metric with .evaluate",
        )
        self.x_probe, y_from_data = _read_probe(x_probe)
        if y_probe is not None and y_from_data is not None:
            raise ValueError(
                "`y_probe` must be None when the `x_probe` dataset yields (x, y) pairs"
            )
        y_probe = y_from_data if y_probe is None else y_probe
        self.y_probe = (
            None if y_probe is None else np.array(check_param(y_probe, "y_probe", Y_PROBE))
        )  # a copy: the probe set stays fixed
        if self.y_probe is not None and len(self.y_probe) != len(self.x_probe):
            raise ValueError(
                "`y_probe` must hold one target per probe input: got "
                f"{len(self.y_probe)} targets for {len(self.x_probe)} inputs"
            )
        self.every: Union[int, frozenset] = (
            every
            if isinstance(every, int)
            else frozenset(
                check_param(e, "every", [Interval(numbers.Integral, 0, None)]) for e in every
            )
        )
        if not self.every:
            raise ValueError("`every` must name at least one epoch, got an empty collection")
        # the level of the logged interval: True is the 95% interval, False none
        self.log_interval: Optional[float] = log_interval
        if log_interval is True:
            self.log_interval = 0.95
        if log_interval is False:
            self.log_interval = None
        self.interval_resamples = interval_resamples
        keys = [f"{e}_{m}" if e else m for e in self._factories for m in self._metric_specs]
        if self.log_interval is not None:
            keys = [k + suffix for k in keys for suffix in ("", "_ci_low", "_ci_high")]
        self.log_keys: List[str] = keys
        self.metrics_: Dict[str, Any] = {}
        self.explainers_: Dict[str, Any] = {}
        self.timings_: List[Tuple[int, float]] = []
        self._built_for: Any = None
        self._y_formatted: Optional[np.ndarray] = None

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        """Build the explainers and the metrics once for the model being trained."""
        model = self.model
        if self._built_for is model:
            return
        if self.y_probe is not None:  # class ids become one-hot rows, as Xplique expects
            k = runtime.check_outputs(model(self.x_probe[:1], training=False), 1)[0].size  # K
            self._y_formatted = runtime.as_model_targets(self.y_probe, k, "y_probe").astype(
                np.float32
            )
        self.explainers_ = {name: factory(model) for name, factory in self._factories.items()}
        for explainer in self.explainers_.values():
            if not (callable(getattr(explainer, "explain", None)) or callable(explainer)):
                raise TypeError(
                    "`explainer_factory` must return an explainer with .explain(x, y) "
                    f"or a callable explainer(x, y), got {type(explainer).__name__}"
                )
        self.metrics_ = {}
        for key, spec in self._metric_specs.items():
            if isinstance(spec, type) or not hasattr(spec, "evaluate"):
                metric = spec(model, self.x_probe, self._y_formatted)
                if not callable(getattr(metric, "evaluate", None)):
                    raise TypeError(
                        f"`metrics[{key!r}]` must build a metric with "
                        f".evaluate(explanations), got {type(metric).__name__}"
                    )
            else:
                metric = spec
                if getattr(metric, "model", model) is not model:
                    warn(
                        f"`metrics[{key!r}]` was built on another model than the one being "
                        "trained: its scores do not follow the training. Pass its class or "
                        "a factory instead.",
                        UserWarning,
                    )
            if self.log_interval is not None and not callable(getattr(metric, "summary", None)):
                raise TypeError(
                    f"`log_interval` needs metrics with .summary (xplique_ext's metrics); "
                    f"`metrics[{key!r}]` is a {type(metric).__name__} without it"
                )
            self.metrics_[key] = metric
        self._built_for = model

    def on_train_begin(self, logs=None):
        self._build()

    # ------------------------------------------------------------------ scoring
    def is_scored(self, epoch: int) -> bool:
        """Whether the epoch of 0-based index ``epoch`` is scored."""
        every = self.every
        return epoch in every if isinstance(every, frozenset) else (epoch + 1) % every == 0

    def _explain(self, explainer: Any) -> np.ndarray:
        explain = explainer.explain if callable(getattr(explainer, "explain", None)) else explainer
        targets = self._y_formatted
        if targets is None:  # this epoch's predicted classes, as the metrics use them
            targets = runtime.predicted_targets(
                runtime.check_outputs(
                    self.model.predict(self.x_probe, verbose=0), len(self.x_probe), finite=True
                )
            )
        # copies: an explainer that writes into its arguments leaves the probe set fixed
        return check_param(
            explain(self.x_probe.copy(), targets.copy()), "explanations", [ArrayLike("any")]
        )

    def evaluate(self) -> Dict[str, float]:
        """Explain the probe set with the current weights and score it now.

        Returns
        -------
        scores
            ``{log key: score}``.
        """
        self._build()
        scores: Dict[str, float] = {}
        for e_name, explainer in self.explainers_.items():
            explanations = self._explain(explainer)
            for m_name, metric in self.metrics_.items():
                key = f"{e_name}_{m_name}" if e_name else m_name
                if self.log_interval is not None:
                    summary = metric.summary(
                        explanations,
                        confidence=self.log_interval,
                        n_resamples=self.interval_resamples,
                    )
                    scores.update(
                        {
                            key + suffix: float(getattr(summary, field))
                            for suffix, field in (
                                ("", "mean"),
                                ("_ci_low", "ci_low"),
                                ("_ci_high", "ci_high"),
                            )
                        }
                    )
                    continue
                scores[key] = float(
                    check_param(
                        metric.evaluate(explanations),
                        f"metrics[{m_name!r}].evaluate(explanations)",
                        [ArrayLike("real", ndim=0, shapes="() (one number)")],
                    )
                )
        return scores

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        clash = sorted(set(self.log_keys) & set(logs))
        if clash:
            raise ValueError(
                f"`metrics` log keys {clash} collide with keys that Keras (or an earlier "
                "callback) already logs; name the metrics apart with a dict {name: metric}"
            )
        if not self.is_scored(epoch):
            logs.update({key: float("nan") for key in self.log_keys})
            return
        start = time.perf_counter()
        logs.update(self.evaluate())
        self.timings_.append((int(epoch), time.perf_counter() - start))
