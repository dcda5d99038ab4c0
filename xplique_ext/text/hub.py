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
from typing import Any, List, Optional, Sequence

from ..commons.params import Boolean, Callable_, InstanceOf, Interval, Options, validate_params
from .models import _HEAD_PARAMETERS

__all__ = ["adapt_text_model", "load_hub_backbone", "build_hub_classifier"]


def _hub():
    try:
        import keras_hub
    except ImportError as exc:  # pragma: no cover - the extra is part of dev
        raise ImportError(
            'keras-hub models need keras-hub: pip install "xplique_ext[text]" '
            "(keras-hub with a TensorFlow-matched tensorflow-text)"
        ) from exc
    return keras_hub


def _dict_input_names(model: Any) -> Optional[List[str]]:
    """Names of a Keras model's dict inputs, or None when it does not take a dict."""
    try:
        spec = model.input
    except (AttributeError, ValueError, TypeError):
        return None
    return list(spec) if isinstance(spec, dict) else None


@validate_params(
    {
        "model": [Callable_()],
        "tokenizer": "no_validation",  # checked by the adapter
        "mask_string": [InstanceOf(str)],  # no whitespace: checked by TextClassifier
        "activation": [Options(("auto", "logits", "softmax", "sigmoid"))],
    }
)
def adapt_text_model(
    model: Any, tokenizer: Any = None, *, mask_string: str = "UNKWORDZ", activation: str = "auto"
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
    if "keras_hub" not in sys.modules:  # no keras-hub model exists before keras-hub is imported
        return model, tokenizer
    from .hub_model import adapt

    return adapt(model, tokenizer, mask_string, activation, _dict_input_names(model))


# --------------------------------------------------------------------------- classifiers
@validate_params(
    {"preset": [InstanceOf(str)], "sequence_length": [Interval(numbers.Integral, 3, None)]}
)
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
    models = _hub().models
    return (
        models.Backbone.from_preset(preset),
        models.TextClassifierPreprocessor.from_preset(preset, sequence_length=sequence_length),
    )


# backbone: a keras-hub Backbone with a dict input, checked below
@validate_params(
    {
        "backbone": "no_validation",
        "head": [Options(("cnn", "lstm"))],
        "trainable": [Boolean()],
        **_HEAD_PARAMETERS,
    }
)
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

    Returns
    -------
    keras.Model
        Dict input, sigmoid output (N, 1). Its backbone is ``model.backbone``, a copy of
        ``backbone`` (same configuration and weights): training leaves the one passed in
        untouched.

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
    import keras
    from keras import ops

    from .models import _head

    if not isinstance(backbone, _hub().models.Backbone):  # keras-hub missing: an ImportError
        raise TypeError(
            "`backbone` must be a keras-hub Backbone (e.g. keras_hub.models."
            f"BertBackbone, or load_hub_backbone(preset)[0]), got "
            f"{type(backbone).__name__}"
        )
    names = _dict_input_names(backbone)
    if not {"token_ids", "padding_mask"} <= set(names or ()):
        raise ValueError(
            "`backbone` must take the dict token_ids / padding_mask (a text "
            f"backbone), got inputs {names}"
        )
    # built on a copy (same class, configuration and weights): training leaves the
    # backbone passed in untouched
    weights = backbone.get_weights()
    backbone = type(backbone).from_config(backbone.get_config())
    backbone.set_weights(weights)
    backbone.trainable = trainable
    inputs = {k: keras.Input(shape=(None,), dtype="int32", name=k) for k in names}
    seq = backbone(inputs)
    if isinstance(seq, dict):
        seq = seq["sequence_output"]
    mask = ops.cast(inputs["padding_mask"], "bool")
    # padding zeroed before the convolutions, masked for the LSTM
    if head == "cnn":
        seq = seq * ops.cast(ops.expand_dims(mask, -1), seq.dtype)
    out = _head(
        head,
        seq,
        filters=filters,
        kernel_sizes=kernel_sizes,
        units=units,
        dropout=dropout,
        seed=seed,
        mask=mask,
    )
    model = keras.Model(inputs, out, name=f"hub_{head}_classifier")
    model.backbone = backbone
    return model
