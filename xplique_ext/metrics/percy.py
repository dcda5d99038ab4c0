"""PERCY: Post-hoc Explanation-based Rule ConsistencY score for binary sentiment
classifiers on ``A keyword B`` sentences (Gupta, Bouadjenek & Robles-Kelly)."""

from __future__ import annotations

import copy
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..commons.metric import BaseMetric
from ..commons.params import ArrayLike, InstanceOf, Interval, Options, check_param, validate_params
from ..commons.warnings import UndefinedScoreWarning
from ..text.classifier import TEXT_MODEL, as_text_classifier
from ..text.conjunctions import resolve_rules
from ..text.tokens import find_keywords, read_sentences

#: one sentence's attributions: one value per whitespace token, (T,) only (a (T, 1) column is
#: refused rather than flattened: it is more often a (B, 1) score or a wrong axis than tokens)
_ATTRIBUTIONS = [
    ArrayLike(
        "real",
        ndim=1,
        shapes="(T,), one value per whitespace token",
        batch_hint=False,
        finite=True,
        dtype=np.float64,
    )
]

#: the labels: 0/1 values (N,), (N, 1) or one-hot (N, 2); the count is checked with the sentences
_TARGETS = [
    ArrayLike(
        "numeric",
        ndim=(1, 2),
        shapes="(N,), (N, 1) or (N, 2)",
        batch_hint=False,
        within=Interval(numbers.Integral, 0, 1),
    )
]

__all__ = ["PERCY", "NoRuleKeywordWarning", "conjunct_contributions", "conjunct_pvalues"]

TESTS = ("ttest", "welch", "mannwhitneyu", None)


class NoRuleKeywordWarning(UndefinedScoreWarning):
    """Some sentences hold no rule keyword: PERCY is undefined (NaN) for them and the
    aggregate averages over the sentences that do."""


CONTRIBUTIONS = ("sign_split", "typeset")
#: The authors' protocol (``analysis/metrics/lime_accuracy.py`` of shashgpt/PERCY).
AUTHORS_PRESET = dict(
    contributions="sign_split", top_k=5, test="ttest", alternative="two-sided", alpha=0.05
)


@validate_params(
    {
        "attributions": [ArrayLike("real", ndim=1, finite=True, dtype=np.float64)],
        "p_positive": [Interval(numbers.Real, 0, 1)],
        "method": [Options(CONTRIBUTIONS)],
    }
)
def conjunct_contributions(
    attributions: Any, p_positive: float, method: str = "sign_split"
) -> np.ndarray:
    """Token contributions of Eq. 4.

    ``method='sign_split'`` (default) reads Eq. 4 as its text defines it: E(.)^+ is over
    the terms contributing to the positive class, E(.)^- over those contributing to the
    negative class, as the authors' code computes it::

        c_i = |w_i| p(y=1|s)   if w_i > 0
        c_i = |w_i| p(y=0|s)   if w_i < 0
        c_i = 0                if w_i = 0   (the token supports neither class)

    ``method='typeset'`` is the typeset line of Eq. 4 read literally, every token giving
    ``c_i = w_i p(y=1|s) + |w_i| p(y=0|s)``. It is biased by class: a token that pushes
    towards the predicted class weighs 1 when the prediction is positive but
    ``|p0 - p1|`` when it is negative, so negative sentences score far lower than
    positive ones for a model symmetric in the two classes.

    Parameters
    ----------
    attributions
        Token attributions w (n,).
    p_positive
        p(y=1|s).
    method
        'sign_split' or 'typeset'.

    Returns
    -------
    c
        Array (n,).

    Examples
    --------
    >>> conjunct_contributions([0.3, -0.3], 0.1)
    array([0.03, 0.27])
    >>> conjunct_contributions([1.0, -2.0], 0.75, method="typeset")
    array([ 1., -1.])
    """
    if method == "typeset":
        return attributions * p_positive + np.abs(attributions) * (1.0 - p_positive)
    towards_positive = attributions * p_positive
    towards_negative = -attributions * (1.0 - p_positive)
    return np.where(
        attributions > 0, towards_positive, np.where(attributions < 0, towards_negative, 0.0)
    )


