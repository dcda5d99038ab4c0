"""The contract every exported metric keeps, in the manner of scikit-learn's and Xplique's
common tests: one tiny fixture per metric class, the same checks for all.

* ``detailed_evaluate`` returns a float ndarray of shape (N,), ``evaluate`` a float and
  ``__call__`` the same;
* ``evaluate == nanmean(detailed_evaluate)``, silently when every score is defined and
  with exactly one UndefinedScoreWarning when NaN is skipped;
* ``details`` is a DataFrame whose ``score`` column is ``detailed_evaluate``;
* ``higher_is_better`` is declared (a bool);
* the same seed gives the same numbers;
* the inputs are not mutated;
* the metric owns its data: the arrays it keeps are read-only, and overwriting the
  caller's arrays after construction leaves the scores unchanged;
* the score of a unit (an input; a rule set for FiRe and Qs; a rule for RuleMetrics) does
  not depend on the other units scored with it, nor on their order;
* ``get_config()`` is JSON-friendly and round-trips through ``from_config``;
* ``summary`` gives the mean of ``evaluate`` with an interval around it, counts the
  scored and undefined inputs, names its method, and is the same for the same seed.

A metric class exported by ``xplique_ext.metrics``, ``xplique_ext.rules`` or
``xplique_ext.text`` without a case here fails :func:`test_every_exported_metric_is_covered`.
The ``check_*`` functions are plain functions so that ``tests/commons/test_metric.py`` can
show that each of them fails on a metric that breaks the contract.
"""

from __future__ import annotations

import copy
import inspect
import json
import warnings
from typing import Any, Callable, Dict

import numpy as np
import pytest

from tests.common_case import Case, cases_from_test_files
from tests.metrics.test_fidelity import FLOAT32_BATCH_TOL
from xplique_ext.commons.warnings import UndefinedScoreWarning

# --------------------------------------------------------------------------- the checks


def _scores(metric, args) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        return metric.detailed_evaluate(*args)


def check_detailed_evaluate_shape(metric, args, n: int) -> None:
    out = _scores(metric, args)
    assert isinstance(out, np.ndarray), f"detailed_evaluate returned {type(out).__name__}"
    assert out.shape == (n,), f"detailed_evaluate returned shape {out.shape}, expected ({n},)"
    assert out.dtype.kind == "f", f"detailed_evaluate returned dtype {out.dtype}"


def check_evaluate_is_float(metric, args) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        value = metric.evaluate(*args)
        called = metric(*args)
    assert isinstance(value, float), f"evaluate returned {type(value).__name__}"
    assert isinstance(called, float), f"__call__ returned {type(called).__name__}"
    np.testing.assert_equal(called, value)


def check_evaluate_is_nanmean(metric, args, expect_nan: bool) -> None:
    scores = _scores(metric, args)
    assert bool(np.isnan(scores).any()) == expect_nan, f"NaN in the scores: {scores}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = metric.evaluate(*args)
    undefined = [w for w in caught if issubclass(w.category, UndefinedScoreWarning)]
    expected = 1 if expect_nan else 0
    assert len(undefined) == expected, (
        f"evaluate emitted {len(undefined)} UndefinedScoreWarning(s), expected {expected}: "
        f"{[str(w.message) for w in undefined]}"
    )
    if expect_nan:
        skipped = int(np.isnan(scores).sum())
        assert str(skipped) in str(undefined[0].message), undefined[0].message
    np.testing.assert_allclose(value, np.nanmean(scores), rtol=1e-12)


def check_details_has_the_scores(metric, args) -> None:
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        table = metric.details(*args)
    assert isinstance(table, pd.DataFrame), f"details returned {type(table).__name__}"
    assert "score" in table.columns, f"details has no `score` column: {list(table.columns)}"
    np.testing.assert_array_equal(table["score"].to_numpy(dtype=np.float64), _scores(metric, args))


def check_higher_is_better(metric) -> None:
    declared = getattr(metric, "higher_is_better", None)
    assert isinstance(declared, (bool, np.bool_)), (
        f"{type(metric).__name__}.higher_is_better must be declared as a bool, got {declared!r}"
    )


def check_same_seed_same_numbers(make: Callable[[int], Any], args) -> None:
    first = _scores(make(3), args)
    again = _scores(make(3), args)
    np.testing.assert_array_equal(first, again)


def _is_code(value) -> bool:
    return callable(value) or callable(getattr(value, "explain", None))


