"""Tokens of a sentence, keyword matching, and the alignment of a tokenizer's ids with
the whitespace tokens.

Tokens
------
PERCY writes a sentence as s = t1 ... tn. Here the tokens are the **whitespace tokens**
of the sentence, exactly ``sentence.split()``: every attribution array is aligned with
that list, whatever the model's own tokenizer does.

Punctuation
-----------
Punctuation is never split off: ``"dull, but fun"`` has the three tokens ``"dull,"``,
``"but"`` and ``"fun"``, and a separate ``","`` (SST-style ``"dull , but fun"``) is a
token of its own. Keywords are matched on the *normalised* token: lower-cased, with
leading and trailing punctuation stripped, so ``"But"``, ``"but,"`` and ``"(but"`` all
match the keyword ``but``; ``"but's"`` does not. The keyword token belongs to neither
conjunct; a glued comma (``"dull,"``) stays with its word and conjunct.

Alignment
---------
A model that takes token ids comes with a ``tokenizer``: a Keras ``TextVectorization``
layer or a callable mapping a list of strings to an integer array (N, L) of ids padded
with 0 (a list of lists or a ``tf.RaggedTensor`` is accepted too). Each whitespace token
is tokenized on its own; its ids are its *pieces* (several when the tokenizer splits
words into subwords, none when it drops the token, e.g. a lone ``","`` under
TextVectorization's default standardisation). When the pieces of the tokens, put end to
end, give the tokenizer's ids of the whole sentence (true for TextVectorization with
whitespace splitting and for word-piece tokenizers that add no special tokens), the
tokenizer is *compositional*: perturbed sentences are then built directly as id arrays
and gradient attributions of pieces are summed back into their token.
"""

from __future__ import annotations

import string
import unicodedata
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..commons.params import STRING, Callable_, InstanceOf, check_param, describe, validate_params
from ..runtime import check_finite_dataset, dataset_is_batched, is_dataset, iterate_dataset

__all__ = [
    "whitespace_tokens",
    "normalize_token",
    "find_keyword",
    "find_keywords",
    "Tokenizer",
    "as_sentences",
    "read_sentences",
]

_ASCII_PUNCT = set(string.punctuation)


@validate_params({"sentence": [STRING]})
def whitespace_tokens(sentence: str) -> List[str]:
    """The tokens t1 ... tn of a sentence: ``sentence.split()`` (punctuation stays glued).

    Examples
    --------
    >>> whitespace_tokens("the plot was dull, but  the cast shines")
    ['the', 'plot', 'was', 'dull,', 'but', 'the', 'cast', 'shines']
    """
    return sentence.split()


@validate_params({"token": [STRING]})
def normalize_token(token: str) -> str:
    """Lower-case ``token`` and strip its leading and trailing punctuation.

    Examples
    --------
    >>> normalize_token("But,")
    'but'
    >>> normalize_token("(yet)")
    'yet'
    """
    kept = [
        i
        for i, ch in enumerate(token)
        if ch not in _ASCII_PUNCT and not unicodedata.category(ch).startswith("P")
    ]
    return token[kept[0] : kept[-1] + 1].lower() if kept else ""


#: The unchecked body, for loops over strings already checked.
_normalize_token = normalize_token.__wrapped__


@validate_params(
    {
        "tokens": [InstanceOf(list, tuple, description="a list or tuple of tokens")],
        "keywords": [
            InstanceOf(
                dict, set, frozenset, Mapping, description="a dict or a set of lower-case keywords"
            )
        ],
    }
)
def find_keyword(tokens: Sequence[str], keywords: Any) -> Tuple[Optional[int], Optional[str]]:
    """Index and (lower-case) keyword of the first token matching one of ``keywords``.

    Parameters
    ----------
    tokens
        Whitespace tokens of a sentence.
    keywords
        Container of lower-case keywords (a dict or a set).

    Returns
    -------
    index, keyword
        ``(None, None)`` when no token matches.
    """
    return next(iter(find_keywords(tokens, keywords)), (None, None))


def find_keywords(tokens: Sequence[str], keywords: Any) -> List[Tuple[int, str]]:
    """Index and (lower-case) keyword of every token matching one of ``keywords``.

    Each match is one ``A keyword B`` structure of the sentence (PERCY scores every
    structure separately, section 3.2 of the paper).

    Parameters
    ----------
    tokens, keywords
        As in :func:`find_keyword`.

    Returns
    -------
    list of (index, keyword)
        In sentence order; empty when no token matches.

    Examples
    --------
    >>> find_keywords("Even though we can't travel yet we can enjoy".split(), {"though", "yet"})
    [(1, 'though'), (5, 'yet')]
    """
    return [(i, norm) for i, norm in enumerate(map(_normalize_token, tokens)) if norm in keywords]


