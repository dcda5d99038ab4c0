"""Labelled sentences for PERCY experiments, generated from templates and a sentiment
lexicon shipped with the package (nothing is downloaded).

Every structured sentence reads ``A keyword B`` where A and B are clauses of known
sentiment; unstructured sentences are one clause, or two clauses of the same sentiment
joined by ``and``. The lexicon (``xplique_ext/text/data/sentiment_lexicon.tsv``) lists
sentiment words (adjectives, nouns, verbs, adverbs) with a polarity and a strength, and
the neutral subjects and intensifiers the templates use.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from ..commons.params import Boolean, InstanceOf, Interval, Options, validate_params
from .conjunctions import resolve_rules

__all__ = ["Lexicon", "load_lexicon", "generate_sentences", "CLAUSE_STYLES"]

#: Clause styles: 'mixed' clauses mix sentiment words with neutral words ("the plot
#: was really dull"); 'sentiment' clauses hold 2 to 3 sentiment words only ("dull
#: lifeless mess").
CLAUSE_STYLES = ("mixed", "sentiment")

_TEMPLATES = {
    "mixed": (
        "the {noun} was {adj}",
        "the {noun} was {int} {adj}",
        "the {noun} is {adj}",
        "{adj} {noun}",
        "i {verb} the {noun}",
        "the {noun} felt {int} {adj}",
        "it was a {snoun}",
        "the {noun} and the {noun2} were {adj}",
        "the {noun} was {adj} and {adj2}",
        "the {noun} was {adv} done",
        "we found the {noun} {adj}",
        "this {noun} is a {snoun}",
    ),
    "sentiment": (
        "{adj} {adj2}",
        "{adj} {adj2} {adj3}",
        "{adv} {adj}",
        "{adj} {snoun}",
        "{adv} {adj} {snoun}",
        "{adj} {adj2} {snoun}",
    ),
}
_COLUMNS = [
    "sentence",
    "label",
    "structured",
    "keyword",
    "rule_conjunct",
    "a_text",
    "b_text",
    "a_sentiment",
    "b_sentiment",
    "contrastive",
    "n_tokens",
]


@dataclass(frozen=True)
class Lexicon:
    """Sentiment lexicon: word -> (kind, polarity, strength)."""

    entries: Mapping[str, Tuple[str, int, float]]

    def words(self, kind: str, polarity: int) -> List[str]:
        """Words of a kind ('adj', 'noun', 'verb', 'adv', 'subject', 'intensifier') and
        polarity (+1, -1, or 0 for neutral words)."""
        return [w for w, (k, p, _) in self.entries.items() if k == kind and p == polarity]

    def weight(self, word: str) -> float:
        """Signed strength polarity * strength of a word (0 for unknown/neutral words)."""
        kind, polarity, strength = self.entries.get(word, ("", 0, 0.0))
        return float(polarity * strength)

    def weights(self) -> Dict[str, float]:
        """Signed strengths of every sentiment word: a ready-made bag-of-words model."""
        return {w: float(p * s) for w, (_, p, s) in self.entries.items() if p != 0}


Lexicon.__init__ = validate_params(
    {
        "entries": [
            InstanceOf(dict, Mapping, description="a mapping word -> (kind, polarity, strength)")
        ]
    }
)(Lexicon.__init__)


@lru_cache(maxsize=1)
def load_lexicon() -> Lexicon:
    """The sentiment lexicon shipped with the package.

    Examples
    --------
    >>> lex = load_lexicon()
    >>> lex.weight("superb") > 0 > lex.weight("dull"), lex.weight("movie")
    (True, 0.0)
    """
    import pandas as pd

    source = resources.files("xplique_ext.text").joinpath("data/sentiment_lexicon.tsv")
    with source.open(encoding="utf-8") as handle:
        table = pd.read_csv(
            handle,
            sep="\t",
            comment="#",
            header=None,
            dtype={0: str, 1: str},
            keep_default_na=False,
        )
    return Lexicon({w: (k, int(p), float(s)) for w, k, p, s in table.itertuples(index=False)})


class _Generator:
    """Draws clauses and labelled rows from a lexicon with one local generator."""

    def __init__(self, lexicon: Lexicon, rng: np.random.Generator, table: Mapping[str, str]):
        # a keyword inside a clause would split the sentence at the wrong place
        words = set()
        for templates in _TEMPLATES.values():
            for template in templates:
                words.update(w for w in template.split() if "{" not in w)
        clash = sorted(set(table) & (words | set(lexicon.entries)))
        if clash:
            raise ValueError(
                "`rules` keywords must not be words the generated clauses use "
                f"(the structure's keyword must be the first one), got {clash}"
            )
        self.rng = rng
        self.table = table
        self.keywords = sorted(table)
        self.pools = {
            pol: {
                kind: lexicon.words("noun" if kind == "snoun" else kind, pol)
                for kind in ("adj", "snoun", "verb", "adv")
            }
            for pol in (-1, 1)
        }
        self.subjects = lexicon.words("subject", 0)
        self.intensifiers = lexicon.words("intensifier", 0)

    def _pick(self, pool: List[str], k: int) -> List[str]:
        return [pool[i] for i in self.rng.choice(len(pool), size=k, replace=False)]

    def clause(self, polarity: int, style: str) -> str:
        templates = _TEMPLATES[style]
        template = templates[int(self.rng.integers(len(templates)))]
        pool = self.pools[polarity]
        adjs = self._pick(pool["adj"], 3)
        nouns = self._pick(self.subjects, 2)
        return template.format(
            adj=adjs[0],
            adj2=adjs[1],
            adj3=adjs[2],
            noun=nouns[0],
            noun2=nouns[1],
            int=self._pick(self.intensifiers, 1)[0],
            snoun=self._pick(pool["snoun"], 1)[0],
            verb=self._pick(pool["verb"], 1)[0],
            adv=self._pick(pool["adv"], 1)[0],
        )

    def polarity(self) -> int:
        return 1 if self.rng.random() < 0.5 else -1

    def structured(self, p_contrast, label_by, a_style, b_style, comma) -> Dict[str, Any]:
        """An ``A keyword B`` row."""
        kw = self.keywords[int(self.rng.integers(len(self.keywords)))]
        a_pol = self.polarity()
        contrastive = bool(self.rng.random() < p_contrast)
        b_pol = -a_pol if contrastive else a_pol
        a_text = self.clause(a_pol, a_style)
        b_text = self.clause(b_pol, b_style)
        sep = " , " if self.rng.random() < comma else " "
        conj = self.table[kw]
        by = _labelling_conjunct(label_by, conj)
        return dict(
            sentence=f"{a_text}{sep}{kw} {b_text}",
            label=int((a_pol if by == "A" else b_pol) > 0),
            structured=True,
            keyword=kw,
            rule_conjunct=conj,
            a_text=a_text,
            b_text=b_text,
            a_sentiment=int(a_pol > 0),
            b_sentiment=int(b_pol > 0),
            contrastive=contrastive,
        )

    def unstructured(self) -> Dict[str, Any]:
        """One clause, or two of the same sentiment joined by ``and``."""
        pol = self.polarity()
        sentence = self.clause(pol, "mixed")
        if self.rng.random() < 0.5:
            sentence = f"{sentence} and {self.clause(pol, 'mixed')}"
        return {
            **dict.fromkeys(_COLUMNS),
            "sentence": sentence,
            "label": int(pol > 0),
            "structured": False,
            "contrastive": False,
        }


def _labelling_conjunct(label_by: str, rule_conjunct: str) -> str:
    """The conjunct ('A' or 'B') whose sentiment labels a structured sentence."""
    if label_by == "rule":
        return rule_conjunct
    if label_by == "anti":  # the other conjunct
        if rule_conjunct == "B":
            return "A"
        return "B"
    return label_by


_UNIT = Interval(numbers.Real, 0, 1)


@validate_params(
    {
        "n": [Interval(numbers.Integral, 0, None)],
        "seed": [Interval(numbers.Integral, 0, None), None],
        "rules": "no_validation",  # checked by resolve_rules
        "structured": [_UNIT],
        "contrastive": [Boolean(), _UNIT],
        "comma": [_UNIT],
        "label_by": [Options(["rule", "anti", "A", "B"])],
        "a_style": [Options(CLAUSE_STYLES)],
        "b_style": [Options(CLAUSE_STYLES)],
        "max_tokens": [Interval(numbers.Integral, 7, None)],
    }
)
def generate_sentences(
    n: int,
    *,
    seed: Optional[int] = 0,
    rules: Any = None,
    structured: float = 0.75,
    contrastive: Union[bool, float] = True,
    label_by: str = "rule",
    a_style: str = "mixed",
    b_style: str = "mixed",
    comma: float = 0.25,
    max_tokens: int = 24,
):
    """Generate labelled sentences, with and without an ``A keyword B`` structure.

    Parameters
    ----------
    n
        Number of sentences.
    seed
        Seed of the generator (a local ``np.random.Generator``); the same seed gives the
        same sentences.
    rules
        Keywords to use and the conjunct each one expects (see
        :func:`xplique_ext.text.conjunctions.resolve_rules`; default but/yet -> B,
        though/while -> A). Keywords are drawn uniformly; a keyword the clauses use
        (``and``, a lexicon word) is refused.
    structured
        Fraction (probability) of sentences with an ``A keyword B`` structure.
    contrastive
        For structured sentences: True gives contrastive pairs (A and B of opposite
        sentiment), False gives A and B of the same sentiment, a float in [0, 1] is the
        probability of a contrastive pair.
    label_by
        'rule': the sentiment of the conjunct the rule expects (B for but/yet, A for
        though/while) -- labels that follow the rule; 'anti': the sentiment of the other
        conjunct -- labels that ignore (contradict) the rule; 'A' or 'B': the sentiment
        of that conjunct whatever the keyword. Unstructured sentences are labelled by
        their (single) sentiment.
    a_style, b_style
        Style of the A and B clauses: 'mixed' (sentiment and neutral words) or
        'sentiment' (2 to 3 sentiment words only).
    comma
        Probability of a separate ``,`` token before the keyword.
    max_tokens
        Maximum number of whitespace tokens of a sentence (a longer one is drawn again;
        every option allows sentences of 7 tokens).

    Returns
    -------
    pandas.DataFrame
        One row per sentence with columns ``sentence``, ``label`` (0/1), ``structured``,
        ``keyword`` (None when unstructured), ``rule_conjunct`` ('A'/'B'/None),
        ``a_text``, ``b_text``, ``a_sentiment``, ``b_sentiment`` (0/1, None when
        unstructured), ``contrastive`` and ``n_tokens``.

    Examples
    --------
    >>> df = generate_sentences(4, seed=1, structured=1.0)
    >>> list(df.columns[:4])
    ['sentence', 'label', 'structured', 'keyword']
    >>> bool((df.a_sentiment != df.b_sentiment).all())
    True
    """
    import pandas as pd

    gen = _Generator(load_lexicon(), np.random.default_rng(seed), resolve_rules(rules))
    rows: List[Dict[str, Any]] = []
    for _ in range(n):
        row = {"n_tokens": max_tokens + 1}
        while row["n_tokens"] > max_tokens:  # drawn again: rows of <= 6 tokens exist
            if gen.rng.random() < structured:
                row = gen.structured(float(contrastive), label_by, a_style, b_style, comma)
            else:
                row = gen.unstructured()
            row["n_tokens"] = len(row["sentence"].split())
        rows.append(row)
    return pd.DataFrame(rows, columns=_COLUMNS)
