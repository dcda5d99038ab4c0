"""PERCY: Post-hoc Explanation-based Rule ConsistencY score for binary sentiment
classifiers on ``A keyword B`` sentences (Gupta, Bouadjenek & Robles-Kelly)."""

from __future__ import annotations

import warnings
from typing import Any, List, Optional, Sequence

import numpy as np

from ..commons.validation import check_choice, check_float, check_int
from ..commons.warnings import UndefinedScoreWarning
from ..text.classifier import TextClassifier
from ..text.rules import resolve_rules
from ..text.tokens import as_sentences, find_keyword
from .base import BaseAttributionMetric

__all__ = ["PERCY", "NoRuleKeywordWarning", "conjunct_contributions", "conjunct_pvalues"]

TESTS = ("ttest", "welch", "mannwhitneyu", None)


class NoRuleKeywordWarning(UndefinedScoreWarning):
    """Some sentences hold no rule keyword: PERCY is undefined (NaN) for them and the
    aggregate averages over the sentences that do."""


def conjunct_contributions(attributions: Any, p_positive: float) -> np.ndarray:
    """Token contributions of Eq. 4: c_i = w_i p(y=1|s) + |w_i| p(y=0|s).

    Parameters
    ----------
    attributions
        Token attributions w (n,).
    p_positive
        p(y=1|s).

    Returns
    -------
    c
        Array (n,); E[a] and E[b] are its sums over the A and B conjuncts.

    Examples
    --------
    >>> conjunct_contributions([1.0, -2.0], 0.75)
    array([ 1., -1.])
    """
    w = np.asarray(attributions, dtype=np.float64)
    return w * p_positive + np.abs(w) * (1.0 - p_positive)


def _segments(values: Sequence[np.ndarray]):
    sizes = np.array([len(v) for v in values], dtype=np.int64)
    flat = np.concatenate(values) if len(values) else np.zeros(0)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    return flat, sizes, starts


