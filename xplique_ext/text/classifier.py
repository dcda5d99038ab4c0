"""A thin wrapper around a binary text classifier: batched, compiled forward passes on
sentences and on masked versions of them, pooled across sentences, and gradients with
respect to the embedding output.

Two forms of model are accepted:

* a model that takes raw strings (a ``TextVectorization`` layer inside);
* a model that takes token ids, together with a ``tokenizer`` (a ``TextVectorization``
  layer or a callable, see :mod:`xplique_ext.text.tokens`).

A keras-hub text classifier (a ``TextClassifier`` task with its preprocessor, or a
model over a keras-hub backbone with its preprocessor or tokenizer) is first turned into
the second form by :func:`xplique_ext.text.hub.adapt_text_model`.

The output is a sigmoid (N, 1) or a two-class softmax (N, 2); the wrapper always returns
p(y=1|s). Any callable model works for forward passes (LIME, SHAP, PERCY); Integrated
Gradients and embedding shifts need a Keras model with an ``Embedding`` layer.
"""

from __future__ import annotations

import inspect
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, NamedTuple, Optional, Sequence

import numpy as np

from ..commons.params import Callable_, InstanceOf, Interval, Word, validate_params
from ..runtime import check_outputs, model_functions, resolve_strategy, single_output
from .hub import adapt_text_model
from .tokens import Tokenizer, as_sentences, compose, find_layer, is_compositional

__all__ = ["TextClassifier", "as_text_classifier"]

#: Masked inputs are prepared in chunks of about this many rows (then sent to the model
#: ``batch_size`` at a time); bounds memory whatever the number of sentences.
CHUNK_ROWS = 16384


class TextModelObjects(NamedTuple):
    """What the compiled functions of a text classifier reach, by identity (held through
    weak references: inside the functions, ``live()`` returns them)."""

    model: Any
    embedding: Any
    strategy: Any


class TextModelFunctions(NamedTuple):
    """The compiled functions of a Keras text classifier (see :func:`_functions`)."""

    #: ``forward(x)``: the whole output, checked on every batch
    forward: Callable
    #: ``ig(x, alpha, word_mask, shift)``: the contributions grad * (e - baseline) along
    #: the integrated-gradients path, and p(y=1)
    ig: Callable
    #: ``shift(x, shift)``: the output when a shift is added to the embedding output
    shift: Callable


def _functions(live: Callable) -> TextModelFunctions:
    """The functions of a Keras model, compiled and shared by every wrapper of it through
    :func:`~xplique_ext.runtime.model_functions` (``live()`` gives the
    :class:`TextModelObjects`, held through weak references only).

    ``shift`` and ``ig`` replace the embedding layer's ``call`` while the graph is traced
    (the traced graph keeps the replacement; the layer is restored as soon as the trace
    ends).
    """
    import tensorflow as tf

    def run(x, embed=None):
        """The model's one output on ``x``, the embedding output passed through ``embed``."""
        objects = live()
        model = objects.model
        if embed is None:
            return single_output(model(x, training=False), "model")
        layer = objects.embedding
        original = layer.call
        layer.call = lambda inputs, *a, **k: embed(original(inputs, *a, **k))
        try:
            return single_output(model(x, training=False), "model")
        finally:
            del layer.call

    def ig(x, alpha, word_mask, shift):
        store = {}
        tape = tf.GradientTape()

        def embed(e):
            e = e + tf.cast(shift, e.dtype)
            store["diff"] = diff = e * tf.cast(word_mask, e.dtype)[..., None]
            store["z"] = e - diff + tf.cast(alpha, e.dtype)[:, None, None] * diff
            tape.watch(store["z"])
            return store["z"]

        with tape:
            p1 = run(x, embed)[:, -1]  # p(y=1): the last column of (B, 1) or (B, 2)
        # gradient of p(y=1) with respect to the embedding output z, in float64 (which
        # holds any model dtype exactly: never cast down)
        grad = tf.cast(tape.gradient(p1, store["z"]), tf.float64)
        contrib = tf.reduce_sum(grad * tf.cast(store["diff"], tf.float64), -1)
        return contrib, tf.cast(p1, tf.float64)

    def forward(x):
        return run(x)

    def shift(x, offset):
        return run(x, lambda e: e + tf.cast(offset, e.dtype))

    return TextModelFunctions(forward=forward, ig=ig, shift=shift)


