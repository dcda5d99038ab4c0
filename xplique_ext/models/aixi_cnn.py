"""The small CNN of Miro-Nicolau et al. for AIXI images, in Keras 3."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..commons.validation import check_choice, check_float, check_int

__all__ = ["build_aixi_cnn"]


def build_aixi_cnn(
    input_shape: Sequence[int] = (128, 128, 1),
    function: str = "ssin",
    *,
    seed: Optional[int] = None,
    compile: bool = True,
    learning_rate: float = 1e-3,
) -> Any:
    """The paper's compact CNN (Fig. 4), as in the authors' released code.

    conv 25 3x3 + ReLU + max-pool 2; conv 50 3x3 + ReLU + max-pool 2; flatten;
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

    shape = tuple(int(v) for v in input_shape)
    if len(shape) != 3:
        raise ValueError(f"`input_shape` must be (H, W, C), got {tuple(input_shape)}")
    for name, v in zip(("H", "W"), shape[:2]):
        if v < 10:
            raise ValueError(
                f"`input_shape` {name} must be >= 10 for two conv + pool blocks, got {v}"
            )
    check_choice(function, "function", ("ssin", "suum", "class"))
    seed = check_int(seed, "seed", minimum=0, allow_none=True)
    learning_rate = check_float(learning_rate, "learning_rate", low=0.0, low_inclusive=False)

    def init(k):
        return "glorot_uniform" if seed is None else keras.initializers.GlorotUniform(seed + k)

    def drop_seed(k):
        return None if seed is None else seed + k

    model = keras.Sequential(
        [
            keras.Input(shape),
            keras.layers.Conv2D(25, 3, activation="relu", kernel_initializer=init(0)),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(50, 3, activation="relu", kernel_initializer=init(1)),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(25, activation="relu", kernel_initializer=init(2)),
            keras.layers.Dropout(0.5, seed=drop_seed(10)),
            keras.layers.Dense(15, activation="relu", kernel_initializer=init(3)),
            keras.layers.Dropout(0.5, seed=drop_seed(11)),
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
