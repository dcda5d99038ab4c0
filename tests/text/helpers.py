"""Helpers shared by the text test files (not fixtures: plain functions)."""

import numpy as np


def glove_file(path, words, dim=8, header=False, seed=0):
    """Write a word-vector file in GloVe's format (word2vec's with ``header``): one line per
    word of ``words``, random values of ``dim`` dimensions; returns ``path``."""
    rng = np.random.default_rng(seed)
    lines = [f"{len(words)} {dim}"] if header else []
    for w in words:
        lines.append(w + " " + " ".join(f"{v:.5f}" for v in rng.normal(size=dim)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def hub_vocabulary():
    """A WordPiece vocabulary of a few dozen entries: the generator's commonest words."""
    from collections import Counter

    from xplique_ext.text import generate_sentences

    counts = Counter(w for s in generate_sentences(200, seed=0).sentence for w in s.split())
    words = [w for w, _ in counts.most_common(40) if w.isalpha()]
    return ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, "##s", "##ed", "##ing"]
