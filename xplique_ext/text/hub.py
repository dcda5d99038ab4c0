"""keras-hub text classifiers (transformers with subword tokenizers) for PERCY and the
token explainers.

A keras-hub ``TextClassifier`` task (e.g. ``keras_hub.models.BertTextClassifier``) with
its preprocessor, or a plain Keras model over a keras-hub backbone that takes the dict
``{"token_ids", "padding_mask", "segment_ids"}`` together with its preprocessor or
tokenizer, is wrapped here into a model on word-piece ids plus a tokenizer, the form
:class:`~xplique_ext.text.classifier.TextClassifier` already handles. Users never call
this module: PERCY and the three token explainers accept such models as they come.

Words and pieces
----------------
Attributions stay one per whitespace token (``sentence.split()``). The adapter's
tokenizer gives the keras-hub tokenizer's word-piece ids of a sentence, and the adapter
model packs them as the preprocessor does: ``[CLS] pieces [SEP]``, padding mask, segment
ids 0, the pieces cut at ``sequence_length - 2``. WordPiece splits on whitespace first, so
the pieces of a sentence are those of its words put end to end: the text classifier
builds perturbed sentences directly as ids and knows which word each piece belongs to.
(A tokenizer that is not word by word, such as a byte-pair encoding marking leading
spaces, still gets the model's own ids; LIME and SHAP then perturb strings, and
Integrated Gradients refuses it.) Therefore:

* LIME and SHAP perturb whole words: a removed word becomes one ``[MASK]`` piece (the
  tokenizer's mask token; when it has none, the pieces of ``mask_string``);
* Integrated Gradients integrates along the **token-embedding** path of every word piece,
  from the ``[MASK]`` token embedding (the baseline; ``[PAD]`` when the vocabulary has no
  mask token) to the piece's own embedding; position and segment embeddings and the
  ``[CLS]``/``[SEP]`` pieces stay as they are. The attribution of a word is the sum of
  its pieces' attributions, so the words' attributions sum to p(s) - p(baseline), where
  the baseline is the sentence with every piece replaced by ``[MASK]``.

Outputs
-------
Logits become probabilities as the task's ``activation`` says: none (linear, keras-hub's
default) gives softmax over two classes or a sigmoid over one; ``"softmax"`` and
``"sigmoid"`` outputs are used as they are. For a plain Keras model the activation of its
last layer is read the same way (or given as ``activation=``).

Classifiers over a backbone
---------------------------
:func:`build_hub_classifier` puts the PERCY paper's CNN or LSTM head on a backbone's
contextual token embeddings (its ``sequence_output``), frozen or fine-tuned: the B
classifiers of ``benchmarks/percy_experiments.py --embeddings hub:PRESET``;
:func:`load_hub_backbone` loads a preset's backbone and preprocessor for users with a
network.

keras-hub is an optional extra (``pip install "xplique_ext[text]"``): it is imported only
when such a model is met, never by ``import xplique_ext.text``.
"""

from __future__ import annotations

import numbers
import sys
import weakref
from typing import Any, List, Optional, Sequence

import numpy as np

from ..commons.params import (
    NO_VALIDATION,
    Boolean,
    Callable_,
    InstanceOf,
    Interval,
    Options,
    validate_params,
)
from .models import _DROPOUT, _KERNEL_SIZES, _SEED, _at_least
from .tokens import Tokenizer

__all__ = [
    "adapt_text_model",
    "is_keras_hub_model",
    "load_hub_backbone",
    "build_hub_classifier",
]  # + KerasHubTextModel, built on first use

_INSTALL = 'pip install "xplique_ext[text]" (keras-hub with a TensorFlow-matched tensorflow-text)'
_ACTIVATIONS = ("auto", "logits", "softmax", "sigmoid")


def _hub():
    try:
        import keras_hub
    except ImportError as exc:  # pragma: no cover - the extra is part of dev
        raise ImportError(f"keras-hub models need keras-hub: {_INSTALL}") from exc
    return keras_hub


