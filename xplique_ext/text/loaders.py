"""The PERCY paper's datasets: SST-2 and Sentiment140, as sentences and 0/1 labels.

Two ways in:

* ``path=``: the dataset's published files, read with the standard library's ``csv``:

  - **SST-2** as GLUE publishes it (``SST-2.zip``: ``train.tsv``, ``dev.tsv``,
    ``test.tsv``): tab-separated, a header ``sentence<TAB>label``, no quoting, labels
    0 (negative) / 1 (positive), UTF-8. GLUE's ``test.tsv`` has no labels (``index``,
    ``sentence``): GLUE keeps them hidden, so ``split='test'`` of GLUE SST-2 raises a
    ValueError pointing to ``split='validation'`` (``dev.tsv``, 872 sentences).
  - **Sentiment140** (``trainingandtestdata.zip``:
    ``training.1600000.processed.noemoticon.csv``, ``testdata.manual.2009.06.14.csv``):
    six quoted columns, no header (polarity, id, date, query, user, text), Latin-1 as
    published (a copy saved in UTF-8 is read as UTF-8); polarity 0 (negative) / 4 (positive) becomes 0 / 1. The published test file also
    holds neutral tweets (polarity 2): they are dropped, with a warning that counts them.

  ``path`` is the file itself, or the folder that holds the split's file under its
  published name. Both are decoded by the package's one text decoder
  (:mod:`xplique_ext.commons.text_files`): UTF-8 first, Latin-1 only for the bytes that
  are not UTF-8, so a Latin-1 file and its UTF-8 copy give the same sentences.
* no ``path``: ``tensorflow-datasets`` (``glue/sst2``, ``sentiment140``) when installed,
  else Hugging Face ``datasets`` (``nyu-mll/glue`` ``sst2``, ``stanfordnlp/sentiment140``,
  the ``[datasets]`` extra); these download the data on first use. The bytes they give
  are decoded by the same decoder as the files (never a raw ``UnicodeDecodeError``). With
  neither, an ImportError says what to install, or which file to download for ``path=``.

``contrastive_only=True`` keeps the sentences that hold a rule keyword (``but``, ``yet``,
``though``, ``while`` by default, matched as PERCY matches them), as the paper evaluates
PERCY on the contrastive sentences of each test set.
"""

from __future__ import annotations

import csv
import importlib
import os
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from ..commons.params import Boolean, InstanceOf, Options, check_param, validate_params
from ..commons.text_files import WideTextError, decode_text, open_text
from ..commons.warnings import XpliqueExtWarning, warn
from .conjunctions import resolve_rules
from .tokens import find_keywords, whitespace_tokens

__all__ = ["load_sentiment_dataset", "DATASETS"]

#: name -> split -> file name in the published archive
DATASETS: Dict[str, Dict[str, str]] = {
    "sst2": {"train": "train.tsv", "validation": "dev.tsv", "test": "test.tsv"},
    "sentiment140": {
        "train": "training.1600000.processed.noemoticon.csv",
        "test": "testdata.manual.2009.06.14.csv",
    },
}
_DOWNLOAD = {
    "sst2": "GLUE's SST-2 (https://dl.fbaipublicfiles.com/glue/data/SST-2.zip: train.tsv, dev.tsv, "
    "test.tsv)",
    "sentiment140": "Sentiment140 (http://cs.stanford.edu/people/alecmgo/trainingandtestdata.zip: "
    "training.1600000.processed.noemoticon.csv, testdata.manual.2009.06.14.csv)",
}
#: name -> library -> (dataset, text key, label key)
_LIBRARIES = {
    "sst2": {
        "tensorflow_datasets": ("glue/sst2", "sentence", "label"),
        "datasets": (("nyu-mll/glue", "sst2"), "sentence", "label"),
    },
    "sentiment140": {
        "tensorflow_datasets": ("sentiment140", "text", "polarity"),
        "datasets": (("stanfordnlp/sentiment140",), "text", "sentiment"),
    },
}
#: Sentiment140's six columns (no header), named as the reader uses them
_S140_COLUMNS = ["label", "id", "date", "query", "user", "sentence"]


class Loaded(NamedTuple):
    """A split as read, before its labels are checked (see :func:`_labelled`)."""

    texts: List[str]
    raw_labels: List[Any]  # as the source gives them (SST-2's 0/1, Sentiment140's 0/2/4)
    line_numbers: Optional[List[int]]  # in the file, None for a library's split
    source: str  # what the errors name: "`path` '...'" or the library


