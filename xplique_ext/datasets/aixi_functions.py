"""The AIXI functions F of the pattern counts (Eq. 2-4), and each object's exact Shapley value.

The label of an AIXI image is ``F(g)``, with ``g_i = count_i / max_count`` the normalised
count of pattern i: ssin (Eq. 2), suum (Eq. 3), class (Eq. 4), or a callable of the
user's. The paper's ground truth paints the weight w_i of each pattern on its objects;
:func:`exact_object_shapley` gives, beyond the paper, each object's exact Shapley value.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Dict, Tuple, Union

import numpy as np

from ..commons import params
from ..commons.params import ArrayLike, Callable_, Interval, Options, validate_params
from .aixi_drawing import N_PATTERNS
from .aixi_layouts import MAX_PER_PATTERN

__all__ = [
    "ssin",
    "suum",
    "class_function",
    "FUNCTIONS",
    "resolve_function",
    "apply_function",
    "exact_object_shapley",
    "WEIGHTS",
    "CLASS_WEIGHTS",
    "PAPER_WEIGHTS",
]

#: Weights of ssin (Eq. 2) and suum (Eq. 3): the theoretical relative importances.
WEIGHTS: Tuple[float, float, float] = (0.55, 0.27, 0.18)
#: Weights (w1, w2) of the class function (Eq. 4).
CLASS_WEIGHTS: Tuple[float, float] = (1.0, 0.5)
#: The paper's ground truth: the weight painted on every object of each pattern. For
#: class, Eq. 4 weighs pattern 1 by +1 and pattern 2 by -0.5 (``w1 g1 - w2 g2``) and
#: ignores pattern 3; the sign says the direction of the effect (with ``sign='abs'``, the
#: default of :func:`~xplique_ext.metrics.emd` and ``kl_divergence``, it is (1, 0.5, 0)).
PAPER_WEIGHTS: Dict[str, Tuple[float, float, float]] = {
    "ssin": WEIGHTS,
    "suum": WEIGHTS,
    "class": (CLASS_WEIGHTS[0], -CLASS_WEIGHTS[1], 0.0),
}
#: An AIXI function, as a parameter constraint: a name or a callable.
FUNCTION = [Options(["ssin", "suum", "class"]), Callable_()]
#: Normalised counts: finite (a model built on F meets g > 1 on perturbed images).
_G = [ArrayLike("real", dtype=np.float64, finite=True)]


def _as_g(g: np.ndarray) -> np.ndarray:
    if g.shape[-1:] != (N_PATTERNS,):
        raise ValueError(
            f"`g` must have a last axis of {N_PATTERNS} normalised pattern "
            f"counts, got shape {g.shape}"
        )
    return g


@validate_params({"g": _G})
def ssin(g: Any) -> np.ndarray:
    """ssin (Eq. 2): ``sum_i w_i sin(pi/2 g_i)`` with w = (0.55, 0.27, 0.18).

    Parameters
    ----------
    g
        Normalised pattern counts ``count_i / max_count`` in [0, 1], shape (..., 3).

    Returns
    -------
    F
        Shape (...,), values in [0, 1].

    Examples
    --------
    >>> float(ssin([1.0, 0.0, 0.5]))  # 0.55 + 0.18 sin(pi/4)
    0.677279...
    """
    return np.sin(0.5 * np.pi * _as_g(g)) @ np.asarray(WEIGHTS)


@validate_params({"g": _G})
def suum(g: Any) -> np.ndarray:
    """suum (Eq. 3): ``sum_i w_i g_i`` with w = (0.55, 0.27, 0.18).

    ``g`` (..., 3) and the values F (...,), in [0, 1], as in :func:`ssin`.

    Examples
    --------
    >>> float(suum([1.0, 0.5, 0.0]))
    0.685
    """
    return _as_g(g) @ np.asarray(WEIGHTS)


@validate_params({"g": _G})
def class_function(g: Any) -> np.ndarray:
    """class (Eq. 4): 1 when ``w1 g_1 - w2 g_2 >= 0`` (w1 = 1, w2 = 0.5), else 0.

    Only patterns 1 and 2 count; the third is ignored. Note ``F(empty image) = 1``. ``g``
    (..., 3) as in :func:`ssin`; the values F (...,) are 0.0 or 1.0.

    Examples
    --------
    >>> class_function([[0.5, 1.0, 0.0], [0.0, 0.5, 1.0]]).tolist()
    [1.0, 0.0]
    """
    g = _as_g(g)
    score = CLASS_WEIGHTS[0] * g[..., 0] - CLASS_WEIGHTS[1] * g[..., 1]
    return (score >= -1e-12).astype(np.float64)


#: The paper's functions of the normalised counts, by name.
FUNCTIONS: Dict[str, Callable[[Any], np.ndarray]] = {
    "ssin": ssin,
    "suum": suum,
    "class": class_function,
}


@validate_params({"function": FUNCTION})
def resolve_function(function: Any) -> Tuple[str, Callable[[Any], np.ndarray]]:
    """The name and the callable of an AIXI function given by name or as a callable.

    Parameters
    ----------
    function
        'ssin', 'suum' or 'class' (:data:`FUNCTIONS`), or a callable F(g) of the
        normalised counts g (N, 3).

    Returns
    -------
    name, fn
        The function's name (a callable's ``__name__``, 'custom' without one) and the
        callable.

    Examples
    --------
    >>> resolve_function("suum")[0], resolve_function(np.sum)[0]
    ('suum', 'sum')
    """
    if callable(function):
        return getattr(function, "__name__", "custom"), function
    return function, FUNCTIONS[function]


@validate_params(
    {"fn": [Callable_()], "g": [ArrayLike("real", ndim=2, shapes=f"(N, {N_PATTERNS})")]}
)
def apply_function(fn: Callable, g: np.ndarray) -> np.ndarray:
    """F(g) for g (N, 3), checked: one finite value per row, returned as float64 (N,).

    Raises
    ------
    ValueError
        When ``fn`` fails on g, returns another shape, or non-finite values.
    TypeError
        When ``fn`` returns something other than numbers (complex numbers, strings).

    Examples
    --------
    >>> apply_function(suum, np.array([[1.0, 0.0, 0.0]])).shape
    (1,)
    """
    n = len(g)
    try:
        out = fn(g)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"`function` must map normalised counts g of shape (N, {N_PATTERNS}) to "
            f"N real values; calling it on g of shape {g.shape} failed: {err}"
        ) from None
    # numbers (bools read as 0 / 1), finite: a complex F is refused, not cut to its real part
    out = params.check_param(
        out, "function(g)", [ArrayLike("numeric", finite=True, dtype=np.float64)]
    )
    if out.shape not in ((n,), (n, 1)):
        raise ValueError(
            f"`function` must return one value per image, shape ({n},) for g of "
            f"shape {g.shape}, got shape {out.shape}"
        )
    return out.reshape(n)


# --------------------------------------------------------------------------- Shapley
def _enumerated_shapley(fn: Callable, patterns: np.ndarray, divisor: int) -> np.ndarray:
    """Exact Shapley value of each object (player) of one image by enumerating all 2^m
    subsets; the value of a subset is F of the image where only those objects are drawn."""
    m = len(patterns)
    index = np.arange(2**m)
    subsets = (index[:, None] >> np.arange(m)[None, :]) & 1  # (2^m, m)
    values = apply_function(fn, subsets @ np.eye(N_PATTERNS)[patterns] / divisor)
    size = subsets.sum(axis=1)
    weight = np.array([1 / (m * math.comb(m - 1, s)) for s in range(m)] + [0.0])  # s!(m-s-1)!/m!
    gain = values[index[:, None] | (1 << np.arange(m))] - values[:, None]  # (2^m, m): add i
    return np.sum(np.where(subsets == 0, weight[size][:, None] * gain, 0.0), axis=0)


@validate_params(
    {
        "function": FUNCTION,
        "counts": [
            ArrayLike(
                "integer",
                ndim=2,
                shapes=f"(N, {N_PATTERNS})",
                within=Interval(numbers.Integral, 0, None),
            )
        ],
        "max_count": [Interval(numbers.Integral, 1, None)],
    }
)
def exact_object_shapley(
    function: Union[str, Callable], counts: Any, *, max_count: int = MAX_PER_PATTERN
) -> np.ndarray:
    """Exact Shapley value of one object of each pattern, for images with given counts.

    The players are the objects of the image and the value of a set of objects is F of
    the image where only those objects are drawn. By symmetry every object of a pattern
    has the same value, computed by enumerating the at most 2^12 subsets of the objects
    (for ssin and suum it equals ``term_i / count_i``: F is a sum of terms symmetric in
    their objects, each 0 when its count is 0).

    This goes beyond the paper, whose ground truth is the weight w_i of each pattern
    (``AIXIData.get_ground_truth('paper')``).

    Parameters
    ----------
    function
        'ssin', 'suum', 'class' or a callable F(g) on normalised counts (..., 3).
    counts
        Pattern counts, shape (N, 3), integers in [0, max_count], at most 12 objects per
        image.
    max_count
        The divisor of the counts (``g = counts / max_count``): 2, or 6 for the authors'
        AIXI-Color (see :func:`max_count`).

    Returns
    -------
    values
        Shape (N, 3): the value of one object of each pattern (0 where the count is 0).
        The values of an image's objects sum to ``F(I) - F(empty image)``.

    Examples
    --------
    >>> exact_object_shapley("class", [[1, 1, 0]]).tolist()  # circle +1/2, square -1/2
    [[0.5, -0.5, 0.0]]
    """
    fn = resolve_function(function)[1]
    if counts.shape[1] != N_PATTERNS:
        raise ValueError(f"`counts` must have shape (N, {N_PATTERNS}), got {counts.shape}")
    if counts.size and counts.max() > max_count:
        raise ValueError(
            f"`counts` must be integers in [0, {max_count}], got values in "
            f"[{counts.min()}, {counts.max()}]"
        )
    if counts.size and counts.sum(axis=1).max() > 12:
        raise ValueError(
            "`counts` must describe at most 12 objects per image (2^m subsets are "
            f"enumerated), got {int(counts.sum(axis=1).max())}"
        )
    # enumerate once per distinct count configuration
    configs, inverse = np.unique(counts.astype(np.int64), axis=0, return_inverse=True)
    table = np.zeros((len(configs), N_PATTERNS))
    for k, config in enumerate(configs):
        patterns = np.repeat(np.arange(N_PATTERNS), config)
        phi = _enumerated_shapley(fn, patterns, max_count)
        table[k, config > 0] = [phi[patterns == p][0] for p in np.flatnonzero(config)]
    return table[np.asarray(inverse).reshape(-1)]
