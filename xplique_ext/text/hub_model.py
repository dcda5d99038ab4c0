"""The keras-hub adapter's Keras side: :class:`KerasHubTextModel` (a keras-hub text
classifier as a model on word-piece ids) and its word-aligned tokenizer.

Imported by :func:`xplique_ext.text.hub.adapt_text_model` only once a keras-hub model is
met (keras-hub, Keras and TensorFlow are then loaded already); the packing, the pieces
and the ``[MASK]`` baseline are described in :mod:`xplique_ext.text.hub`.
"""

from __future__ import annotations

import itertools
import weakref
from types import SimpleNamespace as _Holder  # holds a layer that Keras must not track
from typing import Any, List, Optional, Sequence

import keras
import keras_hub
import numpy as np
import tensorflow as tf

from ..commons.params import InstanceOf, check_param
from .tokens import Tokenizer, _pad, find_layer

_NAMES = ("token_ids", "padding_mask", "segment_ids")
#: adapters in use, by (id(model), id(tokenizer source), mask_string, activation kind)
_ADAPTERS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class _HubTokenizer(Tokenizer):
    """Word-piece ids of sentences as the keras-hub tokenizer gives them, shifted by +1 so
    that 0 pads (whatever id the vocabulary gives ``[PAD]``); each whitespace token equal
    to ``mask_string`` becomes one mask piece.

    The runs of words between mask tokens are tokenized as they stand in the sentence
    (joined by single spaces), so the ids are the model's own even for a tokenizer that
    is not word by word (byte-pair encodings that mark leading spaces): the text
    classifier then finds it non-compositional and perturbs sentences as strings.
    """

    def __init__(self, tokenizer: Any, mask_string: str, mask_id: Optional[int]):
        self.raw = tokenizer
        self.mask_string = mask_string
        self.mask_id = mask_id
        self.is_text_vectorization = False
        self.sequence_length = None
        self._piece_cache = {}

    def _is_mask(self, word: str) -> bool:
        return self.mask_id is not None and word == self.mask_string

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        layouts = []  # per text: indices of its runs of words, None for a mask
        runs = []
        for text in texts:
            layout: List[Optional[int]] = []
            for is_mask, group in itertools.groupby(text.split(), self._is_mask):
                if is_mask:
                    layout += [None for _ in group]
                else:
                    layout.append(len(runs))
                    runs.append(" ".join(group))
            layouts.append(layout)
        out = self.raw(runs) if runs else []
        if hasattr(out, "to_list"):  # a tf.RaggedTensor
            out = out.to_list()
        elif hasattr(out, "numpy"):
            out = out.numpy()
        ids = [np.asarray(row).reshape(-1).tolist() for row in out]  # a list of rows or tensors
        return _pad([self._shifted_ids(layout, ids) for layout in layouts])

    def _shifted_ids(self, layout: List[Optional[int]], run_ids: List[List[int]]) -> List[int]:
        """The ids of one text, shifted by +1: its runs' pieces, one mask piece per mask."""
        row = []
        for run in layout:
            if run is None:
                row.append(self.mask_id + 1)
            else:
                row.extend(piece + 1 for piece in run_ids[run])
        return row


class PieceEmbedding(keras.layers.Embedding):
    """Token embedding of each word piece minus the baseline's (the ``[MASK]`` token
    embedding): the layer PERCY's Integrated Gradients and embedding shifts act on.
    It owns no weights: it reads the backbone's token embedding."""

    def __init__(self, token_embedding, baseline_id, **kwargs):
        super().__init__(token_embedding.input_dim + 1, token_embedding.output_dim, **kwargs)
        self._token_embedding = _Holder(value=token_embedding)  # not tracked as a sublayer
        self.baseline_id = int(baseline_id)

    def build(self, input_shape=None):
        self.built = True

    def call(self, inputs):
        emb = self._token_embedding.value
        base = emb(tf.fill([1, 1], tf.constant(self.baseline_id, inputs.dtype)))
        return emb(tf.where(inputs > 0, inputs - 1, tf.zeros_like(inputs))) - base


