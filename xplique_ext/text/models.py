"""Text classifiers: the PERCY paper's backbones (section 4.2) in Keras 3, and a
bag-of-words logistic model with known token contributions, for known-answer tests.

* :func:`build_cnn_classifier` -- trainable embedding, three 1D convolutions with kernel
  sizes 3, 4 and 5 in parallel (each max-pooled over time), concatenated, dropout, and a
  sigmoid unit (Kim 2014; Fig. 2a of the paper).
* :func:`build_lstm_classifier` -- trainable embedding, LSTM(128) whose output at the
  last token feeds a sigmoid unit (Fig. 2b).
* :class:`BagOfWordsModel` -- p(y=1|s) = sigmoid(b + sum_i w(t_i)) over the tokens of the
  part it reads: the whole sentence, only the A conjunct (before the first keyword) or
  only the B conjunct (after it). Pure NumPy (fast) with an equivalent Keras model
  (:meth:`BagOfWordsModel.to_keras`) for gradient methods.
"""

from __future__ import annotations

import numbers
import re
from typing import Any, Dict, Mapping, Optional, Sequence, Union

import numpy as np

from ..commons.params import (
    ArrayLike,
    Boolean,
    Callable_,
    InstanceOf,
    Interval,
    Options,
    check_param,
    validate_params,
)
from .conjunctions import resolve_rules
from .tokens import as_sentences, normalize_token, whitespace_tokens

__all__ = [
    "make_vectorizer",
    "build_cnn_classifier",
    "build_lstm_classifier",
    "train_classifier",
    "BagOfWordsModel",
    "PROBABILITY_ACTIVATIONS",
    "output_activation",
    "check_probability_activation",
    "check_probability_outputs",
]

_POSITIVE = [Interval(numbers.Integral, 1, None)]
_SEED = [Interval(numbers.Integral, 0, None)]
_DROPOUT = [Interval(numbers.Real, 0, 1, closed="left")]
_REAL = Interval(numbers.Real, None, None)
#: The heads' parameters (the CNN/LSTM builders and build_hub_classifier).
_HEAD_PARAMETERS = {
    "filters": _POSITIVE,
    "units": _POSITIVE,
    "dropout": _DROPOUT,
    "seed": _SEED,
    "kernel_sizes": [
        ArrayLike(
            "integer",
            ndim=1,
            batch_hint=False,
            nonempty=True,
            within=Interval(numbers.Integral, 1, None),
        )
    ],
}
#: The word-embedding builders' parameters (the vectorizer is a vocabulary size or a
#: TextVectorization layer, keras being imported where used: checked further in).
_BUILDER_PARAMETERS = {
    "vectorizer": "no_validation",
    "sequence_length": [*_POSITIVE, None],
    "raw_strings": [Boolean()],
    "embedding_dim": _POSITIVE,
    "dropout": _DROPOUT,
    "seed": _SEED,
}


@validate_params(
    {
        "sentences": [ArrayLike("any", ndim=1, batch_hint=False, nonempty=True)],
        "max_tokens": [Interval(numbers.Integral, 3, None)],
        "sequence_length": _POSITIVE,
    }
)
def make_vectorizer(
    sentences: Sequence[str], *, max_tokens: int = 20000, sequence_length: int = 24
):
    """A ``TextVectorization`` layer (whitespace split, lower case, punctuation stripped,
    ids padded/truncated to ``sequence_length``) adapted on ``sentences``.

    Examples
    --------
    >>> tv = make_vectorizer(["a good film", "a bad film"], sequence_length=4)
    >>> tv(["good film"]).shape
    TensorShape([1, 4])
    """
    import tensorflow as tf
    from keras.layers import TextVectorization

    tv = TextVectorization(max_tokens=max_tokens, output_sequence_length=sequence_length)
    tv.adapt(tf.constant(as_sentences(sentences, "sentences")))
    return tv


