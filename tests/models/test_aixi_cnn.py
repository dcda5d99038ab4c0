"""The paper's CNN and its logits model."""

import numpy as np
import pytest

from xplique_ext.datasets import make_aixi_shape
from xplique_ext.models import build_aixi_cnn


@pytest.mark.parametrize("function", ["ssin", "class"])
def test_cnn_architecture(function):
    import keras

    model = build_aixi_cnn((64, 64, 1), function, seed=0)
    kinds = [type(layer).__name__ for layer in model.layers]
    assert kinds == [
        "Conv2D",
        "MaxPooling2D",
        "Conv2D",
        "MaxPooling2D",
        "Flatten",
        "Dense",
        "Dropout",
        "Dense",
        "Dropout",
        "Dense",
    ]
    convs = [layer for layer in model.layers if isinstance(layer, keras.layers.Conv2D)]
    assert [c.filters for c in convs] == [25, 50]
    assert all(c.kernel_size == (3, 3) and c.activation.__name__ == "relu" for c in convs)
    dense = [layer for layer in model.layers if isinstance(layer, keras.layers.Dense)]
    assert [d.units for d in dense] == [25, 15, 1]
    assert [d.rate for d in model.layers if isinstance(d, keras.layers.Dropout)] == [0.5, 0.5]
    expected = "sigmoid" if function == "class" else "linear"
    assert dense[-1].activation.__name__ == expected
    assert model.output_shape == (None, 1)
    assert model.loss == ("binary_crossentropy" if function == "class" else "mse")
    # seeded initialisation: same weights twice
    again = build_aixi_cnn((64, 64, 1), function, seed=0)
    for a, b in zip(model.get_weights(), again.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_cnn_learns_a_little_on_tiny_data():
    data = make_aixi_shape(256, image_size=64, function="suum", seed=0)
    model = build_aixi_cnn((64, 64, 1), "suum", seed=1, learning_rate=3e-3)
    before = model.evaluate(data.images, data.targets, verbose=0)[0]
    model.fit(data.images, data.targets, epochs=3, batch_size=32, verbose=0, shuffle=False)
    after = model.evaluate(data.images, data.targets, verbose=0)[0]
    assert after < before


def test_cnn_errors():
    with pytest.raises(ValueError, match="`function` must be one of"):
        build_aixi_cnn((32, 32, 1), "regression")
    with pytest.raises(ValueError, match=r"`input_shape` must be \(H, W, C\)"):
        build_aixi_cnn((32, 32))
    with pytest.raises(ValueError, match="`input_shape` H and W must be >= 10"):
        build_aixi_cnn((8, 32, 1))


def test_logits_model_shares_the_weights_and_undoes_the_sigmoid():
    from xplique.attributions import GradCAM, Saliency

    from xplique_ext.models import aixi_cnn_logits

    data = make_aixi_shape(8, image_size=64, function="class", seed=0)
    cnn = build_aixi_cnn((64, 64, 1), "class", seed=0)
    logits = aixi_cnn_logits(cnn)
    z = logits(data.images).numpy()
    np.testing.assert_allclose(1 / (1 + np.exp(-z)), cnn(data.images).numpy(), atol=1e-6)
    # shared weights: changing the CNN changes the logits model
    last = cnn.layers[-1]
    last.bias.assign(last.bias + 1.0)
    np.testing.assert_allclose(logits(data.images).numpy(), z + 1.0, atol=1e-5)
    y = np.ones((8, 1), np.float32)
    assert np.abs(np.asarray(Saliency(logits).explain(data.images, y))).sum() > 0
    conv = [layer.name for layer in cnn.layers if "conv" in layer.name][-1]
    assert np.isfinite(np.asarray(GradCAM(logits, conv_layer=conv).explain(data.images, y))).all()
    with pytest.raises(TypeError, match="must end with a Dense layer"):
        import keras

        aixi_cnn_logits(keras.Sequential([keras.Input((4,)), keras.layers.Dropout(0.1)]))


def test_logits_model_tracks_every_weight_of_the_cnn(tmp_path):
    # the last Dense layer's kernel and bias belong to the logits model too: its weights,
    # trainable weights and saved weights (a round trip reproduces the outputs)
    from xplique_ext.models import aixi_cnn_logits

    x = np.random.default_rng(0).random((3, 16, 16, 1), np.float32)
    cnn = build_aixi_cnn((16, 16, 1), "class", seed=0)
    logits = aixi_cnn_logits(cnn)
    assert [v.path for v in logits.trainable_weights] == [v.path for v in cnn.trainable_weights]
    assert len(cnn.weights) == 10 and logits.count_params() == cnn.count_params()
    logits.save_weights(tmp_path / "logits.weights.h5")
    other = aixi_cnn_logits(build_aixi_cnn((16, 16, 1), "class", seed=1))
    other.load_weights(tmp_path / "logits.weights.h5")
    np.testing.assert_array_equal(other(x).numpy(), logits(x).numpy())