@dataclass
class Prepared:
    """Sentences split into tokens, with their token pieces when ids are composed."""

    sentences: List[str]
    words: List[List[str]]
    pieces: Optional[List[List[np.ndarray]]] = None
    compositional: bool = False


class TextClassifier:
    """Batched access to a binary text classifier, pooled across sentences.

    Parameters
    ----------
    model
        Keras model (or any callable) on raw strings, or on token ids when ``tokenizer``
        is given. Output (N, 1) sigmoid or (N, 2) softmax probabilities.
    tokenizer
        None for a model on raw strings; otherwise a ``TextVectorization`` layer or a
        callable mapping a list of strings to padded ids (N, L).
    batch_size
        Number of (perturbed) sentences sent to the model at once; None sends each chunk
        of prepared inputs at once.
    mask_string
        String that replaces a masked token (LIME's default, ``'UNKWORDZ'``, which a
        vocabulary maps to its out-of-vocabulary id).
    strategy
        ``tf.distribute.Strategy`` whose replicas share each batch of a Keras model's
        calls (forward passes, embedding shifts, gradients); None: the one in scope.
        Other callables run in Python, on one device.

    Notes
    -----
    * Masked sentences of a token-id model are built directly as id arrays when the
      tokenizer is compositional (see :mod:`xplique_ext.text.tokens`); otherwise they
      are built as strings and tokenized batch by batch.
    * Gradients and embedding shifts replace the output of the model's ``Embedding``
      layer while a ``tf.function`` is being traced (the layer is restored right after
      the trace); do not trace the same model from another thread at that moment.
    * Results do not depend on the batch size when the model has a fixed sequence
      length (``output_sequence_length`` of the vectorizer, or a fixed input shape); a
      model that pads to the longest sentence of each batch sees batch-dependent padding.
    """

    # tokenizer and strategy: checked by Tokenizer and resolve_strategy
    @validate_params(
        {
            "model": [Callable_()],
            "mask_string": [Word()],
            "batch_size": [Interval(numbers.Integral, 1, None), None],
            "tokenizer": "no_validation",
            "strategy": "no_validation",
        }
    )
    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        batch_size: Optional[int] = 64,
        mask_string: str = "UNKWORDZ",
        strategy: Any = None,
    ):
        # a keras-hub text classifier becomes a model on word-piece ids + its tokenizer
        model, tokenizer = adapt_text_model(model, tokenizer, mask_string=mask_string)
        import keras

        self.model = model
        self.tokenizer = tokenizer
        if tokenizer is not None and not isinstance(tokenizer, Tokenizer):
            self.tokenizer = Tokenizer(tokenizer)
        self.batch_size = batch_size
        self.mask_string = mask_string
        self.strategy = resolve_strategy(strategy)
        self.keras = isinstance(model, keras.layers.Layer)
        self.takes_ids = self.tokenizer is not None
        # the tokenizer that aligns model positions with words (IG, embedding shifts)
        tv = (
            find_layer(model, keras.layers.TextVectorization)
            if (self.keras and not self.takes_ids)
            else None
        )
        self.align_tokenizer = self.tokenizer if tv is None else Tokenizer(tv)
        spec = getattr(model, "inputs", None) if self.keras else None
        shape = tuple(spec[0].shape) if spec else ()
        self.input_dtype = str(spec[0].dtype) if spec else None
        self.string_input_rank = len(shape) if spec and not self.takes_ids else 1
        self.input_length = None  # the length of the ids the model takes, when fixed
        if self.takes_ids:
            self.input_length = self.tokenizer.sequence_length
        if self.takes_ids and len(shape) >= 2 and shape[1]:
            self.input_length = int(shape[1])
        if self.input_dtype is not None and ("string" in self.input_dtype) == self.takes_ids:
            raise ValueError(
                "`tokenizer` must be None for this model: it takes raw strings (input dtype "
                f"{self.input_dtype}, a TextVectorization layer inside), got a tokenizer of "
                f"type {type(self.tokenizer.raw).__name__}"
                if self.takes_ids
                else "`tokenizer` is required for this model: it takes token ids (input dtype "
                f"{self.input_dtype}), not raw strings; pass the TextVectorization layer or "
                "callable that maps sentences to its ids as `tokenizer=`"
            )
        self._n_outputs: Optional[int] = None
        # the adapter of text/hub.py names its own embedding
        self.embedding = None
        self._fns: Optional[TextModelFunctions] = None  # compiled: Keras models only
        if self.keras:
            self.embedding = getattr(model, "_xplique_embedding", None) or find_layer(
                model, keras.layers.Embedding
            )
            objects = TextModelObjects(
                model=model, embedding=self.embedding, strategy=self.strategy
            )
            self._fns = model_functions(objects, ("text",), _functions, self.strategy)

    def __deepcopy__(self, memo: dict) -> TextClassifier:
        """A copy sharing the model, tokenizer, strategy and compiled functions (immutable
        settings otherwise): it gives the same probabilities."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for name, value in vars(self).items():  # every attribute, shared
            setattr(new, name, value)
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(
            "TextClassifier cannot be pickled: it holds a model, compiled TensorFlow "
            "functions and a tf.distribute strategy; rebuild it from the model and "
            "tokenizer, or copy it in memory with copy.deepcopy"
        )

    # ------------------------------------------------------------------ preparation
    def prepare(self, sentences: Sequence[str]) -> Prepared:
        """Split sentences into whitespace tokens and, for token-id models, their pieces."""
        sentences = as_sentences(sentences, "sentences")
        prep = Prepared(sentences, [s.split() for s in sentences])  # the whitespace tokens
        tok = self.align_tokenizer
        if tok is not None:
            # tokenize every distinct token once, in one call
            tok.pieces([w for ws in prep.words for w in ws] + [self.mask_string])
            if is_compositional(tok, sentences, prep.words)[0]:
                prep.compositional = True
                prep.pieces = [tok.pieces(ws) for ws in prep.words]
        return prep

    # ------------------------------------------------------------------ raw calls
    def _to_model_input(self, x: Any) -> Any:
        if not self.keras:
            return x
        import tensorflow as tf

        if self.takes_ids:
            return tf.convert_to_tensor(np.asarray(x), dtype=self.input_dtype or "int32")
        arr = tf.constant(list(x), dtype=tf.string)
        return tf.reshape(arr, (-1, 1)) if self.string_input_rank == 2 else arr

    def _check_outputs(self, out: Any, batch: int, offset: Optional[int] = None) -> np.ndarray:
        """The model's outputs for one batch, checked on every row: a single output (not
        a dict nor a tuple) of real numbers, shape (B, 1) (sigmoid) or (B, 2) (two-class
        softmax), the same on every batch, finite probabilities in [0, 1]; returns p1 as
        float64."""
        known = self._n_outputs
        arr = check_outputs(  # a single output (not a dict nor a tuple), as a NumPy array
            out,
            batch,
            trailing=[(1,), (2,)] if known is None else [(known,)],
            probabilities=True,
            offset=offset,
            expected="shape (N, 1) (sigmoid) or (N, 2) (two-class softmax)"
            if known is None
            else f"shape (N, {known}) on every batch",
        )
        self._n_outputs = int(arr.shape[1])
        # p(y=1): sigmoid or softmax, its round-off past 0 or 1 (allowed above) clipped
        return np.clip(arr[:, -1].astype(np.float64), 0.0, 1.0)

    def _first_call(self, x: Any, offset: Optional[int] = None) -> np.ndarray:
        """The first call of the model, eagerly, with an error that says which input it
        expects; it fixes the number of outputs."""
        try:
            out = self.model(self._to_model_input(x[:1]))
        except Exception as exc:  # noqa: BLE001 - re-raised with the reason
            hint = (
                "it was given token ids from `tokenizer`; a model on raw strings needs "
                "`tokenizer=None`"
                if self.takes_ids
                else "it was given raw strings "
                "because `tokenizer` is None; a model on token ids needs `tokenizer=` "
                "(the layer or callable giving its ids)"
            )
            raise TypeError(
                f"the model failed on its first batch ({hint}): {type(exc).__name__}: {exc}"
            ) from exc
        return self._check_outputs(out, 1, offset)

    def _fn(self, kind: str, x: Any, what: str = "") -> Any:
        """The compiled function ``kind`` (see :func:`_functions`), run on the replicas of
        the strategy; the model's first call is made on ``x`` when none was made yet."""
        if self._n_outputs is None:
            self._first_call(x)
        if kind != "forward":
            self._require_embedding(what)
        return getattr(self._fns, kind)

    def forward(self, x: Any, offset: Optional[int] = None) -> np.ndarray:
        """p(y=1) for one batch of model inputs (ids (B, L) or a list of B strings),
        every batch checked (see :meth:`_check_outputs`; ``offset``: index of the batch's
        first sentence, named in the errors)."""
        if self._n_outputs is None:
            first = self._first_call(x, offset)
            if len(x) == 1:
                return first
        fwd = self._fn("forward", x) if self.keras else self.model
        return self._check_outputs(fwd(self._to_model_input(x)), len(x), offset)

    def forward_shifted(self, x: Any, shift: np.ndarray) -> np.ndarray:
        """p(y=1) when ``shift`` (B, L, D) is added to the embedding output."""
        return self._check_outputs(
            self._fn("shift", x, "embedding shifts")(
                self._to_model_input(x), shift.astype(np.float32)
            ),
            len(x),
        )

    def ig_batch(self, x, alpha, word_mask, shift) -> tuple:
        """(position contributions (B, L), p1 (B,)) at interpolation points ``alpha``."""
        contrib, p1 = self._fn("ig", x, "Integrated Gradients")(
            self._to_model_input(x), *(np.asarray(v, np.float32) for v in (alpha, word_mask, shift))
        )
        p1 = check_outputs(np.asarray(p1), len(x), trailing=[()], probabilities=True)
        return np.asarray(contrib), p1.astype(np.float64)

    def _require_embedding(self, what: str, prep: Optional[Prepared] = None) -> Any:
        """The embedding layer, which ``what`` needs; with ``prep``, ``what`` also needs the
        tokenizer to compose over the whitespace tokens of the prepared sentences."""
        if self.embedding is None:
            raise ValueError(
                f"{what} need a Keras model with an Embedding layer; got "
                f"{type(self.model).__name__} without one"
            )
        if prep is not None and not prep.compositional:
            raise ValueError(
                f"{what} need a tokenizer whose ids of a sentence are the ids of its "
                "whitespace tokens put end to end (see xplique_ext.text.tokens); the "
                "given tokenizer is not compositional on these sentences"
            )
        return self.embedding

    def embedding_dim(self) -> int:
        return int(self._require_embedding("embedding shifts").output_dim)

    # ------------------------------------------------------------------ sentences
    def _batches(self, n: int) -> Iterator[slice]:
        """Slices of ``batch_size`` rows over ``n`` rows."""
        size = self.batch_size or max(n, 1)
        return (slice(start, min(start + size, n)) for start in range(0, n, size))

    def _pooled(self, n: int, call: Any, progress: Any = None) -> np.ndarray:
        """``call(rows)`` (p(y=1) of a slice of rows) over ``n`` rows, ``batch_size`` at a
        time, with the ``progress`` bar (or None) updated."""
        out = np.empty(n, dtype=np.float64)
        for sl in self._batches(n):
            out[sl] = call(sl)
            if progress is not None:
                progress.update(sl.stop - sl.start)
        return out

    def predict_proba(self, sentences: Sequence[str], progress: Any = None) -> np.ndarray:
        """p(y=1|s) for each sentence, shape (N,), batched."""
        sentences = as_sentences(sentences, "sentences")
        return self._pooled(
            len(sentences),
            lambda sl: self.forward(self._from_strings(sentences[sl]), sl.start),
            progress,
        )

    def _from_strings(self, strings: List[str]) -> Any:
        """The model's input for sentences: the strings, or their ids at the input length."""
        if not self.takes_ids:
            return strings
        ids = self.tokenizer(strings)
        return ids if self.input_length is None else stack_to_width([ids], self.input_length)

    # ------------------------------------------------------------------ masked inputs
    def masked_inputs(self, prep: Prepared, index: int, keep: np.ndarray):
        """Model inputs for masked versions of sentence ``index``.

        Returns (inputs, owner): ``inputs`` is an id array (R, L) or a list of R strings;
        ``owner`` (R, L) maps positions to tokens (-1 for padding) when known, else None.
        """
        keep = np.asarray(keep, dtype=bool)
        if not prep.compositional:
            return self._from_strings(self._strings(prep.words[index], keep)), None
        pieces = prep.pieces[index]
        mask = self.align_tokenizer.pieces([self.mask_string])[0]
        length = (self.input_length if self.takes_ids else None) or (
            self.align_tokenizer.sequence_length
        )
        if not length:
            sizes = np.array([len(p) for p in pieces], dtype=np.int64)
            length = int(np.where(keep, sizes, len(mask)).sum(axis=1).max()) if keep.size else 0
        ids, owner = compose(pieces, keep, mask, max(length, 1))
        return (ids if self.takes_ids else self._strings(prep.words[index], keep)), owner

    def _strings(self, words: List[str], keep: np.ndarray) -> List[str]:
        table = np.where(keep, np.array(words, dtype=object)[None, :], self.mask_string)
        return [" ".join(row) for row in table]

    def masked_proba(
        self,
        prep: Prepared,
        indices: Sequence[int],
        keeps: Sequence[np.ndarray],
        *,
        shifts: Optional[Sequence[np.ndarray]] = None,
        progress: Any = None,
    ) -> List[np.ndarray]:
        """p(y=1) of masked versions of several sentences, pooled into batches.

        Parameters
        ----------
        prep
            Prepared sentences.
        indices
            Sentence index of each block.
        keeps
            One boolean array (R_i, n_i) per block: True keeps the token.
        shifts
            Optional embedding shifts, one (L, D) array per block (added at the positions
            of the sentence's tokens).
        progress
            tqdm bar updated with the number of rows evaluated.

        Returns
        -------
        probabilities
            One array (R_i,) per block.
        """
        sizes = [len(k) for k in keeps]
        if not sum(sizes):
            return [np.zeros(0) for _ in sizes]
        x_all, owner = self.stacked_inputs(prep, indices, keeps)
        if shifts is not None:
            self._require_embedding("embedding shifts", prep)
            shifts = np.repeat(pad_shifts(shifts, owner.shape[1]), sizes, axis=0)
            shifts *= (owner >= 0)[..., None]
        out = self._pooled(
            sum(sizes),
            lambda sl: (
                self.forward(x_all[sl])
                if shifts is None
                else self.forward_shifted(x_all[sl], shifts[sl])
            ),
            progress,
        )
        return np.split(out, np.cumsum(sizes)[:-1])

    def stacked_inputs(self, prep: Prepared, indices: Sequence[int], keeps: Sequence[np.ndarray]):
        """:meth:`masked_inputs` of several blocks, stacked: ids padded with 0 to one width
        (or the strings), and the tokens of the positions padded with -1 (None when unknown)."""
        parts, owners = zip(*[self.masked_inputs(prep, i, k) for i, k in zip(indices, keeps)])
        x = (
            stack_to_width(parts)
            if isinstance(parts[0], np.ndarray)
            else [s for p in parts for s in p]
        )
        return x, None if any(o is None for o in owners) else stack_to_width(owners, fill=-1)


