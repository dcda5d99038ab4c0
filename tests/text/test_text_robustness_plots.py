"""Local Lipschitz estimates (Eq. 9-10), agreement between frameworks (Kendall tau,
Pearson Eq. 11), highlighting plots and the demo section."""

import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest
import scipy.stats

from xplique_ext.commons.warnings import UndefinedScoreWarning
from xplique_ext.metrics import PERCY
from xplique_ext.text import (
    IntegratedGradientsTokenExplainer,
    LimeTokenExplainer,
    LocalLipschitzEstimate,
    ShapTokenExplainer,
    TextLocalLipschitzEstimate,
    highlight_html,
    percy_examples_html,
    percy_pearson_agreement,
    percy_rank_agreement,
    plot_agreement,
    plot_highlight,
    plot_lipschitz,
    plot_percy_scores,
)

matplotlib.use("Agg")


# ----------------------------------------------------------------------------- Lipschitz
def test_lipschitz_known_answers_for_continuous_inputs():
    x = np.random.default_rng(0).normal(size=(5, 2, 3))
    lle = LocalLipschitzEstimate(x, epsilon=0.1, nb_samples=8, seed=1)
    np.testing.assert_allclose(lle.detailed_evaluate(lambda z: 3.0 * z), 3.0, rtol=1e-5)
    assert lle.evaluate(lambda z: np.zeros_like(z)) == 0.0
    # a quadratic explainer E(x) = x^2: L(s) <= max |2x| + epsilon, close to it
    got = lle.detailed_evaluate(lambda z: z**2)
    bound = 2 * np.abs(x).reshape(5, -1).max(axis=1) + 0.1
    assert np.all(got <= bound * 1.001) and np.all(got > 0)
    assert LocalLipschitzEstimate.higher_is_better is False


def test_lipschitz_targets_batching_and_seed():
    x = np.random.default_rng(1).normal(size=(7, 4))
    y = np.arange(7)
    seen = []

    def explainer(inputs, targets):
        seen.append(len(inputs))
        return inputs * (1.0 + targets[:, None]) ** 0.5 + np.sin(inputs)

    a = LocalLipschitzEstimate(x, y, batch_size=3, nb_samples=4, seed=3).detailed_evaluate(
        explainer
    )
    assert max(seen) == 3
    b = LocalLipschitzEstimate(x, y, batch_size=None, nb_samples=4, seed=3).detailed_evaluate(
        explainer
    )
    np.testing.assert_allclose(a, b, rtol=1e-6)
    c = LocalLipschitzEstimate(x, y, nb_samples=4, seed=4).detailed_evaluate(explainer)
    assert not np.allclose(a, c)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(epsilon=0.0), ValueError, "`epsilon` must be in"),
        (dict(nb_samples=0), ValueError, "`nb_samples` must be >= 1"),
        (dict(targets=np.zeros(2)), ValueError, "one target per input"),
    ],
)
def test_lipschitz_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        LocalLipschitzEstimate(np.zeros((3, 2)), **kwargs)
    with pytest.raises(ValueError, match="shape"):
        LocalLipschitzEstimate(np.zeros(3))


def test_text_lipschitz_in_embedding_space(lexicon, bow_all):
    bow = bow_all.to_keras()
    sents = ["the plot was dull but superb", "good"]
    ig = IntegratedGradientsTokenExplainer(bow, bow_all.tokenizer, steps=32, progress=False)
    lle = TextLocalLipschitzEstimate(sents, nb_samples=3, seed=0)
    values = lle.detailed_evaluate(ig)
    assert values.shape == (2,) and np.all(np.isfinite(values)) and np.all(values >= 0)
    np.testing.assert_array_equal(values, lle.detailed_evaluate(ig))  # seeded
    for cls, kw in (
        (LimeTokenExplainer, dict(nb_samples=100)),
        (ShapTokenExplainer, dict(n_permutations=2)),
    ):
        v = lle.detailed_evaluate(cls(bow, bow_all.tokenizer, progress=False, **kw))
        assert np.all(np.isfinite(v)) and np.all(v >= 0)
    # a model whose output does not depend on the embedding: every explanation is stable
    with pytest.raises(TypeError, match="token explainer"):
        lle.detailed_evaluate(lambda s: s)
    with pytest.raises(ValueError, match="Embedding layer"):
        lle.detailed_evaluate(LimeTokenExplainer(bow_all, bow_all.tokenizer, progress=False))


