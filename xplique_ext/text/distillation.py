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

The rule conjunct follows the package's rule table (:mod:`xplique_ext.text.rules`): B for
``but`` / ``yet``, A for ``though`` / ``while``, split at the sentence's first keyword.
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
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..commons.params import (
    NO_VALIDATION,
    ArrayLike,
    InstanceOf,
    Interval,
    Options,
    check_param,
    validate_params,
)
from .rules import resolve_rules
from .tokens import Tokenizer, as_sentences, find_keyword, whitespace_tokens

__all__ = [
    "HU_C",
    "HU_ALPHA",
    "LOGICS",
    "rule_teacher",
    "rule_conjuncts",
    "distillation_pi",
    "RuleDistillation",  # noqa: F822 (module __getattr__, built on first use)
]

#: Hu et al.'s regularisation strength C (``logicnn_sentiment.py``: ``C=6.``).
HU_C = 6.0
#: Hu et al.'s decay of the imitation weight (``pi_params=[0.95, 0]``).
HU_ALPHA = 0.95
#: Soft-logic readings of the rule: 'lukasiewicz' r = p(y|B) (Hu et al.'s paper and the
#: code they ran); 'average' r = (1 + p(y|B)) / 2 (their generic ``FOL.value_single``).
LOGICS = ("lukasiewicz", "average")


# --------------------------------------------------------------------------- teacher
def _probabilities(arr: np.ndarray, name: str) -> np.ndarray:
    """What the declaration leaves to check: K >= 2 classes, values in [0, 1], rows
    summing to 1 (``arr`` arrives as a finite real array of rank 1 or 2)."""
    arr = np.asarray(arr, dtype=np.float64)
    if arr.shape[-1] < 2:
        raise ValueError(
            f"`{name}` must hold K >= 2 class probabilities per sentence (for a sigmoid "
            f"output p, pass [1 - p, p]), got shape {arr.shape}"
        )
    if arr.size and (arr.min() < 0 or arr.max() > 1):
        raise ValueError(
            f"`{name}` must hold probabilities in [0, 1], got values in "
            f"[{arr.min():g}, {arr.max():g}]"
        )
    sums = arr.sum(axis=-1)
    bad = np.abs(sums - 1.0) > 1e-5
    if bad.any():
        raise ValueError(
            f"`{name}` rows must sum to 1 (a distribution over the K classes), got a row "
            f"summing to {sums[bad].ravel()[0]:.6g}"
        )
    return arr


_PROBABILITIES = [
    ArrayLike(kind="real", ndim=(1, 2), shapes="(K,) or (N, K)", finite=True, batch_hint=False)
]


