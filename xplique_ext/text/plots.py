"""Token highlighting of attributions, like Table 7 of the PERCY paper, in HTML (for
notebooks) and as matplotlib figures; and summary plots of PERCY experiments.

Each token is shaded by its attribution (green: towards the positive class, red:
towards the negative class, darker: larger |w|), the keyword is boxed, the conjuncts are
labelled A and B with the one the rule expects starred, and the verdict (prediction,
E[a], E[b], p-value, PERCY) is written under the sentence.
"""

from __future__ import annotations

import html
import numbers
import textwrap
from collections.abc import Mapping
from typing import Any, List, NamedTuple, Optional, Sequence

import numpy as np
import pandas as pd

from ..commons.params import STRING, ArrayLike, InstanceOf, Interval, validate_params
from .conjunctions import resolve_rules
from .tokens import find_keyword

__all__ = [
    "HighlightedText",
    "highlight_html",
    "plot_highlight",
    "percy_examples_html",
    "plot_percy_scores",
    "plot_lipschitz",
    "plot_agreement",
]


class HighlightedText(str):
    """An HTML string that Jupyter renders as HTML."""

    def _repr_html_(self) -> str:
        return str(self)


class _Layout(NamedTuple):
    """A sentence to draw: its tokens, their attributions (float64), the position of its
    first rule keyword and the conjunct its rule designates (None without keyword), and
    the scale of the colours (the largest |attribution|, 1 when all are 0)."""

    tokens: List[str]
    attributions: np.ndarray
    keyword_index: Optional[int]
    rule_conjunct: Optional[str]
    scale: float


def _layout(sentence: str, attributions: np.ndarray, rules: Any) -> _Layout:
    """The :class:`_Layout` of a sentence and its attributions, checked."""
    tokens = sentence.split()
    if len(attributions) != len(tokens):
        raise ValueError(
            f"`attributions` must have one value per whitespace token: got "
            f"{len(attributions)} values for {len(tokens)} tokens"
        )
    table = resolve_rules(rules)
    keyword_index, keyword = find_keyword(tokens, table)
    rule_conjunct = table.get(keyword) if keyword else None
    scale = float(np.max(np.abs(attributions), initial=0.0)) or 1.0
    return _Layout(
        tokens=tokens,
        attributions=attributions.astype(np.float64),
        keyword_index=keyword_index,
        rule_conjunct=rule_conjunct,
        scale=scale,
    )


def _verdict(details: Any) -> Optional[str]:
    """The verdict line of a row of PERCY.details ('' without one)."""
    if details is None:
        details = {}
    get = details.get
    parts = []
    pv = get("p_value")
    score = get("score")
    if get("prediction") is not None:
        parts.append(
            f"prediction {int(get('prediction'))} (target {int(get('target'))}, "
            f"p(y=1|s) = {float(get('p_positive')):.3f})"
        )
    if get("E_a") is not None and np.isfinite(get("E_a")):
        parts.append(f"E[a] = {float(get('E_a')):.3g}, E[b] = {float(get('E_b')):.3g}")
    if pv is not None:
        parts.append("p-value " + (f"{float(pv):.3g}" if np.isfinite(pv) else "n/a"))
    if score is not None:
        parts.append(_score_line(score, get("rule_conjunct")))
    return " | ".join(parts)


def _score_line(score: float, rule_conjunct: Optional[str]) -> str:
    """The part of the verdict line that reads PERCY's score."""
    if not np.isfinite(score):
        return "no rule keyword: not scored"
    based = "based" if score == 1.0 else "not (significantly) based"
    return f"PERCY = {int(score)}: decision {based} on {rule_conjunct}"


def _figure(ax: Any, figsize: tuple):
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize) if ax is None else (ax.figure, ax)


#: attributions: one per token (checked by _layout); rules: checked by resolve_rules; details: a
#: row of PERCY.details, read by name
_HIGHLIGHT = {
    "sentence": [STRING],
    "attributions": [ArrayLike("real", ndim=1, batch_hint=False)],
    "rules": "no_validation",
    "details": "no_validation",
    "title": [STRING, None],
}
_AX = "no_validation"  # a matplotlib Axes
_FRAME = InstanceOf(pd.DataFrame, description="a pandas DataFrame")


