"""Word-vector files and embedding weights (``xplique_ext/text/embeddings.py``)."""

import numpy as np
import pandas as pd
import pytest

from tests.text.helpers import glove_file
from xplique_ext.commons.warnings import XpliqueExtWarning


# --------------------------------------------------------------------------- vectors
def test_load_word_vectors_formats(tmp_path):
    from xplique_ext.text import load_word_vectors

    vocab = ["", "[UNK]", "good", "bad", "film"]
    for header in (False, True):
        f = glove_file(tmp_path / f"v{header}.txt", ["good", "bad", "other"], dim=3, header=header)
        m, found = load_word_vectors(f, vocab, seed=1)
        assert m.shape == (5, 3) and m.dtype == np.float32 and found == 2
        np.testing.assert_array_equal(m[0], 0)
        good = np.array(f.read_text().splitlines()[int(header)].split()[1:], dtype=np.float32)
        np.testing.assert_array_equal(m[2], good)
        assert np.abs(m[4]).max() <= 0.25  # unknown word: uniform in [-0.25, 0.25]
        m2, _ = load_word_vectors(f, vocab, seed=1)
        np.testing.assert_array_equal(m, m2)


def test_load_word_vectors_refuses_bad_files(tmp_path):
    from xplique_ext.text import load_word_vectors

    with pytest.raises(FileNotFoundError, match="path"):
        load_word_vectors(tmp_path / "none.txt", ["a"])
    bad = tmp_path / "bad.txt"
    bad.write_text("good 1 2 3\nbad 1 2\n")
    with pytest.raises(ValueError, match="line 2"):
        load_word_vectors(bad, ["good", "bad"])
    bad.write_text("good 1 x 3\n")
    with pytest.raises(ValueError, match="non-number"):
        load_word_vectors(bad, ["good"])
    bad.write_text("good 1 nan 3\n")
    with pytest.raises(ValueError, match="NaN"):
        load_word_vectors(bad, ["good"])
    bad.write_text("")
    with pytest.raises(ValueError, match="no vector"):
        load_word_vectors(bad, ["good"])
    with pytest.raises(ValueError, match="vocabulary"):
        load_word_vectors(bad, [])


def test_load_word_vectors_warns_when_no_word_is_found(tmp_path):
    from xplique_ext.commons.warnings import XpliqueExtWarning
    from xplique_ext.text import load_word_vectors

    f = glove_file(tmp_path / "v.txt", ["Good", "Bad"], dim=3, header=False)
    with pytest.warns(XpliqueExtWarning, match="no word of `vocabulary`.*every row is random"):
        m, found = load_word_vectors(f, ["", "[UNK]", "good", "bad"])
    assert found == 0 and m.shape == (4, 3)


def test_set_embedding_freezes_and_checks_shape():
    from xplique_ext.text import build_cnn_classifier, set_embedding

    model = build_cnn_classifier(20, sequence_length=6, embedding_dim=4, filters=2)
    m = np.arange(80, dtype=np.float32).reshape(20, 4)
    set_embedding(model, m, trainable=False)
    emb = model.get_layer("embedding")
    assert not emb.trainable
    np.testing.assert_array_equal(emb.get_weights()[0], m)
    with pytest.raises(ValueError, match="shape"):
        set_embedding(model, m[:, :3])


@pytest.mark.parametrize(
    "vocabulary, error, match",
    [
        # was: the characters of "good" taken for 4 tokens, silently
        (
            "good",
            TypeError,
            r"`vocabulary` must be a non-empty sequence of distinct tokens.*got 'good'",
        ),
        # was: the first 'good' got a random vector and the second the file's (a wrong row)
        (["", "good", "good"], ValueError, r"got 'good' more than once"),
        ([1, 2], TypeError, r"got an item 1 \(int\)"),
        ([], ValueError, r"got an empty sequence"),
    ],
)
def test_load_word_vectors_vocabulary(tmp_path, vocabulary, error, match):
    from xplique_ext.text import load_word_vectors

    file = tmp_path / "v.txt"
    file.write_text("good 1 0\nbad 0 1\n")
    with pytest.raises(error, match=match):
        load_word_vectors(file, vocabulary)
    matrix, found = load_word_vectors(file, pd.Index(["", "good", "film"]))
    assert found == 1 and matrix[1].tolist() == [1.0, 0.0]


def test_set_embedding_names_model_and_name():
    import keras

    from xplique_ext.text import set_embedding

    model = keras.Sequential(
        [
            keras.Input((4,), dtype="int32"),
            keras.layers.Embedding(5, 2, name="embedding"),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(1, name="dense"),
        ]
    )
    with pytest.raises(TypeError, match="`model` must be a Keras model"):
        set_embedding(None)  # was: AttributeError
    with pytest.raises(ValueError, match=r"`name` must be the name of a layer.*got 'emb'"):
        set_embedding(model, name="emb")
    with pytest.raises(ValueError, match=r"`name` must name an embedding layer, got 'dense'"):
        set_embedding(model, np.zeros((2, 1)), name="dense")  # was: Keras' set_weights error
    assert (
        set_embedding(model, np.ones((5, 2)), trainable=False)
        .get_layer("embedding")
        .get_weights()[0]
        .sum()
        == 10
    )


def test_a_missing_word_gets_the_same_vector_in_any_vocabulary(tmp_path):
    """The vector of a word missing from the file comes from the seed and the word: the
    same in another vocabulary, at another index (it was drawn from the word's index)."""
    from xplique_ext.text import load_word_vectors

    f = glove_file(tmp_path / "v.txt", ["good", "bad"], dim=4)
    vocab = ["", "[UNK]", "good", "film", "plot", "bad"]
    m, _ = load_word_vectors(f, vocab, seed=3)
    with pytest.warns(XpliqueExtWarning, match="no word of `vocabulary`"):
        other, _ = load_word_vectors(f, ["", "plot", "[UNK]", "film"], seed=3)
    for word in ("[UNK]", "film", "plot"):
        row = vocab.index(word)
        np.testing.assert_array_equal(other[["", "plot", "[UNK]", "film"].index(word)], m[row])
        assert np.abs(m[row]).max() <= 0.25 and m[row].any()
    assert not np.array_equal(m[3], m[4])  # two words, two vectors
    reseeded, _ = load_word_vectors(f, vocab, seed=4)
    assert not np.array_equal(reseeded[3], m[3])


def test_word_vectors_are_read_by_the_one_text_decoder(tmp_path):
    """UTF-8 first, Latin-1 for the bytes that are not UTF-8; UTF-16 refused, naming path."""
    from xplique_ext.text import load_word_vectors

    f = tmp_path / "v.txt"
    f.write_bytes("café 1 2\n".encode() + "naïve 3 4\n".encode("latin-1"))
    m, found = load_word_vectors(f, ["", "café", "naïve"])
    assert found == 2 and m[1].tolist() == [1, 2] and m[2].tolist() == [3, 4]
    wide = tmp_path / "wide.txt"
    wide.write_bytes("café 1 2\n".encode("utf-16"))
    with pytest.raises(ValueError, match="`path` .* is not a UTF-8 text file"):
        load_word_vectors(wide, ["", "café"])