_HIDDEN = "GLUE keeps the labels of SST-2's test split hidden: use split='validation' (dev.tsv)"


@validate_params(
    {
        "name": [Options(tuple(DATASETS))],
        "contrastive_only": [Boolean()],
        "split": [Options(("train", "validation", "dev", "test"))],  # per dataset: below
        "path": [InstanceOf(str, os.PathLike, description="a str or a path"), None],
        "rules": "no_validation",
    }
)  # resolve_rules
def load_sentiment_dataset(
    name: str,
    split: str = "test",
    path: Any = None,
    contrastive_only: bool = False,
    *,
    rules: Any = None,
) -> Tuple[List[str], np.ndarray]:
    """Sentences and 0/1 sentiment labels of SST-2 or Sentiment140.

    Parameters
    ----------
    name
        'sst2' or 'sentiment140'.
    split
        'train', 'validation' (or 'dev'; SST-2 only) or 'test'. GLUE keeps SST-2's test
        labels hidden: use 'validation' for labelled SST-2 sentences.
    path
        None (load through tensorflow-datasets or Hugging Face ``datasets``, which
        download the data), or the published file (GLUE SST-2 TSV; Sentiment140 CSV),
        or the folder that holds the split's file under its published name.
    contrastive_only
        Keep only the sentences that hold a rule keyword (the ``A keyword B`` sentences
        PERCY scores).
    rules
        The rule table whose keywords ``contrastive_only`` looks for (see
        :func:`xplique_ext.text.resolve_rules`); None: Table 1 of the paper.

    Returns
    -------
    sentences, labels
        A list of N str and an int64 array (N,) of 0 (negative) / 1 (positive), in the
        file's order.

    Raises
    ------
    ValueError
        Unknown ``name`` or ``split``, a malformed file (wrong columns, labels outside
        0/1, polarity outside 0/2/4), an empty file, or SST-2's unlabelled test split.
    FileNotFoundError
        ``path`` does not exist, or its folder lacks the split's file.
    ImportError
        ``path`` is None and neither tensorflow-datasets nor ``datasets`` is installed.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "dev.tsv").write_text(
    ...     "sentence\\tlabel\\nit 's dull , but the cast shines \\t1\\na mess \\t0\\n")
    >>> load_sentiment_dataset("sst2", "validation", path=folder)
    (["it 's dull , but the cast shines", 'a mess'], array([1, 0]))
    >>> load_sentiment_dataset("sst2", "dev", path=folder / "dev.tsv", contrastive_only=True)
    (["it 's dull , but the cast shines"], array([1]))
    """
    allowed = tuple(DATASETS[name]) + (("dev",) if "validation" in DATASETS[name] else ())
    check_param(split, "split", [Options(allowed)])
    if split == "dev":  # GLUE's name of SST-2's validation split
        split = "validation"
    table = resolve_rules(rules)
    loaded = _load_remote(name, split) if path is None else _read_file(path, name, split)
    sentences, labels = _labelled(name, loaded)
    if contrastive_only:
        keep = [bool(find_keywords(whitespace_tokens(s), table)) for s in sentences]
        sentences = [s for s, k in zip(sentences, keep) if k]
        labels = labels[np.array(keep, bool)]
        if not sentences:
            warn(
                f"load_sentiment_dataset({name!r}, {split!r}): no sentence holds a rule "
                f"keyword ({sorted(table)}); the result is empty",
                XpliqueExtWarning,
            )
    return sentences, labels