def _dict_input_names(model: Any) -> Optional[List[str]]:
    """Names of a Keras model's dict inputs, or None when it does not take a dict."""
    try:
        spec = model.input
    except (AttributeError, ValueError, TypeError):
        return None
    if isinstance(spec, dict):
        return list(spec)
    return None


def is_keras_hub_model(model: Any) -> bool:
    """Whether ``model`` is a keras-hub text classifier task, or a Keras model on the dict
    of a keras-hub backbone (``token_ids`` among its inputs). Never imports keras-hub: such
    a model cannot exist unless keras-hub was imported already."""
    if isinstance(model, _model_classes_or_none()):
        return False
    if "keras_hub" not in sys.modules:
        return False
    import keras_hub

    if isinstance(model, keras_hub.models.TextClassifier):
        return True
    names = _dict_input_names(model)
    return names is not None and "token_ids" in names


def _model_classes_or_none() -> tuple:
    cls = _CLASSES.get("model")
    return (cls,) if cls is not None else ()


_CLASSES: dict = {}
#: adapters in use, by (id(model), id(tokenizer source), mask_string, activation kind)
_ADAPTERS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class _Holder:
    """Holds a layer without Keras tracking it as a sublayer of the holder's owner."""

    def __init__(self, value: Any):
        self.value = value


# --------------------------------------------------------------------------- tokenizer
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
        self.is_text_vectorization = False
        self.sequence_length = None
        self._piece_cache = {}
        self.mask_string = mask_string
        self.mask_id = mask_id

    def _tokenize(self, segments: List[str]) -> List[np.ndarray]:
        if not segments:
            return []
        out = self.raw(segments)
        if hasattr(out, "to_list"):
            out = out.to_list()
        elif hasattr(out, "numpy"):
            out = out.numpy().tolist()
        return [np.asarray(ids, dtype=np.int64).reshape(-1) for ids in out]

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        masked = self.mask_id is not None
        # each text: a list of segments (str: a run of words) and mask markers (None)
        layouts, segments = [], []
        for text in texts:
            words = text.split()
            layout, run = [], []
            for w in words:
                if masked and w == self.mask_string:
                    if run:
                        layout.append(len(segments))
                        segments.append(" ".join(run))
                        run = []
                    layout.append(None)
                else:
                    run.append(w)
            if run:
                layout.append(len(segments))
                segments.append(" ".join(run))
            layouts.append(layout)
        ids = self._tokenize(segments)
        mask = np.array([self.mask_id if masked else 0], dtype=np.int64)
        rows = []
        for layout in layouts:
            parts = [mask if k is None else ids[k] for k in layout]
            rows.append(np.concatenate(parts) + 1 if parts else np.zeros(0, np.int64))
        width = max((len(r) for r in rows), default=0)
        out = np.zeros((len(rows), width), dtype=np.int64)
        for i, r in enumerate(rows):
            out[i, : len(r)] = r
        return out