@validate_params(_HIGHLIGHT)
def highlight_html(
    sentence: str,
    attributions: Any,
    *,
    rules: Any = None,
    details: Any = None,
    title: Optional[str] = None,
) -> HighlightedText:
    """HTML highlighting of a sentence's token attributions.

    Parameters
    ----------
    sentence
        The sentence.
    attributions
        One attribution per whitespace token (n,).
    rules
        Rule table (see :func:`xplique_ext.text.conjunctions.resolve_rules`).
    details
        Optional row of :meth:`xplique_ext.metrics.PERCY.details` (a pandas Series or a
        dict) whose verdict is shown.
    title
        Optional title (e.g. the framework's name).

    Returns
    -------
    HighlightedText
        HTML string (rendered as HTML by Jupyter).

    Examples
    --------
    >>> html_text = highlight_html("dull plot but superb cast", [-1, 0, 0, 2, 0.1])
    >>> "superb" in html_text and "<b>" in html_text
    True
    """
    layout = _layout(sentence, attributions, rules)
    tokens = layout.tokens
    w = layout.attributions
    k = layout.keyword_index
    expected = layout.rule_conjunct
    scale = layout.scale
    spans = []
    for i, (tok, v) in enumerate(zip(tokens, w)):
        a = min(abs(v) / scale, 1.0) * 0.85
        color = f"rgba(26,150,65,{a:.3f})" if v >= 0 else f"rgba(215,25,28,{a:.3f})"
        style = f"background:{color};padding:1px 3px;border-radius:3px;margin:1px"
        text = html.escape(tok)
        if i == k:
            style = style + ";border:2px solid #333;font-weight:bold"
            text = f"<b>{text}</b>"
        spans.append(f'<span title="{v:+.4g}" style="{style}">{text}</span>')
    body = " ".join(spans)
    if k is not None:

        def part(c, words):
            return (
                f'<sup style="color:#555;font-size:70%">{c}{"&#9733;" * (c == expected)}'
                f'</sup><span style="border-bottom:2px solid #888">{" ".join(words)}</span>'
            )

        body = f"{part('A', spans[:k])} {spans[k]} {part('B', spans[k + 1 :])}"
    verdict = _verdict(details)
    pieces = ['<div style="font-family:sans-serif;line-height:2;margin:4px 0">']
    if title:
        pieces.append(f'<div style="font-weight:bold">{html.escape(title)}</div>')
    pieces.append(f"<div>{body}</div>")
    if verdict:
        pieces.append(f'<div style="color:#444;font-size:85%">{html.escape(verdict)}</div>')
    pieces.append("</div>")
    return HighlightedText("".join(pieces))


@validate_params(
    {
        "percy": "no_validation",  # a PERCY metric, read through its details and sentences
        "explanations": "no_validation",  # one attribution vector per sentence, ragged
        "indices": [ArrayLike("integer", ndim=1, batch_hint=False)],
        "title": [STRING, None],
    }
)
def percy_examples_html(
    percy: Any, explanations: Any, indices: Sequence[int], title: Optional[str] = None
) -> HighlightedText:
    """HTML highlighting of several sentences of a :class:`~xplique_ext.metrics.PERCY`
    metric, each with the verdict of its first structure (first keyword)."""
    # one row per structure: the first keyword's of each sentence
    details = percy.details(explanations).groupby("sentence_index").head(1).reset_index(drop=True)
    head = f"<h4>{html.escape(title)}</h4>" if title else ""
    return HighlightedText(
        head
        + "".join(
            highlight_html(
                percy.sentences[i], explanations[i], rules=percy.rules, details=details.iloc[i]
            )
            for i in indices
        )
    )


