"""Pre-trained word vectors for the text backbones: word2vec / GloVe text files read
into an embedding matrix aligned with a vocabulary, and set into a model's embedding.

The PERCY paper (section 4.1.2) compares word2vec, GloVe, ELMo, BERT and SentiBERT
embeddings, fine-tuned or frozen. Static vectors come from a text file:

* word2vec text format: a header line ``<n_words> <dim>``, then ``word v1 ... vdim``;
* GloVe format: the same lines without header.

Words of the vocabulary missing from the file get vectors drawn uniformly in
[-0.25, 0.25] (Kim 2014's and Hu et al.'s choice for unknown words), each from the seed and
the word itself (:func:`~xplique_ext.commons.random.input_rng`): a word gets the same
vector in any vocabulary, at any index; the padding row 0 is zero.
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import Any, Sequence, Tuple

import numpy as np

from ..commons.params import ArrayLike, Boolean, InstanceOf, Interval, Strings, validate_params
from ..commons.random import input_rng, seed_to_int
from ..commons.text_files import WideTextError, open_text
from ..commons.warnings import XpliqueExtWarning, warn

__all__ = ["load_word_vectors", "set_embedding"]


@validate_params(
    {
        "path": "no_validation",  # a file: FileNotFoundError names it
        "vocabulary": [Strings(what="tokens")],
        "seed": [Interval(numbers.Integral, 0, None), None],
        "oov_scale": [Interval(numbers.Real, 0.0, None)],
    }
)
def load_word_vectors(
    path: Any, vocabulary: Sequence[str], *, seed: int = 0, oov_scale: float = 0.25
) -> Tuple[np.ndarray, int]:
    """Embedding matrix (V, D) of ``vocabulary`` from a word2vec / GloVe text file.

    Parameters
    ----------
    path
        Text file, word2vec (with its ``n dim`` header) or GloVe (no header) format,
        UTF-8 (bytes that are not UTF-8 read as Latin-1, as every text file of the
        package: :mod:`xplique_ext.commons.text_files`), one word and D numbers per line
        separated by spaces.
    vocabulary
        The V distinct tokens (str) of the model, index = row (e.g.
        ``TextVectorization.get_vocabulary()``: ``''`` padding first, ``'[UNK]'``
        second). The empty string's row is zero.
    seed
        Seed of the uniform vectors of the words missing from the file; each word's vector
        depends only on the seed and the word (not on its index in ``vocabulary``). None
        draws fresh randomness.
    oov_scale
        Missing words get vectors uniform in [-oov_scale, oov_scale].

    Returns
    -------
    matrix, n_found
        float32 (V, D) matrix, and how many vocabulary words the file held (a
        warning says so when it holds none).

    Examples
    --------
    >>> import os, tempfile
    >>> f = os.path.join(tempfile.mkdtemp(), "vec.txt")
    >>> _ = open(f, "w").write("2 3\\ngood 1 0 0\\nbad -1 0 0\\n")
    >>> m, found = load_word_vectors(f, ["", "[UNK]", "good", "film"])
    >>> m.shape, found, m[2].tolist(), m[0].tolist()
    ((4, 3), 1, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"`path`: no word-vector file at {str(path)!r}")
    index = {w: i for i, w in enumerate(vocabulary)}  # distinct str (@validate_params)
    vectors = {}
    dim = None
    try:
        fh = open_text(path)
    except WideTextError as exc:
        raise ValueError(f"`path` {str(path)!r} is {exc}") from None
    with fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip().split(" ")
            if lineno == 1 and len(parts) == 2 and all(x.isdigit() for x in parts):
                dim = int(parts[1])  # word2vec header
            elif len(parts) >= 2:
                dim = dim or len(parts) - 1
                if len(parts) - 1 != dim:
                    raise ValueError(
                        f"`path` line {lineno}: expected a word and {dim} numbers, "
                        f"got {len(parts) - 1} numbers"
                    )
                if parts[0] in index and parts[0] not in vectors:
                    try:
                        vectors[parts[0]] = np.array(parts[1:], dtype=np.float32)
                    except ValueError:
                        raise ValueError(
                            f"`path` line {lineno}: the vector of {parts[0]!r} holds a non-number"
                        ) from None
    if dim is None:
        raise ValueError(f"`path` {str(path)!r} holds no vector")
    seed = seed_to_int(seed)
    matrix = np.zeros((len(index), dim), dtype=np.float32)  # the padding row '' stays zero
    for word, row in index.items():
        if word in vectors:
            matrix[row] = vectors[word]
        elif word:  # missing from the file: drawn from the seed and the word itself
            matrix[row] = input_rng(seed, word).uniform(-oov_scale, oov_scale, size=dim)
    if not np.isfinite(matrix).all():
        raise ValueError(f"`path` {str(path)!r} holds NaN or infinite vector values")
    if not vectors:
        warn(
            f"load_word_vectors: no word of `vocabulary` ({len(index)} tokens) is in "
            f"{str(path)!r}: every row is random (uniform in +-{oov_scale:g}); check the file "
            "and the tokenizer's casing",
            XpliqueExtWarning,
        )
    return matrix, len(vectors)


@validate_params(
    {
        "model": "no_validation",  # a Keras model with an embedding layer `name`
        "matrix": [ArrayLike(kind="real", ndim=2, finite=True), None],
        "trainable": [Boolean()],
        "name": [InstanceOf(str)],
    }
)
def set_embedding(model: Any, matrix: Any = None, *, trainable: bool = True, name="embedding"):
    """Set the weights of ``model``'s embedding layer (``name``) to ``matrix`` (None
    keeps them) and make it trainable (fine-tuned) or frozen. Call before ``compile``.

    Returns the model."""
    if not callable(getattr(model, "get_layer", None)):
        raise TypeError(
            f"`model` must be a Keras model with an embedding layer, got {type(model).__name__}"
        )
    layer = {layer.name: layer for layer in model.layers}.get(name)
    if layer is None:
        raise ValueError(
            f"`name` must be the name of a layer of `model` (one of "
            f"{[each.name for each in model.layers]}), got {name!r}"
        )
    if not hasattr(layer, "embeddings"):
        raise ValueError(
            f"`name` must name an embedding layer, got {name!r}, a {type(layer).__name__} layer"
        )
    if matrix is not None:
        if matrix.shape != tuple(layer.embeddings.shape):
            raise ValueError(
                f"`matrix` must have the embedding's shape "
                f"{tuple(layer.embeddings.shape)}, got {matrix.shape}"
            )
        layer.set_weights([matrix.astype(np.float32)])
    layer.trainable = trainable
    return model
