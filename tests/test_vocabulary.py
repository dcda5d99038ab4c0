"""One vocabulary: ``nb_samples`` for a number of random samples, ``seed`` for randomness,
``progress=False`` by default with tqdm imported only when a bar is on. The old names
(``num_samples``, ``sample_size``) are gone: giving one is a TypeError."""

import importlib
import inspect
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_PACKAGES = (
    "xplique_ext.commons",
    "xplique_ext.datasets",
    "xplique_ext.models",
    "xplique_ext.explainers",
    "xplique_ext.text",
    "xplique_ext.metrics",
    "xplique_ext.rules",
    "xplique_ext.plots",
    "xplique_ext.callbacks",
)
# words of the old vocabulary; `n_samples` stays where it is a dataset size (scikit-learn's
# `make_*(n_samples)`), in xplique_ext.datasets only
OLD_SAMPLE_WORDS = {"num_samples", "sample_size", "n_samples"}
DATASET_SIZE_OK = {("xplique_ext.datasets", "n_samples")}
OLD_SEED_WORDS = {"random_state", "random_seed", "rng_seed"}
# internal plumbing of the token explainers: `progress` there is the caller's bar object
# (or None, no bar), not a switch
BAR_OBJECT = {"TextClassifier.masked_proba", "TextClassifier.predict_proba"}


# ------------------------------------------------------------------ public signatures
def _public_callables():
    """(qualified name, package, callable) of every public function, class constructor and
    public method reachable from the packages' ``__all__``."""
    seen = {}
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isclass(obj):
                if not obj.__module__.startswith("xplique_ext"):
                    continue
                if "__init__" in vars(obj):
                    seen.setdefault(f"{obj.__name__}.__init__", (package, obj.__init__))
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    function = (
                        member.__func__
                        if isinstance(member, (staticmethod, classmethod))
                        else member
                    )
                    if inspect.isfunction(function):
                        seen.setdefault(f"{obj.__name__}.{attr}", (package, function))
            elif inspect.isfunction(obj) and obj.__module__.startswith("xplique_ext"):
                seen.setdefault(name, (package, obj))
    return [
        pytest.param(qualname, package, function, id=qualname)
        for qualname, (package, function) in sorted(seen.items())
    ]


CALLABLES = _public_callables()


def test_the_scan_sees_the_classes_it_is_about():
    names = {p.values[0] for p in CALLABLES}
    for expected in (
        "LimeTokenExplainer.__init__",
        "LimeTokenExplainer.neighbourhood",
        "ShapTokenExplainer.__init__",
        "MuFidelity.__init__",
        "GroundTruthSaliency.__init__",
        "ObjectLime.__init__",
        "emd",
    ):
        assert expected in names


@pytest.mark.parametrize("qualname, package, function", CALLABLES)
def test_one_vocabulary_in_public_signatures(qualname, package, function):
    parameters = inspect.signature(function).parameters
    old = {p for p in parameters if p in OLD_SAMPLE_WORDS} - {
        p for pkg, p in DATASET_SIZE_OK if pkg == package
    }
    assert not old, f"{qualname}: {sorted(old)} should be `nb_samples`"
    assert not OLD_SEED_WORDS & set(parameters), f"{qualname}: randomness goes through `seed`"
    if "progress" in parameters:
        default = parameters["progress"].default
        assert default is (None if qualname in BAR_OBJECT else False), (
            f"{qualname}: `progress` defaults to {default!r}, not False"
        )


# ------------------------------------------------------------------ renamed parameters
def _lime_token(**kw):
    from xplique_ext.text import BagOfWordsModel, LimeTokenExplainer

    bow = BagOfWordsModel({"good": 2.0, "bad": -2.0, "plot": 0.5}, bias=0.1)
    explainer = LimeTokenExplainer(bow, bow.tokenizer, seed=3, **kw)
    assert explainer.nb_samples == 40
    return explainer(["a good plot but bad", "good", "bad film"])


def _lime_neighbourhood(**kw):
    from xplique_ext.text import LimeTokenExplainer

    return LimeTokenExplainer.neighbourhood(7, rng=np.random.default_rng(5), **kw)


def _object_lime(**kw):
    from xplique_ext.datasets import make_aixi_shape
    from xplique_ext.explainers import ObjectLime
    from xplique_ext.models import AIXIFunctionModel

    data = make_aixi_shape(3, image_size=64, function="suum", seed=1)
    explainer = ObjectLime(AIXIFunctionModel("suum", dataset="shape"), kernel="lime", seed=4, **kw)
    return explainer.explain(data.images, object_labels=data.object_labels)


RENAMED = [
    pytest.param(_lime_token, "LimeTokenExplainer", "num_samples", 40, id="LimeTokenExplainer"),
    pytest.param(
        _lime_neighbourhood,
        "LimeTokenExplainer.neighbourhood",
        "num_samples",
        40,
        id="LimeTokenExplainer.neighbourhood",
    ),
    pytest.param(_object_lime, "ObjectLime", "sample_size", 6, id="ObjectLime"),
]


def _same(a, b):
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("build, owner, old, value", RENAMED)
def test_the_old_name_is_rejected_as_an_unknown_keyword(build, owner, old, value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name is silent
        new = build(nb_samples=value)
    assert new is not None
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{old}'"):
        build(**{old: value})
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{old}'"):
        build(nb_samples=value, **{old: value})


def _lime_token_nine():
    from xplique_ext.text import LimeTokenExplainer

    return LimeTokenExplainer(lambda s: np.zeros((len(s), 1)), nb_samples=9)


def _object_lime_nine():
    from xplique_ext.explainers import ObjectLime

    return ObjectLime(lambda x: np.zeros((len(x), 1)), nb_samples=9)


@pytest.mark.parametrize(
    "build, old",
    [(_lime_token_nine, "num_samples"), (_object_lime_nine, "sample_size")],
    ids=["LimeTokenExplainer", "ObjectLime"],
)
def test_the_old_attribute_is_gone(build, old):
    explainer = build()
    assert explainer.nb_samples == 9
    assert not hasattr(explainer, old)


def test_nb_samples_is_validated():
    with pytest.raises(ValueError, match="`nb_samples`"):
        _lime_token(nb_samples=1)


# ------------------------------------------------------------------ tqdm only when asked
RUN_WITHOUT_BARS = textwrap.dedent(
    """
    import sys
    import numpy as np

    from tests.conftest import linear_model
    from xplique_ext.datasets import make_aixi_shape
    from xplique_ext.explainers import ObjectLime
    from xplique_ext.metrics import (PERCY, GroundTruthMeasure, GroundTruthSaliency,
                                     MuFidelity, emd)
    from xplique_ext.models import AIXIFunctionModel
    from xplique_ext.text import (BagOfWordsModel, IntegratedGradientsTokenExplainer,
                                  LimeTokenExplainer, ShapTokenExplainer,
                                  TextLocalLipschitzEstimate)

    bow = BagOfWordsModel({"good": 2.0, "bad": -2.0}, bias=0.1)
    sentences = ["a good film but a bad plot", "bad acting yet good music"]
    lime = LimeTokenExplainer(bow, bow.tokenizer, nb_samples=20, progress=False)
    ig = IntegratedGradientsTokenExplainer(bow.to_keras(), bow.tokenizer, steps=4,
                                           progress=False)
    lime(sentences), ig(sentences)
    percy = PERCY(bow, sentences, [0, 1], tokenizer=bow.tokenizer)
    percy.detailed_evaluate(percy.explain(lime))
    TextLocalLipschitzEstimate(sentences, nb_samples=2, seed=0).detailed_evaluate(ig)

    rng = np.random.default_rng(0)
    x = rng.random((3, 6, 6, 1), dtype=np.float32)
    MuFidelity(linear_model((6, 6, 1)), x, np.ones(3), grid_size=None, nb_samples=8, seed=0,
               progress=False).detailed_evaluate(x)
    data = make_aixi_shape(3, image_size=64, function="suum", seed=1)
    model = AIXIFunctionModel("suum", dataset="shape")
    maps = ObjectLime(model, progress=False).explain(data.images,
                                                     object_labels=data.object_labels)
    emd_measure = GroundTruthMeasure("emd", progress=False)
    GroundTruthSaliency(model, data.images, data.targets, ground_truth=data.ground_truth,
                        measure=emd_measure).detailed_evaluate(maps)
    emd(maps, data.ground_truth, progress=False)
    print("tqdm imported:", "tqdm" in sys.modules)

    # shap imports tqdm itself (its own progress helper); ours must still make no bar
    import shap  # noqa: F401
    sys.modules["tqdm.auto"] = None  # our bars come from tqdm.auto: they would fail now
    ShapTokenExplainer(bow, bow.tokenizer, n_permutations=2, progress=False)(sentences)
    print("shap ran without a bar")
    """
)


def test_progress_false_never_imports_tqdm():
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2", MPLBACKEND="Agg")
    done = subprocess.run(
        [sys.executable, "-c", RUN_WITHOUT_BARS],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-2:] == ["tqdm imported: False", "shap ran without a bar"]


@pytest.fixture(scope="module")
def tiny_text_cnn():
    """The paper's CNN backbone at a tiny size, untrained (seeded weights), on token ids."""
    from xplique_ext.text import build_cnn_classifier, make_vectorizer

    vectorizer = make_vectorizer(
        ["a good film but a bad plot", "bad acting yet good music", "dull"], sequence_length=16
    )
    return build_cnn_classifier(vectorizer, embedding_dim=8, filters=4, seed=0), vectorizer


def test_a_bar_changes_no_number(tiny_text_cnn):
    """progress=True shows bars (tqdm) and gives the same attributions as progress=False,
    including the adaptive Integrated Gradients that grows its bar's total."""
    from xplique_ext.text import (
        IntegratedGradientsTokenExplainer,
        LimeTokenExplainer,
        ShapTokenExplainer,
    )

    model, vectorizer = tiny_text_cnn
    sentences = ["a good film but a bad plot", "bad acting yet good music", "dull"]
    builders = {
        "LIME": lambda p: LimeTokenExplainer(model, vectorizer, nb_samples=30, progress=p),
        "SHAP": lambda p: ShapTokenExplainer(model, vectorizer, n_permutations=2, progress=p),
        # a tight tolerance makes the trapezoid rule refine (and the bar's total grow)
        "IG": lambda p: IntegratedGradientsTokenExplainer(
            model, vectorizer, steps=2, tolerance=1e-4, max_steps=64, progress=p
        ),
    }
    for name, build in builders.items():
        quiet = build(False)(sentences)
        loud_explainer = build(True)
        loud = loud_explainer(sentences)
        _same(loud, quiet)
        if name == "IG":
            assert loud_explainer.steps_used_.max() > 2  # the refinement ran