# --------------------------------------------------------------------------- the model
def _model_class():
    """The Keras classes, built on first use (Keras is not imported before)."""
    if "model" in _CLASSES:
        return _CLASSES["model"]
    import keras
    import tensorflow as tf

    class PieceEmbedding(keras.layers.Embedding):
        """Token embedding of each word piece minus the baseline's (the ``[MASK]`` token
        embedding): the layer PERCY's Integrated Gradients and embedding shifts act on.
        It owns no weights: it reads the backbone's token embedding."""

        def __init__(self, token_embedding, baseline_id, vocabulary_size, dim, **kwargs):
            super().__init__(vocabulary_size + 1, dim, **kwargs)
            self._token_embedding = _Holder(token_embedding)  # not tracked as a sublayer
            self.baseline_id = int(baseline_id)

        def build(self, input_shape=None):
            self.built = True

        def call(self, inputs):
            emb = self._token_embedding.value
            real = inputs > 0
            ids = tf.where(real, inputs - 1, tf.zeros_like(inputs))
            e = emb(ids)
            base = emb(tf.fill([1, 1], tf.constant(self.baseline_id, inputs.dtype)))
            return e - base

        def compute_mask(self, inputs, mask=None):
            return None

    class KerasHubTextModel(keras.Model):
        """A keras-hub text classifier as a model on word-piece ids (N, L), 0 = padding
        (id + 1 otherwise), returning probabilities (N, 1) or (N, 2). Built by
        :func:`adapt_text_model`."""

        def __init__(self, net, backbone, hub_tokenizer, *, max_pieces, activation,
                     input_names, baseline_id, mask_string):
            super().__init__()
            dim = int(backbone.token_embedding.output_dim)
            vocab = int(backbone.token_embedding.input_dim)
            # the layer the text classifier's IG and embedding shifts act on
            self.piece_embedding = PieceEmbedding(
                backbone.token_embedding, baseline_id, vocab, dim, name="piece_embedding"
            )
            self._xplique_embedding = self.piece_embedding
            self.net = net
            self.backbone_ = _Holder(backbone)
            self.hub_tokenizer = hub_tokenizer
            self.tokenizer = _HubTokenizer(hub_tokenizer, mask_string, _mask_id(hub_tokenizer))
            self.max_pieces = int(max_pieces) if max_pieces is not None else None
            self.activation_kind = activation
            self.input_names = list(input_names)
            self.baseline_id = int(baseline_id)
            tok = hub_tokenizer
            self.start_id = int(tok.start_token_id)
            self.end_id = int(tok.end_token_id)
            self.pad_id = int(tok.pad_token_id)

        def call(self, ids, training=False):
            ids = tf.convert_to_tensor(ids)
            if not ids.dtype.is_integer:
                raise TypeError(f"word-piece ids must be integers, got {ids.dtype}")
            ids = tf.cast(ids, tf.int32)
            if self.max_pieces is not None:
                ids = ids[:, : self.max_pieces]
            real = ids > 0
            n = tf.reduce_sum(tf.cast(real, tf.int32), axis=1)
            batch, width = tf.shape(ids)[0], tf.shape(ids)[1]
            pieces = tf.where(real, ids - 1, tf.fill(tf.shape(ids), self.pad_id))
            token_ids = tf.concat(
                [tf.fill([batch, 1], self.start_id), pieces, tf.fill([batch, 1], self.pad_id)],
                axis=1,
            )
            pos = tf.range(width + 2)[None, :]
            token_ids = tf.where(pos == (n + 1)[:, None], self.end_id, token_ids)
            inputs = {
                "token_ids": token_ids,
                "padding_mask": tf.cast(pos < (n + 2)[:, None], tf.int32),
                "segment_ids": tf.zeros_like(token_ids),
            }
            inputs = {k: inputs[k] for k in self.input_names}
            e_words = self.piece_embedding(ids)  # (B, L, D) relative to the baseline
            layer = self.backbone_.value.token_embedding
            original = layer.call

            def call(x, *args, **kwargs):
                full = original(x, *args, **kwargs)
                if args or kwargs.get("reverse"):
                    return full
                base = original(tf.fill([1, 1], tf.constant(self.baseline_id, x.dtype)))
                words = tf.cast(e_words, full.dtype) + base
                inner = tf.where(real[..., None], words, full[:, 1 : width + 1])
                return tf.concat([full[:, :1], inner, full[:, width + 1 :]], axis=1)

            layer.call = call
            try:
                out = self.net(inputs, training=training)
            finally:
                del layer.call
            if isinstance(out, dict):  # pragma: no cover - a backbone, not a classifier
                raise ValueError(
                    "`model` must return class scores (N, 1) or (N, 2), got a dict of "
                    f"{sorted(out)}; pass a classifier, not a backbone"
                )
            out = tf.cast(out, tf.float32)
            if self.activation_kind == "logits":
                out = tf.nn.sigmoid(out) if out.shape[-1] == 1 else tf.nn.softmax(out, -1)
            return out

    _CLASSES["model"] = KerasHubTextModel
    return KerasHubTextModel


