"""The contract every metric of xplique_ext keeps, with or without a model.

:class:`BaseMetric` is model-free: rule metrics, FiRe and Qs, and the Lipschitz estimates
stand on it directly; the model-based base
(:class:`~xplique_ext.metrics.BaseAttributionMetric`) adds the model, the inputs and the
batched inference. A metric declares its score direction and writes one method,
:meth:`~BaseMetric.detailed_evaluate` (one score per sample, NaN where undefined); the
base gives the rest:

* :meth:`~BaseMetric.evaluate` and ``__call__``: the NaN-aware mean, with exactly one
  :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning` per call when scores are
  skipped, saying how many and why;
* :meth:`~BaseMetric.details`: the scores as a :class:`pandas.DataFrame` (a ``score``
  column, to which metrics add their own);
* :meth:`~BaseMetric.summary`: the mean with its standard error and confidence interval
  (bootstrap over the inputs, or Wilson for a proportion);
* :meth:`~BaseMetric.get_config` / :meth:`~BaseMetric.from_config`: the constructor's
  settings as JSON-friendly values, and back;
* a ``__repr__`` in scikit-learn's manner, showing the settings that differ from the
  defaults;
* the ownership of its data: after the constructor, the metric owns every array it keeps
  (see :func:`own_data`), so that overwriting the caller's array does not change the scores.
"""

from __future__ import annotations

import abc
import inspect
import warnings
from typing import Any, ClassVar, Dict, NamedTuple, Optional, Tuple

import numpy as np

from .params import InstanceOf, validate_params
from .uncertainty import SUMMARY_PARAMETERS, ScoreSummary, summarize_scores
from .warnings import UndefinedScoreWarning, warn

__all__ = ["BaseMetric", "nan_aware_mean", "own_data"]


def nan_aware_mean(
    scores: Any, name: str, reason: Optional[str] = None, category: type = UndefinedScoreWarning
) -> float:
    """Mean of the defined scores; one warning says how many undefined (NaN) ones were
    skipped, and why when ``reason`` is given.

    Parameters
    ----------
    scores
        Per-sample scores, any shape (flattened); NaN marks an undefined score.
    name
        Name of the metric, quoted in the warning.
    reason
        Why scores are undefined, appended to the warning when given.
    category
        The warning's class (a subclass of UndefinedScoreWarning a metric names).

    Returns
    -------
    mean
        ``nanmean(scores)``; NaN when every score is undefined (or there is none).

    Warns
    -----
    UndefinedScoreWarning
        Once, when at least one score is NaN.

    Examples
    --------
    >>> import warnings
    >>> nan_aware_mean([0.5, 1.0], "Demo")
    0.75
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     nan_aware_mean([0.5, float("nan")], "Demo", reason="a constant map")
    0.5
    >>> print(caught[0].message)
    Demo: 1 of 2 per-sample scores are undefined (NaN) and were skipped in the mean. Reason: a constant map
    """
    scores = np.asarray(scores, dtype=np.float64)
    undefined = int(np.isnan(scores).sum())
    suffix = f" Reason: {reason}" if reason else ""
    if undefined == scores.size:
        what = (
            f"all {scores.size} per-sample scores are undefined (NaN)"
            if scores.size
            else "there is no sample to score (0 per-sample scores)"
        )
        warn(f"{name}: {what}; the aggregate is NaN.{suffix}", category)
        return float("nan")
    if undefined:
        warn(
            f"{name}: {undefined} of {scores.size} per-sample scores are undefined (NaN) "
            f"and were skipped in the mean.{suffix}",
            category,
        )
    defined = scores[~np.isnan(scores)]
    with np.errstate(over="ignore"):
        mean = float(np.mean(defined))
    if not np.isfinite(mean) and np.isfinite(defined).all():
        mean = float(np.sum(defined / defined.size))  # the sum overflowed, not the mean
    return mean


