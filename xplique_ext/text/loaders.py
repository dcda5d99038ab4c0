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
    six quoted columns, no header (polarity, id, date, query, user, text), Latin-1;
    polarity 0 (negative) / 4 (positive) becomes 0 / 1. The published test file also
    holds neutral tweets (polarity 2): they are dropped, with a warning that counts them.

  ``path`` is the file itself, or the folder that holds the split's file under its
  published name.
* no ``path``: ``tensorflow-datasets`` (``glue/sst2``, ``sentiment140``) when installed,
  else Hugging Face ``datasets`` (``nyu-mll/glue`` ``sst2``, ``stanfordnlp/sentiment140``,
  the ``[datasets]`` extra); these download the data on first use. With neither, an
  ImportError says what to install, or which file to download for ``path=``.

``contrastive_only=True`` keeps the sentences that hold a rule keyword (``but``, ``yet``,
``though``, ``while`` by default, matched as PERCY matches them), as the paper evaluates
PERCY on the contrastive sentences of each test set.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np

from ..commons.params import NO_VALIDATION, Boolean, InstanceOf, Options, validate_params
from ..commons.validation import check_choice
from ..commons.warnings import XpliqueExtWarning, warn
from .rules import resolve_rules
from .tokens import find_keyword, whitespace_tokens

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
    "sst2": "GLUE's SST-2 (https://dl.fbaipublicfiles.com/glue/data/SST-2.zip: train.tsv, "
    "dev.tsv, test.tsv)",
    "sentiment140": "Sentiment140 (http://cs.stanford.edu/people/alecmgo/"
    "trainingandtestdata.zip: training.1600000.processed.noemoticon.csv, "
    "testdata.manual.2009.06.14.csv)",
}

_SPLIT_ALIASES = {"dev": "validation"}


@validate_params({
    "name": [Options(tuple(DATASETS))],
    "split": [Options(("train", "validation", "dev", "test"))],  # per dataset: in the body
    "path": [InstanceOf(str, os.PathLike, description="a str or a path"), None],
    "contrastive_only": [Boolean()],
    "rules": NO_VALIDATION,  # resolve_rules
})
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
    allowed = tuple(DATASETS[name])
    allowed += tuple(a for a, s in _SPLIT_ALIASES.items() if s in allowed)
    split = _SPLIT_ALIASES.get(check_choice(split, "split", allowed), split)
    table = resolve_rules(rules)
    if path is not None:
        file = _resolve_file(Path(path), name, split)
        reader = _read_sst2 if name == "sst2" else _read_sentiment140
        sentences, labels = reader(file, split)
    else:
        sentences, labels = _load_remote(name, split)
    labels = np.asarray(labels, dtype=np.int64)
    if contrastive_only:
        keep = [find_keyword(whitespace_tokens(s), table)[0] is not None for s in sentences]
        sentences = [s for s, k in zip(sentences, keep) if k]
        labels = labels[np.asarray(keep, dtype=bool)] if len(keep) else labels
        if not sentences:
            warn(
                f"load_sentiment_dataset({name!r}, {split!r}): no sentence holds a rule "
                f"keyword ({sorted(table)}); the result is empty",
                XpliqueExtWarning,
            )
    return sentences, labels


# --------------------------------------------------------------------------- files
def _resolve_file(path: Path, name: str, split: str) -> Path:
    if path.is_dir():
        file = path / DATASETS[name][split]
        if not file.is_file():
            raise FileNotFoundError(
                f"`path` {str(path)!r} is a folder without {DATASETS[name][split]!r}, the "
                f"{split} file of {_DOWNLOAD[name]}"
            )
        return file
    if not path.is_file():
        raise FileNotFoundError(
            f"`path` {str(path)!r} does not exist; download {_DOWNLOAD[name]} and pass the "
            "file or its folder"
        )
    return path


def _read_sst2(file: Path, split: str) -> Tuple[List[str], List[int]]:
    with open(file, encoding="utf-8-sig", newline="") as handle:  # a BOM is tolerated
        rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(rows, None)
        if header is None:
            raise ValueError(f"`path` {str(file)!r} is empty: expected GLUE SST-2's TSV")
        header = [h.strip() for h in header]
        if "sentence" not in header:
            raise ValueError(
                f"`path` {str(file)!r} is not GLUE SST-2's TSV: its header must hold the "
                f"columns 'sentence' and 'label', got {header}"
            )
        if "label" not in header:
            hint = (
                " GLUE keeps the labels of SST-2's test split hidden: use "
                "split='validation' (dev.tsv)" if "index" in header else ""
            )
            raise ValueError(
                f"`path` {str(file)!r} has no 'label' column (header {header}).{hint}"
            )
        i_s, i_l = header.index("sentence"), header.index("label")
        sentences: List[str] = []
        labels: List[int] = []
        for row in rows:
            line = rows.line_num
            if not row:
                continue
            if len(row) != len(header):
                raise ValueError(
                    f"`path` {str(file)!r} line {line}: expected {len(header)} "
                    f"tab-separated fields ({header}), got {len(row)}"
                )
            label = row[i_l].strip()
            if label not in ("0", "1"):
                raise ValueError(
                    f"`path` {str(file)!r} line {line}: the label must be 0 or 1, got "
                    f"{row[i_l]!r}"
                )
            sentences.append(row[i_s].strip())
            labels.append(int(label))
    if not sentences:
        raise ValueError(f"`path` {str(file)!r} holds no sentence (a header only)")
    return sentences, labels


