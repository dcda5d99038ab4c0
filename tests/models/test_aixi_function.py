"""The AIXI function as a Keras model."""

import numpy as np
import pytest

from xplique_ext.datasets import make_aixi_color, make_aixi_shape
from xplique_ext.models import AIXIFunctionModel


@pytest.mark.parametrize("maker,dataset", [(make_aixi_shape, "shape"), (make_aixi_color, "color")])
@pytest.mark.parametrize("function", ["ssin", "suum", "class"])
def test_function_model_is_a_keras_model_of_f(maker, dataset, function):
    import keras
    import tensorflow as tf

    data = maker(40, image_size=64, function=function, seed=9)
    model = AIXIFunctionModel(function, dataset=dataset)
    assert isinstance(model, keras.Model)
    np.testing.assert_allclose(model(data.images).numpy()[:, 0], data.targets, atol=1e-6)
    np.testing.assert_allclose(
        model.predict(data.images, batch_size=16, verbose=0)[:, 0], data.targets, atol=1e-6
    )
    traced = tf.function(lambda x: model(x))
    np.testing.assert_allclose(
        traced(tf.constant(data.images)).numpy()[:, 0], data.targets, atol=1e-6
    )


def test_function_model_with_an_xplique_explainer():
    from xplique.attributions import Occlusion

    data = make_aixi_shape(4, image_size=64, function="suum", seed=1)
    model = AIXIFunctionModel("suum")
    explainer = Occlusion(model, batch_size=64, patch_size=8, patch_stride=8)
    maps = np.asarray(explainer.explain(data.images, np.ones((4, 1), np.float32)))
    assert maps.shape[:3] == (4, 64, 64) and np.isfinite(maps).all()