class KerasHubTextModel(keras.Model):
    """A keras-hub text classifier as a model on word-piece ids (N, L), 0 = padding
    (id + 1 otherwise), returning probabilities (N, 1) or (N, 2). Built by
    :func:`~xplique_ext.text.hub.adapt_text_model`."""

    def __init__(
        self, net, backbone, hub_tokenizer, *, max_pieces, logits, input_names, mask_string
    ):
        super().__init__()
        mask_id = getattr(hub_tokenizer, "mask_token_id", None)
        self.baseline_id = int(hub_tokenizer.pad_token_id if mask_id is None else mask_id)
        # the layer the text classifier's IG and embedding shifts act on
        self.piece_embedding = PieceEmbedding(
            backbone.token_embedding, self.baseline_id, name="piece_embedding"
        )
        self._xplique_embedding = self.piece_embedding
        self.net = net
        self.backbone_ = _Holder(value=backbone)
        self.hub_tokenizer = hub_tokenizer
        if mask_id is not None:
            mask_id = int(mask_id)
        self.tokenizer = _HubTokenizer(hub_tokenizer, mask_string, mask_id)
        self.max_pieces = max_pieces
        # the model reads the first max_pieces pieces: the text classifier composes its
        # inputs (and IG's path and the embedding shifts) to that length, so that the
        # pieces beyond it get no position, hence no attribution (0)
        self.tokenizer.sequence_length = max_pieces
        self.logits = logits
        self.input_names = list(input_names)
        self.start_id = int(hub_tokenizer.start_token_id)
        self.end_id = int(hub_tokenizer.end_token_id)
        self.pad_id = int(hub_tokenizer.pad_token_id)

    def _packed(self, ids):
        """The backbone's dict for word-piece ids: ``[CLS] pieces [SEP]``, padding."""
        n = tf.reduce_sum(tf.cast(ids > 0, tf.int32), axis=1)[:, None]
        token_ids = tf.pad(
            tf.where(ids > 0, ids - 1, self.pad_id), [[0, 0], [1, 1]], constant_values=self.pad_id
        )
        pos = tf.range(tf.shape(ids)[1] + 2)[None, :]
        token_ids = tf.where(
            pos == 0, self.start_id, tf.where(pos == n + 1, self.end_id, token_ids)
        )
        inputs = {
            "token_ids": token_ids,
            "padding_mask": tf.cast(pos < n + 2, tf.int32),
            "segment_ids": tf.zeros_like(token_ids),
        }
        return {k: inputs[k] for k in self.input_names}

    def call(self, ids, training=False):
        ids = tf.convert_to_tensor(ids)
        if not ids.dtype.is_integer:
            raise TypeError(f"word-piece ids must be integers, got {ids.dtype}")
        ids = tf.cast(ids, tf.int32)[:, : self.max_pieces]
        real = ids > 0
        width = tf.shape(ids)[1]
        e_words = self.piece_embedding(ids)  # (B, L, D) relative to the baseline
        layer = self.backbone_.value.token_embedding
        original = layer.call

        def call(x, *args, **kwargs):  # the pieces' embeddings go through piece_embedding
            full = original(x, *args, **kwargs)
            if args or kwargs.get("reverse"):
                return full
            base = original(tf.fill([1, 1], tf.constant(self.baseline_id, x.dtype)))
            inner = tf.where(
                real[..., None], tf.cast(e_words, full.dtype) + base, full[:, 1 : width + 1]
            )
            return tf.concat([full[:, :1], inner, full[:, width + 1 :]], axis=1)

        layer.call = call
        try:
            out = self.net(self._packed(ids), training=training)
        finally:
            del layer.call
        if isinstance(out, dict):
            raise ValueError(
                "`model` must return class scores (N, 1) or (N, 2), got a dict of "
                f"{sorted(out)}; pass a classifier, not a backbone"
            )
        out = tf.cast(out, tf.float32)
        if self.logits:
            if out.shape[-1] == 1:
                return tf.nn.sigmoid(out)
            return tf.nn.softmax(out, -1)
        return out