# --------------------------------------------------------------------------- tokenizers
def find_layer(model: Any, layer_type: Any) -> Any:
    """The first layer of type ``layer_type`` inside ``model`` (breadth-first through
    nested models), or None."""
    queue = [model]
    for obj in queue:  # the queue grows while it is read: breadth-first
        if isinstance(obj, layer_type):
            return obj
        queue.extend(getattr(obj, "layers", []) or [])
    return None


def _pad(rows: Sequence[Sequence[int]]) -> np.ndarray:
    """Ragged rows of ids -> one int64 array (N, longest row), padded with 0."""
    out = np.zeros((len(rows), max(map(len, rows), default=0)), dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


class Tokenizer:
    """A tokenizer in one convention: list of strings -> padded int64 ids (N, L), 0 = pad.

    Wraps a Keras ``TextVectorization`` layer (``output_mode='int'``) or a callable.

    Parameters
    ----------
    tokenizer
        ``TextVectorization`` layer, or callable mapping a list of strings to ids (a
        padded array, a list of lists or a ``tf.RaggedTensor``).
    """

    def __init__(self, tokenizer: Any):
        import keras

        self.raw = check_param(tokenizer, "tokenizer", [Callable_()])  # a layer is callable
        self.is_text_vectorization = isinstance(tokenizer, keras.layers.TextVectorization)
        mode = getattr(tokenizer, "_output_mode", "int") if self.is_text_vectorization else "int"
        if mode != "int":
            raise ValueError(
                "`tokenizer` must be a TextVectorization layer with "
                f"output_mode='int', got output_mode={mode!r}"
            )
        length = getattr(tokenizer, "_output_sequence_length", None)
        self.sequence_length = int(length) if self.is_text_vectorization and length else None
        self._piece_cache: Dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.int64)
        out = self.raw(texts)  # a TextVectorization layer takes the list too
        if hasattr(out, "to_list"):  # tf.RaggedTensor
            out = out.to_list()
        if hasattr(out, "numpy"):
            out = out.numpy()
        ragged = isinstance(out, (list, tuple)) and out and isinstance(out[0], (list, tuple))
        if ragged:  # ragged rows padded with 0
            arr = _pad(out)
        else:
            arr = np.asarray(out)
        if arr.ndim == 1 and len(texts) == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or len(arr) != len(texts) or arr.dtype.kind not in "iu":
            raise ValueError(
                "`tokenizer` must return integer ids of shape (N, L) for N strings, "
                f"got an array of shape {arr.shape} and dtype {arr.dtype} for "
                f"{len(texts)} strings"
            )
        return arr.astype(np.int64, copy=False)

    def pieces(self, words: Sequence[str]) -> List[np.ndarray]:
        """Ids of each word tokenized on its own (padding removed), cached."""
        missing = [w for w in dict.fromkeys(words) if w not in self._piece_cache]
        self._piece_cache.update((w, row[row != 0]) for w, row in zip(missing, self(missing)))
        return [self._piece_cache[w] for w in words]


def compose(
    word_pieces: Sequence[np.ndarray], keep: np.ndarray, mask_pieces: np.ndarray, length: int
) -> Tuple[np.ndarray, np.ndarray]:
    """Token ids of masked versions of one sentence, built without re-tokenizing.

    Parameters
    ----------
    word_pieces
        Ids of each of the n whitespace tokens.
    keep
        Boolean array (R, n): True keeps the token, False replaces it by ``mask_pieces``.
    mask_pieces
        Ids of the mask string.
    length
        Sequence length L of the result (longer rows are truncated, shorter padded with 0).

    Returns
    -------
    ids, word_of_position
        ids (R, L) int64, and (R, L) int64 index of the token each position belongs to
        (-1 for padding).
    """
    keep = np.asarray(keep, dtype=bool)
    r, n = keep.shape
    ids = np.zeros((r, length), dtype=np.int64)
    owner = np.full((r, length), -1, dtype=np.int64)
    if n == 0 or length == 0:
        return ids, owner
    klen = np.array([len(p) for p in word_pieces], dtype=np.int64)
    kflat = np.concatenate([*word_pieces, mask_pieces]).astype(np.int64)
    kstart = np.cumsum(klen) - klen  # where each token's pieces start in kflat
    mstart = int(klen.sum())  # where the mask's pieces start
    if len(mask_pieces) == 1 and np.all(klen == 1):  # the common word-level case, fully 2-D
        width = min(n, length)
        ids[:, :width] = np.where(keep[:, :width], kflat[None, :width], kflat[mstart])
        owner[:, :width] = np.arange(width)[None, :]
        return ids, owner
    # one entry per piece of the result, slot after slot (a slot: one token of one row)
    lengths = np.where(keep, klen[None, :], len(mask_pieces)).ravel()
    starts = np.where(keep, kstart[None, :], mstart).ravel()
    slot = np.repeat(np.arange(r * n), lengths)
    first = np.cumsum(lengths) - lengths  # the index of each slot's first piece
    piece = np.arange(len(slot))
    row_of, word_of = np.divmod(slot, n)
    pos = piece - first[row_of * n]  # the piece's position in its row
    ok = pos < length
    ids[row_of[ok], pos[ok]] = kflat[starts[slot] + piece - first[slot]][ok]
    owner[row_of[ok], pos[ok]] = word_of[ok]
    return ids, owner