def _mask_id(tokenizer: Any) -> Optional[int]:
    value = getattr(tokenizer, "mask_token_id", None)
    return None if value is None else int(value)


def _activation_kind(model: Any, activation: str) -> str:
    """'logits' (apply softmax/sigmoid) or 'probabilities' (use as is)."""
    import keras

    if activation == "logits":
        return "logits"
    if activation in ("softmax", "sigmoid"):
        return "probabilities"
    act = getattr(model, "activation", None)
    if act is None:  # a plain model: its last layer's activation
        layers = getattr(model, "layers", None) or []
        act = getattr(layers[-1], "activation", None) if layers else None
    if act is None:
        raise ValueError(
            "`activation` must be given ('logits', 'softmax' or 'sigmoid') for this model: "
            f"its output activation cannot be read from {type(model).__name__}; adapt it "
            "with xplique_ext.text.adapt_text_model(model, tokenizer, activation=...) and "
            "pass the adapted model and tokenizer"
        )
    name = getattr(act, "__name__", str(act))
    if act is keras.activations.linear or name == "linear":
        return "logits"
    if name in ("softmax", "sigmoid"):
        return "probabilities"
    raise ValueError(
        f"the model's output activation must be linear (logits), softmax or sigmoid, got "
        f"{name!r}; if its outputs are logits or probabilities all the same, adapt it with "
        "xplique_ext.text.adapt_text_model(model, tokenizer, activation='logits' or "
        "'softmax'/'sigmoid') and pass the adapted model and tokenizer"
    )


def _find_backbone(model: Any) -> Any:
    keras_hub = _hub()
    from .tokens import find_layer

    backbone = getattr(model, "backbone", None)
    if isinstance(backbone, keras_hub.models.Backbone):
        return backbone
    found = find_layer(model, keras_hub.models.Backbone)
    if found is None or getattr(found, "token_embedding", None) is None:
        raise ValueError(
            "`model` must contain a keras-hub Backbone with a token embedding (e.g. "
            f"keras_hub.models.BertBackbone), found none in {type(model).__name__}"
        )
    return found


