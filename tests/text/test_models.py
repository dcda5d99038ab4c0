"""The backbones and the bag-of-words model (``xplique_ext/text/models.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from xplique_ext.text import (
    BagOfWordsModel,
    build_cnn_classifier,
    build_lstm_classifier,
)


# ----------------------------------------------------------------------------- backbones
def test_cnn_backbone_structure(vectorizer):
    import keras

    cnn = build_cnn_classifier(vectorizer, embedding_dim=8, filters=4)
    convs = [layer for layer in cnn.layers if isinstance(layer, keras.layers.Conv1D)]
    assert sorted(c.kernel_size[0] for c in convs) == [3, 4, 5]
    assert any(isinstance(layer, keras.layers.Concatenate) for layer in cnn.layers)
    emb = [layer for layer in cnn.layers if isinstance(layer, keras.layers.Embedding)][0]
    assert emb.trainable and cnn.output_shape == (None, 1)
    assert cnn.layers[-1].activation.__name__ == "sigmoid"


def test_lstm_backbone_structure(vectorizer):
    import keras

    lstm = build_lstm_classifier(vectorizer, embedding_dim=8)
    cell = [layer for layer in lstm.layers if isinstance(layer, keras.layers.LSTM)][0]
    assert cell.units == 128 and not cell.return_sequences
    assert lstm.output_shape == (None, 1)


def test_raw_string_backbone(vectorizer):
    cnn = build_cnn_classifier(vectorizer, raw_strings=True, embedding_dim=8, filters=4)
    ids_model = build_cnn_classifier(vectorizer, embedding_dim=8, filters=4)
    ids_model.set_weights(cnn.get_weights())
    s = ["the plot was dull but superb", "good"]
    np.testing.assert_allclose(
        cnn(np.array(s).reshape(-1, 1)).numpy(), ids_model(vectorizer(s)).numpy(), atol=1e-6
    )
    with pytest.raises(ValueError, match="raw_strings=True"):
        build_cnn_classifier(100, sequence_length=10, raw_strings=True)
    with pytest.raises(ValueError, match="sequence_length"):
        build_lstm_classifier(100)
    # no kernel size at all: an IndexError deep in the builder before
    with pytest.raises(ValueError, match=r"`kernel_sizes` must be a non-empty array"):
        build_cnn_classifier(100, sequence_length=10, kernel_sizes=np.array([], dtype=int))


def test_builders_and_training_refuse_what_they_used_to_take_silently(vectorizer):
    """Refused with a named error: no or non-str sentences (a raw TensorFlow error before),
    and in train_classifier 2 labels for 3 rows, a label 2, or no row at all."""
    from xplique_ext.text import make_vectorizer, train_classifier

    with pytest.raises(ValueError, match="`sentences` must be a non-empty array"):
        make_vectorizer([])
    with pytest.raises(TypeError, match=r"`sentences\[0\]` must be a str"):
        make_vectorizer([1, 2])
    model = build_cnn_classifier(vectorizer, embedding_dim=4, filters=2)
    x = vectorizer(["a good film", "a bad film"]).numpy()
    with pytest.raises(ValueError, match=r"`y` must hold one label per row of `x` \(2\), got 3"):
        train_classifier(model, x, [1, 0, 1])
    with pytest.raises(ValueError, match=r"`y` must be numbers in \[0, 1\], got 2"):
        train_classifier(model, x, [1, 2])
    with pytest.raises(ValueError, match="`x` must be a non-empty array"):
        train_classifier(model, x[:0], [])
    with pytest.raises(ValueError, match="distinct single words .*got 'good'"):
        BagOfWordsModel({"Good": 1.0, "good": -1.0})  # the last one won


# ----------------------------------------------------------------------------- bag of words
def test_bag_of_words_numpy_keras_and_exact_contributions(lexicon):
    sents = [
        "the plot was dull, but superb acting",
        "awful yet moving",
        "a great film",
        "Superb though DULL and boring",
    ]
    for part in ("all", "A", "B"):
        bow = BagOfWordsModel(lexicon.weights(), bias=0.4, part=part)
        ids = bow.tokenizer(sents).numpy()
        np.testing.assert_allclose(bow.to_keras()(ids).numpy()[:, 0], bow(ids)[:, 0], atol=1e-6)
        for s, logit in zip(sents, bow.logits(ids)):
            assert bow.bias + bow.logit_contributions(s).sum() == pytest.approx(logit)
    b = BagOfWordsModel(lexicon.weights(), part="B")
    c = b.logit_contributions("the plot was dull, but superb acting")
    assert c[3] == 0 and c[5] == pytest.approx(lexicon.weight("superb"))
    a = BagOfWordsModel(lexicon.weights(), part="A")
    c = a.logit_contributions("the plot was dull, but superb acting")
    assert c[3] == pytest.approx(lexicon.weight("dull")) and c[5] == 0
    with pytest.raises(ValueError, match="`part` must be one of"):
        BagOfWordsModel({"good": 1.0}, part="C")


def test_bag_of_words_id_weights_known_answer():
    # vocabulary: '', '[UNK]', then the sorted weights' words and keywords; 'unk' (a word)
    # is not '[UNK]' (the out-of-vocabulary id keeps weight 0)
    bow = BagOfWordsModel({"good": 2.0, "Bad": -1, "unk": 0.5})
    assert bow.vocabulary == ["", "[UNK]", "bad", "but", "good", "though", "unk", "while", "yet"]
    assert bow.id_weights.dtype == np.float64
    assert bow.id_weights.tolist() == [0.0, 0.0, -1.0, 0.0, 2.0, 0.0, 0.5, 0.0, 0.0]


def test_the_probability_activation_is_checked_by_one_function():
    import keras

    from xplique_ext.text.models import check_probability_activation

    inp = keras.Input(shape=(4,))
    check_probability_activation(keras.Model(inp, keras.layers.Dense(1, "sigmoid")(inp)))
    check_probability_activation(keras.Model(inp, keras.layers.Dense(2, "softmax")(inp)))
    tanh = keras.Model(inp, keras.layers.Dense(1, "tanh")(inp))
    with pytest.raises(
        ValueError,
        match=r"^`student` must be a binary classifier with a sigmoid \(N, 1\) or two-class "
        r"softmax \(N, 2\) output, got output shape \(None, 1\) of a tanh activation",
    ):
        check_probability_activation(tanh, "student")

    class Subclassed(keras.Model):
        def call(self, x):
            return x

    check_probability_activation(Subclassed())  # no outputs to read: the batch check decides


def test_train_classifier_refuses_a_model_that_returns_no_probabilities(vectorizer):
    """Trained with a binary cross-entropy, a tanh model was fitted on clipped outputs:
    refused before training, by its activation or by its outputs on the first batch."""
    import keras

    from xplique_ext.text import train_classifier

    x = vectorizer(["a good film", "a bad film"]).numpy()
    inp = keras.Input(shape=x.shape[1:], dtype=x.dtype)
    vocab = vectorizer.vocabulary_size()
    pooled = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(vocab, 4)(inp))
    tanh = keras.Model(inp, keras.layers.Dense(1, "tanh")(pooled))
    with pytest.raises(ValueError, match="`model` must be a binary .* of a tanh activation"):
        train_classifier(tanh, x, [1, 0])
    shifted = keras.layers.Lambda(lambda t: t + 2.0)(keras.layers.Dense(1, "sigmoid")(pooled))
    with pytest.raises(ValueError, match=r"`model` must return probabilities in \[0, 1\]"):
        train_classifier(keras.Model(inp, shifted), x, [1, 0])