def _moments(values: Sequence[np.ndarray]):
    """Size, mean and unbiased variance of each group (vectorised, ragged groups)."""
    flat, n, starts = _segments(values)
    nz = np.maximum(n, 1)
    total = np.add.reduceat(flat, starts) if flat.size else np.zeros(len(n))
    total = np.where(n > 0, total, 0.0)
    mean = total / nz
    centred = flat - np.repeat(mean, n)
    ss = np.add.reduceat(centred**2, starts) if flat.size else np.zeros(len(n))
    ss = np.where(n > 0, ss, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = ss / (n - 1)
    var = np.where(n > 1, var, np.nan)
    return n.astype(np.float64), mean, var


def conjunct_pvalues(
    a_groups: Sequence[np.ndarray], b_groups: Sequence[np.ndarray], test: Optional[str] = "ttest"
) -> np.ndarray:
    """Two-sided p-values comparing the contributions of A and B, one per sentence.

    Parameters
    ----------
    a_groups, b_groups
        Per sentence, the contributions c_i of the A and of the B conjunct.
    test
        'ttest' (Student, equal variances, as ``scipy.stats.ttest_ind``; the authors'
        choice), 'welch' (unequal variances), 'mannwhitneyu', or None (all NaN).

    Returns
    -------
    p
        Array (N,); NaN where the test is undefined (a conjunct with fewer than one
        value -- or, for the t-tests, both with one value -- or no spread at all).

    Notes
    -----
    The t-tests are vectorised over sentences and agree with ``scipy.stats.ttest_ind``;
    the Mann-Whitney U test calls ``scipy.stats.mannwhitneyu`` per sentence.
    """
    from scipy import stats

    m = len(a_groups)
    if test is None or m == 0:
        return np.full(m, np.nan)
    a_groups = [np.asarray(a, np.float64) for a in a_groups]
    b_groups = [np.asarray(b, np.float64) for b in b_groups]
    if test == "mannwhitneyu":
        out = np.full(m, np.nan)
        for i, (a, b) in enumerate(zip(a_groups, b_groups)):
            if len(a) and len(b):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    out[i] = stats.mannwhitneyu(a, b, alternative="two-sided").pvalue
        return out
    na, ma, va = _moments(a_groups)
    nb, mb, vb = _moments(b_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        if test == "ttest":
            df = na + nb - 2
            va0 = np.where(na > 1, va, 0.0)
            vb0 = np.where(nb > 1, vb, 0.0)
            pooled = ((na - 1) * va0 + (nb - 1) * vb0) / df
            se = np.sqrt(pooled * (1.0 / na + 1.0 / nb))
            df = np.where((na >= 1) & (nb >= 1) & (df > 0), df, np.nan)
        else:  # welch
            qa, qb = va / na, vb / nb
            se = np.sqrt(qa + qb)
            df = (qa + qb) ** 2 / (qa**2 / (na - 1) + qb**2 / (nb - 1))
        t = (ma - mb) / se
        p = 2.0 * stats.t.sf(np.abs(t), df)
    return np.where(np.isfinite(df), p, np.nan)


class PERCY(BaseAttributionMetric):
    """PERCY: does a sentiment classifier base its decision on the conjunct a logic rule
    designates? Scores token attributions of ``A keyword B`` sentences.

    For a sentence s = t1 ... tn whose first rule keyword is t_k, with token attributions
    w_i (LIME, SHAP, IG... giving L-, S-, I-PERCY) and p(y|s) the classifier's
    probabilities, each token contributes (Eq. 4)

        c_i = w_i p(y=1|s) + |w_i| p(y=0|s),

    E[a] = sum_{i<k} c_i and E[b] = sum_{i>k} c_i. Then (Table 2, Eq. 5-6)

    * ``but`` / ``yet`` (rule conjunct B): PERCY(s) = 1 iff f(s) = y, E[a] < E[b] and
      p-value <= alpha;
    * ``though`` / ``while`` (rule conjunct A): the same with E[a] > E[b];

    and 0 otherwise. The p-value compares the c_i of the two conjuncts. PERCY of a set
    of sentences is the mean over the sentences that hold a keyword (Eq. 7).
    **Higher is better** (1: every correct decision rests significantly on the right
    conjunct).

    Parameters
    ----------
    model
        Binary classifier: a Keras model on raw strings (``TextVectorization`` inside), or
        on token ids together with ``tokenizer``; any callable works. Output: sigmoid
        (N, 1) or two-class softmax (N, 2) probabilities.
    inputs
        N raw sentences (list, NumPy array, pandas Series, tf.Tensor of strings, or a
        ``tf.data.Dataset`` of strings, which is read once).
    targets
        N binary labels 0/1 (shape (N,), (N, 1), or one-hot (N, 2)).
    batch_size
        Number of sentences per model call (None: all at once).
    tokenizer
        None for a model on raw strings; a ``TextVectorization`` layer or a callable
        (list of str -> ids (N, L)) for a model on token ids.
    rules
        None for Table 2 (but/yet -> B, though/while -> A); a mapping extends or
        overrides it (``{'however': 'B', 'although': 'A'}``; a value None removes a
        keyword); a :class:`xplique_ext.text.RuleTable` replaces it. Keywords are
        matched case-insensitively on the whitespace tokens, leading/trailing
        punctuation ignored (``"but,"`` matches ``but``); the first keyword counts.
    alpha
        Significance level in (0, 1) of the p-value (0.05 in the paper).
    test
        'ttest' (two-sample Student t-test, as the authors' code), 'welch',
        'mannwhitneyu', or None (no significance condition).
    top_k
        None uses every token of each conjunct in the test; k keeps the k largest c_i per
        conjunct in the test, as the authors' code did with k = 5. E[a] and E[b] always
        sum every token (Eq. 4).
    strategy
        ``tf.distribute.Strategy`` whose replicas share each batch of a Keras model's
        calls (None: the one in scope when the metric is built).

    Notes
    -----
    A conjunct with no tokens gives 0. An undefined p-value (a t-test with one token
    on each side, or no spread at all) is not significant, so the sentence gets 0.
    With the t-test, a decision correctly based on B can still score 0 when B holds only
    one or two sentiment words among neutral ones: the c_i of neutral words are near 0
    on both sides and the difference of means is not significant. This is consistent
    with the paper's scores, below 0.25 even for the best models.

    Attributes
    ----------
    sentences : list of str
    targets : np.ndarray (N,)
    p_positive : np.ndarray (N,)
        p(y=1|s) of each sentence.
    predictions : np.ndarray (N,)
        f(s) = 1 iff p(y=1|s) > 0.5.
    keywords : list of (str or None)
        First rule keyword of each sentence.
    keyword_indices : list of (int or None)
        Its token index.
    n_without_keyword : int
        Number of sentences without any rule keyword (score NaN, not averaged).

    References
    ----------
    Gupta, Bouadjenek & Robles-Kelly, "PERCY: A post-hoc explanation-based score for
    logic rule dissemination consistency assessment in sentiment classification",
    Knowledge-Based Systems, 2023. Eq. 4-7, Table 2.

    Examples
    --------
    >>> import numpy as np
    >>> from xplique_ext.metrics import PERCY
    >>> from xplique_ext.text import BagOfWordsModel
    >>> weights = {"dull": -1.0, "superb": 2.0, "wonderful": 3.0, "good": 0.5}
    >>> bow = BagOfWordsModel(weights, part="B")
    >>> sentences = ["the plot was dull but superb wonderful", "a good film"]
    >>> percy = PERCY(bow, sentences, [1, 1], tokenizer=bow.tokenizer)
    >>> exact = [bow.logit_contributions(s) for s in sentences]
    >>> percy.detailed_evaluate(exact)
    array([ 1., nan])
    """

    higher_is_better = True

    def __init__(
        self,
        model: Any,
        inputs: Any,
        targets: Any,
        batch_size: Optional[int] = 64,
        *,
        tokenizer: Any = None,
        rules: Any = None,
        alpha: float = 0.05,
        test: Optional[str] = "ttest",
        top_k: Optional[int] = None,
        strategy: Any = None,
    ):
        sentences = as_sentences(inputs, "inputs")
        # the base class expects an array with a feature axis: give it the sentences as
        # an (N, 1) object array; PERCY uses its own batched text classifier.
        super().__init__(
            model, np.asarray(sentences, dtype=object).reshape(-1, 1), None, batch_size,
            strategy=strategy,
        )
        self.sentences: List[str] = sentences
        self.inputs = np.asarray(sentences, dtype=object)
        self.n_inputs = len(sentences)
        self.targets = self._check_targets(targets, len(sentences))
        self.rules = resolve_rules(rules)
        self.alpha = check_float(
            alpha, "alpha", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False
        )
        self.test = check_choice(test, "test", TESTS)
        self.top_k = check_int(top_k, "top_k", minimum=1, allow_none=True)
        self.tokenizer = tokenizer
        self.classifier = TextClassifier(
            model, tokenizer, batch_size=self.batch_size, strategy=self.strategy
        )
        self.tokens = [s.split() for s in sentences]
        found = [find_keyword(t, self.rules) for t in self.tokens]
        self.keyword_indices = [k for k, _ in found]
        self.keywords = [kw for _, kw in found]
        self.n_without_keyword = sum(k is None for k in self.keyword_indices)
        self.p_positive = self.classifier.predict_proba(sentences)
        self.predictions = (self.p_positive > 0.5).astype(np.int64)

    @staticmethod
    def _check_targets(targets: Any, n: int) -> np.ndarray:
        if targets is None:
            raise TypeError("`targets` must be the N binary labels 0/1 of the sentences, got None")
        y = np.asarray(targets.numpy() if hasattr(targets, "numpy") else targets)
        if y.dtype.kind not in "biuf":
            raise TypeError(f"`targets` must be binary labels 0/1, got dtype {y.dtype}")
        if y.ndim == 2 and y.shape[1] == 2:
            if not np.all(np.isin(y, (0, 1))) or not np.all(y.sum(axis=1) == 1):
                raise ValueError("`targets` of shape (N, 2) must be one-hot rows")
            y = y.argmax(axis=1)
        elif y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        elif y.ndim != 1:
            raise ValueError(
                f"`targets` must have shape (N,), (N, 1) or (N, 2), got shape {y.shape}"
            )
        if len(y) != n:
            raise ValueError(
                f"`targets` must hold one label per sentence: got {len(y)} targets for "
                f"{n} sentences"
            )
        bad = ~np.isin(y, (0, 1))
        if bad.any():
            values = np.unique(y[bad])[:5].tolist()
            raise ValueError(f"`targets` must be binary labels 0/1, got values {values}")
        return y.astype(np.int64)

    # ------------------------------------------------------------------ explanations
    def _check_explanations(self, explanations: Any) -> List[Optional[np.ndarray]]:
        if hasattr(explanations, "to_list") and not isinstance(explanations, list):
            explanations = explanations.to_list()  # tf.RaggedTensor / pandas Series
        elif hasattr(explanations, "numpy") and callable(explanations.numpy):
            explanations = explanations.numpy()
        if isinstance(explanations, (str, bytes)) or not hasattr(explanations, "__len__"):
            raise TypeError(
                "`explanations` must be a sequence of per-token attribution arrays, got "
                f"{type(explanations).__name__}"
            )
        if len(explanations) != self.n_inputs:
            raise ValueError(
                "`explanations` must hold one attribution array per sentence: got "
                f"{len(explanations)} for {self.n_inputs} sentences"
            )
        out: List[Optional[np.ndarray]] = []
        for i, (e, toks) in enumerate(zip(explanations, self.tokens)):
            if e is None:
                if self.keyword_indices[i] is not None:
                    raise ValueError(
                        f"`explanations[{i}]` is None but sentence {i} holds the keyword "
                        f"{self.keywords[i]!r}; only sentences without keyword may be None"
                    )
                out.append(None)
                continue
            arr = np.asarray(e.numpy() if hasattr(e, "numpy") else e, dtype=np.float64)
            if arr.ndim == 2 and 1 in arr.shape:
                arr = arr.reshape(-1)
            if arr.ndim != 1:
                raise ValueError(
                    f"`explanations[{i}]` must be a 1-D array of per-token attributions, "
                    f"got shape {arr.shape}"
                )
            if len(arr) != len(toks):
                raise ValueError(
                    f"`explanations[{i}]` must have one value per whitespace token of "
                    f"sentence {i}: got {len(arr)} values for {len(toks)} tokens"
                )
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"`explanations[{i}]` must hold finite values only")
            out.append(arr)
        return out

    # ------------------------------------------------------------------ scoring
    def details(self, explanations: Any):
        """One row per sentence with every quantity of Eq. 4-6.

        Parameters
        ----------
        explanations
            N per-token attribution arrays (ragged list), aligned with
            ``sentence.split()``; entries of sentences without keyword may be None.

        Returns
        -------
        pandas.DataFrame
            Columns ``sentence``, ``keyword`` (None without keyword), ``keyword_index``,
            ``rule_conjunct`` (the conjunct the rule expects), ``target``, ``prediction``,
            ``p_positive`` (p(y=1|s)), ``correct``, ``E_a``, ``E_b``, ``n_a``, ``n_b``,
            ``p_value``, ``score`` (1.0 / 0.0, NaN without keyword).
        """
        import pandas as pd

        expl = self._check_explanations(explanations)
        n = self.n_inputs
        e_a = np.full(n, np.nan)
        e_b = np.full(n, np.nan)
        n_a = np.zeros(n, dtype=np.int64)
        n_b = np.zeros(n, dtype=np.int64)
        scored = [i for i in range(n) if self.keyword_indices[i] is not None]
        a_groups, b_groups = [], []
        for i in scored:
            k = self.keyword_indices[i]
            c = conjunct_contributions(expl[i], self.p_positive[i])
            a, b = c[:k], c[k + 1 :]
            e_a[i], e_b[i] = a.sum(), b.sum()
            n_a[i], n_b[i] = len(a), len(b)
            if self.top_k is not None:
                a = np.sort(a)[::-1][: self.top_k]
                b = np.sort(b)[::-1][: self.top_k]
            a_groups.append(a)
            b_groups.append(b)
        p_values = np.full(n, np.nan)
        if scored:
            p_values[scored] = conjunct_pvalues(a_groups, b_groups, self.test)
        conj = [None if kw is None else self.rules[kw] for kw in self.keywords]
        correct = self.predictions == self.targets
        score = np.full(n, np.nan)
        for i in scored:
            if n_a[i] == 0 or n_b[i] == 0:
                score[i] = 0.0
                continue
            direction = e_a[i] < e_b[i] if conj[i] == "B" else e_a[i] > e_b[i]
            significant = self.test is None or (
                np.isfinite(p_values[i]) and p_values[i] <= self.alpha
            )
            score[i] = float(bool(correct[i] and direction and significant))
        return pd.DataFrame(
            {
                "sentence": self.sentences,
                "keyword": self.keywords,
                "keyword_index": pd.array(self.keyword_indices, dtype="Int64"),
                "rule_conjunct": conj,
                "target": self.targets,
                "prediction": self.predictions,
                "p_positive": self.p_positive,
                "correct": correct,
                "E_a": e_a,
                "E_b": e_b,
                "n_a": n_a,
                "n_b": n_b,
                "p_value": p_values,
                "score": score,
            }
        )

    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """PERCY(s) per sentence (Eq. 5-6): 1.0 or 0.0, NaN for a sentence without
        keyword. Shape (N,)."""
        return self.details(explanations)["score"].to_numpy(dtype=np.float64)

    def evaluate(self, explanations: Any) -> float:
        """PERCY(S) of Eq. 7: the mean of :meth:`detailed_evaluate` over the sentences
        holding a keyword. A :class:`NoRuleKeywordWarning` reports how many sentences
        hold none (they are counted, not scored)."""
        scores = self.detailed_evaluate(explanations)
        missing = int(np.isnan(scores).sum())
        if missing == len(scores):
            warnings.warn(
                f"PERCY: none of the {len(scores)} sentences holds a rule keyword "
                f"({', '.join(sorted(self.rules))}); the score is NaN.",
                NoRuleKeywordWarning,
                stacklevel=2,
            )
            return float("nan")
        if missing:
            warnings.warn(
                f"PERCY: {missing} of {len(scores)} sentences hold no rule keyword and are "
                f"not scored; PERCY averages the {len(scores) - missing} that do.",
                NoRuleKeywordWarning,
                stacklevel=2,
            )
        return float(np.nanmean(scores))

    def explain(self, explainer: Any) -> List[Optional[np.ndarray]]:
        """Run a token explainer on the sentences that hold a keyword only.

        Parameters
        ----------
        explainer
            Callable mapping a list of sentences to per-token attributions, e.g. a
            :class:`xplique_ext.text.LimeTokenExplainer`.

        Returns
        -------
        list
            N entries, None for the sentences without keyword: ready for
            :meth:`evaluate`.
        """
        idx = [i for i, k in enumerate(self.keyword_indices) if k is not None]
        got = explainer([self.sentences[i] for i in idx]) if idx else []
        out: List[Optional[np.ndarray]] = [None] * self.n_inputs
        for i, e in zip(idx, got):
            out[i] = np.asarray(e, dtype=np.float64)
        return out

    @property
    def accuracy(self) -> float:
        """Accuracy of the classifier on all N sentences (to report next to PERCY)."""
        return float(np.mean(self.predictions == self.targets)) if self.n_inputs else float("nan")
