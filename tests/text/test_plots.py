"""Highlighting and plots of PERCY's results (``xplique_ext/text/plots.py``)."""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from xplique_ext.metrics import PERCY
from xplique_ext.text import (
    highlight_html,
    percy_examples_html,
    percy_rank_agreement,
    plot_agreement,
    plot_highlight,
    plot_lipschitz,
    plot_percy_scores,
)

matplotlib.use("Agg")


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


def test_highlight_has_a_centred_colour_bar():
    fig = plot_highlight("good but bad", [0.5, 0.0, -2.0])
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 1
    low, high = bars[0].get_ylim()
    assert low == pytest.approx(-2.0) and high == pytest.approx(2.0)
    plt.close(fig)