@validate_params({**_HIGHLIGHT, "ax": _AX, "max_width": [Interval(numbers.Integral, 1, None)]})
def plot_highlight(
    sentence: str,
    attributions: Any,
    *,
    rules: Any = None,
    details: Any = None,
    title: Optional[str] = None,
    ax: Any = None,
    max_width: int = 70,
):
    """Matplotlib figure highlighting a sentence's token attributions (Table 7 style).

    Parameters are those of :func:`highlight_html`; ``ax`` is an optional axes to draw
    on and ``max_width`` the number of characters per line before wrapping. A colour bar
    gives the scale: colours are centred on 0 (limits -m, m with m the largest absolute
    attribution of the sentence).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib as mpl

    layout = _layout(sentence, attributions, rules)
    tokens = layout.tokens
    w = layout.attributions
    k = layout.keyword_index
    expected = layout.rule_conjunct
    scale = layout.scale
    # token indices per line: each token and its space fit in max_width characters
    wrapped = textwrap.wrap(
        " ".join(tokens), max(max_width - 1, 1), break_long_words=False, break_on_hyphens=False
    )
    tokens_per_line = [len(line.split()) for line in wrapped]
    lines = np.split(np.arange(len(tokens)), np.cumsum(tokens_per_line)[:-1])
    height = 0.5 * len(lines) + (0.6 if details is not None else 0.2) + (0.3 if title else 0)
    fig, ax = _figure(ax, (min(12, 0.13 * max_width + 1), max(1.2, height)))
    ax.set(xlim=(0, max_width), ylim=(-len(lines) - 1.2, 0.8))
    ax.set_axis_off()
    # RdYlGn without its darkest ends (the token text stays readable), centred on 0
    cmap = mpl.colors.ListedColormap(mpl.colormaps["RdYlGn"](np.linspace(0.05, 0.95, 256)))
    for row, idx in enumerate(lines):
        x = 0.0
        for i in idx:
            face = cmap(0.5 + 0.5 * np.clip(w[i] / scale, -1, 1))
            ax.text(
                x,
                -row,
                tokens[i],
                fontsize=11,
                family="monospace",
                va="center",
                fontweight="bold" if i == k else "normal",
                bbox=dict(boxstyle="round,pad=0.2", fc=face, ec="black", lw=1.5 * (i == k)),
            )
            if k is not None and i != k:
                conj = "A" if i < k else "B"
                ax.text(
                    x,
                    -row - 0.38,
                    conj + "*" * (conj == expected),
                    fontsize=7,
                    color="#555",
                    va="center",
                )
            x += len(tokens[i]) + 1.2
    fig.colorbar(
        mpl.cm.ScalarMappable(mpl.colors.Normalize(-scale, scale), cmap),
        ax=ax,
        fraction=0.03,
        pad=0.01,
        label="attribution",
    )
    verdict = _verdict(details)
    if verdict:
        ax.text(0, -len(lines) - 0.3, verdict, fontsize=8, color="#333", va="center")
    ax.set_title(title or "", fontsize=10, loc="left")
    return fig


@validate_params(
    {
        "table": [_FRAME],
        "ax": _AX,
        "columns": [InstanceOf(list, tuple, description="a list of column names"), None],
    }
)
def plot_percy_scores(table: Any, *, columns: Optional[Sequence[str]] = None, ax: Any = None):
    """Grouped bar chart of PERCY scores (and accuracy) per model.

    Parameters
    ----------
    table
        DataFrame with one row per model (index = model names) and columns such as
        ``'accuracy'``, ``'L-PERCY'``, ``'S-PERCY'``, ``'I-PERCY'``.
    columns
        Columns to plot (default: all numeric ones).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _figure(ax, (1.6 + 1.4 * len(table), 3.2))
    data = table.select_dtypes("number") if columns is None else table[list(columns)]
    data.astype(float).plot.bar(ax=ax, rot=0, width=0.8)
    ax.set(ylim=(0, 1.05), ylabel="score (higher is better)")
    fig.tight_layout()
    return fig


@validate_params(
    {
        "ax": _AX,
        "values": [
            InstanceOf(dict, Mapping, description="a mapping framework -> per-sentence estimates")
        ],
    }
)
def plot_lipschitz(values: Any, *, ax: Any = None):
    """Box plots of Local Lipschitz estimates per framework (Fig. 5 of the paper).

    Parameters
    ----------
    values
        Mapping framework -> per-sentence estimates.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _figure(ax, (1.5 + 1.2 * len(values), 3))
    data = [np.asarray(v, dtype=float) for v in values.values()]
    ax.boxplot([v[np.isfinite(v)] for v in data], tick_labels=list(values))
    ax.set_ylabel("local Lipschitz estimate (lower is better)")
    fig.tight_layout()
    return fig


@validate_params({"matrix": [_FRAME], "title": [STRING, None], "ax": _AX})
def plot_agreement(matrix: Any, *, title: Optional[str] = None, ax: Any = None):
    """Heatmap of an agreement matrix (Kendall tau or Pearson r, Fig. 7 of the paper).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _figure(ax, (1.2 + 0.9 * len(matrix), 1 + 0.8 * len(matrix)))
    values = matrix.to_numpy(dtype=float)
    im = ax.imshow(values, vmin=-1, vmax=1, cmap="RdBu")
    ax.set(
        xticks=range(values.shape[1]),
        xticklabels=matrix.columns,
        yticks=range(values.shape[0]),
        yticklabels=matrix.index,
        title=title or "",
    )
    for (i, j), v in np.ndenumerate(values):
        ax.text(j, i, f"{v:.2f}" if np.isfinite(v) else "n/a", ha="center", va="center", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    return fig
