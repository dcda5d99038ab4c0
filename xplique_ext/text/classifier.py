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

import contextlib
import numbers
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterator, List, Optional, Sequence

import numpy as np

from ..commons.params import Callable_, Interval, Word, validate_params
from ..runtime import (
    ReplicaRunner,
    check_outputs,
    compiled_function,
    is_default_strategy,
    resolve_strategy,
    single_output,
)
from .hub import adapt_text_model
from .tokens import (
    Tokenizer,
    as_tokenizer,
    compose,
    find_layer,
    find_text_vectorization,
    is_compositional,
    whitespace_tokens,
)

__all__ = ["TextClassifier", "as_text_classifier"]

#: Masked inputs are prepared in chunks of about this many rows (then sent to the model
#: ``batch_size`` at a time); bounds memory whatever the number of sentences.
CHUNK_ROWS = 16384


def _is_keras(model: Any) -> bool:
    try:
        import keras
    except ImportError:  # pragma: no cover
        return False
    return isinstance(model, keras.layers.Layer)


def _find_embedding(model: Any) -> Any:
    import keras

    return find_layer(model, keras.layers.Embedding)


@contextlib.contextmanager
def _override_embedding(layer: Any, fn: Any) -> Iterator[None]:
    """Make ``layer.call`` return ``fn(original_call, inputs)`` while tracing a graph.

    Used only inside a ``tf.function`` trace: the traced graph keeps the replacement,
    and the layer object is restored as soon as the trace ends.
    """
    original = layer.call

    def call(inputs, *args, **kwargs):
        return fn(original, inputs, *args, **kwargs)

    layer.call = call
    try:
        yield
    finally:
        del layer.call


#: Compiled inference functions, per Keras model (weakly referenced: they go with it).
_GRAPHS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _p1_of(out: Any, n_outputs: int) -> Any:
    return out[:, 0] if n_outputs == 1 else out[:, 1]


def _single(out: Any) -> Any:
    """The model's one output (a dict or several outputs are a TypeError)."""
    return single_output(out, "model")


def _graph(model: Any, layer: Any, kind: str, n_outputs: int) -> Any:
    """The compiled function ``kind`` ('fwd', 'shift' or 'ig') of ``model``, traced once
    per model and shared by every wrapper of it. The functions hold the model and the
    embedding layer through weak references only."""
    try:
        per_model = _GRAPHS.setdefault(model, {})
    except TypeError:  # pragma: no cover - not weak-referenceable
        per_model = {}
    key = (kind, n_outputs, id(layer))
    if key in per_model:
        return per_model[key]
    import tensorflow as tf

    model_ref = weakref.ref(model)
    layer_ref = weakref.ref(layer) if layer is not None else None

    if kind == "fwd":

        @compiled_function
        def graph(x):
            # the whole output: every batch is checked (shape, range) before p1 is read
            return _single(model_ref()(x, training=False))

    elif kind == "shift":

        @compiled_function
        def graph(x, shift):
            def fn(original, inputs, *a, **k):
                e = original(inputs, *a, **k)
                return e + tf.cast(shift, e.dtype)

            with _override_embedding(layer_ref(), fn):
                out = _single(model_ref()(x, training=False))
            return out

    else:

        @compiled_function
        def graph(x, alpha, word_mask, shift):
            store = {}
            tape = tf.GradientTape()

            def fn(original, inputs, *a, **k):
                e = original(inputs, *a, **k)
                e = e + tf.cast(shift, e.dtype)
                diff = e * tf.cast(word_mask, e.dtype)[..., None]
                z = e - diff + tf.cast(alpha, e.dtype)[:, None, None] * diff
                tape.watch(z)
                store["diff"] = diff
                store["z"] = z
                return z

            with tape:
                with _override_embedding(layer_ref(), fn):
                    out = _single(model_ref()(x, training=False))
                p1 = _p1_of(out, n_outputs)
            # gradient of p(y=1) with respect to the embedding output z
            grad = tape.gradient(p1, store["z"])
            # float64 holds any model dtype exactly: never cast down
            contrib = tf.reduce_sum(
                tf.cast(grad, tf.float64) * tf.cast(store["diff"], tf.float64), -1
            )
            return contrib, tf.cast(p1, tf.float64)

    per_model[key] = graph
    return graph