def _read_sentiment140(file: Path, split: str) -> Tuple[List[str], List[int]]:
    sentences: List[str] = []
    labels: List[int] = []
    neutral = 0
    with open(file, encoding="latin-1", newline="") as handle:
        rows = csv.reader(handle)
        for row in rows:
            line = rows.line_num
            if not row:
                continue
            if len(row) != 6:
                raise ValueError(
                    f"`path` {str(file)!r} line {line}: Sentiment140's CSV has six columns "
                    f"(polarity, id, date, query, user, text), got {len(row)}"
                )
            polarity = row[0].strip()
            if polarity == "2":
                neutral += 1
                continue
            if polarity not in ("0", "4"):
                raise ValueError(
                    f"`path` {str(file)!r} line {line}: the polarity must be 0 (negative) "
                    f"or 4 (positive) (2, neutral, is dropped), got {row[0]!r}"
                )
            sentences.append(row[5])
            labels.append(1 if polarity == "4" else 0)
    if not sentences and not neutral:
        raise ValueError(f"`path` {str(file)!r} is empty: expected Sentiment140's CSV")
    if neutral:
        warn(
            f"Sentiment140 {str(file)!r}: {neutral} neutral tweets (polarity 2) dropped; "
            f"{len(sentences)} negative/positive kept",
            XpliqueExtWarning,
        )
    return sentences, labels


# --------------------------------------------------------------------------- libraries
def _load_remote(name: str, split: str) -> Tuple[List[str], List[int]]:
    try:
        import tensorflow_datasets as tfds
    except ImportError:
        tfds = None
    if tfds is not None:
        return _from_tfds(tfds, name, split)
    try:
        import datasets
    except ImportError:
        datasets = None
    if datasets is not None:
        return _from_hf(datasets, name, split)
    raise ImportError(
        f"load_sentiment_dataset({name!r}) without `path` needs tensorflow-datasets or "
        "Hugging Face datasets: pip install \"xplique_ext[datasets]\" (or pip install "
        f"tensorflow-datasets); or download {_DOWNLOAD[name]} and pass the file or its "
        "folder as `path=`"
    )


def _decode(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return str(value)


def _labels_from(name: str, split: str, raw: List[Any], source: str) -> Tuple[List[int], np.ndarray]:
    """0/1 labels and the rows to keep, from a library's labels (or polarities)."""
    values = np.asarray([int(v) for v in raw], dtype=np.int64)
    if name == "sst2":
        if values.size and np.all(values == -1):
            raise ValueError(
                f"`split`={split!r}: {source} gives SST-2's test split without labels "
                "(-1; GLUE keeps them hidden); use split='validation'"
            )
        keep = np.ones(len(values), dtype=bool)
        out = values
    else:
        keep = values != 2  # neutral tweets of the test split
        out = np.where(values == 4, 1, values)
    bad = ~np.isin(out[keep], (0, 1))
    if bad.any():
        raise ValueError(
            f"{source} returned labels outside 0/1 for {name!r} {split!r}: "
            f"{sorted(set(values[keep][bad].tolist()))[:5]}"
        )
    if (~keep).any():
        warn(
            f"Sentiment140 {split}: {int((~keep).sum())} neutral tweets (polarity 2) dropped",
            XpliqueExtWarning,
        )
    return out[keep].tolist(), keep


def _from_tfds(tfds: Any, name: str, split: str) -> Tuple[List[str], List[int]]:
    dataset, text_key, label_key = {
        "sst2": ("glue/sst2", "sentence", "label"),
        "sentiment140": ("sentiment140", "text", "polarity"),
    }[name]
    try:
        data = tfds.load(dataset, split=split)
        rows = list(tfds.as_numpy(data))
    except Exception as exc:  # noqa: BLE001 - re-raised with what to do
        raise RuntimeError(
            f"tensorflow-datasets could not load {dataset!r} ({type(exc).__name__}: {exc}); "
            f"without a network, download {_DOWNLOAD[name]} and pass `path=`"
        ) from exc
    labels, keep = _labels_from(name, split, [r[label_key] for r in rows], "tensorflow-datasets")
    sentences = [_decode(r[text_key]).strip() for r, k in zip(rows, keep) if k]
    return sentences, labels


def _from_hf(datasets: Any, name: str, split: str) -> Tuple[List[str], List[int]]:
    args, text_key, label_key = {
        "sst2": (("nyu-mll/glue", "sst2"), "sentence", "label"),
        "sentiment140": (("stanfordnlp/sentiment140",), "text", "sentiment"),
    }[name]
    try:
        data = datasets.load_dataset(*args, split=split)
        texts, raw = list(data[text_key]), list(data[label_key])
    except Exception as exc:  # noqa: BLE001 - re-raised with what to do
        raise RuntimeError(
            f"Hugging Face datasets could not load {'/'.join(args)!r} "
            f"({type(exc).__name__}: {exc}); download {_DOWNLOAD[name]} and pass `path=`"
        ) from exc
    labels, keep = _labels_from(name, split, raw, "Hugging Face datasets")
    sentences = [_decode(t).strip() for t, k in zip(texts, keep) if k]
    return sentences, labels