def _build(head, vectorizer, sequence_length, raw_strings, embedding_dim, **options):
    """A word-embedding classifier: input (token ids, or raw strings through the
    vectorizer), trainable embedding (padding masked for the LSTM), then ``head``."""
    import keras

    if isinstance(vectorizer, keras.layers.TextVectorization):
        vocab = int(vectorizer.vocabulary_size())
        sequence_length = vectorizer._output_sequence_length or sequence_length
    else:
        vocab = check_param(vectorizer, "vectorizer", [Interval(numbers.Integral, 2, None)])
        if raw_strings:
            raise ValueError(
                "`raw_strings=True` needs `vectorizer` to be a TextVectorization "
                "layer, got a vocabulary size"
            )
    if raw_strings:
        inp = keras.Input(shape=(1,), dtype="string", name="sentence")
        ids = vectorizer(inp)
    elif sequence_length is None:
        raise ValueError("`sequence_length` is needed when the vectorizer has no fixed length")
    else:
        inp = keras.Input(shape=(int(sequence_length),), dtype="int32", name="token_ids")
        ids = inp  # the model takes the token ids themselves
    init = keras.initializers.RandomUniform(-0.05, 0.05, seed=options["seed"])
    emb = keras.layers.Embedding(
        vocab,
        embedding_dim,
        mask_zero=head == "lstm",
        embeddings_initializer=init,
        name="embedding",
    )(ids)
    return keras.Model(inp, _head(head, emb, **options), name=f"{head}_classifier")


def _head(head, emb, *, dropout, seed, filters=64, kernel_sizes=(3, 4, 5), units=128, mask=None):
    """The paper's heads on token vectors (N, L, D): Fig. 2a's parallel convolutions,
    max-pooled over time and concatenated, or Fig. 2b's LSTM (masked by the embedding, or
    by ``mask`` (N, L) bool) read at its last real step; then dropout and a sigmoid unit."""
    import keras

    init = keras.initializers.GlorotUniform(seed=seed)
    if head == "cnn":
        branches = [
            keras.layers.GlobalMaxPooling1D(name=f"pool{k}")(
                keras.layers.Conv1D(
                    filters,
                    int(k),
                    activation="relu",
                    padding="same",
                    kernel_initializer=init,
                    name=f"conv{k}",
                )(emb)
            )
            for k in kernel_sizes
        ]
        if len(branches) > 1:
            h = keras.layers.Concatenate(name="concat")(branches)
        else:
            h = branches[0]
    else:
        lstm = keras.layers.LSTM(
            units,
            kernel_initializer=init,
            name="lstm",
            recurrent_initializer=keras.initializers.Orthogonal(seed=seed),
        )
        h = lstm(emb) if mask is None else lstm(emb, mask=mask)
    h = keras.layers.Dropout(dropout, seed=seed)(h)
    return keras.layers.Dense(1, activation="sigmoid", kernel_initializer=init, name="sigmoid")(h)


@validate_params(
    {**_BUILDER_PARAMETERS, "filters": _POSITIVE, "kernel_sizes": _HEAD_PARAMETERS["kernel_sizes"]}
)
def build_cnn_classifier(
    vectorizer: Union[int, Any],
    *,
    sequence_length: Optional[int] = None,
    raw_strings: bool = False,
    embedding_dim: int = 64,
    filters: int = 64,
    kernel_sizes: Sequence[int] = (3, 4, 5),
    dropout: float = 0.5,
    seed: int = 0,
):
    """The 1D-CNN backbone of the PERCY paper (Fig. 2a), in Keras 3.

    Parameters
    ----------
    vectorizer
        A ``TextVectorization`` layer (vocabulary size and sequence length are read from
        it) or a vocabulary size.
    sequence_length
        Number of token ids per sentence, when ``vectorizer`` does not fix it.
    raw_strings
        True puts ``vectorizer`` inside the model, which then takes raw strings (N, 1);
        False builds a model on token ids (N, L).
    embedding_dim, filters, kernel_sizes, dropout
        Embedding size, filters per convolution, the parallel kernel sizes (3, 4, 5) and
        the dropout rate before the sigmoid unit (0.5 in the paper).
    seed
        Seed of the weight initialisers and of dropout.

    Returns
    -------
    keras.Model
        Sigmoid output (N, 1): p(y=1|s).

    Examples
    --------
    >>> cnn = build_cnn_classifier(100, sequence_length=12, embedding_dim=8, filters=4)
    >>> cnn.output_shape
    (None, 1)
    """
    return _build(
        "cnn",
        vectorizer,
        sequence_length,
        raw_strings,
        embedding_dim,
        filters=filters,
        kernel_sizes=kernel_sizes,
        dropout=dropout,
        seed=seed,
    )