def pad_shifts(shifts: Sequence[np.ndarray], width: int) -> np.ndarray:
    """Embedding shifts (L_i, D) cut or padded with 0 to (B, width, D), float32."""
    return stack_to_width([np.asarray(s, np.float32)[None] for s in shifts], width)


def stack_to_width(
    arrays: Sequence[np.ndarray], width: Optional[int] = None, fill: int = 0
) -> np.ndarray:
    """Arrays (R_i, W_i, ...) cut or padded with ``fill`` along axis 1 to ``width`` (None:
    the widest of them), stacked along axis 0."""
    width = max(a.shape[1] for a in arrays) if width is None else width
    return np.concatenate(
        [
            np.pad(
                a[:, :width],
                [(0, 0), (0, width - min(a.shape[1], width))] + [(0, 0)] * (a.ndim - 2),
                constant_values=fill,
            )
            for a in arrays
        ]
    )


def as_text_classifier(
    model: Any,
    tokenizer: Any = None,
    batch_size: Optional[int] = 64,
    mask_string: str = "UNKWORDZ",
    strategy: Any = None,
) -> TextClassifier:
    """A :class:`TextClassifier` for ``model``, or ``model`` itself when it already is one:
    then each setting must be left at its default or equal the classifier's own."""
    if not isinstance(model, TextClassifier):
        return TextClassifier(
            model, tokenizer, batch_size=batch_size, mask_string=mask_string, strategy=strategy
        )
    given = dict(
        tokenizer=tokenizer, strategy=strategy, batch_size=batch_size, mask_string=mask_string
    )
    for key, value in given.items():
        own = getattr(model.tokenizer, "raw", None) if key == "tokenizer" else getattr(model, key)
        default = inspect.signature(as_text_classifier).parameters[key].default
        if value not in (default, own):
            raise ValueError(
                f"`{key}` must be {default!r} (the default) or the classifier's own "
                f"{own!r} when `model` is already a TextClassifier, got {value!r}"
            )
    return model


#: a text model for :func:`as_text_classifier`: a callable, or a TextClassifier as it is
TEXT_MODEL = [Callable_(), InstanceOf(TextClassifier)]