@validate_params(
    {
        "p": _PROBABILITIES,
        "p_rule": _PROBABILITIES,
        "C": [Interval(numbers.Real, 0.0, None)],
        "has_rule": [ArrayLike(kind="numeric", ndim=(0, 1)), None],
        "logic": [Options(LOGICS)],
    }
)
def rule_teacher(
    p: Any,
    p_rule: Any,
    C: float = HU_C,
    *,
    has_rule: Any = None,
    logic: str = "lukasiewicz",
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
        Boolean (N,) (a bool for a single sentence): whether the sentence holds a rule
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
    p_arr = _probabilities(p, "p")
    pr_arr = _probabilities(p_rule, "p_rule")
    if p_arr.shape != pr_arr.shape:
        raise ValueError(
            f"`p` and `p_rule` must have the same shape, got {p_arr.shape} and {pr_arr.shape}"
        )
    C = float(C)
    single = p_arr.ndim == 1
    p2, pr2 = np.atleast_2d(p_arr), np.atleast_2d(pr_arr)
    n = p2.shape[0]
    if has_rule is None:
        mask = np.ones(n, dtype=bool)
    else:
        raw = np.asarray(has_rule)
        if raw.dtype.kind not in "biu" or (
            raw.dtype.kind in "iu" and raw.size and not np.isin(raw, (0, 1)).all()
        ):
            raise TypeError(
                f"`has_rule` must be booleans (or 0/1), got an array of dtype {raw.dtype}"
                + ("" if raw.dtype.kind not in "iu" else " with values other than 0/1")
            )
        mask = raw.astype(bool).reshape(-1) if raw.ndim <= 1 else None
        if mask is None or mask.shape[0] != n:
            raise ValueError(
                f"`has_rule` must have shape ({n},), one flag per sentence, got shape {raw.shape}"
            )
    r = pr2 if logic == "lukasiewicz" else 0.5 * (1.0 + pr2)
    with np.errstate(divide="ignore"):
        logits = np.log(p2) - C * (1.0 - r) * mask[:, None]
    logits -= logits.max(axis=1, keepdims=True)
    q = np.exp(logits)
    q /= q.sum(axis=1, keepdims=True)
    q[~mask] = p2[~mask]
    return q[0] if single else q


# --------------------------------------------------------------------------- conjuncts
# sentences: checked by as_sentences; rules: by resolve_rules
@validate_params({"sentences": NO_VALIDATION, "rules": NO_VALIDATION})
def rule_conjuncts(sentences: Any, rules: Any = None) -> Tuple[List[str], np.ndarray]:
    """The rule conjunct of each sentence, split at its first rule keyword.

    For ``A keyword B`` the conjunct is B when the keyword's rule designates B (``but``,
    ``yet``), A when it designates A (``though``, ``while``); see
    :func:`xplique_ext.text.rules.resolve_rules`. Keywords are matched as PERCY matches
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
    texts = as_sentences(sentences, "sentences")
    out, flags = [], np.zeros(len(texts), dtype=bool)
    for i, s in enumerate(texts):
        tokens = whitespace_tokens(s)
        k, kw = find_keyword(tokens, table)
        part: Sequence[str] = ()
        if k is not None:
            part = tokens[k + 1 :] if table[kw] == "B" else tokens[:k]
        out.append(" ".join(part))
        flags[i] = bool(part)
    return out, flags


@validate_params(
    {
        "t": [ArrayLike(kind="real", finite=True)],
        "alpha": [Interval(numbers.Real, 0.0, 1.0)],
        "pi_max": [Interval(numbers.Real, 0.0, 1.0)],
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
    t_arr = np.asarray(t, dtype=np.float64)
    if not np.isfinite(t_arr).all() or (t_arr < 0).any():
        raise ValueError(f"`t` must be finite and >= 0 (epochs done), got {t!r}")
    out = np.minimum(pi_max, 1.0 - alpha**t_arr)
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------- training
def _teacher_ops(p2, pr2, mask, C, logic):
    """Eq. (2) in keras.ops on (N, K) tensors, mask (N, 1) float."""
    from keras import ops

    r = pr2 if logic == "lukasiewicz" else 0.5 * (1.0 + pr2)
    logits = ops.log(ops.maximum(p2, 1e-30)) - C * (1.0 - r) * mask
    return ops.softmax(logits, axis=-1)


def _build_class():
    import keras
    from keras import ops

    class _RuleDistillation(keras.Model):
        """Train a binary text classifier by iterative rule knowledge distillation.

        A ``keras.Model`` that wraps the *student* (any binary Keras text classifier on
        raw strings (N, 1), on token ids (N, L), or on a dict of token arrays such as a
        keras-hub backbone's ``token_ids`` / ``padding_mask`` / ``segment_ids``, with a
        sigmoid (N, 1) or two-class softmax (N, 2) output; e.g.
        :func:`build_cnn_classifier`, :func:`build_lstm_classifier` or
        :func:`~xplique_ext.text.hub.build_hub_classifier`) and trains it on Eq. (1): on each batch the
        teacher q (Eq. 2) is recomputed from the student's current predictions on the
        sentences (with dropout, as the training forward pass) and on their rule
        conjuncts (without dropout; gradient stopped), and pi_t follows Eq. (4). The
        student's weights are trained in place: use the student itself afterwards
        (explainers, PERCY).

        ``fit`` takes raw sentences and labels; it builds the conjunct inputs itself
        (:meth:`prepare`). A ``tf.data.Dataset`` of ``(prepare(...) dict, label)`` batches
        works too.

        Parameters
        ----------
        student
            The classifier to train (a ``keras.Model`` with one input, or with a dict
            input).
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

        @validate_params(
            {
                "student": NO_VALIDATION,  # a keras.Model with one input, binary output
                "rules": NO_VALIDATION,  # resolve_rules
                "C": [Interval(numbers.Real, 0.0, None)],
                "alpha": [Interval(numbers.Real, 0.0, 1.0)],
                "pi_max": [Interval(numbers.Real, 0.0, 1.0)],
                "pi": [Interval(numbers.Real, 0.0, 1.0), None],
                "tokenizer": NO_VALIDATION,  # checked against the student's input dtype
                "logic": [Options(LOGICS)],
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
            if not isinstance(student, keras.Model):
                raise TypeError(f"`student` must be a keras.Model, got {type(student).__name__}")
            try:
                spec = student.input
            except (AttributeError, ValueError, TypeError):
                spec = None
            self.input_names = sorted(spec) if isinstance(spec, dict) else None
            if self.input_names is None and len(student.inputs or []) != 1:
                raise ValueError(
                    "`student` must take one input (raw strings (N, 1) or token ids "
                    f"(N, L)) or a dict of token arrays, got {len(student.inputs or [])} inputs"
                )
            out_shape = tuple(student.outputs[0].shape)
            if len(out_shape) != 2 or out_shape[-1] not in (1, 2):
                raise ValueError(
                    "`student` must be a binary classifier with a sigmoid (N, 1) or "
                    f"two-class softmax (N, 2) output, got output shape {out_shape}"
                )
            self.sigmoid = out_shape[-1] == 1
            if self.input_names is not None:
                # a dict student (a keras-hub backbone's token_ids / padding_mask / ...):
                # its preprocessor packs the sentences
                if tokenizer is None or not callable(tokenizer):
                    raise ValueError(
                        "`tokenizer` is needed for a student on a dict of inputs "
                        f"{self.input_names}: pass the callable that packs sentences into "
                        "that dict (e.g. its keras-hub preprocessor), got "
                        f"{type(tokenizer).__name__}"
                    )
                super().__init__(name=name)
                self._setup(student, rules, C, alpha, pi_max, pi, logic)
                self.raw_strings = False
                self.tokenizer = None
                self.packer = tokenizer
                self._length = None
                return
            in_spec = student.inputs[0]
            self.raw_strings = "string" in str(in_spec.dtype)
            if self.raw_strings and tokenizer is not None:
                raise ValueError(
                    "`tokenizer` must be None for a student on raw strings (its input "
                    "dtype is string), got a tokenizer"
                )
            if not self.raw_strings and tokenizer is None:
                raise ValueError(
                    "`tokenizer` is needed for a student on token ids (input dtype "
                    f"{in_spec.dtype}): pass the TextVectorization layer or callable that "
                    "made its inputs"
                )
            super().__init__(name=name)
            self._setup(student, rules, C, alpha, pi_max, pi, logic)
            self.packer = None
            self.tokenizer = None if tokenizer is None else Tokenizer(tokenizer)
            shape = tuple(in_spec.shape)
            self._length = shape[1] if len(shape) == 2 and not self.raw_strings else None

        def _setup(self, student, rules, C, alpha, pi_max, pi, logic):
            self.student = student
            self.rules = resolve_rules(rules)
            self.C, self.alpha, self.pi_max = float(C), float(alpha), float(pi_max)
            self.pi = None if pi is None else float(pi)
            self.logic = logic
            # a variable, not a Python number: a traced train step must see the value
            # each fit() sets
            self._steps_per_epoch = keras.Variable(
                1.0, dtype="float32", trainable=False, name="steps_per_epoch"
            )
            self.loss_tracker = keras.metrics.Mean(name="loss")
            self.pi_tracker = keras.metrics.Mean(name="pi")
            self.acc_tracker = keras.metrics.BinaryAccuracy(name="accuracy")

        # ------------------------------------------------------------ inputs
        def _encode(self, texts: List[str]) -> Any:
            if self.packer is not None:
                import tensorflow as tf

                packed = self.packer(tf.constant(texts, dtype=tf.string, shape=(len(texts),)))
                if not isinstance(packed, dict) or set(self.input_names) - set(packed):
                    got = sorted(packed) if isinstance(packed, dict) else type(packed).__name__
                    raise ValueError(
                        f"`tokenizer` must pack sentences into the student's inputs "
                        f"{self.input_names}, got {got}"
                    )
                return {k: np.asarray(packed[k]) for k in self.input_names}
            if self.raw_strings:
                return np.asarray(texts, dtype=object).reshape(-1, 1)
            ids = self.tokenizer(texts) if texts else np.zeros((0, self._length or 1))
            length = self._length or ids.shape[1]
            out = np.zeros((len(texts), length), dtype=np.int32)
            width = min(length, ids.shape[1])
            out[:, :width] = ids[:, :width]
            return out

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

        def _tensors(self, x, y, x_name, y_name):
            """(prepare()'s dict as tensors, labels (N, 1) float32) from sentences or a
            prepare() dict and binary labels, checked."""
            import tensorflow as tf

            if not isinstance(x, dict):
                x = self.prepare(x)
            else:
                missing = {"x", "x_rule", "has_rule"} - set(x)
                if missing:
                    raise ValueError(
                        f"`{x_name}` as a dict must hold the keys of prepare(): missing "
                        f"{sorted(missing)}"
                    )
            n = len(x["has_rule"])
            if y is None:
                raise ValueError(f"`{y_name}` must hold the N binary labels, got None")
            y_arr = np.asarray(y.numpy() if hasattr(y, "numpy") else y)
            if y_arr.dtype.kind not in "biuf":
                raise TypeError(f"`{y_name}` must hold binary labels 0/1, got dtype {y_arr.dtype}")
            y_arr = y_arr.astype(np.float32).reshape(-1, 1)
            if y_arr.shape[0] != n:
                raise ValueError(
                    f"`{y_name}` must hold {n} labels (one per sentence), got {y_arr.shape[0]}"
                )
            if not np.isin(y_arr, (0.0, 1.0)).all():
                raise ValueError(f"`{y_name}` must hold binary labels 0/1, got other values")
            # tensors: Keras' array adapter rejects NumPy object arrays of strings
            return tf.nest.map_structure(lambda v: tf.convert_to_tensor(np.asarray(v)), x), y_arr

        def evaluate(self, x=None, y=None, **kwargs):
            """Keras ``evaluate`` (cross-entropy to the labels and accuracy) on raw
            sentences or :meth:`prepare`'s dict, or a ``tf.data.Dataset``."""
            import tensorflow as tf

            if not isinstance(x, tf.data.Dataset):
                x, y = self._tensors(x, y, "x", "y")
            return super().evaluate(x, y, **kwargs)

        def fit(self, x=None, y=None, batch_size=None, epochs=1, **kwargs):
            """Keras ``fit`` on raw sentences ``x`` (or :meth:`prepare`'s dict, or a
            ``tf.data.Dataset`` of ``(dict, label)`` batches) and binary labels ``y``."""
            import tensorflow as tf

            for unsupported in ("sample_weight", "class_weight"):
                if kwargs.get(unsupported) is not None:
                    raise ValueError(
                        f"`{unsupported}` is not supported by RuleDistillation.fit (Hu et "
                        f"al.'s objective weighs every sentence alike), got {unsupported}="
                        f"{type(kwargs[unsupported]).__name__}"
                    )
            batch_size = check_param(batch_size, "batch_size",
                                     [Interval(numbers.Integral, 1, None), None])
            if isinstance(x, tf.data.Dataset):
                spec = x.element_spec
                features = spec[0] if isinstance(spec, tuple) else spec
                if not (isinstance(features, dict) and {"x", "x_rule"} <= set(features)):
                    raise TypeError(
                        "`x` must be a tf.data.Dataset of (dict, label) batches, the dict "
                        "from RuleDistillation.prepare (keys 'x', 'x_rule', 'has_rule'), "
                        f"got elements {spec}"
                    )
                n_steps = int(x.cardinality())
                if n_steps == 0:
                    raise ValueError("`x` must hold at least one batch, got an empty "
                                     "tf.data.Dataset")
                if n_steps < 0:
                    raise ValueError(
                        "`x` must be a tf.data.Dataset of known, finite length (the pi "
                        "schedule counts epochs in batches), got cardinality "
                        f"{n_steps}"
                    )
                self._steps_per_epoch.assign(float(kwargs.get("steps_per_epoch") or n_steps))
                kwargs.setdefault("shuffle", False)  # a dataset is shuffled by its pipeline
                return super().fit(x, y, epochs=epochs, **kwargs)
            x, y_arr = self._tensors(x, y, "x", "y")
            n = int(y_arr.shape[0])
            if n == 0:
                raise ValueError("`x` must hold at least one sentence, got 0")
            val = kwargs.get("validation_data")
            if isinstance(val, (tuple, list)) and len(val) == 2:
                kwargs["validation_data"] = self._tensors(
                    val[0], val[1], "validation_data[0]", "validation_data[1]"
                )
            bs = 32 if batch_size is None else int(batch_size)
            self._steps_per_epoch.assign(float(kwargs.get("steps_per_epoch") or math.ceil(n / bs)))
            return super().fit(x, y_arr, batch_size=bs, epochs=epochs, **kwargs)

        # ------------------------------------------------------------ model
        def call(self, inputs, training=None):
            x = inputs["x"] if isinstance(inputs, dict) else inputs
            return self.student(x, training=training)

        def _two_class(self, p):
            return ops.concatenate([1.0 - p, p], axis=-1) if self.sigmoid else p

        def _data_loss(self, y, p):
            if self.sigmoid:
                return ops.mean(keras.losses.binary_crossentropy(y, p))
            return ops.mean(keras.losses.sparse_categorical_crossentropy(y, p))

        def _rule_loss(self, q, p):
            if self.sigmoid:
                return ops.mean(keras.losses.binary_crossentropy(q[:, 1:2], p))
            return ops.mean(keras.losses.categorical_crossentropy(q, p))

        def current_pi(self):
            """pi of the coming step (Eq. 4 with t = (step + 1) / steps per epoch)."""
            if self.pi is not None:
                return ops.convert_to_tensor(self.pi, dtype="float32")
            t = ops.cast(self.optimizer.iterations + 1, "float32") / self._steps_per_epoch
            return ops.minimum(self.pi_max, 1.0 - ops.power(self.alpha, t))

        def train_step(self, data):
            import tensorflow as tf

            x, y = data[0], data[1]
            y = ops.reshape(ops.cast(y, "float32"), (-1, 1))
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
                loss = (1.0 - pi) * self._data_loss(y, p) + pi * self._rule_loss(q, p)
                if self.student.losses:
                    loss = loss + ops.sum(self.student.losses)
            variables = self.student.trainable_variables
            grads = tape.gradient(loss, variables)
            # variables the output does not depend on (a keras-hub backbone's pooler
            # under a head on its sequence output) get no gradient: left as they are
            pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
            if pairs:
                self.optimizer.apply([g for g, _ in pairs], [v for _, v in pairs])
            self.loss_tracker.update_state(loss)
            self.pi_tracker.update_state(pi)
            self.acc_tracker.update_state(y, p if self.sigmoid else p[:, 1:2])
            return {m.name: m.result() for m in self.metrics}

        def test_step(self, data):
            x, y = data[0], data[1]
            y = ops.reshape(ops.cast(y, "float32"), (-1, 1))
            p = self.student(x["x"] if isinstance(x, dict) else x, training=False)
            self.loss_tracker.update_state(self._data_loss(y, p))
            self.acc_tracker.update_state(y, p if self.sigmoid else p[:, 1:2])
            return {m.name: m.result() for m in (self.loss_tracker, self.acc_tracker)}

        @property
        def metrics(self):
            return [self.loss_tracker, self.pi_tracker, self.acc_tracker]

    _RuleDistillation.__name__ = _RuleDistillation.__qualname__ = "RuleDistillation"
    _RuleDistillation.__module__ = __name__
    return _RuleDistillation


def __getattr__(name: str):
    # RuleDistillation subclasses keras.Model: built on first access, so that importing
    # xplique_ext.text stays free of TensorFlow.
    if name == "RuleDistillation":
        cls = _build_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