@validate_params({**_BUILDER_PARAMETERS, "units": _POSITIVE})
def build_lstm_classifier(
    vectorizer: Union[int, Any],
    *,
    sequence_length: Optional[int] = None,
    raw_strings: bool = False,
    embedding_dim: int = 64,
    units: int = 128,
    dropout: float = 0.5,
    seed: int = 0,
):
    """The LSTM backbone of the PERCY paper (Fig. 2b), in Keras 3: trainable embedding
    (padding id 0 masked, so the LSTM's output is the one of the last real token),
    LSTM(``units``=128), dropout and a sigmoid unit.

    Parameters are those of :func:`build_cnn_classifier`, with ``units`` the LSTM size.

    Examples
    --------
    >>> lstm = build_lstm_classifier(100, sequence_length=12, embedding_dim=8, units=4)
    >>> lstm.output_shape
    (None, 1)
    """
    return _build(
        "lstm",
        vectorizer,
        sequence_length,
        raw_strings,
        embedding_dim,
        units=units,
        dropout=dropout,
        seed=seed,
    )


# =========================================================================== probabilities
#: Output activations whose values are probabilities in [0, 1]: a binary classifier trained
#: with a cross-entropy must end with one of them.
PROBABILITY_ACTIVATIONS = ("sigmoid", "softmax", "hard_sigmoid")


def output_activation(model: Any) -> str:
    """The activation that makes a functional Keras model's output: the ``activation`` of
    the layer that makes it (``'linear'`` for a ``Dense`` without one), else the name of the
    operation (``'tanh'`` for ``keras.ops.tanh``); ``''`` when none can be read (a
    subclassed model, a ``Lambda`` layer)."""
    outputs = getattr(model, "outputs", None)
    history = getattr(outputs[0], "_keras_history", None) if outputs else None
    if history is None:
        return ""
    operation = history.operation
    activation = getattr(operation, "activation", None)
    if activation is not None:
        return getattr(activation, "__name__", "")
    # an operation such as keras.ops.tanh (class Tanh) or ops.leaky_relu (LeakyRelu)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(operation).__name__).lower()


def _is_activation(name: str) -> bool:
    """Whether ``name`` is one of Keras' activations."""
    import keras

    try:
        keras.activations.get(name)
    except (ValueError, TypeError):
        return False
    return bool(name)


def output_problem(activation: str, out_shape: tuple) -> str:
    """Why a binary classifier's output is no probability ('' when it is one, or when
    its activation cannot be read), from its activation and its shape."""
    if activation == "linear":
        return " of logits (a linear last layer)"
    if activation == "softmax" and out_shape[-1:] == (1,):
        return " of a softmax over one unit (always 1)"
    if activation not in PROBABILITY_ACTIVATIONS and _is_activation(activation):
        return f" of a {activation} activation (not probabilities in [0, 1])"
    return ""


def check_probability_activation(model: Any, name: str = "model") -> None:
    """Refuse a binary classifier whose output activation makes no probabilities.

    The activation of the layer or operation that makes the output
    (:func:`output_activation`) must be one of :data:`PROBABILITY_ACTIVATIONS`: a linear,
    ``tanh`` or ``relu`` output, or a softmax over one unit, is refused. A model whose
    outputs are not known (subclassed), or whose activation cannot be read (a ``Lambda``
    layer), passes: its outputs are checked on a batch (:func:`check_probability_outputs`).

    Raises
    ------
    ValueError
        Naming ``name``, the output shape and the activation.
    """
    outputs = getattr(model, "outputs", None)
    if not outputs:
        return
    out_shape = tuple(outputs[0].shape)
    why = output_problem(output_activation(model), out_shape)
    if why:
        raise ValueError(
            f"`{name}` must be a binary classifier with a sigmoid (N, 1) or "
            f"two-class softmax (N, 2) output, got output shape {out_shape}{why}"
        )


def check_probability_outputs(model: Any, sample: Any, name: str = "model") -> None:
    """Refuse a binary classifier whose outputs are no probabilities, before it is trained
    with a cross-entropy (which would clip them and train on silently).

    Two checks: the output activation, where it can be read
    (:func:`check_probability_activation`: a linear, ``tanh`` or ``relu`` output is
    refused whatever the data); and the model's outputs on ``sample``, one batch of its
    inputs, which must be finite probabilities in [0, 1], checked row by row by
    :func:`xplique_ext.runtime.check_outputs` (an output made by an operation that cannot
    be read, such as a ``Lambda`` layer, is caught there).

    Only ``sample`` is checked, not every batch of the training that follows: a check
    inside Keras' compiled training step would be dropped where Keras compiles it with
    XLA (``jit_compile``, whose assertions compile to nothing), and a check outside it
    would run the model a second time on each batch. An output whose activation is a
    sigmoid or a softmax stays in [0, 1] on every batch; one that becomes non-finite
    later shows as a NaN loss.

    Raises
    ------
    ValueError
        Naming ``name``: an output that is no probability.
    """
    import tensorflow as tf

    from ..runtime import check_outputs

    check_probability_activation(model, name)
    # tensors: Keras' array adapter rejects NumPy object arrays of strings
    sample = tf.nest.map_structure(tf.convert_to_tensor, sample)
    batch = int(tf.nest.flatten(sample)[0].shape[0])
    check_outputs(model(sample, training=False), batch, name=name, probabilities=True)