def is_compositional(
    tokenizer: Tokenizer, sentences: Sequence[str], words: Sequence[List[str]]
) -> Tuple[bool, Optional[int]]:
    """Whether tokenizing each whitespace token alone and concatenating gives the ids of
    the whole sentence, for every sentence. Returns (ok, index of first failure)."""
    for i, (row, ws) in enumerate(zip(tokenizer(list(sentences)), words)):
        got = row[row != 0]
        expect = np.concatenate([np.zeros(0, np.int64), *tokenizer.pieces(ws)])
        if tokenizer.sequence_length is not None:
            expect = expect[: len(got)]  # the tokenizer truncated the sentence
        if not np.array_equal(expect, got):
            return False, i
    return True, None


def as_sentences(inputs: Any, name: str = "inputs") -> List[str]:
    """A list of str from a list / tuple / NumPy array / pandas Series / tf.Tensor of
    strings or a finite ``tf.data.Dataset`` of strings (or of ``(sentence, label)``
    pairs), read once batch by batch. An infinite dataset raises a ValueError.

    Bytes must be UTF-8: bytes that are not are refused with a ValueError naming the
    sentence. Unlike the files of :mod:`xplique_ext.commons.text_files`, no Latin-1
    fallback: sentences in memory were encoded by the caller (a ``tf.string`` tensor holds
    UTF-8), so other bytes are a mistake to report, not an encoding to guess."""
    sentences, _ = read_sentences(inputs, name)
    return sentences


def read_sentences(inputs: Any, name: str = "inputs") -> Tuple[List[str], Optional[np.ndarray]]:
    """Like :func:`as_sentences`, also returning the labels of a ``tf.data.Dataset`` of
    ``(sentence, label)`` pairs (None for any other input)."""
    labels = None
    if is_dataset(inputs):
        inputs, labels = _read_dataset(inputs, name)
    elif hasattr(inputs, "numpy") or hasattr(inputs, "__array__"):
        # a tf.Tensor, NumPy array, pandas Series / Index / DataFrame: (N,) or a column
        # (N, 1); a 0-d array gives its one str or bytes, refused below
        arr = np.asarray(inputs.numpy() if hasattr(inputs, "numpy") else inputs)
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr.reshape(-1)
        inputs = arr.tolist()
    if isinstance(inputs, (str, bytes)):
        raise TypeError(
            f"`{name}` must be a sequence of sentences, got a single "
            f"{type(inputs).__name__}; wrap it in a list"
        )
    if isinstance(inputs, (set, frozenset, Mapping)) or not hasattr(inputs, "__iter__"):
        raise TypeError(
            f"`{name}` must be an ordered sequence of sentences (list, tuple, array, "
            f"Series or tf.data.Dataset), got {type(inputs).__name__}"
        )
    sentences = [
        s if isinstance(s, str) else _text(s, f"{name}[{i}]") for i, s in enumerate(inputs)
    ]
    return sentences, labels


def _text(item: Any, name: str) -> str:
    """A sentence that is not a str: bytes decoded as strict UTF-8 (a ValueError naming
    ``name`` for other bytes, see :func:`as_sentences`), anything else refused."""
    if not isinstance(item, bytes):
        return check_param(item, name, [STRING])
    try:
        return item.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"`{name}` must be a str or UTF-8 bytes, got {describe(item)} ("
            f"{exc.reason} at byte {exc.start})"
        ) from None


def _read_dataset(dataset: Any, name: str) -> Tuple[List[Any], Optional[np.ndarray]]:
    """The sentences of a finite ``tf.data.Dataset`` (batched or not) of sentences or of
    ``(sentence, label)`` pairs, and the labels, one row per sentence (None without), read
    once."""
    check_finite_dataset(dataset, name)
    for x, y in iterate_dataset(dataset, None, dataset_is_batched(dataset), name):  # one batch
        x = x.reshape(-1)  # a batch of fixed size is an axis of its own
        if y is None:
            return x.tolist(), None
        return x.tolist(), y.reshape(len(x), -1)
    return [], None  # an empty dataset
