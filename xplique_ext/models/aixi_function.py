"""The AIXI function itself as a Keras model (experiment 2 of Miro-Nicolau et al.)."""

from __future__ import annotations

import numbers
from typing import Any, Callable, Optional, Union

import keras
import numpy as np

from ..commons.params import Interval, check_param
from ..datasets.aixi_functions import apply_function, resolve_function
from ..datasets.aixi_layouts import count_patterns, max_count

__all__ = ["AIXIFunctionModel"]


class AIXIFunctionModel(keras.Model):
    """F(I) computed from the pixels: the objects of each pattern are counted
    (:func:`~xplique_ext.datasets.count_patterns`) and F is applied to the normalised
    counts. A perfect "model" of the AIXI labels (experiment 2 of the paper), as a
    functional Keras model: ``model(images)``, ``model.predict``, the metrics and
    Xplique's black-box explainers (Lime, KernelShap, Occlusion, ...) accept it.

    Parameters
    ----------
    function
        'ssin', 'suum', 'class' or a callable F(g) on normalised counts (N, 3).
    dataset
        'shape' (patterns told apart by shape) or 'color' (by intensity).
    image_size
        Side of the input images; None accepts any size.
    layout
        'authors' (default) or 'free': the layout the images were drawn with (how shapes
        are told apart, and the divisor of the counts: ``g = counts / max_count``).

    Notes
    -----
    Not differentiable (the counting runs in NumPy through ``tf.numpy_function``):
    gradient-based explainers cannot be used on it. Output shape (N, 1).

    Examples
    --------
    >>> from xplique_ext.datasets import make_aixi_shape
    >>> data = make_aixi_shape(4, image_size=64, function="ssin", seed=0)
    >>> model = AIXIFunctionModel("ssin", dataset="shape")
    >>> bool(np.allclose(model(data.images).numpy()[:, 0], data.targets))
    True
    """

    def __init__(
        self,
        function: Union[str, Callable] = "ssin",
        dataset: str = "shape",
        image_size: Optional[int] = None,
        *,
        layout: str = "authors",
    ):
        # checked in the body: Keras reads this signature, a decorator's would hide it
        name, fn = resolve_function(function)
        divisor = max_count(dataset, layout)  # checks both
        image_size = check_param(
            image_size, "image_size", [Interval(numbers.Integral, 1, None), None]
        )

        def numpy_call(images: np.ndarray) -> np.ndarray:  # F of the counted patterns, (N, 1)
            counts = count_patterns(np.asarray(images), dataset, layout=layout)
            return apply_function(fn, counts / divisor).astype(np.float32)[:, None]

        def call(images: Any) -> Any:  # the counting runs in NumPy, through tf.numpy_function
            import tensorflow as tf

            images = tf.cast(images, tf.float32)
            out = tf.numpy_function(numpy_call, [images], tf.float32, stateful=False)
            out.set_shape([images.shape[0], 1])
            return out

        inputs = keras.Input((image_size, image_size, 1))
        outputs = keras.layers.Lambda(call, output_shape=(1,), name=f"aixi_{name}")(inputs)
        super().__init__(inputs=inputs, outputs=outputs, name=f"aixi_{name}_{dataset}")
        self.function_name = name
        self.dataset = dataset
        self.layout = layout
        self.numpy_call = numpy_call
