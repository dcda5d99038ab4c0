"""Generated values for the declared parameters of :mod:`xplique_ext.commons.params`
(scikit-learn's ``generate_invalid_param_val`` idea), for the tests only.

:func:`generate_invalid_value` gives, for one constraint of a parameter, a value that
violates it and every other constraint of that parameter (with the error type expected),
and :func:`generate_valid_value` a value every declaration accepts, so that a test can
call any declared entry point with one bad argument (``tests/test_params_generated.py``).
A constraint's candidates come from :func:`invalid_values` and its example from
:func:`valid_value` (by its class; a subclass gets its base's).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

from xplique_ext.commons.params import (
    NO_VALIDATION,
    ArrayLike,
    Boolean,
    Callable_,
    InstanceOf,
    Interval,
    Mismatch,
    Options,
    PairOf,
    Strings,
    Word,
    _check,
    _declarable,
    _is_bool,
    _NoneConstraint,
    _normalise,
    parameter_constraints,
)

#: Candidates and example of the constraints that take no settings.
FIXED = {
    _NoneConstraint: ((object(), 0), None),
    Boolean: (("yes", 1), False),
    Callable_: ((3, "f"), lambda *args, **kwargs: None),
    Word: (("two words", "", 3), "word"),
    Strings: (("abc", [1, 2], ["a", "a"], []), ("a", "b")),
}


def _interval_invalid(c: Interval) -> List[Any]:
    out: List[Any] = ["1", True]
    step = 1 if c.kind is numbers.Integral else 0.5
    if c.low is not None:
        out.append(c.low - step if c.left else c.low)
    if c.high is not None:
        out.append(c.high + step if c.right else c.high)
    return out + ([1.5] if c.kind is numbers.Integral else [math.nan, math.inf])


def _interval_valid(c: Interval) -> Any:
    low, high = c.low, c.high
    if c.kind is numbers.Integral:
        if low is not None:
            return int(low) if c.left else int(low) + 1
        return 1 if high is None else int(high) - 1
    if low is not None and high is not None:
        return (low + high) / 2
    return 1.0 if low is None and high is None else (low + 1.0 if high is None else high - 1.0)


def _array_invalid(c: ArrayLike) -> List[Any]:
    out: List[Any] = ["text", object()]
    if c.kind != "any":
        out.append(np.array([["a"]] * 2))
    if c.ndim is not None:
        if min(c.ndim) >= 1:
            out.append(np.zeros((2,) * (min(c.ndim) - 1)))
        out.append(np.zeros((2,) * (max(c.ndim) + 1)))
    shape = (2,) * (c.ndim[0] if c.ndim else 1)
    if c.nonempty:
        out.append(np.zeros((0,) + shape[1:]))
    if c.finite:
        out.append(np.full(shape, np.nan))
    if c.within is not None:
        out += [
            np.full(shape, v)
            for v in _interval_invalid(c.within)
            if isinstance(v, numbers.Real) and not _is_bool(v) and math.isfinite(v)
        ]
    if c.kind in ("real", "float", "integer"):
        out.append([0.5, True])  # NumPy would read the bool as a number
    return out


def _array_valid(c: ArrayLike) -> np.ndarray:
    shape = (2,) * (c.ndim[0] if c.ndim else 1)
    fill = 1 if c.within is None else _interval_valid(c.within)
    dtype = {"integer": np.int64, "bool": np.bool_}.get(c.kind, np.float64)
    return np.full(shape, fill, dtype=dtype)


def _instance_valid(c: InstanceOf) -> Any:
    kind = c.types[0]
    try:
        return kind()
    except Exception:  # noqa: BLE001 - a class needing arguments: an uninitialised
        return kind.__new__(kind)  # instance passes the check


def valid_value(constraint: Any) -> Any:
    """An example the constraint accepts."""
    if isinstance(constraint, PairOf):
        return (valid_value(constraint.item),) * 2
    if isinstance(constraint, Options):
        return constraint.values[0]
    for kind, example in (
        (Interval, _interval_valid),
        (ArrayLike, _array_valid),
        (InstanceOf, _instance_valid),
    ):
        if isinstance(constraint, kind):
            return example(constraint)
    return next((v for k, (_, v) in FIXED.items() if isinstance(constraint, k)), None)


def invalid_values(constraint: Any) -> List[Any]:
    """Candidate values that break the constraint (tried in order)."""
    if isinstance(constraint, Interval):
        return _interval_invalid(constraint)
    if isinstance(constraint, ArrayLike):
        return _array_invalid(constraint)
    if isinstance(constraint, Options):
        words = ["not-an-option"] if all(isinstance(v, str) for v in constraint.values) else []
        return [*words, object(), -12345]
    if isinstance(constraint, PairOf):
        bad = [v for v in invalid_values(constraint.item) if not isinstance(v, str)][:1]
        good = valid_value(constraint.item)
        return ["ab", (good,) * 3] + [(b, good) for b in bad]
    fixed = next((list(v) for k, (v, _) in FIXED.items() if isinstance(constraint, k)), [])
    return fixed or [object()]


def generate_valid_value(constraints: Any) -> Any:
    """A value the declaration accepts (its first constraint's example)."""
    constraints = _normalise(constraints)
    if constraints == NO_VALIDATION:
        raise ValueError("no value can be generated for a 'no_validation' parameter")
    return valid_value(constraints[0])


def generate_invalid_value(constraints: Any, index: int) -> Tuple[Any, type]:
    """A value that violates constraint ``index`` of a declaration *and all the others*,
    with the error type the checker raises for it. Raises LookupError when every
    candidate is accepted by another constraint (e.g. ``Real`` next to ``Integral``)."""
    constraints = _normalise(constraints)
    for candidate in invalid_values(constraints[index]):
        try:
            _check(candidate, constraints)
        except Mismatch as mismatch:
            return candidate, ValueError if mismatch.right_kind else TypeError
    raise LookupError(f"no invalid value for {constraints[index]!r} among {constraints}")


def iter_invalid_cases(entry: Any) -> Iterable[Tuple[str, int, Any, Optional[type]]]:
    """(parameter, constraint index, invalid value, error type) for each declared
    constraint of ``entry`` (``None`` in a list, which only allows None, is not a
    constraint to violate). A constraint that no generated value violates without
    satisfying another one is *reported*, not skipped: it comes with the value
    ``LookupError`` and the error type ``None``, for the test to fail on."""
    for name, constraints in (parameter_constraints(entry) or {}).items():
        for index, constraint in enumerate(() if constraints == NO_VALIDATION else constraints):
            if not isinstance(constraint, _NoneConstraint):
                try:
                    yield (name, index, *generate_invalid_value(constraints, index))
                except LookupError as lookup:
                    yield name, index, lookup, None


def valid_arguments(entry: Any) -> Dict[str, Any]:
    """Keyword arguments the declaration accepts, for required parameters only."""
    declared = parameter_constraints(entry) or {}
    fn = entry.__init__ if inspect.isclass(entry) else entry
    return {
        p.name: None
        if declared.get(p.name, NO_VALIDATION) == NO_VALIDATION
        else generate_valid_value(declared[p.name])
        for p in _declarable(fn)
        if p.default is p.empty
    }


# -- small valid arguments for the required parameters ----------------------------------------
class SmallFixtures:
    """Small valid objects for the required parameters of the public entry points, built on
    first use (the Keras models are the costly part) and kept for the session; the files
    are written into ``folder``."""

    def __init__(self, folder):
        self.folder = Path(folder)

    # rule files
    @functools.cached_property
    def voyage(self):
        from xplique_ext.rules import load_voyage

        return load_voyage()

    @property
    def rules(self):
        return self.voyage[0]

    @property
    def data(self):
        return self.voyage[1]

    @functools.cached_property
    def frame(self):
        from xplique_ext.rules import evaluate_rules

        return evaluate_rules(self.rules, self.data).to_frame()

    def example(self, name: str) -> str:
        from xplique_ext.rules import example_path

        return example_path(name)

    def text_of(self, name: str) -> str:
        from xplique_ext.rules.syntax import read_text

        return read_text(self.example(name))

    @functools.cached_property
    def table(self):
        """A small tabular problem (x, y) whose classes rules can tell apart."""
        rng = np.random.default_rng(0)
        x = rng.normal(size=(40, 2))
        return x, (x[:, 0] > 0).astype(int)

    @functools.cached_property
    def tree(self):
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(max_depth=2, random_state=0).fit(*self.table)

    @functools.cached_property
    def ripper(self):
        import pandas as pd
        import wittgenstein

        x, y = self.table
        frame = pd.DataFrame(x, columns=["a", "b"]).assign(y=y)
        model = wittgenstein.RIPPER(random_state=0)
        model.fit(frame, class_feat="y", pos_class=1)
        return model

    @functools.cached_property
    def rule_list(self):
        import imodels

        return imodels.GreedyRuleListClassifier(max_depth=2).fit(*self.table)

    # images
    @functools.cached_property
    def images(self) -> np.ndarray:
        return np.random.default_rng(0).random((4, 16, 16, 3)).astype(np.float32)

    @functools.cached_property
    def maps(self) -> np.ndarray:
        return np.random.default_rng(1).random((4, 16, 16)).astype(np.float32)

    @functools.cached_property
    def masks(self) -> np.ndarray:
        return self.maps > 0.5

    @functools.cached_property
    def image_model(self):
        from tests.conftest import tiny_cnn

        return tiny_cnn(shape=(16, 16, 3), classes=3)

    @functools.cached_property
    def aixi(self):
        from xplique_ext.datasets import make_aixi_shape

        return make_aixi_shape(4, image_size=64, seed=0)

    @functools.cached_property
    def aixi_cnn(self):
        from xplique_ext.models import build_aixi_cnn

        return build_aixi_cnn((32, 32, 1), "class", seed=0)

    @functools.cached_property
    def aixi_file(self) -> Path:
        return self.aixi.save(self.folder / "aixi.npz")

    # text
    @functools.cached_property
    def sentences(self):
        from xplique_ext.text import generate_sentences

        return list(generate_sentences(8, seed=0).sentence)

    @functools.cached_property
    def text_model(self):
        from xplique_ext.text import BagOfWordsModel

        return BagOfWordsModel({"good": 1.0, "bad": -1.0})

    @functools.cached_property
    def vectorizer(self):
        from xplique_ext.text import make_vectorizer

        return make_vectorizer(self.sentences, max_tokens=100, sequence_length=12)

    @functools.cached_property
    def keras_text_model(self):
        """A functional Keras model on raw strings with an Embedding layer."""
        from xplique_ext.text import build_cnn_classifier

        return build_cnn_classifier(self.vectorizer, raw_strings=True, embedding_dim=4, filters=2)

    @functools.cached_property
    def keras_ids_model(self):
        """A Keras model on token ids (those of :attr:`vectorizer`)."""
        from xplique_ext.text import build_cnn_classifier

        return build_cnn_classifier(self.vectorizer, embedding_dim=4, filters=2)

    @functools.cached_property
    def hub_preset(self) -> Path:
        """A local keras-hub preset of a tiny random BERT (nothing downloaded)."""
        import keras_hub

        folder = self.folder / "preset"
        vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "film"]
        keras_hub.models.BertBackbone(
            vocabulary_size=len(vocabulary),
            num_layers=1,
            num_heads=1,
            hidden_dim=8,
            intermediate_dim=16,
            max_sequence_length=16,
        ).save_to_preset(folder)
        tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocabulary)
        keras_hub.models.BertTextClassifierPreprocessor(tokenizer).save_to_preset(folder)
        return folder

    @functools.cached_property
    def hub_backbone(self):
        from xplique_ext.text import load_hub_backbone

        return load_hub_backbone(str(self.hub_preset), sequence_length=12)[0]

    @functools.cached_property
    def percy(self):
        from xplique_ext.metrics import PERCY

        sentences = ["a good film but a bad plot", "a bad film"]
        return PERCY(self.text_model, sentences, [1, 0], tokenizer=self.text_model.tokenizer)

    @functools.cached_property
    def percy_table(self):
        import pandas as pd

        return pd.DataFrame({"PERCY": [0.5, 0.7]}, index=["lime", "shap"])

    @functools.cached_property
    def word_vectors(self) -> Path:
        path = self.folder / "vectors.txt"
        path.write_text("good 1 0 0\nbad -1 0 0\n", encoding="utf-8")
        return path

    @functools.cached_property
    def sst2_folder(self) -> Path:
        """A local copy of SST-2's default split (labelled, in GLUE's columns)."""
        folder = self.folder / "sst2"
        folder.mkdir(exist_ok=True)
        (folder / "test.tsv").write_text("sentence\tlabel\na good film\t1\na mess\t0\n")
        return folder


