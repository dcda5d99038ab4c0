"""Deletion and Insertion (Petsiuk et al., 2018): the model's score along the path that
removes (Deletion) or inserts (Insertion) the features, most relevant first, and the area
under that curve. Xplique's ``CausalFidelity`` family, with its signatures and defaults."""

from __future__ import annotations

import numbers
from typing import Any, Callable, NamedTuple, Optional, Union

import numpy as np
import tensorflow as tf

from .. import runtime
from ..commons.params import ArrayLike, Callable_, Interval, Options, check_param, validate_params
from ..commons.warnings import DegenerateSettingWarning, UndefinedScoreWarning, warn
from .base import (
    BASE_PARAMETERS,
    ExplanationMetric,
    check_explanations,
    explanation_shapes,
    score_function,
)

__all__ = ["CausalFidelity", "Deletion", "Insertion", "CausalFunctions"]

#: the paths: 'deletion' goes from the input to the baseline, 'insertion' back
CAUSAL_MODES = ("deletion", "insertion")
#: why an area is undefined, in the order :meth:`CausalFidelity._warn_undefined` counts them
UNDEFINED_CAUSES = (
    "a constant explanation (the order of its features is undefined)",
    "non-finite model scores along the curve (the model returned NaN or inf)",
)
_DECLARED = {key: value for key, value in BASE_PARAMETERS.items() if key != "seed"}
_CAUSAL_PARAMETERS = {
    "baseline_mode": [Interval(numbers.Real, None, None), Callable_()],
    "steps": [Interval(numbers.Integral, 1, None), Options([-1])],
    "max_percentage_perturbed": [Interval(numbers.Real, 0.0, 1.0, closed="right")],
}


class CausalFunctions(NamedTuple):
    """The compiled function of Deletion and Insertion."""

    #: ``curves(start, end, rank, y, counts, size)``: the scores (B, P) of each input
    #: with its ``counts[p]`` most relevant features taken from ``end``, the others from
    #: ``start``; at most ``size`` perturbed inputs at once
    curves: Callable


def _causal_functions(live: Callable, activation: Optional[str]) -> CausalFunctions:
    """The :class:`CausalFunctions` on the operator's score of the activated model."""
    score = score_function(live, activation)

    def perturb(start, end, rank, counts, sample_ids, point_ids):
        """Perturbed inputs: input ``sample_ids[j]`` with the features whose rank (0: most
        relevant) is below ``counts[point_ids[j]]`` taken from ``end``, the others from
        ``start``. Compiled with XLA, which fuses the gathers and the choice into one pass
        over memory."""
        flipped = tf.gather(rank, sample_ids) < tf.gather(counts, point_ids)[:, None]
        begin = tf.gather(start, sample_ids)
        features = [tf.shape(sample_ids)[0], tf.shape(rank)[1], -1]  # channels together
        mixed = tf.where(
            flipped[..., tf.newaxis],
            tf.reshape(tf.gather(end, sample_ids), features),
            tf.reshape(begin, features),
        )
        return tf.reshape(mixed, tf.shape(begin))

    perturb_fn = runtime.compiled_function(perturb, jit_compile=True)

    def chunk(start, end, rank, y, counts, first, size):
        """Scores of the perturbed inputs ``first .. first + size`` of the flat (input,
        point) grid of the batch."""
        idx = first + tf.range(size)
        n_points = tf.shape(counts)[0]
        sample_ids = idx // n_points
        perturbed = perturb_fn(start, end, rank, counts, sample_ids, idx % n_points)
        out = score(perturbed, tf.gather(y, sample_ids))
        return tf.cast(tf.reshape(out, [-1]), tf.float64)  # never cast down

    @runtime.split_across_replicas("start", "end", "rank", "y")
    def curves(start, end, rank, y, counts, size):
        """The curves of a batch of inputs, ``size`` perturbed inputs at a time, inside a
        single graph; under a strategy each replica gets its share of the inputs."""
        n_points = tf.shape(counts)[0]
        total = tf.shape(start)[0] * n_points
        n_chunks = (total + size - 1) // size
        results = tf.TensorArray(tf.float64, size=n_chunks, infer_shape=False)
        for i in tf.range(n_chunks):  # AutoGraph makes it a tf.while_loop
            tf.autograph.experimental.set_loop_options(parallel_iterations=1)
            first = i * size
            this_size = tf.minimum(size, total - first)
            results = results.write(i, chunk(start, end, rank, y, counts, first, this_size))
        return tf.reshape(results.concat(), [-1, n_points])

    return CausalFunctions(curves=curves)


