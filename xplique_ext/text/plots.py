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
from collections.abc import Mapping
from typing import Any, Optional, Sequence

import numpy as np
import pandas as pd

from ..commons.params import STRING, ArrayLike, InstanceOf, Interval, validate_params
from .rules import resolve_rules
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


def _layout(sentence: str, attributions: Any, rules: Any):
    tokens = sentence.split()
    w = np.asarray(attributions, dtype=np.float64).reshape(-1)
    if len(w) != len(tokens):
        raise ValueError(
            f"`attributions` must have one value per whitespace token: got {len(w)} values "
            f"for {len(tokens)} tokens"
        )
    table = resolve_rules(rules)
    k, kw = find_keyword(tokens, table)
    scale = float(np.max(np.abs(w))) if len(w) and np.max(np.abs(w)) > 0 else 1.0
    return tokens, w, k, kw, table, scale


def _verdict(details: Any) -> Optional[str]:
    if details is None:
        return None
    get = details.get if hasattr(details, "get") else (lambda key, d=None: d)
    score = get("score")
    parts = []
    if get("prediction") is not None:
        parts.append(
            f"prediction {int(get('prediction'))} (target {int(get('target'))}, "
            f"p(y=1|s) = {float(get('p_positive')):.3f})"
        )
    if get("E_a") is not None and np.isfinite(get("E_a")):
        parts.append(f"E[a] = {float(get('E_a')):.3g}, E[b] = {float(get('E_b')):.3g}")
    if get("p_value") is not None:
        pv = float(get("p_value"))
        parts.append("p-value " + ("n/a" if not np.isfinite(pv) else f"{pv:.3g}"))
    if score is not None and np.isfinite(score):
        conj = get("rule_conjunct")
        verdict = (
            f"decision based on {conj}"
            if score == 1.0
            else f"decision not (significantly) based on {conj}"
        )
        parts.append(f"PERCY = {int(score)}: {verdict}")
    elif score is not None:
        parts.append("no rule keyword: not scored")
    return " | ".join(parts)