def test_text_lipschitz_of_ig_on_linear_embedding_model():
    """For p = sigmoid(sum of a 1-d embedding), IG moves smoothly: the estimate is small
    and shrinks with epsilon (it is a local, first-order quantity)."""
    from xplique_ext.text import BagOfWordsModel

    bow = BagOfWordsModel({"good": 0.5, "bad": -0.5})
    ig = IntegratedGradientsTokenExplainer(bow.to_keras(), bow.tokenizer, progress=False)
    big = TextLocalLipschitzEstimate(["good bad good"], epsilon=1.0, nb_samples=5)
    small = TextLocalLipschitzEstimate(["good bad good"], epsilon=0.1, nb_samples=5)
    lb, ls = big.evaluate(ig), small.evaluate(ig)
    assert 0 < ls < 1.0 and 0 < lb < 1.0


# ----------------------------------------------------------------------------- agreement
def test_rank_agreement_matches_scipy_kendall():
    table = pd.DataFrame(
        {
            "L-PERCY": [0.13, 0.22, 0.09, 0.25, 0.15],
            "S-PERCY": [0.08, 0.20, 0.07, 0.23, 0.06],
            "accuracy": [0.75, 0.82, 0.88, 0.82, 0.74],
        },
        index=["CW", "CE", "CsB", "CDE", "CDG"],
    )
    tau = percy_rank_agreement(table)
    assert tau.loc["L-PERCY", "S-PERCY"] == pytest.approx(
        scipy.stats.kendalltau(table["L-PERCY"], table["S-PERCY"]).statistic
    )
    assert tau.loc["accuracy", "L-PERCY"] == pytest.approx(
        scipy.stats.kendalltau(table["accuracy"], table["L-PERCY"]).statistic
    )
    np.testing.assert_allclose(np.diag(tau), 1.0)
    assert (tau.to_numpy() == tau.to_numpy().T).all()
    with pytest.warns(UndefinedScoreWarning, match="constant"):
        t = percy_rank_agreement({"a": [1, 2, 3], "b": [1, 1, 1]})
    assert np.isnan(t.loc["a", "b"])
    with pytest.raises(ValueError, match="at least two frameworks"):
        percy_rank_agreement({"a": [1, 2]})
    with pytest.raises(TypeError, match="DataFrame or a mapping"):
        percy_rank_agreement([[1, 2], [3, 4]])


def test_pearson_agreement_eq11_concatenates_models_and_drops_nan():
    lime = [np.array([1, 0, np.nan, 1]), np.array([0, 0, 1])]
    shap = [np.array([1, 0, np.nan, 0]), np.array([0, 1, 1])]
    r = percy_pearson_agreement({"L": lime, "S": shap})
    x = np.array([1, 0, 1, 0, 0, 1])
    y = np.array([1, 0, 0, 0, 1, 1])
    assert r.loc["L", "S"] == pytest.approx(scipy.stats.pearsonr(x, y).statistic)
    with pytest.raises(ValueError, match="same sentences"):
        percy_pearson_agreement({"L": [1, 0, 1], "S": [1, 0]})
    with pytest.warns(UndefinedScoreWarning, match="constant"):
        percy_pearson_agreement({"L": [1, 1, 1], "S": [1, 0, 1]})


# ----------------------------------------------------------------------------- plots
def _details(bow_all):
    sents = ["the plot was dull but the cast <b>was</b> superb", "a good film"]
    percy = PERCY(bow_all, sents, [1, 1], tokenizer=bow_all.tokenizer)
    expl = [bow_all.logit_contributions(s) for s in sents]
    return percy, expl


def test_highlight_html_shows_conjuncts_keyword_and_verdict(bow_all):
    percy, expl = _details(bow_all)
    d = percy.details(expl)
    html_text = highlight_html(percy.sentences[0], expl[0], details=d.iloc[0], title="exact")
    assert "&lt;b&gt;was&lt;/b&gt;" in html_text  # tokens are escaped
    assert "<b>but</b>" in html_text and "B&#9733;" in html_text and ">A<" in html_text
    assert "PERCY = " in html_text and "E[a]" in html_text and html_text._repr_html_()
    assert "no rule keyword" in highlight_html(percy.sentences[1], expl[1], details=d.iloc[1])
    many = percy_examples_html(percy, expl, [0, 1], title="examples")
    assert many.count('<div style="font-family') == 2
    with pytest.raises(ValueError, match="one value per whitespace token"):
        highlight_html("a b", [1.0])


def test_matplotlib_plots(bow_all):
    import matplotlib.pyplot as plt

    percy, expl = _details(bow_all)
    d = percy.details(expl)
    fig = plot_highlight(
        percy.sentences[0], expl[0], details=d.iloc[0], title="exact", max_width=20
    )
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "but" in texts and "B*" in texts and any("PERCY = " in t for t in texts)
    table = pd.DataFrame({"accuracy": [0.9, 0.8], "L-PERCY": [0.2, 0.1]}, index=["m1", "m2"])
    figs = [
        fig,
        plot_percy_scores(table),
        plot_lipschitz({"L": [0.1, 0.2], "I": [0.3]}),
        plot_agreement(percy_rank_agreement({"a": [1, 2, 3], "b": [1, 3, 2]})),
    ]
    assert all(len(f.axes) >= 1 for f in figs)
    plt.close("all")


# ----------------------------------------------------------------------------- demo
def test_demo_section():
    from xplique_ext.cli.percy_demo import demo_section

    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedScoreWarning)
        text = demo_section(seed=0, progress=False)
    assert "L-PERCY" in text and "I-PERCY" in text and "accuracy" in text
    positive, negative = text.split("negative sentences (label 0")
    assert "positive sentences (label 1" in positive
    for table in (positive, negative):  # each class in its own table
        lines = {line.split("  ")[0].strip(): line for line in table.splitlines()}
        b_only = lines["bag-of-words, reads B only"].split()[-4:]
        a_only = lines["bag-of-words, reads A only"].split()[-4:]
        assert float(b_only[0]) == 1.0 and float(b_only[1]) >= 0.9  # accuracy, L-PERCY
        assert all(float(v) == 0.0 for v in a_only)


def test_lipschitz_with_an_xplique_explainer():
    """Any explainer of continuous inputs: Xplique's GradientInput on f(x) = 2 * sum(x)
    explains 2 * x, so L = 2 exactly."""
    import keras
    from xplique.attributions import GradientInput

    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1, use_bias=False)])
    model.layers[-1].set_weights([np.full((6, 1), 2.0, np.float32)])
    x = np.random.default_rng(2).normal(size=(4, 6)).astype(np.float32)
    explainer = GradientInput(model, batch_size=8)
    lle = LocalLipschitzEstimate(x, np.ones((4, 1), np.float32), batch_size=3, nb_samples=3)
    np.testing.assert_allclose(lle.detailed_evaluate(explainer), 2.0, rtol=1e-4)


def test_examples_html_aligns_sentences_with_several_structures(bow_all):
    sents = ["good but bad though fine", "the plot was dull but the cast was superb"]
    percy = PERCY(bow_all, sents, [1, 1], tokenizer=bow_all.tokenizer)
    expl = [bow_all.logit_contributions(s) for s in sents]
    assert len(percy.details(expl)) == 3
    html_text = percy_examples_html(percy, expl, [1])
    assert "superb" in html_text and "based on B" in html_text and "based on A" not in html_text


def test_highlight_html_reads_a_partial_details_dict():
    # `details` may be a dict holding only some of PERCY.details' columns (or None values)
    sentence = "the plot is dull but the acting is great"
    attributions = np.linspace(-1, 1, len(sentence.split()))
    text = highlight_html(sentence, attributions, details={"score": 1.0, "rule_conjunct": "B"})
    assert "PERCY = 1: decision based on B" in text
    text = highlight_html(sentence, attributions, details={"score": None, "p_value": None})
    assert "PERCY =" not in text
