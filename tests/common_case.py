"""The case of one metric class for the common checks of ``tests/test_common.py``.

A metric's case lives either in ``BUILDERS`` of ``tests/test_common.py`` or, for a new
metric, in the metric's own test file: ``tests/metrics/test_<module>.py`` defines
``COMMON_CASES = {"ClassName": builder}`` where ``builder()`` returns a :class:`Case`, and
the common checks pick it up.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

TESTS = Path(__file__).resolve().parent


@dataclass
class Case:
    """A tiny instance of one metric class.

    make(seed) builds the metric on ``data`` (the constructor's data arguments, those
    left out of ``get_config``); ``args`` are what ``detailed_evaluate`` scores (all
    defined), ``n`` how many scores they give; ``nan`` builds a metric and arguments
    whose scores include NaN next to defined ones (None when the metric cannot give
    NaN); ``model_based`` marks the metrics that call a model (BaseAttributionMetric's,
    and PERCY through its TextClassifier).

    The subset check (:meth:`make_on`) builds the metric on some of the units scored
    (``unit``: inputs for most metrics, rule sets for FiRe and Qs, rules for RuleMetrics),
    in any order, and expects the same score for each unit: exactly when ``tolerance`` is
    0, else within ``tolerance`` (a float32 model whose outputs may change in their last
    bits with the batch's shape). ``on(indices, seed)`` builds the metric and its
    arguments on the units ``indices`` where the generic subset (:meth:`make_on`) does
    not apply.
    """

    cls: type
    make: Callable[[int], Any]
    args: Tuple
    n: int
    data: Dict[str, Any] = field(default_factory=dict)
    nan: Optional[Callable[[], Tuple[Any, Tuple]]] = None  # every case has one today
    model_based: bool = False
    unit: str = "input"
    tolerance: float = 0.0
    on: Optional[Callable[[np.ndarray, int], Tuple[Any, Tuple]]] = None
    # why a metric's scores depend, by definition, on the other units scored with it (MeGe
    # trains its models on folds of the inputs): the subset check then only asks for the
    # same scores from the same units in the same order
    not_per_unit: Optional[str] = None

    def make_on(self, indices: np.ndarray, seed: int) -> Tuple[Any, Tuple]:
        """The metric and the arguments it scores, on the units ``indices`` only (in that
        order): ``on`` where the case gives it, else the metric rebuilt from its
        configuration (``from_config``) on ``data`` taken at ``indices``, scoring
        ``args`` taken at ``indices`` (every array or list with ``n`` items along its
        first axis; models, explainers and other values are kept)."""
        if self.on is not None:
            return self.on(indices, seed)
        metric = self.make(seed)
        data = {name: take(value, indices, self.n) for name, value in self.data.items()}
        rebuilt = type(metric).from_config(metric.get_config(), **data)
        args = tuple(take(value, indices, self.n) for value in self.args)
        return rebuilt, args


def take(value: Any, indices: np.ndarray, n: int) -> Any:
    """``value`` at ``indices`` along its first axis when it holds one item per unit (an
    array, list or tuple of ``n`` items); any other value (a model, an explainer, a
    string) unchanged."""
    if callable(value) or isinstance(value, str):
        return value
    if isinstance(value, np.ndarray) and value.ndim and len(value) == n:
        return value[indices]
    if isinstance(value, (list, tuple)) and len(value) == n:
        return type(value)(value[i] for i in indices)
    return value


def cases_from_test_files(
    folder: Path = TESTS / "metrics", package: str = "tests.metrics"
) -> Dict[str, Callable[[], Case]]:
    """The ``COMMON_CASES`` of every ``test_*.py`` module of ``folder``, by class name."""
    cases: Dict[str, Callable[[], Case]] = {}
    for path in sorted(folder.glob("test_*.py")):
        module = importlib.import_module(f"{package}.{path.stem}")
        for name, builder in getattr(module, "COMMON_CASES", {}).items():
            if name in cases:
                raise ValueError(f"two common cases for {name}: {cases[name]} and {builder}")
            cases[name] = builder
    return cases