@validate_params({
    "model": [Callable_()],
    "tokenizer": NO_VALIDATION,  # checked against the model below
    "mask_string": [InstanceOf(str)],  # no whitespace: checked by TextClassifier
    "activation": [Options(_ACTIVATIONS)],
})
def adapt_text_model(
    model: Any,
    tokenizer: Any = None,
    *,
    mask_string: str = "UNKWORDZ",
    activation: str = "auto",
) -> tuple:
    """``(model, tokenizer)`` as :class:`~xplique_ext.text.classifier.TextClassifier`
    takes them: a keras-hub model becomes a :class:`KerasHubTextModel` on word-piece ids
    with its word-aligned tokenizer; any other model is returned unchanged.

    Parameters
    ----------
    model
        A keras-hub ``TextClassifier`` task (its ``preprocessor`` is used unless
        ``tokenizer`` is given), or a Keras model over a keras-hub backbone taking the
        dict ``token_ids`` / ``padding_mask`` / ``segment_ids``; any other model passes.
    tokenizer
        For a keras-hub model: None (the task's preprocessor), its preprocessor
        (``sequence_length`` is read from it), or its keras-hub tokenizer (no length
        limit but the backbone's).
    mask_string
        The word LIME and SHAP put in place of a removed word; mapped to the tokenizer's
        mask token.
    activation
        'auto' (read the task's ``activation`` or the last layer's), 'logits' (the model
        returns logits: softmax over 2 classes, sigmoid over 1), 'softmax' or 'sigmoid'
        (probabilities, used as they are).

    Returns
    -------
    model, tokenizer
        For a keras-hub model the tokenizer is the adapter's own (``model.tokenizer``).

    Examples
    --------
    A tiny BERT (random weights); PERCY and the explainers take ``task`` as it is:

    >>> import keras_hub
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "film", "un", "##fun", "##ny"]
    >>> tokenizer = keras_hub.models.BertTokenizer(vocabulary=vocab)
    >>> backbone = keras_hub.models.BertBackbone(
    ...     vocabulary_size=len(vocab), num_layers=1, num_heads=1, hidden_dim=8,
    ...     intermediate_dim=16, max_sequence_length=16)
    >>> task = keras_hub.models.BertTextClassifier(
    ...     backbone, num_classes=2,
    ...     preprocessor=keras_hub.models.BertTextClassifierPreprocessor(tokenizer, 16))
    >>> model, tok = adapt_text_model(task)
    >>> tok(["a unfunny film"]) - 1  # the word pieces: a, un ##fun ##ny, film
    array([[5, 7, 8, 9, 6]])
    >>> from xplique_ext.text import IntegratedGradientsTokenExplainer
    >>> ig = IntegratedGradientsTokenExplainer(task, steps=8)
    >>> [a.shape for a in ig(["a unfunny film"])]  # one value per word
    [(3,)]
    """
    cls = _CLASSES.get("model")
    if cls is not None and isinstance(model, cls):
        if tokenizer is not None and tokenizer is not model.tokenizer:
            raise ValueError(
                "`tokenizer` must be None for a KerasHubTextModel: it carries its own, got "
                f"{type(tokenizer).__name__}"
            )
        tok = model.tokenizer
        if mask_string != tok.mask_string:
            tok = _HubTokenizer(tok.raw, mask_string, tok.mask_id)
        return model, tok
    if not is_keras_hub_model(model):
        return model, tokenizer
    keras_hub = _hub()
    is_task = isinstance(model, keras_hub.models.TextClassifier)
    source = tokenizer
    if source is None and is_task:
        source = model.preprocessor
    if source is None:
        raise ValueError(
            "`tokenizer` is required for this keras-hub model: it has no preprocessor; "
            "pass its keras-hub preprocessor (e.g. BertTextClassifierPreprocessor) or "
            "tokenizer (e.g. BertTokenizer) as `tokenizer=`"
        )
    max_len = None
    if isinstance(source, keras_hub.models.Preprocessor):
        hub_tok = getattr(source, "tokenizer", None)
        max_len = getattr(source, "sequence_length", None)
    elif isinstance(source, keras_hub.tokenizers.Tokenizer):
        hub_tok = source
    else:
        raise TypeError(
            "`tokenizer` must be a keras-hub preprocessor or tokenizer for a keras-hub "
            f"model, got {type(source).__name__}"
        )
    if hub_tok is None:
        raise ValueError("`tokenizer`: the keras-hub preprocessor has no tokenizer")
    for attr in ("start_token_id", "end_token_id", "pad_token_id"):
        if getattr(hub_tok, attr, None) is None:
            raise ValueError(
                f"`tokenizer` must define {attr} (a [CLS] ... [SEP] packing tokenizer such "
                f"as BertTokenizer), got {type(hub_tok).__name__} without it"
            )
    backbone = _find_backbone(model)
    limit = getattr(backbone, "max_sequence_length", None)
    if max_len is None or (limit is not None and limit < max_len):
        max_len = limit
    names = _dict_input_names(model) or ["token_ids", "padding_mask", "segment_ids"]
    unknown = sorted(set(names) - {"token_ids", "padding_mask", "segment_ids"})
    if unknown:
        raise ValueError(
            "`model` must take the dict token_ids / padding_mask / segment_ids of a "
            f"keras-hub backbone, got the extra inputs {unknown}"
        )
    kind = _activation_kind(model, activation)
    # one adapter per (model, tokenizer, mask, activation) while one is in use, so that
    # PERCY and every explainer of the same model share its compiled functions; the
    # user's model is left untouched (the adapter holds it, so its id cannot be reused)
    key = (id(model), id(source), mask_string, kind)
    adapted = _ADAPTERS.get(key)
    if adapted is not None and adapted.net is model and adapted.source_.value is source:
        return adapted, adapted.tokenizer
    mask_id = _mask_id(hub_tok)
    baseline = mask_id if mask_id is not None else int(hub_tok.pad_token_id)
    adapted = _model_class()(
        model, backbone, hub_tok,
        max_pieces=None if max_len is None else int(max_len) - 2,
        activation=kind, input_names=names, baseline_id=baseline, mask_string=mask_string,
    )
    adapted.source_ = _Holder(source)
    _ADAPTERS[key] = adapted
    return adapted, adapted.tokenizer