@validate_params(
    {
        "model": [Callable_()],
        "x": [ArrayLike("any", nonempty=True)],
        "epochs": _POSITIVE,
        "y": [ArrayLike("numeric", within=Interval(numbers.Real, 0, 1))],
        "batch_size": _POSITIVE,
        "seed": _SEED,
        "verbose": [Interval(numbers.Integral, 0, 2)],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
    }
)
def train_classifier(
    model: Any,
    x: Any,
    y: Any,
    *,
    epochs: int = 3,
    batch_size: int = 32,
    learning_rate: float = 1e-3,
    seed: int = 0,
    verbose: int = 0,
):
    """Compile (Adam, binary cross-entropy) and train ``model``; the training order is
    shuffled each epoch by a local generator seeded with ``seed``.

    ``model`` must return probabilities p(y=1|s) (a sigmoid unit): a model whose output
    is no probability is refused before training, rather than trained on a clipped
    cross-entropy (see :func:`check_probability_outputs`): its output activation (logits,
    ``tanh``, ``relu`` refused), and its outputs on the first ``batch_size`` rows of ``x``
    (finite, in [0, 1]). Later batches are not checked (the reason is in
    :func:`check_probability_outputs`).

    The paper trains with Adam at 3e-5, batch size 50 and early stopping on real data;
    the defaults here suit the small generated data sets of the tutorial.

    Returns
    -------
    dict
        Loss and accuracy per epoch (``{'loss': [...], 'accuracy': [...]}``).
    """
    import keras

    if x.dtype.kind in "OU" and x.ndim == 1:
        x = x.astype(object).reshape(-1, 1)
    y = np.asarray(y, dtype=np.float32).reshape(-1, 1)
    if len(y) != len(x):
        raise ValueError(f"`y` must hold one label per row of `x` ({len(x)}), got {len(y)}")
    check_probability_outputs(model, x[:batch_size])
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss="binary_crossentropy",
        metrics=["accuracy"],
    )
    rng = np.random.default_rng(seed)
    history = []
    for _ in range(epochs):
        order = rng.permutation(len(x))
        history.append(
            model.fit(
                x[order], y[order], batch_size=batch_size, epochs=1, shuffle=False, verbose=verbose
            ).history
        )
    return {key: [float(h[key][-1]) for h in history] for key in ("loss", "accuracy")}


# =========================================================================== bag of words
def _part_mask(ids, keyword_ids, part, xp):
    """(B, L) float mask of the positions a bag of words on ``part`` reads, in NumPy or
    keras.ops (``xp``): all, those before the first keyword (A) or after it (B)."""
    if part == "all":
        return xp.ones_like(ids, dtype="float32" if xp is not np else np.float64)
    is_kw = xp.where(xp.any(xp.equal(xp.expand_dims(ids, -1), keyword_ids), axis=-1), 1.0, 0.0)
    seen = xp.cumsum(is_kw, axis=1)
    return xp.where(xp.equal(seen, 0.0) if part == "A" else seen - is_kw >= 1.0, 1.0, 0.0)


