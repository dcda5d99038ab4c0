"""The AIXI function itself as a Keras model (experiment 2 of Miro-Nicolau et al.)."""

from __future__ import annotations

from typing import Any, Callable, Union

import numpy as np

from ..commons.validation import check_choice
from ..datasets.aixi import MAX_PER_PATTERN, _resolve_function, count_patterns

__all__ = ["AIXIFunctionModel"]


def _keras_model_class():
    import keras

    return keras.Model


class AIXIFunctionModel(_keras_model_class()):
    """F(I) computed from the pixels: the objects of each pattern are counted
    (:func:`~xplique_ext.datasets.count_patterns`) and F is applied to the normalised
    counts. A perfect "model" of the AIXI labels, usable wherever a Keras model is:
    ``model(images)``, ``model.predict``, the metrics and Xplique's black-box explainers.

    Parameters
    ----------
    function
        'ssin', 'suum', 'class' or a callable F(g) on normalised counts (N, 3).
    dataset
        'shape' (patterns told apart by shape) or 'color' (by intensity).

    Notes
    -----
    Not differentiable (the counting runs in NumPy through ``tf.numpy_function``):
    gradient-based explainers cannot be used on it.

    Examples
    --------
    >>> from xplique_ext.datasets import make_aixi_shape
    >>> data = make_aixi_shape(4, image_size=32, function="ssin", seed=0)
    >>> model = AIXIFunctionModel("ssin", dataset="shape")
    >>> bool(np.allclose(model(data.images).numpy()[:, 0], data.targets))
    True
    """

    def __init__(self, function: Union[str, Callable] = "ssin", dataset: str = "shape",
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.function_name, self._fn = _resolve_function(function)
        self.dataset = check_choice(dataset, "dataset", ("shape", "color"))

    def numpy_call(self, images: np.ndarray) -> np.ndarray:
        """F for a batch of images (N, H, W[, 1]) as a float32 array (N, 1)."""
        counts = count_patterns(np.asarray(images), self.dataset)
        values = np.asarray(self._fn(counts / MAX_PER_PATTERN), dtype=np.float32)
        return values.reshape(-1, 1)

    def call(self, inputs: Any) -> Any:
        import tensorflow as tf

        inputs = tf.convert_to_tensor(inputs, tf.float32)
        out = tf.numpy_function(self.numpy_call, [inputs], tf.float32, stateful=False)
        out.set_shape([inputs.shape[0], 1])
        return out

    def compute_output_shape(self, input_shape: Any) -> Any:
        return (input_shape[0], 1)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(function=self.function_name, dataset=self.dataset)
        return config