# --------------------------------------------------------------------------- classifiers
@validate_params({
    "preset": [InstanceOf(str)],
    "sequence_length": [Interval(numbers.Integral, 3, None)],
})
def load_hub_backbone(preset: str, *, sequence_length: int = 64) -> tuple:
    """A keras-hub backbone and its text-classifier preprocessor from a preset.

    Downloads the preset's weights and vocabulary (Kaggle / Hugging Face, through
    ``keras_hub``'s own cache) unless they are cached: for users with a network, never
    run in the tests (which build a tiny random backbone in memory).

    Parameters
    ----------
    preset
        A keras-hub preset name, e.g. ``"bert_tiny_en_uncased"``, or a local preset folder.
    sequence_length
        Length of the packed inputs (``[CLS] pieces [SEP]`` and padding).

    Returns
    -------
    backbone, preprocessor
        ``keras_hub.models.Backbone.from_preset(preset)`` and
        ``keras_hub.models.TextClassifierPreprocessor.from_preset(preset,
        sequence_length=...)``; pass them to :func:`build_hub_classifier`.

    Examples
    --------
    A local preset folder (written here from a tiny random BERT; a name such as
    ``"bert_tiny_en_uncased"`` downloads the published one):

    >>> import tempfile, keras_hub
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "film"]
    >>> folder = tempfile.mkdtemp()
    >>> keras_hub.models.BertBackbone(
    ...     vocabulary_size=len(vocab), num_layers=1, num_heads=1, hidden_dim=8,
    ...     intermediate_dim=16, max_sequence_length=16).save_to_preset(folder)
    >>> keras_hub.models.BertTextClassifierPreprocessor(
    ...     keras_hub.models.BertTokenizer(vocabulary=vocab)).save_to_preset(folder)
    >>> backbone, pre = load_hub_backbone(folder, sequence_length=12)
    >>> type(backbone).__name__, pre.sequence_length
    ('BertBackbone', 12)
    """
    keras_hub = _hub()
    backbone = keras_hub.models.Backbone.from_preset(preset)
    pre = keras_hub.models.TextClassifierPreprocessor.from_preset(
        preset, sequence_length=sequence_length
    )
    return backbone, pre


def _copy_backbone(backbone: Any) -> Any:
    """A new backbone of the same class, configuration and weights."""
    copy = type(backbone).from_config(backbone.get_config())
    copy.set_weights(backbone.get_weights())
    return copy