class CausalFidelity(ExplanationMetric):
    r"""The model's score as the features are removed (``causal_mode='deletion'``) or
    inserted (``'insertion'``), most relevant first, and the area under that curve:
    Xplique's base of :class:`Deletion` and :class:`Insertion`, with its signature.

    Parameters
    ----------
    model
        Keras model or callable, output (N, K).
    inputs
        Images (N, H, W, C), tabular data (N, F) or time series (N, T, F), as a NumPy
        array, a tf.Tensor or a ``tf.data.Dataset`` of ``x`` or ``(x, y)`` (streamed).
    targets
        One-hot (N, K), class ids (N,) or regression targets; None uses the predicted class.
    batch_size
        Number of inputs, and of perturbed inputs, sent to the model at once; None sends
        all of them at once.
    causal_mode
        'deletion': the path goes from the input to the baseline (lower is better);
        'insertion': from the baseline to the input (higher is better).
    baseline_mode
        Baseline value, or a callable applied to a batch of inputs (B, ...) that returns
        their baselines, of the same shape (Xplique calls it once with every input; a
        function of each input alone gives the same baselines).
    steps
        Number of steps between the start and the end of the path (the curve has
        ``steps + 1`` points); -1 takes one step per feature.
    max_percentage_perturbed
        Share of the features, in (0, 1], that the path perturbs at its end.
    operator
        ``g(f, x, y)`` returning one scalar per sample; default ``f(x)[y]``. Also
        Xplique's task names ('classification', 'regression', ...) and ``Tasks`` members.
    activation
        None, 'sigmoid' or 'softmax', applied to the model's output.
    strategy
        ``tf.distribute.Strategy`` (None: the one in scope), whose replicas share each
        batch of perturbed inputs.

    Attributes
    ----------
    perturbed_counts_ : numpy.ndarray
        The number of features perturbed at each point of the curve, (P,): the ``k`` of
        the ``curve_<k>`` columns of :meth:`details`.

    Notes
    -----
    A feature is a pixel of an image (its channels together) or one value of tabular
    data or of a time series. The explanation ranks the features, most relevant first
    (a map with channels is averaged over them first, as in Xplique). Point :math:`p` of
    the curve perturbs the :math:`k_p` most relevant features, with
    :math:`k_p = \lfloor p \, m / s \rfloor` (``np.linspace`` truncated, as Xplique),
    :math:`m = \lfloor d \cdot` ``max_percentage_perturbed`` :math:`\rfloor` of the
    :math:`d` features and :math:`s` ``steps``. Deletion sets them to the baseline
    :math:`\bar{x}`, Insertion takes them from the input and the rest from the
    baseline; the score of input :math:`x` is the area under its curve by the trapezoid
    rule, the steps equally spaced over [0, 1]:

    .. math::

        \operatorname{AUC}(x) = \frac{1}{s} \sum_{p=0}^{s-1}
            \frac{g(f, x^{(k_p)}, y) + g(f, x^{(k_{p+1})}, y)}{2}

    :meth:`evaluate` is the mean over the inputs, which is Xplique's area under the mean
    curve. Where ``steps`` exceeds :math:`m`, points repeat a count; they are merged as
    Xplique merges them (one point per distinct count), with a
    :class:`~xplique_ext.commons.warnings.DegenerateSettingWarning`.

    *Ties and undefined areas.* Features of equal attribution are taken in decreasing
    index order (a stable sort, reversed: Xplique's order wherever its sort keeps ties in
    place). A constant explanation ranks nothing: its area is NaN, as is the area of a
    curve with a non-finite model score, each with an
    :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning` that gives the reason
    (Xplique scores the first path in index order).

    *Differences from Xplique.* ``detailed_evaluate`` gives one area per input, and
    :meth:`details` the per-input curves (Xplique's ``detailed_evaluate`` returns the mean
    curve as a dict). The perturbed inputs are built inside a compiled graph, batch by
    batch, never all at once.

    References
    ----------
    Petsiuk, Das and Saenko, *RISE: Randomized Input Sampling for Explanation of
    Black-box Models*, BMVC 2018. https://arxiv.org/abs/1806.07421
    """

    higher_is_better = False  # the instance's, set from ``causal_mode``

    # Xplique's ten arguments, in Xplique's order, and the keyword-only strategy
    @validate_params({**_DECLARED, **_CAUSAL_PARAMETERS, "causal_mode": [Options(CAUSAL_MODES)]})
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        causal_mode: str = "deletion",
        baseline_mode: Union[float, Callable] = 0.0,
        steps: int = 10,
        max_percentage_perturbed: float = 1.0,
        operator: Union[None, str, Callable] = None,
        activation: Optional[str] = None,
        *,
        strategy: Any = None,
    ):
        super().__init__(
            model,
            inputs,
            targets,
            batch_size,
            operator=operator,
            activation=activation,
            strategy=strategy,
        )
        self.causal_mode = causal_mode
        self.higher_is_better = causal_mode == "insertion"
        self.baseline_mode = baseline_mode
        self.steps = steps
        self.max_percentage_perturbed = max_percentage_perturbed
        self._input_shape = self._peek_input_shape()
        self.perturbed_counts_ = self._perturbed_counts()
        self._curves_fn = self._model_functions("causal_fidelity", _causal_functions).curves

    # ------------------------------------------------------------------ geometry
    def _n_features(self) -> int:
        """Features the path perturbs one by one: pixels (channels together) for inputs
        with channels (per-input rank 3 or more), every value otherwise."""
        shape = self._input_shape
        if len(shape) > 2:
            return int(np.prod(shape[:-1]))
        return int(np.prod(shape))

    def _perturbed_counts(self) -> np.ndarray:
        """The number of features perturbed at each point of the curve (Xplique's
        truncated ``np.linspace``, repeats merged)."""
        n_features = self._n_features()
        most = int(np.floor(n_features * self.max_percentage_perturbed))
        if most == 0:
            raise ValueError(
                f"`max_percentage_perturbed` must perturb at least one of the {n_features} "
                f"features, got {self.max_percentage_perturbed:g}"
            )
        steps = most if self.steps == -1 else self.steps
        counts = np.linspace(0, most, steps + 1, dtype=np.int32)
        distinct = np.unique(counts)
        if len(distinct) < len(counts):
            warn(
                f"{type(self).__name__}: `steps`={steps} exceeds the {most} features the path "
                f"perturbs, so points repeat; the curve keeps the {len(distinct)} distinct "
                "ones, as Xplique does (use `steps`=-1 for one step per feature)",
                DegenerateSettingWarning,
            )
        return distinct

    def _baselines(self, x: np.ndarray) -> np.ndarray:
        """Baselines of a batch, in the (floating-point) dtype of ``x``."""
        if not callable(self.baseline_mode):
            return np.full_like(x, self.baseline_mode)
        out = check_param(
            self.baseline_mode(x.copy()), "baseline_mode(x)", [ArrayLike("numeric", finite=True)]
        )
        if out.shape != x.shape:
            raise ValueError(
                "`baseline_mode` callable must return an array of the inputs' shape "
                f"{x.shape}, got shape {out.shape}"
            )
        return out.astype(x.dtype, copy=False)

    def _ranks(self, phi: np.ndarray) -> np.ndarray:
        """Rank of each feature (0: most relevant), (B, F) int32: channels averaged, ties
        in decreasing index order (a stable sort, reversed)."""
        if phi.ndim == len(self._input_shape) + 1 and len(self._input_shape) > 2:
            phi = phi.mean(axis=-1)  # (B, H, W, C) or (B, H, W, 1): Xplique's channel mean
        flat = phi.reshape(len(phi), -1)
        order = np.argsort(flat, axis=-1, kind="stable")[:, ::-1]
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(flat.shape[1])[None, :], axis=-1)
        return rank.astype(np.int32)

    # ------------------------------------------------------------------ evaluation
    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """The area under each input's curve.

        Parameters
        ----------
        explanations
            Attributions, one per input: (N, H, W), (N, H, W, 1) or (N, H, W, C) for
            images, (N, F) for tabular data, (N, T, F) for time series.

        Returns
        -------
        scores
            Array of shape (N,); NaN where the area is undefined (an
            :class:`~xplique_ext.commons.warnings.UndefinedScoreWarning` gives the reason).
        """
        return _areas(self._curves(explanations))

    def details(self, explanations: Any):
        """The per-input areas and curves.

        Parameters
        ----------
        explanations
            As in :meth:`detailed_evaluate`.

        Returns
        -------
        pandas.DataFrame
            One row per input: ``score`` (as :meth:`detailed_evaluate`), then one column
            per point of the curve, ``curve_<k>``, the score with ``k`` features perturbed
            (``k`` in :attr:`perturbed_counts_`). :func:`xplique_ext.plots.plot_causal_curves`
            draws them.
        """
        import pandas as pd

        curves = self._curves(explanations)
        columns = {"score": _areas(curves)}
        for j, count in enumerate(self.perturbed_counts_):
            columns[f"curve_{count}"] = curves[:, j]
        return pd.DataFrame(columns)

    def _curves(self, explanations: Any) -> np.ndarray:
        """The curve of each input, (N, P): batch by batch, the perturbed inputs built and
        scored in one compiled graph; NaN rows where the area is undefined."""
        allowed = explanation_shapes(self._input_shape)
        phi_all = check_explanations(explanations, allowed, self.n_inputs)
        counts = tf.constant(self.perturbed_counts_, tf.int32)
        parts = []
        constant = []
        for _, x, y, phi in self.explained_batches(phi_all):
            x = x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float32)
            baselines = self._baselines(x)
            path = (x, baselines) if self.causal_mode == "deletion" else (baselines, x)
            n_perturbed = len(x) * len(self.perturbed_counts_)
            size = n_perturbed if self.batch_size is None else min(self.batch_size, n_perturbed)
            size = runtime.replica_shares(size, self.strategy.num_replicas_in_sync)
            with runtime.model_output_errors():
                out = self._curves_fn(
                    *map(tf.convert_to_tensor, path),
                    tf.constant(self._ranks(phi)),
                    tf.convert_to_tensor(y),
                    counts,
                    tf.constant(size, tf.int32),
                )
            parts.append(np.asarray(out, dtype=np.float64).reshape(len(x), -1))
            flat = phi.reshape(len(phi), -1)
            constant.append(np.ptp(flat, axis=1) == 0)
        curves = np.concatenate(parts)
        constant = np.concatenate(constant)
        non_finite = ~np.isfinite(curves).all(axis=1) & ~constant
        self._warn_undefined((int(constant.sum()), int(non_finite.sum())), len(curves))
        curves[constant | non_finite] = np.nan
        return curves

    def _warn_undefined(self, counts: tuple, n: int) -> None:
        """One UndefinedScoreWarning naming the causes of the NaN areas, if any."""
        causes = [f"{c} of {n}: {why}" for c, why in zip(counts, UNDEFINED_CAUSES) if c]
        if causes:
            warn(
                f"{type(self).__name__}: the area is undefined (NaN) for " + "; ".join(causes),
                UndefinedScoreWarning,
            )