_GROUPS = [InstanceOf(list, tuple, np.ndarray, description="a sequence of contribution arrays")]
#: one structure's contributions to one conjunct
_GROUP = [ArrayLike("real", ndim=(0, 1), finite=True, dtype=np.float64)]


@validate_params(
    {
        "a_groups": _GROUPS,
        "b_groups": _GROUPS,  # each item below (ragged)
        "test": [Options(TESTS)],
        "alternative": "no_validation",
    }
)
def conjunct_pvalues(
    a_groups: Sequence[Any],
    b_groups: Sequence[Any],
    test: Optional[str] = "ttest",
    alternative: Any = "two-sided",
) -> np.ndarray:
    """p-values comparing the contributions of A and B, one per structure.

    Parameters
    ----------
    a_groups, b_groups
        Per structure, the contributions c_i of the A and of the B conjunct (ragged).
    test
        'ttest' (Student, equal variances, ``scipy.stats.ttest_ind``; the authors'
        choice), 'welch' (``ttest_ind(equal_var=False)``), 'mannwhitneyu'
        (``scipy.stats.mannwhitneyu``), or None (all NaN).
    alternative
        scipy's alternative for (A, B): 'two-sided', 'less' (B larger) or 'greater'
        (A larger); one value, or one per structure.

    Returns
    -------
    p
        Array (M,); NaN where scipy's test is undefined (an empty conjunct; one value on
        each side for the t-tests; no spread at all with equal means).

    Notes
    -----
    Structures are grouped by their two conjunct sizes and each group goes through one
    vectorised call of the scipy test, so the p-values are scipy's own.

    Examples
    --------
    >>> p = conjunct_pvalues([[0.1, 0.2, 0.1]], [[0.5, 0.6, 0.55]], alternative="less")
    >>> bool(p[0] < 0.01)
    True
    """
    from scipy import stats

    m = len(a_groups)
    if len(b_groups) != m:
        raise ValueError(
            f"`a_groups` and `b_groups` must have the same length, got {m} and {len(b_groups)}"
        )
    if isinstance(alternative, (list, tuple, np.ndarray)):
        alternatives = list(alternative)
    else:  # one value (checked below, named, like each of a list)
        alternatives = [alternative] * m
    if len(alternatives) != m:  # the count first, then each value
        raise ValueError(f"`alternative` must be one value or {m} values, got {len(alternatives)}")
    alternatives = [
        check_param(alt, "alternative", [Options(("two-sided", "less", "greater"))])
        for alt in alternatives
    ]
    a_checked = _checked_groups(a_groups, "a_groups")
    b_checked = _checked_groups(b_groups, "b_groups")
    out = np.full(m, np.nan)
    buckets: dict = {}  # (len(a), len(b), alternative) -> structures: one scipy call each
    for i, (a, b, alt) in enumerate(zip(a_checked, b_checked, alternatives)):
        if test is not None and len(a) and len(b):
            buckets.setdefault((len(a), len(b), alt), []).append(i)
    for (_, _, alt), structures in buckets.items():
        a = np.stack([a_checked[i] for i in structures])
        b = np.stack([b_checked[i] for i in structures])
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # scipy's small-sample / precision warnings
            if test == "mannwhitneyu":
                result = stats.mannwhitneyu(a, b, alternative=alt, axis=1)
            else:
                equal_var = test == "ttest"
                result = stats.ttest_ind(a, b, equal_var=equal_var, alternative=alt, axis=1)
        out[structures] = np.asarray(result.pvalue, dtype=np.float64).reshape(-1)
    return out


def _checked_groups(groups: Sequence[Any], name: str) -> List[np.ndarray]:
    """Each structure's contributions to one conjunct, checked (named ``name[i]``) and flat."""
    return [
        check_param(values, f"{name}[{i}]", _GROUP).reshape(-1) for i, values in enumerate(groups)
    ]


class Structure(NamedTuple):
    """One ``A keyword B`` structure of a sentence: the keyword and its token position (both
    None in the row of :meth:`PERCY.details` for a sentence without keyword)."""

    sentence_index: int
    keyword_index: Optional[int]
    keyword: Optional[str]


@dataclass
class StructureScores:
    """PERCY's score of each row of :meth:`PERCY.details` and the quantities of Eq. 4-6 it
    rests on, one entry per row (the columns of the same names)."""

    rows: List[Structure]
    sentence_index: np.ndarray
    rule_conjunct: List[Optional[str]]
    correct: np.ndarray
    e_a: np.ndarray
    e_b: np.ndarray
    n_a: np.ndarray
    n_b: np.ndarray
    p_value: np.ndarray
    score: np.ndarray


class PERCY(BaseMetric):
    """PERCY: does a sentiment classifier base its decision on the conjunct a logic rule
    designates? Scores token attributions of ``A keyword B`` sentences.

    Every rule keyword t_k of a sentence s = t1 ... tn opens one *structure*, with the
    conjuncts a = t1 ... t_{k-1} and b = t_{k+1} ... tn (section 3.2). With token
    attributions w_i (LIME, SHAP, IG... giving L-, S-, I-PERCY) and p(y|s) the
    classifier's probabilities, each token contributes to the class it supports (Eq. 4,
    read as its text defines E(.)^+ and E(.)^-, and as the authors' code computes it)

        c_i = |w_i| p(y=1|s) if w_i > 0,   c_i = |w_i| p(y=0|s) if w_i < 0,

    and a token with w_i = 0 contributes nothing (c_i = 0). The conjunct
    contribution E[a] (E[b]) is the mean of the c_i of a (b): the paper's "expectation
    ... using a weighted average of all tokens", which the authors' code computes as a
    mean. Then (Table 2, Eq. 5-6) a structure scores 1 iff

    * the prediction is right, f(s) = y;
    * the rule conjunct contributes more: E[a] < E[b] for ``but`` / ``yet`` (rule
      conjunct B), E[a] > E[b] for ``though`` / ``while`` (rule conjunct A);
    * the difference is significant: p-value <= alpha, where by default the test is
      **one-sided in the rule's direction** (H1: the rule conjunct's c_i are larger),
      so that a 1 always means "the designated conjunct is significantly larger";

    and 0 otherwise, in particular when a conjunct is empty. A sentence's PERCY(s) is the
    mean of its structures' scores (1 or 0 for the usual one-keyword sentence), and the
    PERCY of a set of sentences is the mean of PERCY(s) over the sentences that hold a
    keyword (Eq. 7). **Higher is better** (1: every correct decision rests
    significantly on the right conjunct).

    The keyword-only parameters (``tokenizer`` and the options of the paper and of the
    authors' code, ``rules`` to ``structures``) form PERCY's options group.

    Parameters
    ----------
    model
        A :class:`xplique_ext.text.TextClassifier` (which carries the tokenizer, the batch
        size, the mask string and the ``tf.distribute`` strategy), or a binary
        classifier for one: a Keras model on raw strings (``TextVectorization`` inside), or
        on token ids together with ``tokenizer``; any callable works. Output: sigmoid
        (N, 1) or two-class softmax (N, 2) probabilities. A keras-hub ``TextClassifier``
        task with its preprocessor (e.g. ``BertTextClassifier``) is accepted as it
        comes, and a Keras model over a keras-hub backbone with its preprocessor or
        tokenizer as ``tokenizer``: logits become probabilities as the task's activation
        says (see :mod:`xplique_ext.text.hub`).
    inputs
        N raw sentences (list, NumPy array, pandas Series, tf.Tensor of strings, or a
        finite ``tf.data.Dataset`` of strings or of ``(sentence, label)`` pairs, read once
        batch by batch; an infinite one raises a ValueError).
    targets
        N binary labels 0/1 (shape (N,), (N, 1), or one-hot (N, 2)); None when
        ``inputs`` is a dataset of ``(sentence, label)`` pairs.
    batch_size
        Number of sentences per model call (None: all at once). When ``model`` is a
        TextClassifier (which has its own), leave it (and ``tokenizer``) at the default.
    tokenizer
        None for a model on raw strings; a ``TextVectorization`` layer or a callable
        (list of str -> ids (N, L)) for a model on token ids. A Keras model whose input
        dtype disagrees (a tokenizer for a string model, none for an id model) raises a
        ValueError saying which it expects.
    rules
        None for Table 2 (but/yet -> B, though/while -> A); a mapping extends or
        overrides it (``{'however': 'B', 'although': 'A'}``; a value None removes a
        keyword); a :class:`xplique_ext.text.RuleTable` replaces it. Keywords are
        matched case-insensitively on the whitespace tokens, leading/trailing
        punctuation ignored (``"but,"`` matches ``but``).
    alpha
        Significance level in (0, 1) (0.05 in the paper; p <= alpha as the paper
        writes, p < alpha under ``preset='authors'`` as the authors' code does).
    test
        'ttest' (two-sample Student t-test, the authors' choice), 'welch',
        'mannwhitneyu', or None (no significance condition: the direction alone).
    top_k
        None uses every contribution of each conjunct; k keeps the k largest c_i of each
        conjunct, for the comparison of E[a] and E[b] and for the test alike (the
        authors used k = 5).
    contributions
        'sign_split' (default, Eq. 4 per its text) or 'typeset' (the typeset line of
        Eq. 4, ``c_i = w_i p1 + |w_i| p0`` for every token, this class's former default;
        it favours positive predictions, see :func:`conjunct_contributions`).
    alternative
        'one-sided' (default): the test's alternative is the rule's direction.
        'two-sided': the authors' two-sided test; a score of 1 still requires the rule
        conjunct's mean to be the larger one, so it is the one-sided test at alpha / 2
        for the t-tests.
    structures
        'all' (default): every keyword of a sentence opens a structure, as the paper
        asks ("calculated for each syntactic structure separately"). 'first': only the
        first keyword counts (this class's former behaviour).
    preset
        None, or 'authors' for the authors' protocol (``analysis/metrics/
        lime_accuracy.py`` of shashgpt/PERCY): sign-split contributions, the top 5
        contributions of each conjunct, their means compared, a two-sided Student
        t-test at p < 0.05, 0 for an empty conjunct. Options it sets may not be given
        other values.

    Notes
    -----
    *Why the sign split.* The typeset line of Eq. 4 adds w_i p(y=1|s) and |w_i| p(y=0|s)
    for every token: a token supporting a negative prediction weighs |w_i| (p0 - p1), one
    supporting a positive prediction |w_i|. On 200 generated contrastive ``A but B``
    sentences and a bag-of-words model weighting A half as much as B (accuracy 0.95),
    with exact token contributions, it gives PERCY 0.96 on positive and 0.20 on negative
    sentences; the sign split, which is what the text and the authors' code define,
    gives 0.86 and 0.85. The typeset line stays available as ``contributions='typeset'``.

    *Why a one-sided test.* Comparing sums for the direction while a two-sided test
    compares means let a structure score 1 when its test said the *other* conjunct was
    significantly larger (ten A tokens near 0.10 against two B tokens of 0.40 and 0.45
    under "though": sum A > sum B, p = 1e-10 for B > A). Here the direction and the
    test look at the same means, and the default test's alternative is the rule's
    direction.

    *Several keywords.* "Even though we can't travel yet we can enjoy ..." holds two
    structures: ``though`` (A = "Even") and ``yet`` (A = "Even though we can't
    travel"). Each is scored on its own; :meth:`details` has one row per structure,
    :meth:`detailed_evaluate` gives each sentence the mean of its structures' scores, so
    that Eq. 7 still averages sentences with equal weight. The structure-level mean is
    ``details(...).score.mean()``.

    *Edge cases.* A structure with an empty conjunct (the keyword first or last) scores
    0, as in the authors' code. An undefined p-value (one contribution on each side with a
    t-test, no spread at all with equal means) is not significant: 0. Contributions are
    compared as they are: tokens of other keywords count in the conjuncts.

    *The authors' code.* Their per-sentence list records 0 for a sentence with an empty
    conjunct (``EA_values_pearson``); the list their tables average (``EA_values``)
    leaves such sentences out. ``preset='authors'`` scores them 0, like the former. Their
    script also drops a token whose weight is exactly 0 from the list of contributions,
    which shifts the later tokens into the wrong conjunct; here such a token is a 0 in
    its own conjunct (LIME, SHAP and IG weights are practically never exactly 0).

    Attributes
    ----------
    sentences : list of str
    targets : np.ndarray (N,)
    p_positive : np.ndarray (N,)
        p(y=1|s) of each sentence.
    predictions : np.ndarray (N,)
        f(s) = 1 iff p(y=1|s) > 0.5.
    structures : list of Structure
        (sentence_index, keyword_index, keyword) of each structure scored.
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
    Knowledge-Based Systems, 2023. Eq. 4-7, Table 2. Code: github.com/shashgpt/PERCY.

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
    undefined_reason = "a sentence that holds no rule keyword is not scored (Eq. 7)"
    undefined_warning = NoRuleKeywordWarning
    _data_params = ("model", "inputs", "targets", "tokenizer", "rules")
    _config_attributes = {"structures": "structure_mode"}

    @validate_params(
        {
            # the model and tokenizer: TextClassifier; the sentences: read_sentences; the labels
            # (or read from the dataset): _binary_labels; the rules: resolve_rules
            "model": TEXT_MODEL,
            "tokenizer": "no_validation",
            "inputs": "no_validation",
            "targets": "no_validation",
            "rules": "no_validation",
            "batch_size": [Interval(numbers.Integral, 1, None), None],
            "preset": [Options((None, "authors"))],
            "test": [Options(TESTS)],
            "alpha": [Interval(numbers.Real, 0.0, 1.0, closed="neither")],
            "top_k": [Interval(numbers.Integral, 1, None), None],
            "contributions": [Options(CONTRIBUTIONS)],
            "alternative": [Options(("one-sided", "two-sided"))],
            "structures": [Options(("all", "first"))],
        }
    )
    # the keyword-only parameters are PERCY's documented options group (PLR0913 exception)
    def __init__(
        self,
        model: Any,
        inputs: Any,
        targets: Any = None,
        batch_size: Optional[int] = 64,
        *,
        tokenizer: Any = None,
        rules: Any = None,
        preset: Optional[str] = None,
        alpha: float = 0.05,
        test: Optional[str] = "ttest",
        top_k: Optional[int] = None,
        contributions: str = "sign_split",
        alternative: str = "one-sided",
        structures: str = "all",
    ):
        options = dict(
            contributions=contributions,
            top_k=top_k,
            test=test,
            alternative=alternative,
            alpha=alpha,
        )
        if preset == "authors":
            for key, value in AUTHORS_PRESET.items():
                if options[key] not in (value, self._init_parameters()[key].default):
                    raise ValueError(
                        f"`{key}`={options[key]!r} conflicts with preset='authors', "
                        f"which sets {key}={value!r}; drop one of them"
                    )
            options.update(AUTHORS_PRESET)
        # the options as the preset leaves them
        self.contributions = options["contributions"]
        self.top_k = options["top_k"]
        self.test = options["test"]
        self.alternative = options["alternative"]
        self.alpha = options["alpha"]
        self.preset = preset
        self.structure_mode = structures
        self.rules = resolve_rules(rules)  # options first: cheap checks before a dataset is read
        self.sentences, labels = read_sentences(inputs, "inputs")
        if labels is not None and targets is not None:
            raise ValueError(
                "`targets` must be None when the `inputs` dataset yields (sentence, "
                "label) pairs: the labels are read from the dataset"
            )
        if labels is not None:
            targets = labels
        self.targets = _binary_labels(targets, len(self.sentences))
        self.classifier = as_text_classifier(model, tokenizer, batch_size=batch_size)
        self.batch_size = self.classifier.batch_size
        self.tokens = [sentence.split() for sentence in self.sentences]
        #: the rows of :meth:`details`, built once: the structures and the keywords read them
        self._rows = self._structure_rows()
        self.p_positive = self.classifier.predict_proba(self.sentences)
        self.predictions = (self.p_positive > 0.5).astype(np.int64)

    def _scored_keywords(self, tokens: List[str]) -> List[Tuple[int, str]]:
        """The (position, keyword) of the structures of one sentence that are scored:
        every keyword, or the first one only under ``structures='first'``."""
        found = find_keywords(tokens, self.rules)
        if self.structure_mode == "first":
            return found[:1]
        return found

    def _structure_rows(self) -> Tuple[Structure, ...]:
        """The rows of :meth:`details`: one per structure scored and one (keyword None) per
        sentence without keyword, in sentence order."""
        rows = []
        for sentence_index, tokens in enumerate(self.tokens):
            found = self._scored_keywords(tokens)
            if not found:
                rows.append(Structure(sentence_index, None, None))
            for keyword_index, keyword in found:
                rows.append(Structure(sentence_index, keyword_index, keyword))
        return tuple(rows)

    def _first_rows(self) -> List[Structure]:
        """The first row of each sentence: its first keyword scored, or its row without
        keyword."""
        firsts = {}
        for row in self._rows:
            firsts.setdefault(row.sentence_index, row)
        return list(firsts.values())

    @property
    def structures(self) -> List[Structure]:
        """(sentence_index, keyword_index, keyword) of each structure scored."""
        return [row for row in self._rows if row.keyword is not None]

    @property
    def keywords(self) -> List[Optional[str]]:
        """The first rule keyword scored in each sentence (None without keyword)."""
        return [row.keyword for row in self._first_rows()]

    @property
    def keyword_indices(self) -> List[Optional[int]]:
        """The token index of each sentence's first keyword (None without keyword)."""
        return [row.keyword_index for row in self._first_rows()]

    @property
    def n_without_keyword(self) -> int:
        """Number of sentences without any rule keyword (score NaN, not averaged)."""
        return sum(row.keyword is None for row in self._rows)

    @property
    def model(self) -> Any:
        """The classifier's model."""
        return self.classifier.model

    def __deepcopy__(self, memo: dict) -> PERCY:
        """A copy with the same details; its classifier shares the model (see
        :meth:`TextClassifier.__deepcopy__ <xplique_ext.text.TextClassifier.__deepcopy__>`)."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__dict__ = copy.deepcopy(self.__dict__, memo)
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(
            "PERCY cannot be pickled: it holds a model and compiled TensorFlow "
            "functions. Save `metric.get_config()` and rebuild it with "
            "`PERCY.from_config(config, model=..., inputs=..., targets=...)`, "
            "with `tokenizer=` and `rules=` where the metric was given them; "
            "`copy.deepcopy(metric)` copies it in memory"
        )

    def _check_explanations(self, explanations: Any) -> List[Optional[np.ndarray]]:
        if hasattr(explanations, "to_list") and not isinstance(explanations, list):
            explanations = explanations.to_list()  # tf.RaggedTensor / pandas Series
        elif callable(getattr(explanations, "numpy", None)):
            explanations = explanations.numpy()
        if isinstance(explanations, (str, bytes, set, Mapping)) or not hasattr(
            explanations, "__len__"
        ):  # one array per sentence, in the sentences' order
            raise TypeError(
                "`explanations` must be a sequence of per-token attribution arrays, "
                f"got {type(explanations).__name__}"
            )
        if len(explanations) != len(self.sentences):
            raise ValueError(
                "`explanations` must hold one attribution array per sentence: got "
                f"{len(explanations)} for {len(self.sentences)} sentences"
            )
        out = [
            None if e is None else check_param(e, f"explanations[{i}]", _ATTRIBUTIONS)
            for i, e in enumerate(explanations)
        ]
        for i, (e, toks, keyword) in enumerate(zip(out, self.tokens, self.keywords)):
            if e is None and keyword is not None:
                raise ValueError(
                    f"`explanations[{i}]` is None but sentence {i} holds the keyword "
                    f"{keyword!r}; only sentences without keyword may be None"
                )
            if e is not None and len(e) != len(toks):
                raise ValueError(
                    f"`explanations[{i}]` must be a 1-D array with one value per "
                    f"whitespace token of sentence {i}: got shape {e.shape} for "
                    f"{len(toks)} tokens"
                )
        return out

    def _select(self, values: np.ndarray) -> np.ndarray:
        """The contributions of a conjunct that enter the comparison and the test."""
        if self.top_k is None:
            return values
        return np.sort(values)[::-1][: self.top_k]

    def _test_alternative(self, rule_conjunct: str) -> str:
        """scipy's alternative for (A, B): towards the rule conjunct (B larger for B, A
        larger for A), or two-sided under ``alternative='two-sided'``."""
        if self.alternative == "two-sided":
            return "two-sided"
        if rule_conjunct == "B":
            return "less"
        return "greater"

    def _is_significant(self, p_values: np.ndarray) -> np.ndarray:
        """Whether each p-value is significant at ``alpha``. The paper writes p <= alpha; the
        authors' code keeps p < alpha, so ``preset='authors'`` is strict. Without a test
        (``test=None``) every structure passes: the direction alone decides."""
        if self.test is None:
            return np.ones(p_values.shape, dtype=bool)
        if self.preset == "authors":
            return p_values < self.alpha
        return p_values <= self.alpha

    def _structure_scores(self, explanations: Any) -> StructureScores:
        """PERCY's score of every structure (Eq. 4-6) with the quantities it rests on: the
        rows of :meth:`details`, which :meth:`detailed_evaluate` averages per sentence."""
        attributions = self._check_explanations(explanations)
        rows = list(self._rows)
        sentence_index = np.array([row.sentence_index for row in rows], dtype=np.int64)
        rule_conjunct = [None if row.keyword is None else self.rules[row.keyword] for row in rows]
        scored = [r for r, conjunct in enumerate(rule_conjunct) if conjunct is not None]
        contributions = {
            i: conjunct_contributions(attributions[i], self.p_positive[i], self.contributions)
            for i in set(sentence_index[scored].tolist())
        }
        a_groups = []
        b_groups = []
        alternatives = []
        for r in scored:
            row = rows[r]
            sentence_contributions = contributions[row.sentence_index]
            a_groups.append(self._select(sentence_contributions[: row.keyword_index]))
            b_groups.append(self._select(sentence_contributions[row.keyword_index + 1 :]))
            alternatives.append(self._test_alternative(rule_conjunct[r]))
        e_a = np.full(len(rows), np.nan)
        e_b = np.full(len(rows), np.nan)
        n_a = np.zeros(len(rows), np.int64)
        n_b = np.zeros(len(rows), np.int64)
        for r, a, b in zip(scored, a_groups, b_groups):
            n_a[r] = len(a)
            n_b[r] = len(b)
            e_a[r] = _mean_or_nan(a)
            e_b[r] = _mean_or_nan(b)
        p_value = np.full(len(rows), np.nan)
        p_value[scored] = conjunct_pvalues(a_groups, b_groups, self.test, alternatives)
        correct = (self.predictions == self.targets)[sentence_index]
        rule_is_b = [conjunct == "B" for conjunct in rule_conjunct]
        direction = np.where(rule_is_b, e_a < e_b, e_a > e_b)  # a NaN mean: False
        consistent = correct & direction & self._is_significant(p_value)
        without_keyword = [conjunct is None for conjunct in rule_conjunct]
        return StructureScores(
            rows=rows,
            sentence_index=sentence_index,
            rule_conjunct=rule_conjunct,
            correct=correct,
            e_a=e_a,
            e_b=e_b,
            n_a=n_a,
            n_b=n_b,
            p_value=p_value,
            score=np.where(without_keyword, np.nan, consistent),
        )

    def details(self, explanations: Any):
        """One row per structure (sentence, keyword position) with every quantity of
        Eq. 4-6; a sentence without keyword gets one row with score NaN.

        Parameters
        ----------
        explanations
            N per-token attribution arrays (ragged list), each of shape (T_i,) aligned
            with ``sentence.split()`` (a (T_i, 1) column is refused, not flattened);
            entries of sentences without keyword may be None.

        Returns
        -------
        pandas.DataFrame
            Columns ``sentence_index``, ``sentence``, ``keyword`` (None without keyword),
            ``keyword_index`` (its token position), ``rule_conjunct`` (the conjunct the
            rule expects), ``target``, ``prediction``, ``p_positive`` (p(y=1|s)),
            ``correct``, ``E_a``, ``E_b`` (means of the compared contributions),
            ``n_a``, ``n_b`` (number of contributions compared, after ``top_k``),
            ``p_value`` (of the test actually used: one-sided towards the rule conjunct
            by default), ``score`` (1.0 / 0.0, NaN without keyword).
        """
        import pandas as pd

        scores = self._structure_scores(explanations)
        index = scores.sentence_index
        return pd.DataFrame(
            {
                "sentence_index": index,
                "sentence": [self.sentences[i] for i in index],
                "keyword": [row.keyword for row in scores.rows],
                "keyword_index": pd.array(
                    [row.keyword_index for row in scores.rows], dtype="Int64"
                ),
                "rule_conjunct": scores.rule_conjunct,
                "target": self.targets[index],
                "prediction": self.predictions[index],
                "p_positive": self.p_positive[index],
                "correct": scores.correct,
                "E_a": scores.e_a,
                "E_b": scores.e_b,
                "n_a": scores.n_a,
                "n_b": scores.n_b,
                "p_value": scores.p_value,
                "score": scores.score,
            }
        )

    def detailed_evaluate(self, explanations: Any) -> np.ndarray:
        """PERCY(s) per sentence (Eq. 5-6), shape (N,): the mean of the scores of the
        sentence's structures (1.0 or 0.0 for a one-keyword sentence, e.g. 0.5 when one
        of two structures is consistent); NaN for a sentence without keyword.

        :meth:`evaluate` (the base's NaN-aware mean) is PERCY(S) of Eq. 7: the mean over
        the sentences holding a keyword, each weighing 1 whatever its number of
        structures; a :class:`NoRuleKeywordWarning` says how many hold none (they are
        counted, not scored)."""
        scores = self._structure_scores(explanations)
        n = len(self.sentences)
        # every sentence has at least one row; a sentence without keyword sums a NaN
        score_sums = np.bincount(scores.sentence_index, scores.score, n)
        row_counts = np.bincount(scores.sentence_index, minlength=n)
        return score_sums / row_counts

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
        with_keyword = [i for i, keyword in enumerate(self.keywords) if keyword is not None]
        out: List[Optional[np.ndarray]] = [None] * len(self.sentences)
        if not with_keyword:
            return out
        attributions = explainer([self.sentences[i] for i in with_keyword])
        for i, sentence_attributions in zip(with_keyword, attributions):
            out[i] = np.asarray(sentence_attributions, dtype=np.float64)
        return out

    def _is_proportion(self) -> bool:
        """PERCY(S) is the proportion of consistent sentences (Eq. 7): :meth:`summary`
        gives the Wilson interval when every sentence scores 0 or 1 (a sentence with
        several structures can score 0.5: then the bootstrap)."""
        return True

    @property
    def accuracy(self) -> float:
        """Accuracy of the classifier on all N sentences (to report next to PERCY)."""
        if not self.sentences:
            return np.nan
        return float(np.mean(self.predictions == self.targets))


def _binary_labels(targets: Any, n: int) -> np.ndarray:
    """N binary labels 0/1 from (N,), (N, 1) or one-hot (N, 2) targets."""
    y = check_param(targets, "targets", _TARGETS)  # None, strings, a rank 3, not 0/1: refused
    if y.ndim == 2 and y.shape[1] > 2:
        raise ValueError(f"`targets` must have shape (N,), (N, 1) or (N, 2), got shape {y.shape}")
    if y.ndim == 2 and y.shape[1] == 2 and (y.sum(axis=1) != 1).any():
        raise ValueError("`targets` of shape (N, 2) must be one-hot rows")
    if y.ndim == 2:  # the label is the last column of (N, 1) or one-hot
        y = y[:, -1]
    if len(y) != n:
        raise ValueError(
            f"`targets` must hold one label per sentence: got {len(y)} targets for {n} sentences"
        )
    return y.astype(np.int64)


def _mean_or_nan(values: np.ndarray) -> float:
    """The mean of a conjunct's compared contributions; NaN for an empty conjunct."""
    if not len(values):
        return np.nan
    return values.mean()