def check_inputs_not_mutated(make: Callable[[int], Any], args, data: Dict[str, Any]) -> None:
    all_args = args
    # models and explainers (callables, or Xplique's objects with `explain`) are code, not
    # inputs: they are left out of the comparison
    args = tuple(a for a in args if not _is_code(a))
    data = {k: v for k, v in data.items() if not _is_code(v)}
    before_args, before_data = copy.deepcopy(args), copy.deepcopy(data)
    metric = make(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedScoreWarning)
        metric.evaluate(*all_args)
        metric.detailed_evaluate(*all_args)
    _assert_same(args, before_args, "the evaluated arguments")
    _assert_same(data, before_data, "the constructor's data")


def _overwrite(value: Any, rng: np.random.Generator) -> bool:
    """Overwrite ``value`` in place, as a caller reusing its buffer does: an array gets
    other values (noise for floats), a list its items in reverse order; whether ``value``
    could be written."""
    if isinstance(value, list) and len(value) > 1:
        value.reverse()
        return True
    if not isinstance(value, np.ndarray) or not value.flags.writeable or not value.size:
        return False
    if value.dtype.kind in "fc":
        value[...] = rng.normal(size=value.shape) * 7.0
    elif value.dtype.kind == "b":
        value[...] = ~value
    elif value.dtype.kind in "iu":
        value[...] = value + 1
    else:
        value[...] = np.roll(value, 1)
    return True


def check_kept_arrays_are_read_only(metric) -> None:
    writable = sorted(
        name
        for name, value in vars(metric).items()
        if isinstance(value, np.ndarray) and value.flags.writeable
    )
    assert not writable, f"{type(metric).__name__} keeps writable arrays: {writable}"


def check_scores_ignore_later_writes(make: Callable[[int], Any], args, data) -> None:
    metric = make(0)
    before = _scores(metric, args)
    rng = np.random.default_rng(7)
    written = []
    saved = {}
    try:
        for name, value in data.items():
            if callable(value):  # models and explainers are code, not data
                continue
            original = copy.deepcopy(value)
            if _overwrite(value, rng):
                written.append(name)
                saved[name] = original
        assert written or not any(isinstance(v, (np.ndarray, list)) for v in data.values())
        after = _scores(metric, args)
    finally:
        # the case's arrays may be shared with other tests of its file: put them back
        for name, original in saved.items():
            value = data[name]
            if isinstance(value, list):
                value[:] = original
            else:
                value[...] = original
    np.testing.assert_array_equal(
        after,
        before,
        err_msg=f"overwriting the caller's {written} after construction changed the scores",
    )