def _areas(curves: np.ndarray) -> np.ndarray:
    """Area under each curve (N, P) by the trapezoid rule, the P points equally spaced
    over [0, 1]."""
    return np.mean((curves[:, :-1] + curves[:, 1:]) / 2, axis=1)


class Deletion(CausalFidelity):
    r"""Deletion (Petsiuk et al., 2018): the model's score as the most relevant features
    are set to the baseline first, and the area under that curve. A sharp drop, a small
    area, marks a good explanation: lower is better.

    As :class:`CausalFidelity` with ``causal_mode='deletion'``, with Xplique's signature
    and defaults; see it for the parameters, the formula and what is undefined.

    References
    ----------
    Petsiuk, Das and Saenko, *RISE: Randomized Input Sampling for Explanation of
    Black-box Models*, BMVC 2018. https://arxiv.org/abs/1806.07421

    Examples
    --------
    >>> import numpy as np, keras
    >>> from xplique_ext.metrics import Deletion
    >>> x = np.array([[4.0, 3.0, 2.0, 1.0]], dtype="float32")  # one input, 4 features
    >>> model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, use_bias=False,
    ...                                                   kernel_initializer="ones")])
    >>> metric = Deletion(model, x, np.ones(1), steps=4)    # f = sum(x), phi = x
    >>> metric.details(x).round(3).to_dict("records")
    [{'score': 3.75, 'curve_0': 10.0, 'curve_1': 6.0, 'curve_2': 3.0, 'curve_3': 1.0, 'curve_4': 0.0}]
    """

    higher_is_better = False

    @validate_params({**_DECLARED, **_CAUSAL_PARAMETERS})
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        baseline_mode: Union[float, Callable] = 0.0,
        steps: int = 10,
        max_percentage_perturbed: float = 1.0,
        operator: Union[None, str, Callable] = None,
        activation: Optional[str] = None,
        *,
        strategy: Any = None,
    ):
        super().__init__(
            model,
            inputs,
            targets,
            batch_size,
            causal_mode="deletion",
            baseline_mode=baseline_mode,
            steps=steps,
            max_percentage_perturbed=max_percentage_perturbed,
            operator=operator,
            activation=activation,
            strategy=strategy,
        )


