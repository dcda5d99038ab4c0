"""The small CNN of Miro-Nicolau et al. for AIXI images, in Keras 3."""

from __future__ import annotations

import numbers
from typing import Any, Optional, Sequence

from ..commons.params import ArrayLike, Boolean, Interval, Options, validate_params

__all__ = ["build_aixi_cnn", "aixi_cnn_logits"]


@validate_params(
    {
        "input_shape": [
            ArrayLike(
                "integer", ndim=1, batch_hint=False, within=Interval(numbers.Integral, 1, None)
            )
        ],
        "function": [Options(["ssin", "suum", "class"])],
        "seed": [Interval(numbers.Integral, 0, None), None],
        "compile": [Boolean()],
        "learning_rate": [Interval(numbers.Real, 0.0, None, closed="neither")],
    }
)
def build_aixi_cnn(
    input_shape: Sequence[int] = (128, 128, 1),
    function: str = "ssin",
    *,
    seed: Optional[int] = None,
    compile: bool = True,
    learning_rate: float = 1e-3,
) -> Any:
    """The paper's compact CNN (Fig. 4), as in the authors' network.

    conv 25 3x3 (``padding='same'``) + ReLU + max-pool 2; conv 50 3x3 (same) + ReLU +
    max-pool 2; flatten;
    dense 25 (ReLU), dropout 0.5; dense 15 (ReLU), dropout 0.5; dense 1 output, with a
    sigmoid for 'class' (linear for the regressions 'ssin' and 'suum').

    Parameters
    ----------
    input_shape
        (H, W, C) of the images, e.g. (128, 128, 1); H, W >= 10.
    function
        'ssin', 'suum' (regression: linear output, mean squared error) or 'class'
        (classification: sigmoid output, binary cross-entropy).
    seed
        Seed of the weight initialisers and dropout layers (None: Keras' defaults).
    compile
        Compile with Adam(``learning_rate``) and the loss above (metrics: 'mae' or
        'accuracy').
    learning_rate
        Adam's learning rate, > 0.

    Returns
    -------
    model : keras.Sequential
        Output shape (N, 1).

    Notes
    -----
    The dense layers' activation is not stated in the paper; ReLU is used, as in the
    convolutional part.

    References
    ----------
    Miro-Nicolau et al., Section 3.3 and Fig. 4.

    Examples
    --------
    >>> model = build_aixi_cnn((32, 32, 1), "class", seed=0)
    >>> model.output_shape
    (None, 1)
    """
    import keras

    if input_shape.shape != (3,):
        raise ValueError(f"`input_shape` must be (H, W, C), got {tuple(input_shape.tolist())}")
    input_shape = tuple(input_shape.tolist())
    if min(input_shape[:2]) < 10:
        raise ValueError(
            f"`input_shape` H and W must be >= 10 for two conv + pool blocks, got {input_shape}"
        )

    def init(k):  # the initialiser of the k-th weighted layer
        if seed is None:
            return "glorot_uniform"
        return keras.initializers.GlorotUniform(seed + k)

    def dropout_seed(k):  # the seed of the dropout layer after the k-th dense layer
        if seed is None:
            return None
        return seed + k

    model = keras.Sequential(
        [
            keras.Input(input_shape),
            keras.layers.Conv2D(
                25, 3, activation="relu", padding="same", kernel_initializer=init(0)
            ),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(
                50, 3, activation="relu", padding="same", kernel_initializer=init(1)
            ),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(25, activation="relu", kernel_initializer=init(2)),
            keras.layers.Dropout(0.5, seed=dropout_seed(10)),
            keras.layers.Dense(15, activation="relu", kernel_initializer=init(3)),
            keras.layers.Dropout(0.5, seed=dropout_seed(11)),
            keras.layers.Dense(
                1, activation="sigmoid" if function == "class" else None, kernel_initializer=init(4)
            ),
        ],
        name=f"aixi_cnn_{function}",
    )
    if compile:
        classification = function == "class"
        model.compile(
            optimizer=keras.optimizers.Adam(learning_rate),
            loss="binary_crossentropy" if classification else "mse",
            metrics=["accuracy" if classification else "mae"],
        )
    return model


def aixi_cnn_logits(model: Any) -> Any:
    """The same network without the final sigmoid: a functional model sharing every layer
    (and weight) of ``model`` whose output is the last dense layer's pre-activation.

    A well-trained 'class' CNN saturates its sigmoid (outputs of exactly 0 or 1 in
    float32), so gradient explainers return all-zero maps; explaining the logit avoids it
    (the paper notes the same effect of the sigmoid). Layer names are kept, so GradCAM's
    ``conv_layer`` still finds the convolutions. To keep it, save ``model`` (a plain
    Sequential) and call this function again after loading: the logits model's own layer
    is a Keras ``Lambda``, which ``keras.saving`` cannot load back.

    Parameters
    ----------
    model
        A model built by :func:`build_aixi_cnn` (any Keras model whose last layer is a
        Dense layer).

    Returns
    -------
    logits : keras.Model
        Output shape (N, units of the last layer).

    Examples
    --------
    >>> import numpy as np
    >>> cnn = build_aixi_cnn((32, 32, 1), "class", seed=0)
    >>> x = np.zeros((2, 32, 32, 1), np.float32)
    >>> z = aixi_cnn_logits(cnn)(x).numpy()
    >>> bool(np.allclose(1 / (1 + np.exp(-z)), cnn(x).numpy(), atol=1e-6))
    True
    """
    import keras

    last = model.layers[-1]
    if not isinstance(last, keras.layers.Dense):
        raise TypeError(f"`model` must end with a Dense layer, got {type(last).__name__}")

    def logit(x):  # the last layer without its activation, on its own weights
        out = keras.ops.matmul(x, last.kernel)
        return out + last.bias if last.use_bias else out

    x = inputs = keras.Input(model.input_shape[1:])
    for layer in model.layers[:-1]:
        x = layer(x)
    head = keras.layers.Lambda(logit, name=f"{last.name}_logits")
    head.dense = last  # tracked: the model's weights (and saved weights) include its own
    return keras.Model(inputs, head(x), name=f"{model.name}_logits")