@validate_params({
    "backbone": NO_VALIDATION,  # a keras-hub Backbone with a dict input: checked below
    "head": [Options(("cnn", "lstm"))],
    "trainable": [Boolean()],
    "filters": _at_least(1),
    "kernel_sizes": _KERNEL_SIZES,
    "units": _at_least(1),
    "dropout": _DROPOUT,
    "seed": _SEED,
    "copy": [Boolean()],
})
def build_hub_classifier(
    backbone: Any,
    head: str = "cnn",
    *,
    trainable: bool = False,
    filters: int = 64,
    kernel_sizes: Sequence[int] = (3, 4, 5),
    units: int = 128,
    dropout: float = 0.5,
    seed: int = 0,
    copy: bool = True,
):
    """The PERCY paper's CNN or LSTM head (Fig. 2a / 2b) over the contextual token
    embeddings of a keras-hub backbone (its ``sequence_output``), instead of a word
    embedding: the grid's B classifiers (section 4.2, ``hub:PRESET`` in
    ``benchmarks/percy_experiments.py``).

    The model takes the backbone's dict (``token_ids``, ``padding_mask``, ...) as its
    preprocessor packs it and returns p(y=1|s), shape (N, 1). Padded positions are zeroed
    before the convolutions and masked for the LSTM. PERCY, the token explainers (with
    the preprocessor as ``tokenizer``, one attribution per word, see
    :func:`adapt_text_model`) and :class:`~xplique_ext.text.RuleDistillation` (with the
    preprocessor as ``tokenizer``) take it as it is.

    Parameters
    ----------
    backbone
        A keras-hub ``Backbone`` with a token embedding (e.g. ``BertBackbone``; from a
        preset: :func:`load_hub_backbone`).
    head
        'cnn' (parallel convolutions of ``kernel_sizes`` with ``filters`` each, max-pooled
        over time) or 'lstm' (``units``, output of the last real token).
    trainable
        False freezes the backbone (only the head trains: the grid's "frozen"); True
        fine-tunes it with the head (the grid's F).
    filters, kernel_sizes, units, dropout
        The head's sizes and its dropout before the sigmoid unit (0.5 in the paper).
    seed
        Seed of the head's initialisers and dropout.
    copy
        True (default) builds on a copy of ``backbone`` (same configuration and
        weights), so that training leaves the backbone passed in untouched; False
        shares it.

    Returns
    -------
    keras.Model
        Dict input, sigmoid output (N, 1). Its backbone is ``model.backbone``.

    Examples
    --------
    >>> import keras_hub
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "good", "film", "but"]
    >>> backbone = keras_hub.models.BertBackbone(
    ...     vocabulary_size=len(vocab), num_layers=1, num_heads=1, hidden_dim=8,
    ...     intermediate_dim=16, max_sequence_length=16)
    >>> model = build_hub_classifier(backbone, "lstm", units=4)
    >>> model.output_shape, model.backbone.trainable
    ((None, 1), False)
    """
    keras_hub = _hub()
    import keras
    from keras import ops

    from .models import _cnn_head, _lstm_head

    if not isinstance(backbone, keras_hub.models.Backbone):
        raise TypeError(
            "`backbone` must be a keras-hub Backbone (e.g. keras_hub.models.BertBackbone, "
            f"or load_hub_backbone(preset)[0]), got {type(backbone).__name__}"
        )
    names = _dict_input_names(backbone)
    if not names or "token_ids" not in names or "padding_mask" not in names:
        raise ValueError(
            "`backbone` must take the dict token_ids / padding_mask (a text backbone), got "
            f"inputs {names}"
        )
    if copy:
        backbone = _copy_backbone(backbone)
    backbone.trainable = bool(trainable)
    inputs = {k: keras.Input(shape=(None,), dtype="int32", name=k) for k in names}
    seq = backbone(inputs)
    seq = seq["sequence_output"] if isinstance(seq, dict) else seq
    mask = inputs["padding_mask"]
    if head == "cnn":
        emb = seq * ops.cast(ops.expand_dims(mask, -1), seq.dtype)  # padding -> 0
        out = _cnn_head(emb, int(filters), kernel_sizes, float(dropout), seed)
    else:
        out = _lstm_head(seq, int(units), float(dropout), seed, mask=ops.cast(mask, "bool"))
    model = keras.Model(inputs, out, name=f"hub_{head}_classifier")
    model.backbone = backbone
    return model


def __getattr__(name: str) -> Any:
    if name == "KerasHubTextModel":
        return _model_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