@dataclass
class Prepared:
    """Sentences split into tokens, with their token pieces when ids are composed."""

    sentences: List[str]
    words: List[List[str]]
    pieces: Optional[List[List[np.ndarray]]] = None
    mask_pieces: Optional[np.ndarray] = None
    compositional: bool = False
    extra: dict = field(default_factory=dict)


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

    @validate_params({
        "model": [Callable_()],
        "tokenizer": "no_validation",  # checked by as_tokenizer
        "batch_size": [Interval(numbers.Integral, 1, None), None],
        "mask_string": [Word()],
        "strategy": "no_validation",  # checked by resolve_strategy
    })
    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        batch_size: Optional[int] = 64,
        mask_string: str = "UNKWORDZ",
        strategy: Any = None,
    ):
        if isinstance(model, TextClassifier):
            raise TypeError("`model` is already a TextClassifier; pass its `.model`")
        # a keras-hub text classifier becomes a model on word-piece ids + its tokenizer
        model, tokenizer = adapt_text_model(model, tokenizer, mask_string=mask_string)
        self.model = model
        self.tokenizer: Optional[Tokenizer] = as_tokenizer(tokenizer)
        self.batch_size = batch_size
        self.mask_string = mask_string
        self.strategy = resolve_strategy(strategy)
        self.keras = _is_keras(model)
        self.takes_ids = self.tokenizer is not None
        # tokenizer used to align model positions with words (IG, embedding shifts)
        self.align_tokenizer: Optional[Tokenizer] = self.tokenizer
        if not self.takes_ids and self.keras:
            tv = find_text_vectorization(model)
            if tv is not None:
                self.align_tokenizer = Tokenizer(tv)
        self.input_dtype = None
        self.input_length: Optional[int] = None
        self.string_input_rank = 1
        if self.keras:
            try:
                spec = model.inputs[0]
                self.input_dtype = str(spec.dtype)
                shape = tuple(spec.shape)
                if self.takes_ids and len(shape) >= 2 and shape[1] is not None:
                    self.input_length = int(shape[1])
                if not self.takes_ids:
                    self.string_input_rank = len(shape)
            except (AttributeError, IndexError, TypeError):
                pass
        self._check_input_kind()
        if self.takes_ids and self.input_length is None:
            self.input_length = self.tokenizer.sequence_length
        self._n_outputs: Optional[int] = None
        self._fns: dict = {}
        self.embedding = getattr(model, "_xplique_embedding", None) if self.keras else None
        if self.keras and self.embedding is None:  # the adapter of text/hub.py names its own
            self.embedding = _find_embedding(model)

    def __deepcopy__(self, memo: dict) -> TextClassifier:
        """A copy sharing the model, tokenizer, strategy and compiled functions (immutable
        settings otherwise): it gives the same probabilities."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__dict__.update(self.__dict__)
        new._fns = dict(self._fns)
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(
            "TextClassifier cannot be pickled: it holds a model, compiled TensorFlow "
            "functions and a tf.distribute strategy; rebuild it from the model and "
            "tokenizer, or copy it in memory with copy.deepcopy"
        )

    def _check_input_kind(self) -> None:
        """A Keras model says what it takes through its input dtype: refuse a tokenizer
        for a model on raw strings and require one for a model on token ids."""
        if self.input_dtype is None:
            return
        takes_strings = "string" in self.input_dtype
        if takes_strings and self.takes_ids:
            raise ValueError(
                "`tokenizer` must be None for this model: it takes raw strings (input "
                f"dtype {self.input_dtype}, a TextVectorization layer inside), got a "
                f"tokenizer of type {type(self.tokenizer.raw).__name__}"
            )
        if not takes_strings and not self.takes_ids:
            raise ValueError(
                "`tokenizer` is required for this model: it takes token ids (input dtype "
                f"{self.input_dtype}), not raw strings; pass the TextVectorization layer "
                "or callable that maps sentences to its ids as `tokenizer=`"
            )

    def _probe(self, x: Any) -> Any:
        """First call of the model, with an error that says which input it expects."""
        try:
            return self.model(self._to_model_input(x))
        except Exception as exc:  # noqa: BLE001 - re-raised with the reason
            if self.takes_ids:
                hint = (
                    "it was given token ids from `tokenizer`; a model on raw strings "
                    "needs `tokenizer=None`"
                )
            else:
                hint = (
                    "it was given raw strings because `tokenizer` is None; a model on "
                    "token ids needs `tokenizer=` (the layer or callable giving its ids)"
                )
            raise TypeError(
                f"the model failed on its first batch ({hint}): "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    # ------------------------------------------------------------------ preparation
    def prepare(self, sentences: Sequence[str]) -> Prepared:
        """Split sentences into whitespace tokens and, for token-id models, their pieces."""
        sentences = list(sentences)
        for i, s in enumerate(sentences):
            if not isinstance(s, str):
                raise TypeError(f"`inputs[{i}]` must be a str, got {type(s).__name__}")
        words = [whitespace_tokens(s) for s in sentences]
        prep = Prepared(sentences=sentences, words=words)
        tok = self.align_tokenizer
        if tok is not None:
            # tokenize every distinct token once, in one call
            tok.pieces([w for ws in words for w in ws] + [self.mask_string])
            ok, _ = is_compositional(tok, sentences, words)
            if ok:
                prep.compositional = True
                prep.pieces = [tok.pieces(ws) for ws in words]
                prep.mask_pieces = tok.pieces([self.mask_string])[0]
        return prep

    # ------------------------------------------------------------------ raw calls
    def _to_model_input(self, x: Any) -> Any:
        if not self.keras:
            return x
        import tensorflow as tf

        if self.takes_ids:
            dtype = self.input_dtype or "int32"
            return tf.convert_to_tensor(np.asarray(x), dtype=dtype)
        arr = tf.constant(list(x), dtype=tf.string)
        if self.string_input_rank == 2:
            arr = tf.reshape(arr, (-1, 1))
        return arr

    def _check_outputs(self, out: Any, batch: Optional[int] = None,
                       offset: Optional[int] = None) -> np.ndarray:
        """The model's outputs for one batch, checked on every row: a single output (not
        a dict nor a tuple) of real numbers, shape (B, 1) (sigmoid) or (B, 2) (two-class
        softmax), the same on every batch, finite probabilities in [0, 1]. Returned in
        the model's dtype."""
        out = _single(out)
        arr = np.asarray(out.numpy() if hasattr(out, "numpy") else out)
        if batch is None:
            batch = len(arr) if arr.ndim else 0
        trailing = [(1,), (2,)] if self._n_outputs is None else [(self._n_outputs,)]
        expected = ("shape (N, 1) (sigmoid) or (N, 2) (two-class softmax)"
                    if self._n_outputs is None else f"shape (N, {self._n_outputs}) on every batch")
        arr = check_outputs(arr, batch, trailing=trailing, probabilities=True,
                            expected=expected, offset=offset)
        if self._n_outputs is None:
            self._n_outputs = int(arr.shape[1])
        return arr

    @staticmethod
    def _check_p1(p1: Any, batch: int) -> np.ndarray:
        """p(y=1) of a batch (gradients' forward pass): finite, in [0, 1]."""
        return check_outputs(np.asarray(p1), batch, trailing=[()], probabilities=True)

    def _p1(self, out: Any) -> Any:
        return out[:, 0] if self._n_outputs == 1 else out[:, 1]

    def _forward_fn(self) -> Any:
        if "fwd" in self._fns:
            return self._fns["fwd"]
        if not self.keras:
            model = self.model

            def fwd(x):
                return model(x)

        else:
            graph = _graph(self.model, None, "fwd", self._n_outputs)

            def fwd(x):
                return graph(x).numpy()

            fwd = self._replicated(graph, fwd)

        self._fns["fwd"] = fwd
        return fwd

    def forward(self, x: Any, offset: Optional[int] = None) -> np.ndarray:
        """p(y=1) for one batch of model inputs (ids (B, L) or a list of B strings),
        every batch checked (see :meth:`_check_outputs`; ``offset``: index of the batch's
        first sentence, named in the errors)."""
        if self._n_outputs is None:  # the first call, eagerly, with a clear error
            out = self._check_outputs(self._probe(x[:1]), 1, offset)
            if len(x) == 1:
                return self._p1(out).astype(np.float64)
        out = self._check_outputs(self._forward_fn()(self._to_model_input(x)), len(x),
                                  offset)
        return self._p1(out).astype(np.float64)

    def _shift_fn(self) -> Any:
        layer = self._require_embedding("embedding shifts")
        graph = _graph(self.model, layer, "shift", self._n_outputs)
        return self._replicated(graph, graph, "shift")

    def forward_shifted(self, x: Any, shift: np.ndarray) -> np.ndarray:
        """p(y=1) when ``shift`` (B, L, D) is added to the embedding output."""
        if self._n_outputs is None:
            self.forward(x[:1])
        out = self._shift_fn()(self._to_model_input(x), shift.astype(np.float32))
        return self._p1(self._check_outputs(out, len(x))).astype(np.float64)

    def _require_embedding(self, what: str) -> Any:
        if self.embedding is None:
            raise ValueError(
                f"{what} need a Keras model with an Embedding layer; got "
                f"{type(self.model).__name__} without one"
            )
        return self.embedding

    # ------------------------------------------------------------------ sentences
    def _batches(self, n: int) -> Iterator[slice]:
        size = self.batch_size or max(n, 1)
        for start in range(0, n, size):
            yield slice(start, min(start + size, n))

    def predict_proba(self, sentences: Sequence[str], progress: Any = None) -> np.ndarray:
        """p(y=1|s) for each sentence, shape (N,), batched."""
        sentences = list(sentences)
        out = np.empty(len(sentences), dtype=np.float64)
        for sl in self._batches(len(sentences)):
            chunk = sentences[sl]
            if self.takes_ids:
                x = self._fit_length(self.tokenizer(chunk))
            else:
                x = chunk
            out[sl] = self.forward(x, sl.start)
            if progress is not None:
                progress.update(len(chunk))
        return out

    def _fit_length(self, ids: np.ndarray) -> np.ndarray:
        if self.input_length is None:
            return ids
        length = self.input_length
        if ids.shape[1] >= length:
            return ids[:, :length]
        return np.pad(ids, ((0, 0), (0, length - ids.shape[1])))

    # ------------------------------------------------------------------ masked inputs
    def masked_inputs(self, prep: Prepared, index: int, keep: np.ndarray):
        """Model inputs for masked versions of sentence ``index``.

        Returns (inputs, owner): ``inputs`` is an id array (R, L) or a list of R strings;
        ``owner`` (R, L) maps positions to tokens (-1 for padding) when known, else None.
        """
        keep = np.asarray(keep, dtype=bool)
        if prep.compositional:
            pieces = prep.pieces[index]
            if self.takes_ids and self.input_length is not None:
                length = self.input_length
            elif self.align_tokenizer is not None and self.align_tokenizer.sequence_length:
                length = self.align_tokenizer.sequence_length
            else:
                klen = np.array([len(p) for p in pieces], dtype=np.int64)
                m = len(prep.mask_pieces)
                length = int(np.where(keep, klen, m).sum(axis=1).max()) if keep.size else 0
            ids, owner = compose(pieces, keep, prep.mask_pieces, max(length, 1))
            if self.takes_ids:
                return ids, owner
            return self._strings(prep.words[index], keep), owner
        strings = self._strings(prep.words[index], keep)
        if self.takes_ids:
            return self._fit_length(self.tokenizer(strings)), None
        return strings, None

    def _strings(self, words: List[str], keep: np.ndarray) -> List[str]:
        if keep.shape[1] == 0:
            return [""] * keep.shape[0]
        arr = np.array(words, dtype=object)
        table = np.where(keep, arr[None, :], self.mask_string)
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
        parts, owners, sizes = [], [], []
        for idx, keep in zip(indices, keeps):
            x, owner = self.masked_inputs(prep, idx, keep)
            parts.append(x)
            owners.append(owner)
            sizes.append(len(keep))
        total = int(sum(sizes))
        if total == 0:
            return [np.zeros(0) for _ in sizes]
        if self.takes_ids or (parts and isinstance(parts[0], np.ndarray)):
            width = max(p.shape[1] for p in parts)
            x_all = np.concatenate([np.pad(p, ((0, 0), (0, width - p.shape[1]))) for p in parts])
        else:
            x_all = [s for p in parts for s in p]
        shift_all = None
        if shifts is not None:
            shift_all = self._shift_rows(owners, shifts, sizes)
        out = np.empty(total, dtype=np.float64)
        for sl in self._batches(total):
            xb = x_all[sl]
            if shift_all is None:
                out[sl] = self.forward(xb)
            else:
                out[sl] = self.forward_shifted(xb, shift_all[sl])
            if progress is not None:
                progress.update(sl.stop - sl.start)
        return np.split(out, np.cumsum(sizes)[:-1])

    def _shift_rows(self, owners, shifts, sizes) -> np.ndarray:
        if any(o is None for o in owners):
            raise ValueError(
                "embedding shifts need a tokenizer that composes over whitespace tokens "
                "(see xplique_ext.text.tokens)"
            )
        width = max(o.shape[1] for o in owners)
        dim = shifts[0].shape[-1]
        rows = []
        for owner, shift, size in zip(owners, shifts, sizes):
            s = np.zeros((size, width, dim), dtype=np.float32)
            w = min(owner.shape[1], shift.shape[0])
            s[:, :w] = shift[None, :w] * (owner[:, :w] >= 0)[..., None]
            rows.append(s)
        return np.concatenate(rows)

    def embedding_dim(self) -> int:
        layer = self._require_embedding("embedding shifts")
        return int(layer.output_dim)

    # ------------------------------------------------------------------ gradients
    def _ig_fn(self) -> Any:
        layer = self._require_embedding("Integrated Gradients")
        graph = _graph(self.model, layer, "ig", self._n_outputs)
        return self._replicated(graph, graph, "ig")

    def _replicated(self, graph: Any, single: Any, key: Optional[str] = None) -> Any:
        """``single`` under the default strategy, else ``graph`` run on every replica
        with each batch shared among them (kept in ``_fns[key]`` when a key is given)."""
        if is_default_strategy(self.strategy):
            return single
        name = f"replicated-{key}"
        if key is None or name not in self._fns:
            runner = ReplicaRunner(graph, self.strategy, fallback=single)
            if key is None:
                return runner
            self._fns[name] = runner
        return self._fns[name]

    def ig_batch(self, x, alpha, word_mask, shift) -> tuple:
        """(position contributions (B, L), p1 (B,)) at interpolation points ``alpha``."""
        if self._n_outputs is None:
            self.forward(x[:1])
        contrib, p1 = self._ig_fn()(
            self._to_model_input(x),
            np.asarray(alpha, np.float32),
            np.asarray(word_mask, np.float32),
            np.asarray(shift, np.float32),
        )
        return np.asarray(contrib), self._check_p1(p1, len(x)).astype(np.float64)


def as_text_classifier(
    model: Any,
    tokenizer: Any = None,
    batch_size: Optional[int] = 64,
    mask_string: str = "UNKWORDZ",
    strategy: Any = None,
) -> TextClassifier:
    """A :class:`TextClassifier` for ``model`` (returned as is when it already is one)."""
    if isinstance(model, TextClassifier):
        if strategy is not None and strategy is not model.strategy:
            raise ValueError(
                "`strategy` must be None when `model` is already a TextClassifier (it "
                f"runs on its own strategy, {type(model.strategy).__name__})"
            )
        return model
    return TextClassifier(
        model, tokenizer, batch_size=batch_size, mask_string=mask_string, strategy=strategy
    )