def _mufidelity_factory(model, x_probe, y_probe):
    from xplique_ext.metrics import MuFidelity

    return MuFidelity(model, x_probe, y_probe, grid_size=4, nb_samples=4, seed=0)


class _GradientExplainer:
    """An Xplique-style explainer: ``.explain(x, y)``."""

    def __init__(self, model):
        self.model = model

    def explain(self, x, y):
        return np.asarray(x)


class _Score:
    """A model-free metric whose explanations are its per-input scores (for ``compare``)."""

    higher_is_better = True

    def detailed_evaluate(self, explanations):
        return np.asarray(explanations, dtype=np.float64)

    def evaluate(self, explanations):
        return float(np.mean(explanations))


#: The required arguments of each public entry point the generated values do not fit (a
#: model, a data set, a file, a mapping...), by its name in its package's ``__all__``.
def _causal_details():
    """A DataFrame as Deletion's ``details`` gives it: a score and a curve of 2 points."""
    import pandas as pd

    return pd.DataFrame({"score": [0.5], "curve_0": [1.0], "curve_4": [0.0]})


REQUIRED_ARGUMENTS = {
    # metrics
    "metrics.MuFidelity": lambda f: {"model": f.image_model, "inputs": f.images},
    "metrics.PERCY": lambda f: {"model": f.text_model, "inputs": f.sentences},
    "metrics.GroundTruthSaliency": lambda f: {
        "model": f.image_model,
        "inputs": f.images,
        "ground_truth": f.maps,
    },
    "metrics.GroundTruthLocalisation": lambda f: {
        "model": f.image_model,
        "inputs": f.images,
        "masks": f.masks,
    },
    "metrics.fire_isoline": lambda f: {
        "psi": 1.0,
        "predictive_loss": 0.1,
        "readability_loss": 3.0,
        "readability_grid": [1.0, 2.0, 4.0],
    },
    "metrics.ground_truth_leaderboard": lambda f: {
        "explanations": {"a": f.maps, "b": f.maps[::-1]},
        "ground_truth": f.maps,
    },
    "metrics.RuleMetrics": lambda f: {"rules": f.rules},
    "metrics.AverageStability": lambda f: {"model": f.image_model, "inputs": f.images},
    "metrics.RandomLogitMetric": lambda f: {
        "model": f.image_model,
        "inputs": f.images,
        "targets": [0, 1, 2, 0],
    },
    "metrics.ModelRandomizationMetric": lambda f: {
        "model": f.image_model,
        "inputs": f.images,
        "targets": [0, 1, 2, 0],
    },
    "metrics.MeGe": lambda f: {
        "learning_algorithm": lambda x_train, y_train, x_test, y_test: f.image_model,
        "inputs": f.images,
    },
    "metrics.LocalLipschitzEstimate": lambda f: {"inputs": f.images},
    "metrics.TextLocalLipschitzEstimate": lambda f: {"sentences": f.sentences},
    # rules
    "rules.plot_rule_measures": lambda f: {"frame": f.frame},
    "rules.ripper_to_rules": lambda f: {"model": f.ripper},
    "rules.rule_list_to_rules": lambda f: {"model": f.rule_list},
    "rules.score_rules": lambda f: {"rules": f.rules, "data": f.data},
    "rules.tree_names": lambda f: {"tree": f.tree},
    "rules.tree_to_rules": lambda f: {"tree": f.tree},
    "rules.Dataset": lambda f: {"names": f.data.names, "columns": f.data.columns},
    "rules.RuleMetrics": lambda f: {"rules": f.rules},
    "rules.RuleSet": lambda f: {"rules": list(f.rules)},
    "rules.check_rules": lambda f: {"rules": f.rules, "names": f.data.names},
    "rules.copy_examples": lambda f: {"directory": f.folder / "examples"},
    "rules.covered_mask": lambda f: {"rules": f.rules, "data": f.data},
    "rules.evaluate_rules": lambda f: {"rules": f.rules, "data": f.data},
    "rules.predict_rules": lambda f: {"rules": f.rules, "data": f.data},
    "rules.parse_data": lambda f: {"text": f.text_of("voyage.test"), "names": f.data.names},
    "rules.parse_names": lambda f: {"text": f.text_of("voyage.names")},
    "rules.parse_rules": lambda f: {"text": f.text_of("voyage.cn2.unordered.pbm")},
    "rules.read_data": lambda f: {"path": f.example("voyage.test")},
    "rules.read_data_dask": lambda f: {"path": f.example("voyage.test")},
    "rules.read_names": lambda f: {"path": f.example("voyage.names")},
    "rules.read_rules": lambda f: {"path": f.example("voyage.cn2.unordered.pbm")},
    "rules.write_data": lambda f: {"dataset": f.data},
    "rules.write_names": lambda f: {"names": f.data.names, "path": f.folder / "out.names"},
    "rules.write_rules": lambda f: {"rules": f.rules, "path": f.folder / "out.pbm"},
    # text
    "text.BagOfWordsModel": lambda f: {"weights": {"good": 1.0, "bad": -1.0}},
    "text.IntegratedGradientsTokenExplainer": lambda f: {"model": f.keras_text_model},
    "text.LimeTokenExplainer": lambda f: {"model": f.text_model},
    "text.ShapTokenExplainer": lambda f: {"model": f.text_model},
    "text.TokenAttributionExplainer": lambda f: {"model": f.text_model},
    "text.TextClassifier": lambda f: {"model": f.text_model},
    "text.adapt_text_model": lambda f: {"model": f.text_model},
    "text.LocalLipschitzEstimate": lambda f: {"inputs": f.images},
    "text.RuleDistillation": lambda f: {"student": f.keras_text_model},
    "text.RuleTable": lambda f: {"mapping": {"but": "B"}},
    "text.TextLocalLipschitzEstimate": lambda f: {"sentences": f.sentences},
    "text.build_cnn_classifier": lambda f: {"vectorizer": f.vectorizer},
    "text.build_lstm_classifier": lambda f: {"vectorizer": f.vectorizer},
    "text.build_hub_classifier": lambda f: {"backbone": f.hub_backbone},
    "text.load_hub_backbone": lambda f: {"preset": str(f.hub_preset)},
    "text.highlight_html": lambda f: {"sentence": "a good film", "attributions": [0.1, 0.5, -0.2]},
    "text.plot_highlight": lambda f: {"sentence": "a good film", "attributions": [0.1, 0.5, -0.2]},
    "text.load_word_vectors": lambda f: {"path": f.word_vectors, "vocabulary": ["good", "film"]},
    "text.make_vectorizer": lambda f: {"sentences": f.sentences},
    "text.percy_examples_html": lambda f: {
        "percy": f.percy,
        "explanations": [f.text_model.logit_contributions(s) for s in f.percy.sentences],
        "indices": [0],
    },
    "text.percy_pearson_agreement": lambda f: {
        "per_sentence": {"a": [1.0, 0.0, 1.0], "b": [0.0, 1.0, 1.0]}
    },
    "text.percy_rank_agreement": lambda f: {"scores": {"a": [1.0, 2.0, 3.0], "b": [2.0, 1.0, 3.0]}},
    "text.plot_lipschitz": lambda f: {"values": {"lime": [0.1, 0.2], "shap": [0.3, 0.1]}},
    "text.plot_percy_scores": lambda f: {"table": f.percy_table},
    "text.rule_conjuncts": lambda f: {"sentences": f.sentences},
    "text.set_embedding": lambda f: {"model": f.keras_text_model},
    "text.train_classifier": lambda f: {
        "model": f.keras_ids_model,
        "x": f.vectorizer(f.sentences).numpy(),
        "y": np.arange(len(f.sentences)) % 2,
    },
    # the default `path` downloads the data set: a local copy of its default split instead
    "text.load_sentiment_dataset": lambda f: {"name": "sst2", "path": f.sst2_folder},
    # datasets
    "datasets.AIXIData": lambda f: {
        "object_labels": f.aixi.object_labels,
        "object_patterns": f.aixi.object_patterns,
        "dataset": "shape",
        "function": "ssin",
    },
    "datasets.ssin": lambda f: {"g": [[0.5, 0.25, 0.0]]},
    "datasets.suum": lambda f: {"g": [[0.5, 0.25, 0.0]]},
    "datasets.class_function": lambda f: {"g": [[0.5, 0.25, 0.0]]},
    "datasets.apply_function": lambda f: {"fn": lambda g: g.sum(axis=-1), "g": [[0.5, 0.25, 0.0]]},
    "datasets.exact_object_shapley": lambda f: {"function": "ssin", "counts": [[1, 0, 2]]},
    "datasets.load_aixi": lambda f: {"path": f.aixi_file},
    # explainers, callbacks, models, plots, compare
    "explainers.ObjectLime": lambda f: {"model": f.image_model},
    "callbacks.ExplanationMetrics": lambda f: {
        "explainer_factory": _GradientExplainer,
        "metrics": [_mufidelity_factory],
        "x_probe": f.images,
    },
    "models.aixi_cnn_logits": lambda f: {"model": f.aixi_cnn},
    "plots.plot_scored_explanations": lambda f: {"images": f.images, "explanations": {"a": f.maps}},
    "plots.plot_scores": lambda f: {"scores": {"a": 0.5, "b": [0.1, 0.2]}},
    "plots.plot_aixi_samples": lambda f: {"data": f.aixi},
    "plots.plot_ground_truth_leaderboard": lambda f: {
        "per_sample": {"EMD": {"a": np.array([0.1, 0.2]), "b": np.array([0.3, 0.1])}},
        "directions": {"EMD": False},
    },
    "plots.plot_sample_size_curve": lambda f: {
        "sample_sizes": [8, 16],
        "curves": {"a": [0.3, 0.2]},
    },
    "compare.compare": lambda f: {
        "metric": _Score(),
        "explanations_by_name": {"a": np.arange(8.0), "b": np.arange(8.0)[::-1]},
    },
    "compare.compare_scores": lambda f: {
        "scores_by_name": {"a": np.arange(8.0), "b": np.arange(8.0)[::-1]},
        "higher_is_better": True,
    },
    "metrics.Deletion": lambda f: {"model": f.image_model, "inputs": f.images},
    "metrics.Insertion": lambda f: {"model": f.image_model, "inputs": f.images},
    "metrics.AverageDropMetric": lambda f: {"model": f.image_model, "inputs": f.images},
    "metrics.AverageIncreaseMetric": lambda f: {"model": f.image_model, "inputs": f.images},
    "metrics.AverageGainMetric": lambda f: {"model": f.image_model, "inputs": f.images},
    "plots.plot_causal_curves": lambda f: {"details": _causal_details()},
}


def required_arguments(name: str, entry: Any, fixtures: SmallFixtures) -> Dict[str, Any]:
    """Small valid values for the required parameters of ``entry`` (``name``: the
    qualified name "package.Name"): from :data:`REQUIRED_ARGUMENTS`, else generated from
    its declaration (:func:`valid_arguments`)."""
    short = name.replace("xplique_ext.", "", 1)
    if short in REQUIRED_ARGUMENTS:
        return REQUIRED_ARGUMENTS[short](fixtures)
    return valid_arguments(entry)