class BagOfWordsModel:
    """Bag-of-words logistic model with exactly known token contributions.

    p(y=1|s) = sigmoid(b + sum_{i in part} w(t_i)), where ``part`` is every token, the
    tokens before the sentence's first keyword (``'A'``: the model reads only the A
    conjunct) or the tokens after it (``'B'``). w is 0 for keywords and unknown words.
    The logit contribution of token i is thus exactly w(t_i) when i is in the part, 0
    otherwise (:meth:`logit_contributions`). A sentence without keyword is all A.

    The model itself is pure NumPy on token ids (fast, any callable works for LIME and
    SHAP); :attr:`tokenizer` is the matching ``TextVectorization`` layer, and
    :meth:`to_keras` builds the same function as a Keras model (embedding of size 1) for
    Integrated Gradients.

    Parameters
    ----------
    weights
        word -> weight (words are lower-cased; punctuation is stripped by the tokenizer).
    bias
        Intercept b.
    part
        'all', 'A' or 'B'.
    rules
        Keywords that split A from B (see :func:`xplique_ext.text.conjunctions.resolve_rules`).
    sequence_length
        Number of token ids per sentence (longer sentences are truncated).

    Examples
    --------
    >>> bow = BagOfWordsModel({"good": 2.0, "bad": -1.0}, part="B")
    >>> float(bow.logit_contributions("good film but bad ending")[3])
    -1.0
    >>> bow.predict_proba(["good film but bad ending"]).round(3)
    array([0.269])
    """

    @validate_params(
        {
            "weights": [InstanceOf(dict, Mapping, description="a mapping word -> weight")],
            "bias": [_REAL],
            "part": [Options(["all", "A", "B"])],
            "sequence_length": _POSITIVE,
            "rules": "no_validation",
        }
    )  # checked by resolve_rules
    def __init__(
        self,
        weights: Mapping[str, float],
        bias: float = 0.0,
        *,
        part: str = "all",
        rules: Any = None,
        sequence_length: int = 64,
    ):
        import keras

        if not weights:
            raise ValueError("`weights` must be a non-empty mapping word -> weight, got {}")
        self.part = part
        self.bias = bias
        self.sequence_length = sequence_length
        self.rules = resolve_rules(rules)
        self.weights: Dict[str, float] = {}
        for word, w in weights.items():
            norm = normalize_token(str(word))
            if not norm or len(norm.split()) != 1 or norm in self.weights:
                raise ValueError(
                    "`weights` keys must be distinct single words (compared in lower "
                    f"case, punctuation stripped), got {word!r}"
                )
            self.weights[norm] = check_param(w, f"weights[{word!r}]", [_REAL])
        self.tokenizer = keras.layers.TextVectorization(
            vocabulary=sorted({*self.weights, *self.rules}), output_sequence_length=sequence_length
        )
        self.vocabulary = self.tokenizer.get_vocabulary()  # ['', '[UNK]', *vocab]
        # '' and '[UNK]' are no weights' key (those are non-empty words without brackets)
        self.id_weights = np.array([self.weights.get(t, 0.0) for t in self.vocabulary])
        self.keyword_ids = np.array([self.vocabulary.index(k) for k in self.rules])

    # ---------------------------------------------------------------- the function
    def logits(self, ids: Any) -> np.ndarray:
        """b + sum of the weights of the read tokens, shape (B,)."""
        ids = np.asarray(ids.numpy() if hasattr(ids, "numpy") else ids).astype(np.int64)
        mask = _part_mask(ids, self.keyword_ids, self.part, np)
        return self.bias + (self.id_weights[ids] * mask).sum(axis=1)

    def __call__(self, ids: Any) -> np.ndarray:
        """p(y=1) of token ids (B, L), shape (B, 1)."""
        return (1.0 / (1.0 + np.exp(-self.logits(ids))))[:, None]

    def predict_proba(self, sentences: Sequence[str]) -> np.ndarray:
        """p(y=1|s) of raw sentences, shape (N,)."""
        return self(self.tokenizer(list(sentences)).numpy())[:, 0]

    def logit_contributions(self, sentence: str) -> np.ndarray:
        """Exact contribution of each whitespace token to the logit, shape (n,)."""
        words = whitespace_tokens(sentence)
        out = np.zeros(len(words))
        if words:
            # each word's (single) id; the words without one (punctuation) are not seen
            ids = self.tokenizer(words).numpy()[:, 0]
            pos = np.flatnonzero(ids)[: self.sequence_length]
            out[pos] = (
                self.id_weights[ids[pos]]
                * _part_mask(ids[pos][None, :], self.keyword_ids, self.part, np)[0]
            )
        return out

    # ---------------------------------------------------------------- Keras twin
    def to_keras(self):
        """The same model in Keras: ids (N, L) -> Embedding(V, 1) (fixed weights) ->
        part mask -> sum + b -> sigmoid (N, 1)."""
        import keras
        from keras import ops

        inp = keras.Input(shape=(self.sequence_length,), dtype="int32", name="token_ids")
        emb = keras.layers.Embedding(len(self.id_weights), 1, trainable=False, name="embedding")
        e = emb(inp)
        emb.set_weights([self.id_weights[:, None].astype(np.float32)])
        part = self.part
        kw = self.keyword_ids.astype(np.int32)

        def head(args):
            values, ids = args
            values = ops.squeeze(values, -1) * _part_mask(ids, kw, part, ops)
            return ops.sigmoid(ops.sum(values, axis=1, keepdims=True) + self.bias)

        out = keras.layers.Lambda(head, output_shape=(1,), name="bow_head")([e, inp])
        return keras.Model(inp, out, name=f"bow_{part}")