def _undefined_messages(call: Any) -> Tuple[Any, list]:
    """``call()``'s result and the distinct messages of the UndefinedScoreWarnings it
    raised (caught: the caller folds them into one); its other warnings pass on, through
    the user's filters."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    for w in caught:
        if not issubclass(w.category, UndefinedScoreWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result, list(
        dict.fromkeys(
            str(w.message) for w in caught if issubclass(w.category, UndefinedScoreWarning)
        )
    )


_NO_DEFAULT = inspect.Parameter.empty


def _jsonable(value: Any, name: str, owner: str) -> Any:
    """``value`` as plain JSON types (numbers, strings, booleans, None, lists, dicts)."""
    value = value.item() if isinstance(value, np.generic) else value  # NumPy scalars
    if value is None or isinstance(value, (bool, str, int, float)):
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(v, name, owner) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v, name, owner) for k, v in value.items()}
    raise TypeError(
        f"{owner}.get_config: the setting `{name}` must be a number, a string, a "
        f"boolean, None or a list of those to be saved, got {type(value).__name__}; "
        f"a metric built with this value of `{name}` has no config: keep the metric itself "
        "(copy.deepcopy copies it), or, writing a metric, declare the parameter among "
        "its `_data_params` or override `get_config`"
    )


def _caller_arrays(value: Any) -> list:
    """The NumPy arrays the caller passed in ``value``: the array itself, or those inside a
    list, tuple or dict (at any depth)."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [array for item in value for array in _caller_arrays(item)]
    return []


class _Caller(NamedTuple):
    """What the caller passed to a metric's constructor."""

    #: the NumPy arrays, also those inside lists, tuples and dicts
    arrays: list
    #: the ids of the lists and dicts
    container_ids: set


def _owned(value: Any, caller: _Caller, copies: dict) -> Any:
    """``value`` owned by the metric and read-only: a NumPy array that may share memory
    with an array of the caller is copied (once: ``copies`` maps the id of an array
    already copied to its copy), and every array is marked read-only (one that a
    conversion already made new is not copied again); a list, tuple or dict is rebuilt
    around owned items, and a list or dict that is the caller's own object is replaced by
    a new one. Other values (models, tf.Tensors, datasets, strings, rule sets) are kept as
    they are."""
    if isinstance(value, np.ndarray):
        if id(value) in copies:
            return copies[id(value)]
        owned = value
        if any(np.may_share_memory(value, array) for array in caller.arrays):
            owned = value.copy()
        owned.flags.writeable = False
        copies[id(value)] = owned
        return owned
    if type(value) is dict:
        items = {k: _owned(v, caller, copies) for k, v in value.items()}
        changed = id(value) in caller.container_ids or any(items[k] is not value[k] for k in value)
        return items if changed else value
    if type(value) in (list, tuple) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        items = [_owned(v, caller, copies) for v in value]
        changed = id(value) in caller.container_ids or any(a is not b for a, b in zip(items, value))
        if not changed:
            return value
        if hasattr(value, "_fields"):  # a named tuple
            return type(value)(*items)
        return type(value)(items)
    return value


def own_data(metric: Any, args: tuple, kwargs: dict) -> None:
    """Make ``metric`` own what it scores, once its constructor has run on ``args`` and
    ``kwargs`` (the caller's arguments).

    The rule, for every metric: each NumPy array the metric keeps (an attribute, or an
    item of a list, tuple or dict attribute) that may share memory with an array the
    caller passed is replaced by a copy, and every array it keeps is marked read-only
    (``flags.writeable = False``), so that neither the caller nor the library can change
    the data after construction. An array the constructor already converted to a new
    one (another dtype, a list made an array) is not copied again, and an array kept
    under two names is copied once. A list or dict the caller passed and the metric
    keeps is replaced by a new one. A tf.Tensor is immutable and a ``tf.data.Dataset``
    stays streamed: it is read when the metric scores, so a dataset over a mutable array
    sees its values at that time.

    Examples
    --------
    >>> import numpy as np
    >>> class Keeps(BaseMetric):
    ...     higher_is_better = True
    ...     _data_params = ("inputs",)
    ...     def __init__(self, inputs):
    ...         self.inputs = inputs
    ...     def detailed_evaluate(self):
    ...         return self.inputs.sum(axis=1)
    >>> x = np.ones((2, 3))
    >>> metric = Keeps(x)  # own_data runs after the constructor
    >>> x[...] = 5.0  # the caller overwrites its array
    >>> metric.detailed_evaluate()
    array([3., 3.])
    >>> metric.inputs.flags.writeable
    False
    """
    values = (*args, *kwargs.values())
    caller = _Caller(
        arrays=_caller_arrays(list(values)),
        container_ids={id(v) for v in values if isinstance(v, (list, dict))},
    )
    copies: dict = {}  # an array kept under two names gets one copy
    for name, value in list(vars(metric).items()):
        owned = _owned(value, caller, copies)
        if owned is not value:
            setattr(metric, name, owned)