def _is_logits(model: Any, activation: str) -> bool:
    """Whether the model returns logits (softmax/sigmoid applied) or probabilities."""
    if activation != "auto":
        return activation == "logits"
    layers = getattr(model, "layers", None) or [None]
    act = getattr(model, "activation", None) or getattr(layers[-1], "activation", None)
    name = getattr(act, "__name__", str(act))
    if act is None or name not in ("linear", "softmax", "sigmoid"):
        raise ValueError(
            "the model's output activation must be linear (logits), softmax or sigmoid, got "
            f"{'none readable' if act is None else repr(name)} ({type(model).__name__}); for "
            "logits or probabilities all the same, pass the model and tokenizer of "
            "xplique_ext.text.adapt_text_model(model, tokenizer, activation='logits', ...)"
        )
    return name == "linear"


def adapt(
    model: Any, tokenizer: Any, mask_string: str, activation: str, names: Optional[List[str]]
) -> tuple:
    """:func:`~xplique_ext.text.hub.adapt_text_model` once keras-hub is imported: a
    keras-hub task, a model on a backbone's dict (``names``, with ``token_ids``) or an
    adapter is adapted; any other model is returned unchanged."""
    if not isinstance(model, (keras_hub.models.TextClassifier, KerasHubTextModel)) and (
        "token_ids" not in (names or ())
    ):
        return model, tokenizer
    if isinstance(model, KerasHubTextModel):
        if tokenizer is not None and tokenizer is not model.tokenizer:
            raise ValueError(
                "`tokenizer` must be None for a KerasHubTextModel: it carries its "
                f"own, got {type(tokenizer).__name__}"
            )
        tok = model.tokenizer
        if mask_string != tok.mask_string:
            tok = _HubTokenizer(tok.raw, mask_string, tok.mask_id)
        return model, tok
    source = tokenizer if tokenizer is not None else getattr(model, "preprocessor", None)
    if source is None:
        raise ValueError(
            "`tokenizer` is required for this keras-hub model: it has no preprocessor;"
            " pass its keras-hub preprocessor (e.g. BertTextClassifierPreprocessor)"
            " or tokenizer (e.g. BertTokenizer) as `tokenizer=`"
        )
    check_param(
        source,
        "tokenizer",
        [
            InstanceOf(
                keras_hub.models.Preprocessor,
                keras_hub.tokenizers.Tokenizer,
                description="a keras-hub preprocessor or tokenizer for a keras-hub model",
            )
        ],
    )
    hub_tok = getattr(source, "tokenizer", source)  # a preprocessor's, or the tokenizer
    for attr in ("start_token_id", "end_token_id", "pad_token_id"):
        if getattr(hub_tok, attr, None) is None:
            raise ValueError(
                f"`tokenizer` must define {attr} (a [CLS] ... [SEP] packing "
                f"tokenizer such as BertTokenizer), got {type(hub_tok).__name__}"
            )
    backbone = find_layer(model, keras_hub.models.Backbone)
    if getattr(backbone, "token_embedding", None) is None:
        raise ValueError(
            "`model` must contain a keras-hub Backbone with a token embedding (e.g. "
            f"keras_hub.models.BertBackbone), found none in {type(model).__name__}"
        )
    limits = [getattr(backbone, "max_sequence_length", None)]
    if hub_tok is not source:  # a preprocessor: it packs to its own sequence length
        limits.append(getattr(source, "sequence_length", None))
    max_pieces = min((int(v) - 2 for v in limits if v is not None), default=None)
    if set(names or ()) - set(_NAMES):
        raise ValueError(
            "`model` must take the dict token_ids / padding_mask / segment_ids "
            "of a keras-hub backbone, got the extra inputs "
            f"{sorted(set(names) - set(_NAMES))}"
        )
    logits = _is_logits(model, activation)
    # one adapter per (model, tokenizer, mask, activation) while one is in use, so that
    # PERCY and every explainer of the same model share its compiled functions; the
    # user's model is left untouched (the adapter holds it, so its id cannot be reused)
    key = (id(model), id(source), mask_string, logits)
    adapted = _ADAPTERS.get(key)
    if adapted is None:
        adapted = KerasHubTextModel(
            model,
            backbone,
            hub_tok,
            max_pieces=max_pieces,
            logits=logits,
            input_names=names or _NAMES,
            mask_string=mask_string,
        )
        adapted.source_ = _Holder(value=source)
        _ADAPTERS[key] = adapted
    return adapted, adapted.tokenizer
