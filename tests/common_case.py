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
    """

    cls: type
    make: Callable[[int], Any]
    args: Tuple
    n: int
    data: Dict[str, Any] = field(default_factory=dict)
    nan: Optional[Callable[[], Tuple[Any, Tuple]]] = None  # every case has one today
    model_based: bool = False


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