def _read_file(path: Any, name: str, split: str) -> Loaded:
    """The published file ``path``, or the split's file in the folder ``path``, its columns
    checked."""
    file = Path(path) / DATASETS[name][split] if Path(path).is_dir() else Path(path)
    if not file.is_file():
        raise FileNotFoundError(
            f"`path` {str(file)!r} does not exist; download "
            f"{_DOWNLOAD[name]} and pass the {split} file or its folder"
        )
    sst2 = name == "sst2"
    where = f"`path` {str(file)!r}"
    what = "GLUE SST-2's TSV (UTF-8)" if sst2 else "Sentiment140's CSV (Latin-1 or UTF-8)"
    try:
        with open_text(file) as handle:
            if sst2:
                rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
                header = [h.strip() for h in next(rows, [])]
            else:
                rows = csv.reader(handle)
                header = _S140_COLUMNS
            if header and not {"sentence", "label"} <= set(header):
                hint = f" {_HIDDEN}" if "index" in header and "sentence" in header else ""
                raise ValueError(
                    f"{where} is not GLUE SST-2's TSV: its header must hold the "
                    f"columns 'sentence' and 'label', got {header}.{hint}"
                )
            data = [(row, rows.line_num) for row in rows if row]
    except (WideTextError, csv.Error) as exc:  # an archive, a binary file, UTF-16...
        raise ValueError(f"{where} is not {what}: {exc}; pass the extracted file") from None
    if not data:
        raise ValueError(f"{where} is empty: it holds no sentence (expected {what})")
    if sst2:
        expected = f"expected {len(header)} tab-separated fields ({header})"
    else:
        expected = "Sentiment140's CSV has six columns (polarity, id, date, query, user, text)"
    for row, line in data:
        if len(row) != len(header):
            raise ValueError(f"{where} line {line}: {expected}, got {len(row)}")
    i_text = header.index("sentence")
    i_label = header.index("label")
    texts = [row[i_text] for row, _ in data]
    raw_labels = [row[i_label] for row, _ in data]
    line_numbers = [line for _, line in data]
    return Loaded(texts, raw_labels, line_numbers, source=where)


def _load_remote(name: str, split: str) -> Loaded:
    """The split through tensorflow-datasets, else Hugging Face ``datasets`` (bytes decoded
    by the package's one text decoder, as the files are)."""
    for module, (dataset, text_key, label_key) in _LIBRARIES[name].items():
        try:
            library = importlib.import_module(module)
        except ImportError:
            continue
        source = {"datasets": "Hugging Face datasets"}.get(module, "tensorflow-datasets")
        try:
            if module == "datasets":
                data = library.load_dataset(*dataset, split=split)
                texts = list(data[text_key])
                raw = list(data[label_key])
            else:
                rows = list(library.as_numpy(library.load(dataset, split=split)))
                texts = [row[text_key] for row in rows]
                raw = [row[label_key] for row in rows]
        except Exception as exc:  # noqa: BLE001 - re-raised with what to do
            raise RuntimeError(
                f"{source} could not load {dataset!r} ({type(exc).__name__}: {exc}); without a "
                f"network, download {_DOWNLOAD[name]} and pass `path=`"
            ) from exc
        texts = [decode_text(t) if isinstance(t, bytes) else str(t) for t in texts]
        return Loaded(texts, raw, line_numbers=None, source=source)
    raise ImportError(
        f"load_sentiment_dataset({name!r}) without `path` needs tensorflow-datasets or Hugging Face "
        'datasets: pip install "xplique_ext[datasets]" (or pip install tensorflow-datasets); or '
        f"download {_DOWNLOAD[name]} and pass the file or its folder as `path=`"
    )


def _labelled(name: str, loaded: Loaded) -> Tuple[List[str], np.ndarray]:
    """Stripped sentences and 0/1 labels from the dataset's labels: SST-2's 0/1, or
    Sentiment140's polarities 0/4 (2, neutral, dropped with a warning)."""
    texts = loaded.texts
    raw = loaded.raw_labels
    lines = loaded.line_numbers
    source = loaded.source
    values = [str(v).strip() for v in raw]
    if name == "sst2" and values and set(values) == {"-1"}:
        raise ValueError(f"{source} gives SST-2's test split without labels (-1). {_HIDDEN}")
    allowed = ("0", "1") if name == "sst2" else ("0", "2", "4")
    for i, v in enumerate(values):
        if v not in allowed:
            what = (
                "the label must be 0 or 1"
                if name == "sst2"
                else "the polarity must be 0 (negative) or 4 (positive) (2, neutral, is dropped)"
            )
            where = "" if lines is None else f" line {lines[i]}"
            raise ValueError(f"{source}{where}: {what}, got {raw[i]!r}")
    keep = [v != "2" for v in values]  # Sentiment140's neutral tweets (SST-2 has no 2)
    if not all(keep):
        warn(
            f"Sentiment140 {source}: {keep.count(False)} neutral tweets (polarity 2) dropped; "
            f"{sum(keep)} negative/positive kept",
            XpliqueExtWarning,
        )
    sentences = [t.strip() for t, k in zip(texts, keep) if k]
    return sentences, np.array([v in ("1", "4") for v, k in zip(values, keep) if k], np.int64)