def check_scores_per_unit_in_any_order(
    make_on: Callable[[np.ndarray, int], Any], n: int, tolerance: float
) -> None:
    full = _scores(*make_on(np.arange(n), 0))
    rng = np.random.default_rng(0)
    orders = {
        "a permutation": rng.permutation(n),
        "a subset": rng.permutation(n)[: max(1, n // 2)],
        "the last alone": np.array([n - 1]),
    }
    for what, indices in orders.items():
        np.testing.assert_allclose(
            _scores(*make_on(indices, 0)),
            full[indices],
            rtol=tolerance,
            atol=tolerance,
            err_msg=f"scored on {what} {indices.tolist()}, the scores differ from the full run's",
        )


def check_get_config_round_trip(metric, args, data: Dict[str, Any]) -> None:
    config = metric.get_config()
    assert isinstance(config, dict)
    restored = json.loads(json.dumps(config))
    clone = type(metric).from_config(restored, **data)
    assert clone.get_config() == config
    assert repr(clone) == repr(metric)
    np.testing.assert_array_equal(_scores(clone, args), _scores(metric, args))


def check_summary(metric, args, n: int) -> None:
    from xplique_ext.commons.uncertainty import ScoreSummary

    scores = _scores(metric, args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = metric.summary(*args, n_resamples=200)
    undefined = [w for w in caught if issubclass(w.category, UndefinedScoreWarning)]
    defined = scores[~np.isnan(scores)]
    assert isinstance(first, ScoreSummary), f"summary returned {type(first).__name__}"
    assert (first.n, first.n_undefined) == (defined.size, n - defined.size)
    if defined.size < n:
        assert len(undefined) == 1, [str(w.message) for w in undefined]
    np.testing.assert_allclose(first.mean, np.nanmean(scores), rtol=1e-12)
    if defined.size >= 2 and np.ptp(defined) > 0:
        assert first.ci_low <= first.mean <= first.ci_high, first
        assert first.std_error > 0, first
    assert first.method, "summary must name its method"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = metric.summary(*args, n_resamples=200)
    np.testing.assert_equal(
        again.to_dict(), first.to_dict(), err_msg="the same metric gave two different summaries"
    )
    frame = first.to_frame()
    assert len(frame) == 1 and frame.loc[0, "mean"] == first.mean


def _assert_same(value, before, what: str) -> None:
    if hasattr(value, "to_frame") and not isinstance(value, np.ndarray):
        value, before = value.to_frame(), before.to_frame()
    if isinstance(value, dict):
        assert value.keys() == before.keys()
        for key in value:
            _assert_same(value[key], before[key], f"{what}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        assert len(value) == len(before), what
        for a, b in zip(value, before):
            _assert_same(a, b, what)
    elif hasattr(value, "equals"):  # pandas
        assert value.equals(before), f"{what} were modified"
    elif isinstance(value, np.ndarray) or np.ndim(value):
        np.testing.assert_array_equal(np.asarray(value), np.asarray(before), err_msg=what)
    else:
        assert value == before or (value != value and before != before), what


# --------------------------------------------------------------------------- the cases


def _fire():
    from xplique_ext.metrics import FiRe

    p, r = np.array([1.0, 1.5, 0.2]), np.array([4, 1, 3])
    return Case(
        FiRe,
        lambda seed: FiRe(psi=2.0),
        (p, r),
        3,
        nan=lambda: (FiRe(), (np.array([1e308, 0.5]), np.array([10, 2]))),  # overflow
        unit="rule set",  # one (p, r) pair: the losses of one rule set
    )


def _qs():
    from xplique_ext.metrics import QsScore

    return Case(
        QsScore,
        lambda seed: QsScore(),
        (np.array([0.04, 0.02]), np.array([3, 6]), np.array([0.95, 0.43])),
        2,
        nan=lambda: (
            QsScore(),
            (np.array([1e308, 0.1]), np.array([10, 3]), np.array([0.0, 1.0])),
        ),
        unit="rule set",  # one (p, r, coverage) triple: the losses of one rule set
    )


def _rule_metrics():
    from xplique_ext.rules import RuleMetrics, RuleSet, load_voyage

    rules, data = load_voyage("unordered")

    def on(indices, seed):
        # one score per rule; checked in 'unordered' mode, where each rule covers the
        # examples its body matches: in 'ordered' mode (a decision list) a rule covers only
        # the examples the rules before it leave, so its score depends on their order
        default = [rules.default] if rules.default is not None else []
        subset = RuleSet([rules[i] for i in indices] + default, rules.header, task=rules.task)
        return RuleMetrics(subset, "unordered", measure="Laplace"), (data,)

    return Case(
        RuleMetrics,
        lambda seed: RuleMetrics(rules, "ordered", measure="Laplace"),
        (data,),
        6,  # the six rules of voyage.cn2.unordered.pbm
        data={"rules": rules},
        # rules that cover none of these two examples have no accuracy
        nan=lambda: (RuleMetrics(rules, measure="Acc"), (data.take([0, 2]),)),
        unit="rule",
        on=on,
    )


def _lipschitz():
    from xplique_ext.text import LocalLipschitzEstimate

    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    y = np.ones((5, 1), np.float32)

    def explainer(z, t):
        return np.tanh(z) * t

    def nan():
        # a perturbation of 1e-12 vanishes in float32 next to 1e6, not next to 0
        far = np.array([[1e6, 1e6], [0.0, 0.0]], np.float32)
        metric = LocalLipschitzEstimate(far, epsilon=1e-12, nb_samples=2)
        return metric, (lambda z: 2.0 * z,)

    return Case(
        LocalLipschitzEstimate,
        lambda seed: LocalLipschitzEstimate(x, y, batch_size=2, nb_samples=4, seed=seed),
        (explainer,),
        5,
        data={"inputs": x, "targets": y},
        nan=nan,
    )


def _text_lipschitz():
    from xplique_ext.text import (
        BagOfWordsModel,
        IntegratedGradientsTokenExplainer,
        TextLocalLipschitzEstimate,
    )

    bow = BagOfWordsModel({"good": 2.0, "bad": -2.0})
    ig = IntegratedGradientsTokenExplainer(bow.to_keras(), bow.tokenizer, progress=False)
    sentences = ["a good film", "bad plot but good cast"]

    def nan():
        metric = TextLocalLipschitzEstimate(["", "a good film"], nb_samples=2)
        return metric, (ig,)

    return Case(
        TextLocalLipschitzEstimate,
        lambda seed: TextLocalLipschitzEstimate(sentences, nb_samples=2, seed=seed),
        (ig,),
        2,
        data={"sentences": sentences},
        nan=nan,
    )


def _mufidelity():
    from tests.conftest import linear_model
    from xplique_ext.metrics import MuFidelity

    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 4, 4, 1)).astype(np.float32)
    phi = rng.normal(size=(4, 4, 4, 1)).astype(np.float32)
    model = linear_model((4, 4, 1), weights=rng.normal(size=(16, 3)), outputs=3)
    y = np.array([0, 2, 1, 2])
    options = dict(grid_size=2, subset_percent=0.5, nb_samples=12, batch_size=8, progress=False)

    def nan():
        constant = phi.copy()
        constant[1] = 0.0  # a constant explanation has no correlation
        return MuFidelity(model, x, y, seed=0, **options), (constant,)

    return Case(
        MuFidelity,
        lambda seed: MuFidelity(model, x, y, seed=seed, **options),
        (phi,),
        4,
        data={"model": model, "inputs": x, "targets": y},
        nan=nan,
        model_based=True,
        # a float32 Keras model: its outputs may change in their last bits with the
        # batch's shape (docs/errors.md, "What is invariant")
        tolerance=FLOAT32_BATCH_TOL,
    )


def _aixi(kind):
    from xplique_ext.datasets import make_aixi_shape
    from xplique_ext.models import AIXIFunctionModel

    data = make_aixi_shape(3, image_size=64, function="suum", seed=1)
    model = AIXIFunctionModel("suum", dataset="shape")
    phi = np.abs(data.ground_truth) + np.random.default_rng(0).random(
        data.ground_truth.shape
    ).astype(np.float32)
    zero = phi.copy()
    zero[0] = 0.0  # an all-zero map: no distribution, no relevance
    return data, model, phi, zero


def _gt_saliency():
    from xplique_ext.metrics import GroundTruthSaliency

    data, model, phi, zero = _aixi("shape")
    options = dict(ground_truth=data.ground_truth, measure="kl")
    build = lambda seed: GroundTruthSaliency(  # noqa: E731  # nothing random: no seed
        model, data.images, data.targets, **options
    )
    return Case(
        GroundTruthSaliency,
        build,
        (phi,),
        3,
        data={
            "model": model,
            "inputs": data.images,
            "targets": data.targets,
            "ground_truth": data.ground_truth,
        },
        nan=lambda: (build(0), (zero,)),
        model_based=True,
    )


def _gt_localisation():
    from xplique_ext.metrics import GroundTruthLocalisation

    data, model, phi, zero = _aixi("shape")
    build = lambda seed: GroundTruthLocalisation(  # noqa: E731  # nothing random: no seed
        model, data.images, data.targets, masks=data.relevant_masks
    )
    return Case(
        GroundTruthLocalisation,
        build,
        (phi,),
        3,
        data={
            "model": model,
            "inputs": data.images,
            "targets": data.targets,
            "masks": data.relevant_masks,
        },
        nan=lambda: (build(0), (zero,)),
        model_based=True,
    )


def _percy():
    from xplique_ext.metrics import PERCY
    from xplique_ext.text import BagOfWordsModel

    bow = BagOfWordsModel({"dull": -1.0, "superb": 2.0, "wonderful": 3.0, "good": 0.5}, part="B")
    sentences = ["the plot was dull but superb wonderful", "good acting though dull plot"]
    exact = [np.asarray(bow.logit_contributions(s), dtype=np.float64) for s in sentences]
    build = lambda seed: PERCY(bow, sentences, [1, 0], tokenizer=bow.tokenizer)  # noqa: E731

    def nan():
        more = sentences + ["a good film"]  # no rule keyword: not scored
        metric = PERCY(bow, more, [1, 0, 1], tokenizer=bow.tokenizer)
        return metric, ([np.asarray(bow.logit_contributions(s)) for s in more],)

    return Case(
        PERCY,
        build,
        (exact,),
        2,
        data={"model": bow, "inputs": sentences, "targets": [1, 0], "tokenizer": bow.tokenizer},
        nan=nan,
        model_based=True,
    )


BUILDERS = {
    "FiRe": _fire,
    "QsScore": _qs,
    "RuleMetrics": _rule_metrics,
    "LocalLipschitzEstimate": _lipschitz,
    "TextLocalLipschitzEstimate": _text_lipschitz,
    "MuFidelity": _mufidelity,
    "GroundTruthSaliency": _gt_saliency,
    "GroundTruthLocalisation": _gt_localisation,
    "PERCY": _percy,
}
# a metric's own test file may hold its case instead: ``COMMON_CASES = {"Name": builder}``
for _name, _builder in cases_from_test_files().items():
    if _name in BUILDERS:
        raise ValueError(f"{_name} has a case in BUILDERS and in its test file")
    BUILDERS[_name] = _builder

_CACHE: Dict[str, Case] = {}


@pytest.fixture(params=sorted(BUILDERS))
def case(request) -> Case:
    name = request.param
    if name not in _CACHE:
        _CACHE[name] = BUILDERS[name]()
    return _CACHE[name]


# --------------------------------------------------------------------------- the tests


def test_every_exported_metric_is_covered():
    import xplique_ext.metrics as metrics
    import xplique_ext.rules as rules
    import xplique_ext.text as text

    exported = set()
    for package in (metrics, rules, text):
        for name in package.__all__:
            obj = getattr(package, name)
            if (
                inspect.isclass(obj)
                and any(callable(getattr(obj, m, None)) for m in ("evaluate", "detailed_evaluate"))
                and not inspect.isabstract(obj)
                # a Keras model (RuleDistillation) has Keras' evaluate, not a metric's
                and not any(k.__module__.startswith("keras") for k in obj.__mro__)
            ):
                exported.add(obj.__name__)
    assert exported, "no metric class found: the discovery itself is broken"
    missing = sorted(exported - set(BUILDERS))
    assert not missing, f"exported metric classes without a case in test_common: {missing}"


def test_a_test_file_declares_its_common_case(tmp_path, monkeypatch):
    package = tmp_path / "fake_tests"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "test_deletion.py").write_text(
        "def _case():\n    return 'a case'\n\nCOMMON_CASES = {'Deletion': _case}\n"
    )
    (package / "test_other.py").write_text("def test_nothing():\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cases = cases_from_test_files(package, "fake_tests")
    assert list(cases) == ["Deletion"] and cases["Deletion"]() == "a case"
    (package / "test_again.py").write_text("COMMON_CASES = {'Deletion': print}\n")
    with pytest.raises(ValueError, match="two common cases for Deletion"):
        cases_from_test_files(package, "fake_tests")


def test_every_metric_stands_on_base_metric(case):
    from xplique_ext.commons.metric import BaseMetric

    assert issubclass(case.cls, BaseMetric)


def test_detailed_evaluate_is_an_ndarray_n(case):
    check_detailed_evaluate_shape(case.make(0), case.args, case.n)


def test_evaluate_is_a_float(case):
    check_evaluate_is_float(case.make(0), case.args)


def test_evaluate_is_nanmean_without_warning(case):
    check_evaluate_is_nanmean(case.make(0), case.args, expect_nan=False)


def test_evaluate_skips_nan_with_one_warning(case):
    assert case.nan is not None, f"give {case.cls.__name__}'s case a NaN fixture"
    metric, args = case.nan()
    check_evaluate_is_nanmean(metric, args, expect_nan=True)


def test_details_is_a_frame_with_the_scores(case):
    check_details_has_the_scores(case.make(0), case.args)


def test_higher_is_better_is_declared(case):
    check_higher_is_better(case.make(0))


def test_same_seed_same_numbers(case):
    check_same_seed_same_numbers(case.make, case.args)


def test_inputs_are_not_mutated(case):
    check_inputs_not_mutated(case.make, case.args, case.data)


def test_kept_arrays_are_read_only(case):
    check_kept_arrays_are_read_only(case.make(0))


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_scores_ignore_the_callers_later_writes(name):
    case = BUILDERS[name]()  # its own data: the check overwrites it
    check_scores_ignore_later_writes(case.make, case.args, case.data)


def test_scores_per_unit_in_any_order(case):
    if case.not_per_unit is not None:
        everything = np.arange(case.n)
        first = _scores(*case.make_on(everything, 0))
        np.testing.assert_array_equal(_scores(*case.make_on(everything, 0)), first)
        return
    check_scores_per_unit_in_any_order(case.make_on, case.n, case.tolerance)


def test_get_config_round_trips(case):
    check_get_config_round_trip(case.make(0), case.args, case.data)


def test_summary_brackets_the_mean(case):
    check_summary(case.make(0), case.args, case.n)


def test_summary_counts_the_undefined(case):
    metric, args = case.nan()
    n = len(_scores(metric, args))
    check_summary(metric, args, n)