_HIGHLIGHT = {
    "sentence": [STRING],
    "attributions": [ArrayLike("real", ndim=1, batch_hint=False)],  # one per token: below
    "rules": "no_validation",  # checked by resolve_rules
    "details": "no_validation",  # a row of PERCY.details, read by name
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
        Rule table (see :func:`xplique_ext.text.rules.resolve_rules`).
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
    tokens, w, k, kw, table, scale = _layout(sentence, attributions, rules)
    expected = table.get(kw) if kw else None
    spans = []
    for i, (tok, v) in enumerate(zip(tokens, w)):
        a = min(abs(v) / scale, 1.0) * 0.85
        color = f"rgba(26,150,65,{a:.3f})" if v >= 0 else f"rgba(215,25,28,{a:.3f})"
        text = html.escape(tok)
        style = f"background:{color};padding:1px 3px;border-radius:3px;margin:1px"
        if i == k:
            style += ";border:2px solid #333;font-weight:bold"
            text = f"<b>{text}</b>"
        spans.append(f'<span title="{v:+.4g}" style="{style}">{text}</span>')
    if k is not None:

        def label(c):
            star = "&#9733;" if c == expected else ""
            return f'<sup style="color:#555;font-size:70%">{c}{star}</sup>'

        a_part = " ".join(spans[:k])
        b_part = " ".join(spans[k + 1 :])
        body = (
            f'{label("A")}<span style="border-bottom:2px solid #888">{a_part}</span> '
            f'{spans[k]} {label("B")}<span style="border-bottom:2px solid #888">'
            f"{b_part}</span>"
        )
    else:
        body = " ".join(spans)
    parts = ['<div style="font-family:sans-serif;line-height:2;margin:4px 0">']
    if title:
        parts.append(f'<div style="font-weight:bold">{html.escape(title)}</div>')
    parts.append(f"<div>{body}</div>")
    verdict = _verdict(details)
    if verdict:
        parts.append(f'<div style="color:#444;font-size:85%">{html.escape(verdict)}</div>')
    parts.append("</div>")
    return HighlightedText("".join(parts))


@validate_params({
    "percy": "no_validation",  # a PERCY metric, read through its details and sentences
    "explanations": "no_validation",  # one attribution vector per sentence, ragged
    "indices": [ArrayLike("integer", ndim=1, batch_hint=False)],
    "title": [STRING, None],
})
def percy_examples_html(
    percy: Any, explanations: Any, indices: Sequence[int], title: Optional[str] = None
) -> HighlightedText:
    """HTML highlighting of several sentences of a :class:`~xplique_ext.metrics.PERCY`
    metric, each with the verdict of its first structure (first keyword)."""
    details = percy.details(explanations)
    if "sentence_index" in details:  # one row per structure: show the first keyword's
        details = details.groupby("sentence_index", sort=True).head(1).reset_index(drop=True)
    blocks = [
        highlight_html(
            percy.sentences[i], explanations[i], rules=percy.rules, details=details.iloc[i]
        )
        for i in indices
    ]
    head = f"<h4>{html.escape(title)}</h4>" if title else ""
    return HighlightedText(head + "".join(blocks))


@validate_params({**_HIGHLIGHT, "ax": _AX,
                  "max_width": [Interval(numbers.Integral, 1, None)]})
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
    import matplotlib.pyplot as plt

    tokens, w, k, kw, table, scale = _layout(sentence, attributions, rules)
    expected = table.get(kw) if kw else None
    lines, line, width = [], [], 0
    for i, tok in enumerate(tokens):
        if line and width + len(tok) + 1 > max_width:
            lines.append(line)
            line, width = [], 0
        line.append(i)
        width += len(tok) + 1
    if line or not lines:
        lines.append(line)
    height = 0.5 * len(lines) + (0.6 if details is not None else 0.2) + (0.3 if title else 0)
    if ax is None:
        fig, ax = plt.subplots(figsize=(min(12, 0.13 * max_width + 1), max(1.2, height)))
    else:
        fig = ax.figure
    ax.set_axis_off()
    ax.set_xlim(0, max_width)
    ax.set_ylim(-len(lines) - 1.2, 0.8)
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import ListedColormap, Normalize

    # RdYlGn without its darkest ends (the token text stays readable), centred on 0
    cmap = ListedColormap(plt.get_cmap("RdYlGn")(np.linspace(0.05, 0.95, 256)))
    for row, idx in enumerate(lines):
        x = 0.0
        for i in idx:
            tok = tokens[i]
            v = w[i] / scale
            face = cmap(0.5 + 0.5 * np.clip(v, -1, 1))
            is_kw = i == k
            conj = None if k is None or is_kw else ("A" if i < k else "B")
            label = tok + ("" if conj is None else "")
            ax.text(
                x,
                -row,
                label,
                fontsize=11,
                family="monospace",
                fontweight="bold" if is_kw else "normal",
                va="center",
                bbox=dict(
                    boxstyle="round,pad=0.2",
                    fc=face,
                    ec="black" if is_kw else "none",
                    lw=1.5 if is_kw else 0,
                ),
            )
            if conj is not None:
                star = "*" if conj == expected else ""
                ax.text(x, -row - 0.38, conj + star, fontsize=7, color="#555", va="center")
            x += len(tok) + 1.2
    bar = fig.colorbar(ScalarMappable(Normalize(-scale, scale), cmap), ax=ax,
                       fraction=0.03, pad=0.01)
    bar.set_ticks([-scale, 0.0, scale], labels=[f"{t:.2g}" for t in (-scale, 0.0, scale)])
    bar.ax.tick_params(labelsize=7)
    bar.set_label("attribution", fontsize=7)
    verdict = _verdict(details)
    if verdict:
        ax.text(0, -len(lines) - 0.3, verdict, fontsize=8, color="#333", va="center")
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    return fig


@validate_params({"table": [_FRAME],
                  "columns": [InstanceOf(list, tuple, description="a list of column names"),
                              None],
                  "ax": _AX})
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
    import matplotlib.pyplot as plt

    cols = (
        list(columns)
        if columns is not None
        else [c for c in table.columns if np.issubdtype(table[c].dtype, np.number)]
    )
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.6 + 1.4 * len(table), 3.2))
    else:
        fig = ax.figure
    x = np.arange(len(table))
    width = 0.8 / max(len(cols), 1)
    for j, c in enumerate(cols):
        ax.bar(
            x + (j - (len(cols) - 1) / 2) * width, table[c].to_numpy(dtype=float), width, label=c
        )
    ax.set_xticks(x)
    ax.set_xticklabels([str(i) for i in table.index], rotation=0)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score (higher is better)")
    ax.legend(fontsize=8, ncol=len(cols))
    fig.tight_layout()
    return fig


@validate_params({"values": [InstanceOf(dict, Mapping, description="a mapping framework "
                                                                  "-> per-sentence estimates")],
                  "ax": _AX})
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
    import matplotlib.pyplot as plt

    names = list(values)
    data = [np.asarray(values[n], dtype=float)[np.isfinite(values[n])] for n in names]
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.5 + 1.2 * len(names), 3))
    else:
        fig = ax.figure
    ax.boxplot(data)
    ax.set_xticks(np.arange(1, len(names) + 1))
    ax.set_xticklabels(names)
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
    import matplotlib.pyplot as plt

    values = matrix.to_numpy(dtype=float)
    if ax is None:
        fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(matrix), 1 + 0.8 * len(matrix)))
    else:
        fig = ax.figure
    im = ax.imshow(values, vmin=-1, vmax=1, cmap="RdBu")
    ax.set_xticks(range(len(matrix)))
    ax.set_xticklabels(matrix.columns)
    ax.set_yticks(range(len(matrix)))
    ax.set_yticklabels(matrix.index)
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            text = "n/a" if not np.isfinite(values[i, j]) else f"{values[i, j]:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig
