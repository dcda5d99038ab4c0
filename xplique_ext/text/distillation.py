"""Iterative rule knowledge distillation (Hu et al. 2016; section 4.1.1 of the PERCY paper).

A *student* classifier p_theta(y|x) is trained on the mixed objective (the paper's
distillation objective, Hu et al.'s Eq. 2)

    (1 - pi_t) CE(p_theta(.|x), y) + pi_t CE(p_theta(.|x), q(.|x))                 (1)

where the *teacher* q is the closed-form projection of the student's own posterior onto
the rule-constrained subspace (Hu et al.'s Eq. 3-4, the PERCY paper's section 4.1.1)

    q(y|x) proportional to p_theta(y|x) exp(-C (1 - r(x, y)))                      (2)

and r(x, y) in [0, 1] is the soft truth value of the A-but-B rule
``has-A-but-B(x) => (1(y = +) => sigma_theta(B)+  &  sigma_theta(B)+ => 1(y = +))``.
With the Lukasiewicz connectives of Hu et al. (section 3.1: a => b = min(1, 1 - a + b),
a & b = max(0, a + b - 1)) this is

    r(x, y) = p_theta(y | B),                                                    (3)

the student's own probability of class y on the rule conjunct alone: exactly what
Hu et al.'s released code computes (``FOL_But.log_distribution`` of ZhitingHu/logicnn,
the "efficient version" that their training uses). Sentences without a rule keyword are
no grounding of the rule: r = 1 and q = p. The imitation weight follows Hu et al.'s
schedule

    pi_t = min(pi_max, 1 - alpha^t),   alpha = 0.95, pi_max = 1,                  (4)

with t the number of epochs done, counted in batches (t = step / steps_per_epoch, as
``get_pi(cur_iter=batch / n_train_batches)`` in their code). C = 6 is their value
(``C=6.`` in ``logicnn_sentiment.py``).

The rule conjunct follows the package's rule table (:mod:`xplique_ext.text.conjunctions`):
B for ``but`` / ``yet``, A for ``though`` / ``while``, split at the sentence's first keyword.
Hu et al. distil the ``but`` rule alone: pass ``rules=RuleTable({'but': 'B'})``.

Differences from the released code, kept on purpose and documented:

* Hu et al.'s ``calc_rule_constraints`` adds the last rule's log-potential twice
  (``distr_all += distr`` inside and after the loop), so with their single but-rule the
  potential they ran is exp(2 C p(y|B)), i.e. C = 12 in Eq. (2). This module computes the
  formula as written; pass ``C=12`` to reproduce the code.
* Their generic ``FOL.value_single`` averages the two implications instead of taking
  their Lukasiewicz conjunction: r = (1 + p(y|B)) / 2, i.e. an effective C / 2 in Eq. (2).
  It is available as ``logic='average'``.
* The PERCY authors' Keras port (``IKD`` in shashgpt/PERCY ``w2v_and_glove/scripts/
  models/models.py``) uses C = 1 (doubled likewise), computes the conjunct's prediction
  with dropout and without stopping its gradient, multiplies the sigmoid output (N, 1)
  with the two-class potential (N, 2) so that p_theta cancels from q, and counts epochs
  with a hard-coded 1408 batches. None of this is reproduced: the teacher here is Eq. (2)
  on the student's two-class posterior, its gradient stopped, the conjunct predicted
  without dropout (Hu et al.'s ``predict_p``), and t uses the real number of batches.

Examples
--------
>>> from xplique_ext.text import build_cnn_classifier, make_vectorizer
>>> from xplique_ext.text.distillation import RuleDistillation
>>> s = ["good film but dull end", "dull film but good end", "a good film"] * 4
>>> y = [0, 1, 1] * 4
>>> tv = make_vectorizer(s, sequence_length=8)
>>> cnn = build_cnn_classifier(tv, embedding_dim=4, filters=2)
>>> model = RuleDistillation(cnn, tokenizer=tv)
>>> model.compile(optimizer="adam")
>>> h = model.fit(s, y, batch_size=4, epochs=2, verbose=0)
>>> sorted(h.history)
['accuracy', 'loss', 'pi']

References
----------
Hu, Ma, Liu, Hovy, Xing. Harnessing Deep Neural Networks with Logic Rules. ACL 2016.
Code: https://github.com/ZhitingHu/logicnn.
Gupta et al. PERCY (the PERCY paper), section 4.1.1.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Dict, List, Optional, Tuple

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from ..commons.params import (
    NO_VALIDATION,
    ArrayLike,
    InstanceOf,
    Interval,
    Options,
    check_param,
    describe,
    validate_params,
)
from .conjunctions import resolve_rules
from .models import check_probability_activation, check_probability_outputs
from .tokens import Tokenizer, as_sentences, find_keyword, whitespace_tokens

__all__ = [
    "HU_C",
    "HU_ALPHA",
    "LOGICS",
    "rule_teacher",
    "rule_conjuncts",
    "distillation_pi",
    "RuleDistillation",
]

#: Hu et al.'s regularisation strength C (``logicnn_sentiment.py``: ``C=6.``).
HU_C = 6.0
#: Hu et al.'s decay of the imitation weight (``pi_params=[0.95, 0]``).
HU_ALPHA = 0.95
#: Soft-logic readings of the rule: 'lukasiewicz' r = p(y|B) (Hu et al.'s paper and the
#: code they ran); 'average' r = (1 + p(y|B)) / 2 (their generic ``FOL.value_single``).
LOGICS = ("lukasiewicz", "average")

_UNIT = Interval(numbers.Real, 0.0, 1.0)
_LOGIC = Options(LOGICS)
_C = [Interval(numbers.Real, 0.0, None)]
_POSITIVE = Interval(numbers.Integral, 1, None)
_UNWEIGHTED = InstanceOf(
    type(None), description="None (Hu et al.'s objective weighs every sentence alike)"
)
_PROBABILITIES = [
    ArrayLike("real", ndim=(1, 2), shapes="(K,) or (N, K)", within=_UNIT, batch_hint=False)
]


# --------------------------------------------------------------------------- teacher
@validate_params(
    {
        "p": _PROBABILITIES,
        "p_rule": _PROBABILITIES,
        "C": _C,
        "logic": [_LOGIC],
        "has_rule": [ArrayLike("bool", ndim=(0, 1)), None],
    }
)
def rule_teacher(
    p: Any, p_rule: Any, C: float = HU_C, *, has_rule: Any = None, logic: str = "lukasiewicz"
) -> np.ndarray:
    """The rule-regularised teacher q of iterative rule knowledge distillation (Eq. 2).

    q(y|x) = p(y|x) exp(-C (1 - r(x, y))) / Z(x), with r(x, y) = p_rule(y) (Eq. 3, the
    Lukasiewicz truth of "the sentence has the sentiment of its rule conjunct"), and
    q = p for sentences without a rule keyword (``has_rule`` False). Computed in log
    space, so that a large C neither overflows nor underflows.

    Parameters
    ----------
    p
        Student probabilities of the sentences, shape (K,) or (N, K), rows summing to 1.
    p_rule
        Student probabilities of each sentence's rule conjunct, same shape as ``p``.
        Ignored (but still checked) where ``has_rule`` is False.
    C
        Regularisation strength C >= 0 (Hu et al.: 6). C = 0 gives q = p; a larger C
        moves q towards the conjunct's prediction.
    has_rule
        Booleans (N,) (a bool for a single sentence): whether the sentence holds a rule
        keyword. None: every sentence does.
    logic
        'lukasiewicz' (default): r = p_rule(y); 'average': r = (1 + p_rule(y)) / 2 (Hu
        et al.'s generic ``FOL.value_single``, i.e. C / 2).

    Returns
    -------
    numpy.ndarray
        q, float64, same shape as ``p``. Nothing passed in is modified.

    Examples
    --------
    >>> rule_teacher([0.3, 0.7], [0.9, 0.1], C=6).round(3)
    array([0.981, 0.019])
    >>> rule_teacher([[0.3, 0.7]], [[0.9, 0.1]], C=6, has_rule=[False]).round(3)
    array([[0.3, 0.7]])
    """
    for name, arr in (("p", p), ("p_rule", p_rule)):
        if arr.shape[-1] < 2:
            raise ValueError(
                f"`{name}` must hold K >= 2 class probabilities per sentence (for "
                f"a sigmoid output p, pass [1 - p, p]), got shape {arr.shape}"
            )
        sums = arr.sum(axis=-1).ravel()
        if (np.abs(sums - 1.0) > 1e-5).any():
            raise ValueError(
                f"`{name}` rows must sum to 1 (a distribution over the K classes),"
                f" got a row summing to {sums[np.abs(sums - 1) > 1e-5][0]:.6g}"
            )
    if p.shape != p_rule.shape:
        raise ValueError(
            f"`p` and `p_rule` must have the same shape, got {p.shape} and {p_rule.shape}"
        )
    p2 = np.atleast_2d(p).astype(np.float64)
    r = np.atleast_2d(p_rule).astype(np.float64)
    keep = np.ones(len(p2), dtype=bool) if has_rule is None else has_rule.reshape(-1)
    if keep.shape != (len(p2),):
        raise ValueError(
            f"`has_rule` must have shape ({len(p2)},), one flag per sentence, "
            f"got shape {has_rule.shape}"
        )
    with np.errstate(divide="ignore"):  # log 0 = -inf: q = 0 where p = 0
        logits = np.log(p2) - _penalty(r, keep[:, None], float(C), logic)
    q = np.exp(logits - logits.max(axis=1, keepdims=True))
    q /= q.sum(axis=1, keepdims=True)
    q[~keep] = p2[~keep]
    return q[0] if p.ndim == 1 else q


def _penalty(p_rule, mask, C, logic):
    """C (1 - r(x, y)) of Eq. (2), 0 where ``mask`` (N, 1) is 0 (no rule keyword)."""
    if logic == "lukasiewicz":
        truth = p_rule
    else:  # 'average'
        truth = 0.5 * (1.0 + p_rule)
    return C * (1.0 - truth) * mask


def _teacher_ops(p2, pr2, mask, C, logic):
    """Eq. (2) in keras.ops on (N, K) tensors, mask (N, 1) float (the training step)."""
    return ops.softmax(ops.log(ops.maximum(p2, 1e-30)) - _penalty(pr2, mask, C, logic), -1)


# --------------------------------------------------------------------------- conjuncts
# sentences: checked by as_sentences; rules: by resolve_rules
@validate_params({"sentences": NO_VALIDATION, "rules": NO_VALIDATION})
def rule_conjuncts(sentences: Any, rules: Any = None) -> Tuple[List[str], np.ndarray]:
    """The rule conjunct of each sentence, split at its first rule keyword.

    For ``A keyword B`` the conjunct is B when the keyword's rule designates B (``but``,
    ``yet``), A when it designates A (``though``, ``while``); see
    :func:`xplique_ext.text.conjunctions.resolve_rules`. Keywords are matched as PERCY matches
    them (whitespace tokens, case and surrounding punctuation ignored). A sentence
    without keyword, or whose rule conjunct is empty, is no grounding of the rule.

    Parameters
    ----------
    sentences
        N sentences (list, array, Series, tf.Tensor of strings).
    rules
        Rule table (default: but/yet -> B, though/while -> A).

    Returns
    -------
    conjuncts, has_rule
        N strings ('' where there is no rule) and a boolean array (N,).

    Examples
    --------
    >>> rule_conjuncts(["dull plot but great cast", "a fine film"])
    (['great cast', ''], array([ True, False]))
    """
    table = resolve_rules(rules)
    out = []
    for s in as_sentences(sentences, "sentences"):
        tokens = whitespace_tokens(s)
        out.append(" ".join(_rule_conjunct_tokens(tokens, table)))
    return out, np.array([bool(c) for c in out], dtype=bool)


def _rule_conjunct_tokens(tokens: List[str], table: Any) -> List[str]:
    """The tokens of a sentence's rule conjunct, split at its first keyword; none without."""
    k, keyword = find_keyword(tokens, table)
    if k is None:
        return []
    if table[keyword] == "B":
        return tokens[k + 1 :]
    return tokens[:k]


@validate_params(
    {
        "t": [ArrayLike(kind="real", within=Interval(numbers.Real, 0.0, None))],
        "alpha": [_UNIT],
        "pi_max": [_UNIT],
    }
)
def distillation_pi(t: Any, alpha: float = HU_ALPHA, pi_max: float = 1.0) -> Any:
    """Hu et al.'s imitation weight pi_t = min(pi_max, 1 - alpha^t) (Eq. 4).

    ``get_pi`` in their code: pi = 1 - max(alpha^t, lb), i.e. pi_max = 1 - lb (they use
    alpha = 0.95, lb = 0). t counts epochs, fractions included (step / steps per epoch).

    Examples
    --------
    >>> round(distillation_pi(1.0), 4), round(distillation_pi(10.0), 4)
    (0.05, 0.4013)
    """
    out = np.minimum(pi_max, 1.0 - alpha ** t.astype(np.float64))
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------- training
class RuleDistillation(keras.Model):
    """Train a binary text classifier by iterative rule knowledge distillation.

    A ``keras.Model`` that wraps the *student* (any binary Keras text classifier on
    raw strings (N, 1), on token ids (N, L), or on a dict of token arrays such as a
    keras-hub backbone's ``token_ids`` / ``padding_mask`` / ``segment_ids``, with a
    sigmoid (N, 1) or two-class softmax (N, 2) output; e.g.
    :func:`build_cnn_classifier`, :func:`build_lstm_classifier` or
    :func:`~xplique_ext.text.hub.build_hub_classifier`) and trains it on Eq. (1): on each
    batch the teacher q (Eq. 2) is recomputed from the student's current predictions on
    the sentences (with dropout, as the training forward pass) and on their rule
    conjuncts (without dropout; gradient stopped), and pi_t follows Eq. (4). The
    student's weights are trained in place: use the student itself afterwards
    (explainers, PERCY).

    The student must return probabilities, checked twice: its output activation when it
    is wrapped (logits, ``tanh``, ``relu`` refused:
    :func:`~xplique_ext.text.models.check_probability_activation`), and its outputs on the
    first batch of :meth:`fit` and :meth:`evaluate` (the first ``batch_size`` sentences
    and their rule conjuncts), which must be finite and in [0, 1]
    (:func:`~xplique_ext.text.models.check_probability_outputs`). Later batches are not
    checked: an assertion in the compiled training step would compile to nothing under
    XLA (``jit_compile``), and a check outside it would run the student twice per batch.
    A sigmoid or softmax output stays in [0, 1]; one that becomes non-finite later shows
    as a NaN loss.

    ``fit`` takes raw sentences and labels; it builds the conjunct inputs itself
    (:meth:`prepare`). A ``tf.data.Dataset`` of ``(prepare(...) dict, label)`` batches
    works too.

    Parameters
    ----------
    student
        The classifier to train (a functional or ``Sequential`` ``keras.Model`` with one
        input, or with a dict input).
    rules
        Rule table for the conjuncts (default but/yet -> B, though/while -> A; Hu et
        al.: ``RuleTable({'but': 'B'})``).
    C
        Regularisation strength of the teacher (Hu et al.: 6).
    alpha, pi_max
        pi_t = min(pi_max, 1 - alpha^t) (Hu et al.: 0.95, 1).
    pi
        None: the schedule; a number in [0, 1]: a constant pi (0 is plain
        cross-entropy training).
    tokenizer
        For a student on token ids: the ``TextVectorization`` layer or callable
        (list of str -> ids) that made its inputs. For a dict student: the callable
        that packs a string tensor (N,) into that dict (its keras-hub preprocessor,
        e.g. ``BertTextClassifierPreprocessor``). None for a student on raw strings.
    logic
        'lukasiewicz' or 'average' (see :func:`rule_teacher`).

    Examples
    --------
    See the module's docstring.
    """

    # student: one input or a dict, binary (checked below); tokenizer: checked against the
    # student's input dtype; rules: by resolve_rules
    @validate_params(
        {
            "student": [InstanceOf(keras.Model)],
            "tokenizer": NO_VALIDATION,
            "rules": NO_VALIDATION,
            "C": _C,
            "alpha": [_UNIT],
            "pi_max": [_UNIT],
            "pi": [_UNIT, None],
            "logic": [_LOGIC],
            "name": [InstanceOf(str)],
        }
    )
    def __init__(
        self,
        student: Any,
        *,
        rules: Any = None,
        C: float = HU_C,
        alpha: float = HU_ALPHA,
        pi_max: float = 1.0,
        pi: Optional[float] = None,
        tokenizer: Any = None,
        logic: str = "lukasiewicz",
        name: str = "rule_distillation",
    ):
        super().__init__(name=name)
        if not getattr(student, "outputs", None):  # subclassed: no inputs and outputs to read
            raise TypeError(
                "`student` must be a functional or Sequential keras.Model (inputs "
                f"and outputs known), got a {type(student).__name__} without them "
                "(subclassed, or a Sequential not built on a keras.Input)"
            )
        check_probability_activation(student, "student")
        out_shape = tuple(student.outputs[0].shape)
        if len(out_shape) != 2 or out_shape[-1] not in (1, 2):
            raise ValueError(
                "`student` must be a binary classifier with a sigmoid (N, 1) or "
                f"two-class softmax (N, 2) output, got output shape {out_shape}"
            )
        # a keras-hub backbone's dict (token_ids / padding_mask / ...), or one input
        spec = student.inputs if isinstance(student, keras.Sequential) else student.input
        self.input_names = sorted(spec) if isinstance(spec, dict) else None
        if self.input_names and not callable(tokenizer):
            raise ValueError(
                f"`tokenizer` is needed for a student on a dict of inputs "
                f"{self.input_names}: pass the callable that packs sentences into "
                f"that dict (e.g. its keras-hub preprocessor), got {describe(tokenizer)}"
            )
        if not self.input_names and len(student.inputs) != 1:
            raise ValueError(
                "`student` must take one input (raw strings (N, 1) or token ids "
                f"(N, L)) or a dict of token arrays, got {len(student.inputs)} inputs"
            )
        self.raw_strings = not self.input_names and "string" in str(student.inputs[0].dtype)
        if not self.input_names and self.raw_strings != (tokenizer is None):
            raise ValueError(
                "`tokenizer` must be None for a student on raw strings (input dtype "
                "string), and is needed for a student on token ids (pass the "
                "TextVectorization layer or callable that made its inputs), got "
                f"{describe(tokenizer)} for input dtype {student.inputs[0].dtype}"
            )
        self.student = student
        self.rules = resolve_rules(rules)
        self.logic = logic
        self.C = C
        self.alpha = alpha
        self.pi_max = pi_max
        self.pi = pi
        self.sigmoid = out_shape[-1] == 1
        self.packer = tokenizer if self.input_names else None
        if self.input_names or tokenizer is None:  # a dict student packs with ``packer``
            self.tokenizer = None
        else:
            self.tokenizer = Tokenizer(tokenizer)
        shape = tuple(student.inputs[0].shape)
        self._length = shape[1] if self.tokenizer is not None and len(shape) == 2 else None
        # a variable, not a Python number: a traced train step sees the value fit() sets
        self._steps_per_epoch = keras.Variable(
            1.0, dtype="float32", trainable=False, name="steps_per_epoch"
        )
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.pi_tracker = keras.metrics.Mean(name="pi")
        self.acc_tracker = keras.metrics.BinaryAccuracy(name="accuracy")

    # ------------------------------------------------------------ inputs
    def _encode(self, texts: List[str]) -> Any:
        if self.packer is not None:
            packed = self.packer(tf.constant(texts, dtype=tf.string, shape=(len(texts),)))
            if not isinstance(packed, dict) or set(self.input_names) - set(packed):
                raise ValueError(
                    f"`tokenizer` must pack sentences into the student's inputs "
                    f"{self.input_names}, got {describe(packed)}"
                )
            return {k: np.asarray(packed[k]) for k in self.input_names}
        if self.raw_strings:
            return np.asarray(texts, dtype=object).reshape(-1, 1)
        ids = self.tokenizer(texts) if texts else np.zeros((0, self._length or 1))
        return keras.utils.pad_sequences(
            ids,
            maxlen=self._length or ids.shape[1],
            dtype="int32",
            padding="post",
            truncating="post",
        )

    def prepare(self, sentences: Any) -> Dict[str, np.ndarray]:
        """Inputs of :meth:`fit` for ``sentences``: ``{'x': student inputs,
        'x_rule': student inputs of the rule conjuncts, 'has_rule': (N, 1) float}``."""
        texts = as_sentences(sentences, "x")
        conj, flags = rule_conjuncts(texts, self.rules)
        return {
            "x": self._encode(texts),
            "x_rule": self._encode(conj),
            "has_rule": flags.astype(np.float32).reshape(-1, 1),
        }

    def _tensors(self, x, y, x_name="x", y_name="y"):
        """(prepare()'s dict as tensors, labels (N, 1) float32) from sentences or a
        prepare() dict and binary labels, checked."""
        if not isinstance(x, dict):
            x = self.prepare(x)
        elif {"x", "x_rule", "has_rule"} - set(x):
            raise ValueError(
                f"`{x_name}` as a dict must hold the keys of prepare(): missing "
                f"{sorted({'x', 'x_rule', 'has_rule'} - set(x))}"
            )
        n = len(x["has_rule"])
        y = check_param(y, y_name, [ArrayLike("numeric", ndim=(1, 2), batch_hint=False)])
        if y.size != n or not np.isin(y, (0, 1)).all():
            raise ValueError(
                f"`{y_name}` must hold {n} binary labels 0/1 (one per sentence), got {describe(y)}"
            )
        # tensors: Keras' array adapter rejects NumPy object arrays of strings
        x = tf.nest.map_structure(lambda v: tf.convert_to_tensor(np.asarray(v)), x)
        return x, y.astype(np.float32).reshape(-1, 1)

    def _check_student(self, x: Any, rows: int) -> None:
        """The student's outputs on the first ``rows`` sentences of ``x`` (a dict of
        :meth:`prepare`, as tensors) or on the first batch of a dataset of its batches, and
        on their rule conjuncts: finite probabilities in [0, 1] (see
        :func:`~xplique_ext.text.models.check_probability_outputs`), before they are used as
        such. That first batch only: the later ones are not checked (see the class)."""
        if isinstance(x, tf.data.Dataset):
            x = next(iter(x.take(1)), (None,))[0]
        if not isinstance(x, dict) or {"x", "x_rule", "has_rule"} - set(x):
            return  # not prepare()'s batches: Keras reports what it cannot read
        if not len(x["has_rule"]):
            return
        for key in ("x", "x_rule"):
            sample = tf.nest.map_structure(lambda v: v[:rows], x[key])
            check_probability_outputs(self.student, sample, "student")

    def evaluate(self, x=None, y=None, **kwargs):
        """Keras ``evaluate`` (cross-entropy to the labels and accuracy) on raw
        sentences or :meth:`prepare`'s dict, or a ``tf.data.Dataset``."""
        if not isinstance(x, tf.data.Dataset):
            x, y = self._tensors(x, y)
        self._check_student(x, kwargs.get("batch_size") or 32)
        return super().evaluate(x, y, **kwargs)

    # x, y: sentences, prepare()'s dict or a Dataset, checked below
    @validate_params(
        {
            "x": NO_VALIDATION,
            "y": NO_VALIDATION,
            "batch_size": [_POSITIVE, None],
            "epochs": [_POSITIVE],
            "steps_per_epoch": [_POSITIVE, None],
            "validation_split": [Interval(numbers.Real, 0, 1, closed="left")],
            "sample_weight": [_UNWEIGHTED],
            "class_weight": [_UNWEIGHTED],
        }
    )
    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        *,
        steps_per_epoch=None,
        validation_split=0.0,
        sample_weight=None,
        class_weight=None,
        **kwargs,
    ):
        """Keras ``fit`` on raw sentences ``x`` (or :meth:`prepare`'s dict, or a
        ``tf.data.Dataset`` of ``(dict, label)`` batches) and binary labels ``y``."""
        if isinstance(x, tf.data.Dataset):
            steps = _dataset_steps(x)
            kwargs.setdefault("shuffle", False)  # a dataset is shuffled by its pipeline
        else:
            x, y = self._tensors(x, y)
            n_train = int(len(y) * (1.0 - validation_split))  # Keras' split
            if n_train == 0:
                raise ValueError(
                    "`x` must hold at least one training sentence, got "
                    f"{len(y)} with validation_split={validation_split:g}"
                )
            batch_size = batch_size or 32
            kwargs["batch_size"] = batch_size
            steps = math.ceil(n_train / batch_size)
            val = kwargs.get("validation_data")
            if isinstance(val, (tuple, list)) and len(val) == 2:
                kwargs["validation_data"] = self._tensors(
                    *val, "validation_data[0]", "validation_data[1]"
                )
        self._check_student(x, batch_size or 32)
        self._steps_per_epoch.assign(float(steps_per_epoch or steps))
        return super().fit(
            x,
            y,
            epochs=epochs,
            steps_per_epoch=steps_per_epoch,
            validation_split=validation_split,
            **kwargs,
        )

    # ------------------------------------------------------------ model
    def call(self, inputs, training=None):
        return self.student(inputs["x"] if isinstance(inputs, dict) else inputs, training=training)

    def _two_class(self, p):
        return _one_hot(p) if self.sigmoid else p

    def _cross_entropy(self, target, p):
        """Mean cross-entropy from the student's output p to a two-class target (N, 2)."""
        if self.sigmoid:
            return ops.mean(keras.losses.binary_crossentropy(target[:, 1:], p))
        return ops.mean(keras.losses.categorical_crossentropy(target, p))

    def current_pi(self):
        """pi of the coming step (Eq. 4 with t = (step + 1) / steps per epoch)."""
        if self.pi is not None:
            return ops.convert_to_tensor(self.pi, dtype="float32")
        t = ops.cast(self.optimizer.iterations + 1, "float32") / self._steps_per_epoch
        return ops.minimum(self.pi_max, 1.0 - ops.power(self.alpha, t))

    def train_step(self, data):
        x = data[0]
        y = _one_hot(data[1])
        pi = self.current_pi()
        p_rule = ops.stop_gradient(self.student(x["x_rule"], training=False))
        with tf.GradientTape() as tape:
            p = self.student(x["x"], training=True)
            q = ops.stop_gradient(
                _teacher_ops(
                    self._two_class(p),
                    self._two_class(p_rule),
                    ops.cast(x["has_rule"], p.dtype),
                    self.C,
                    self.logic,
                )
            )
            loss = (1.0 - pi) * self._cross_entropy(y, p) + pi * self._cross_entropy(q, p)
            if self.student.losses:
                loss = loss + ops.sum(self.student.losses)
        # variables the output does not depend on (a keras-hub backbone's pooler under a
        # head on its sequence output) get no gradient: left as they are
        variables = self.student.trainable_variables
        gradients = tape.gradient(loss, variables)
        pairs = [(g, v) for g, v in zip(gradients, variables) if g is not None]
        if pairs:
            self.optimizer.apply([g for g, _ in pairs], [v for _, v in pairs])
        self.pi_tracker.update_state(pi)
        return self._track(loss, y, p, self.metrics)

    def test_step(self, data):
        p = self(data[0], training=False)
        y = _one_hot(data[1])
        return self._track(self._cross_entropy(y, p), y, p, (self.loss_tracker, self.acc_tracker))

    def _track(self, loss, y, p, metrics):
        self.loss_tracker.update_state(loss)
        self.acc_tracker.update_state(y[:, 1:], p if self.sigmoid else p[:, 1:2])
        return {m.name: m.result() for m in metrics}

    @property
    def metrics(self):
        return [self.loss_tracker, self.pi_tracker, self.acc_tracker]


def _one_hot(y):
    """Binary labels or p(y=1) as two-class distributions (N, 2)."""
    y = ops.reshape(ops.cast(y, "float32"), (-1, 1))
    return ops.concatenate([1.0 - y, y], axis=-1)


def _dataset_steps(x: Any) -> int:
    """Batches per epoch of a tf.data.Dataset of (prepare() dict, label) batches."""
    spec = x.element_spec
    features = spec[0] if isinstance(spec, tuple) else spec
    if not (isinstance(features, dict) and {"x", "x_rule"} <= set(features)):
        raise TypeError(
            "`x` must be a tf.data.Dataset of (dict, label) batches, the dict from "
            "RuleDistillation.prepare (keys 'x', 'x_rule', 'has_rule'), got "
            f"elements {spec}"
        )
    steps = int(x.cardinality())
    if steps <= 0:  # empty (0), infinite (-1) or unknown (-2)
        raise ValueError(
            "`x` must hold at least one batch and be of known, finite length (the "
            f"pi schedule counts epochs in batches), got cardinality {steps}"
        )
    return steps