class _OwnsItsData(abc.ABCMeta):
    """The metaclass of :class:`BaseMetric`: once a metric's constructor has run (the
    outermost one, after every ``super().__init__``), :func:`own_data` makes the metric
    own the arrays it keeps. One step for every metric, in one place."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        metric = super().__call__(*args, **kwargs)
        own_data(metric, args, kwargs)
        return metric


class BaseMetric(metaclass=_OwnsItsData):
    """Model-free base of every metric: ``detailed_evaluate`` gives one score per sample,
    ``evaluate`` their NaN-aware mean.

    A subclass declares ``higher_is_better`` (a bool: the score direction; a metric whose
    direction depends on a setting sets it on the instance) and implements
    :meth:`detailed_evaluate`. Its constructor stores each setting under the parameter's
    name (as scikit-learn's estimators do), so that :meth:`get_config` can read them
    back (``_config_attributes`` maps a parameter to another attribute name where the
    attribute name is taken); the parameters that are data rather than settings (a
    model, inputs, a rule set) are listed in ``_data_params`` and left out of the
    configuration.

    Once the constructor has run, the metric owns the data it keeps (:func:`own_data`):
    an array that shares memory with the caller's is copied, and the arrays it keeps are
    read-only, so that overwriting the caller's array after construction
    never changes the scores. A ``tf.data.Dataset`` is not copied: it is read when the
    metric scores.

    Attributes
    ----------
    higher_is_better : bool
        Score direction, declared by each metric (deliberately not defaulted here).
    undefined_reason : str or None
        Why a per-sample score can be undefined, quoted in the warning of
        :meth:`evaluate` when :meth:`detailed_evaluate` does not give its own reason.

    Examples
    --------
    >>> import numpy as np
    >>> class MeanAbs(BaseMetric):
    ...     higher_is_better = False
    ...     def __init__(self, scale=1.0):
    ...         self.scale = scale
    ...     def detailed_evaluate(self, x):
    ...         return self.scale * np.abs(np.asarray(x, dtype=float))
    >>> metric = MeanAbs(scale=2.0)
    >>> metric
    MeanAbs(scale=2.0)
    >>> metric.detailed_evaluate([1.0, -3.0])
    array([2., 6.])
    >>> metric([1.0, -3.0])
    4.0
    >>> metric.get_config()
    {'scale': 2.0}
    >>> MeanAbs.from_config({'scale': 2.0})([1.0])
    2.0
    """

    higher_is_better: ClassVar[bool]
    undefined_reason: ClassVar[Optional[str]] = None
    #: Category of :meth:`evaluate`'s warning about undefined scores (a subclass of
    #: UndefinedScoreWarning a metric names, e.g. PERCY's NoRuleKeywordWarning).
    undefined_warning: ClassVar[type] = UndefinedScoreWarning
    _data_params: ClassVar[Tuple[str, ...]] = ()
    _config_attributes: ClassVar[Dict[str, str]] = {}

    # ------------------------------------------------------------------ scores
    @abc.abstractmethod
    def detailed_evaluate(self, *args: Any, **kwargs: Any) -> np.ndarray:
        """One score per sample, a float ndarray of shape (N,); NaN where undefined.

        An :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning` raised here says
        why scores are undefined; :meth:`evaluate` folds it into its single warning."""

    def evaluate(self, *args: Any, **kwargs: Any) -> float:
        """Aggregate score: the mean of :meth:`detailed_evaluate` (same arguments) over the
        samples whose score is defined.

        Warns
        -----
        UndefinedScoreWarning
            Exactly once per call when some scores are undefined (NaN) or when
            :meth:`detailed_evaluate` warned: how many scores were skipped, and why.
            Other warnings of :meth:`detailed_evaluate` pass through unchanged.
        """
        scores, reasons = self._scores_and_reasons(*args, **kwargs)
        reason = " ".join(reasons) or self.undefined_reason
        name = type(self).__name__
        if reasons and not np.isnan(scores).any():
            # detailed_evaluate warned about values it replaced (a zero_division number)
            warn(f"{name}: {reason}", UndefinedScoreWarning)
            return float(np.mean(scores)) if scores.size else float("nan")
        return nan_aware_mean(scores, name, reason, self.undefined_warning)

    def _scores_and_reasons(self, *args: Any, **kwargs: Any):
        """:meth:`detailed_evaluate` as float64, and the distinct messages of the
        UndefinedScoreWarnings it raised (see :func:`_undefined_messages`)."""
        scores, reasons = _undefined_messages(lambda: self.detailed_evaluate(*args, **kwargs))
        return np.asarray(scores, dtype=np.float64), reasons

    def _is_proportion(self) -> bool:
        """Whether the aggregate is a proportion of 0/1 per-input outcomes (PERCY, the
        pointing game): :meth:`summary` then gives the Wilson interval."""
        return False

    @validate_params(SUMMARY_PARAMETERS)  # the settings first: a typo costs no evaluation
    def summary(
        self,
        *args: Any,
        confidence: float = 0.95,
        interval: str = "auto",
        n_resamples: int = 9999,
        seed: Optional[int] = None,
        **kwargs: Any,
    ):
        r"""The aggregate score with its uncertainty: mean, standard error and confidence
        interval over the inputs (same arguments as :meth:`evaluate`, which is
        unchanged).

        Parameters
        ----------
        *args, **kwargs
            What :meth:`evaluate` takes (the explanations, ...).
        confidence
            Level of the two-sided interval, in (0, 1).
        interval
            'auto' (default): the Wilson interval when the aggregate is a proportion of
            0/1 outcomes (PERCY, the pointing game), else the BCa bootstrap of the mean
            over the inputs (``scipy.stats.bootstrap``). 'bca', 'percentile', or for
            0/1 scores 'wilson' and 'exact' (Clopper-Pearson) choose one.
        n_resamples
            Bootstrap resamples (>= 100).
        seed
            Seed of the bootstrap; None uses the metric's ``seed`` (0 when it has none
            or it is None), so the same metric gives the same interval.

        Returns
        -------
        ScoreSummary
            ``mean`` (equal to :meth:`evaluate`), ``std_error``, ``ci_low``,
            ``ci_high``, ``confidence``, ``n`` (scored inputs), ``n_undefined`` (NaN
            scores left out) and ``method``; ``to_frame()`` gives a one-row DataFrame.
            See :func:`~xplique_ext.commons.uncertainty.summarize_scores`.

        Warns
        -----
        UndefinedScoreWarning
            Once when scores are undefined, as :meth:`evaluate` does.

        Examples
        --------
        >>> import numpy as np
        >>> class Identity(BaseMetric):
        ...     higher_is_better = True
        ...     def detailed_evaluate(self, x):
        ...         return np.asarray(x, dtype=float)
        >>> s = Identity().summary(np.linspace(0, 1, 21))
        >>> round(s.mean, 3), s.n, s.ci_low < 0.5 < s.ci_high
        (0.5, 21, True)
        >>> s.method
        'BCa bootstrap over inputs (9999 resamples)'
        """
        scores, reasons = self._scores_and_reasons(*args, **kwargs)
        name = type(self).__name__
        why = " ".join(reasons)
        if scores.size == 0:  # as evaluate: NaN, with the true reason
            warn(
                f"{name}: there is no sample to score (0 per-sample scores): the mean and "
                f"its interval are NaN.{' ' + why if why else ''}",
                UndefinedScoreWarning,
            )
            return ScoreSummary(*[float("nan")] * 4, float(confidence), 0, 0, "none: no sample")
        if seed is None:  # the metric's seed, or 0: the same metric gives the same interval
            seed = getattr(self, "seed", None) or 0
        result, caught = _undefined_messages(
            lambda: summarize_scores(
                scores,
                confidence=confidence,
                interval=interval,
                proportion=self._is_proportion(),
                n_resamples=n_resamples,
                seed=seed,
                name=name,
            )
        )
        # one UndefinedScoreWarning per call: the skipped scores and, where it applies,
        # why the interval is undefined
        undefined = int(np.isnan(scores).sum())
        reason = why or self.undefined_reason
        suffix = f" Reason: {reason}" if reason else ""
        skipped = (
            f"{name}: {undefined} of {scores.size} per-sample scores are undefined (NaN) "
            f"and were left out of the summary.{suffix}"
        )
        messages = ([skipped] if 0 < undefined < scores.size else []) + caught
        if undefined == scores.size and suffix:  # every score undefined: say why
            messages.append(suffix.strip())
        if messages:
            warn(" ".join(messages), UndefinedScoreWarning)
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> float:
        """Alias of :meth:`evaluate`."""
        return self.evaluate(*args, **kwargs)

    def details(self, *args: Any, **kwargs: Any):
        """The per-sample scores as a :class:`pandas.DataFrame` (same arguments as
        :meth:`detailed_evaluate`): a ``score`` column; metrics add their own columns."""
        import pandas as pd

        return pd.DataFrame({"score": self.detailed_evaluate(*args, **kwargs)})

    # ------------------------------------------------------------------ configuration
    @classmethod
    def _init_parameters(cls) -> Dict[str, inspect.Parameter]:
        """The constructor's settings: its parameters but ``self``, ``*args``, ``**kwargs``
        and the data ones (``_data_params``)."""
        params = inspect.signature(cls.__init__).parameters
        return {
            name: p
            for name, p in params.items()
            if name not in ("self", *cls._data_params)
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        }

    def get_config(self) -> Dict[str, Any]:
        """The constructor's settings (every parameter but the data ones), as JSON-friendly
        values: ``type(m).from_config(m.get_config(), **data)`` rebuilds the metric."""
        owner = type(self).__name__
        return {
            name: _jsonable(self._setting(name), name, owner) for name in self._init_parameters()
        }

    def _setting(self, name: str, default: Any = _NO_DEFAULT) -> Any:
        fallback = () if default is _NO_DEFAULT else (default,)  # no default: must exist
        return getattr(self, self._config_attributes.get(name, name), *fallback)

    @classmethod
    @validate_params({"config": [InstanceOf(dict, description="a dict")]})
    def from_config(cls, config: Dict[str, Any], **data: Any) -> BaseMetric:
        """Build the metric from :meth:`get_config`'s output and its data arguments
        (``_data_params``, for instance ``inputs=...``)."""
        clash = sorted(set(config) & set(data))
        if clash:
            raise ValueError(f"`config` and the data arguments both give {clash}")
        return cls(**data, **config)

    def __repr__(self) -> str:
        """``Name(setting=value, ...)`` with the settings that differ from the defaults, as
        :meth:`get_config` gives them (scikit-learn's ``print_changed_only``)."""
        owner = type(self).__name__
        changed = []
        for name, p in self._init_parameters().items():
            value = self._setting(name, p.default)
            try:
                value = _jsonable(value, name, owner)
                default = _jsonable(p.default, name, owner)
            except TypeError:
                default = p.default
            try:
                same = p.default is not _NO_DEFAULT and bool(value == default)
            except (TypeError, ValueError):  # arrays compare element-wise
                same = False
            if not same:
                changed.append(f"{name}={value!r}")
        return f"{owner}({', '.join(changed)})"