class Insertion(CausalFidelity):
    r"""Insertion (Petsiuk et al., 2018): the model's score as the most relevant features
    are inserted first into the baseline, and the area under that curve. A sharp rise, a
    large area, marks a good explanation: higher is better.

    As :class:`CausalFidelity` with ``causal_mode='insertion'``, with Xplique's signature
    and defaults; see it for the parameters, the formula and what is undefined.

    References
    ----------
    Petsiuk, Das and Saenko, *RISE: Randomized Input Sampling for Explanation of
    Black-box Models*, BMVC 2018. https://arxiv.org/abs/1806.07421

    Examples
    --------
    >>> import numpy as np, keras
    >>> from xplique_ext.metrics import Insertion
    >>> x = np.array([[4.0, 3.0, 2.0, 1.0]], dtype="float32")  # one input, 4 features
    >>> model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, use_bias=False,
    ...                                                   kernel_initializer="ones")])
    >>> metric = Insertion(model, x, np.ones(1), steps=4)    # f = sum(x), phi = x
    >>> metric.details(x).round(3).to_dict("records")
    [{'score': 6.25, 'curve_0': 0.0, 'curve_1': 4.0, 'curve_2': 7.0, 'curve_3': 9.0, 'curve_4': 10.0}]
    """

    higher_is_better = True

    @validate_params({**_DECLARED, **_CAUSAL_PARAMETERS})
    def __init__(
        self,
        model: Callable,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        baseline_mode: Union[float, Callable] = 0.0,
        steps: int = 10,
        max_percentage_perturbed: float = 1.0,
        operator: Union[None, str, Callable] = None,
        activation: Optional[str] = None,
        *,
        strategy: Any = None,
    ):
        super().__init__(
            model,
            inputs,
            targets,
            batch_size,
            causal_mode="insertion",
            baseline_mode=baseline_mode,
            steps=steps,
            max_percentage_perturbed=max_percentage_perturbed,
            operator=operator,
            activation=activation,
            strategy=strategy,
        )
