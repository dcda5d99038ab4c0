"""Streaming of inputs and targets: NumPy arrays, TF tensors or ``tf.data.Dataset``,
batch by batch, never materialising a dataset whole."""

from __future__ import annotations

from typing import Any, Iterator, Optional, Tuple

import numpy as np

__all__ = ["is_dataset", "dataset_is_batched", "iterate_dataset", "split_element", "chunks",
           "check_finite_dataset"]


def is_dataset(x: Any) -> bool:
    """True for a ``tf.data.Dataset`` (without importing TensorFlow for other inputs)."""
    return type(x).__module__.startswith("tensorflow") and hasattr(x, "element_spec")


def _first_spec(spec: Any) -> Any:
    return spec[0] if isinstance(spec, (tuple, list)) else spec


def dataset_is_batched(dataset: Any, model_input_rank: Optional[int] = None) -> bool:
    """Guess whether the elements of ``dataset`` are batches.

    A leading dimension of unknown size means batched. Otherwise the element rank is
    compared with the model's input rank (batch axis included) when it is known.
    """
    spec = _first_spec(dataset.element_spec)
    shape = spec.shape
    if shape.rank is None:
        return True
    if shape.rank > 0 and shape[0] is None:
        return True
    if model_input_rank is not None:
        return shape.rank == model_input_rank
    return False


def iterate_dataset(
    dataset: Any, batch_size: Optional[int], batched: bool
) -> Iterator[Tuple[np.ndarray, Optional[np.ndarray]]]:
    """Yield ``(x, y)`` NumPy batches of at most ``batch_size`` elements (all at once when
    None) from a dataset of ``x`` or ``(x, y)``, re-batching when needed."""
    ds = dataset.unbatch() if batched else dataset
    ds = ds.batch(batch_size if batch_size is not None else 2**31 - 1)
    for element in ds:
        x, y = split_element(element, "inputs")
        yield x.numpy(), None if y is None else y.numpy()


def split_element(element: Any, name: str) -> Tuple[Any, Optional[Any]]:
    """``(x, y)`` of a dataset element ``x``, ``(x,)`` or ``(x, y)`` (``y`` None when absent);
    another tuple length raises a ValueError naming the parameter ``name``."""
    if not isinstance(element, (tuple, list)):
        return element, None
    if len(element) not in (1, 2):
        raise ValueError(
            f"`{name}` dataset elements must be `x` or `(x, y)`, got tuples of {len(element)}"
        )
    return element[0], element[1] if len(element) == 2 else None


def chunks(n: int, size: Optional[int]) -> Iterator[slice]:
    """Consecutive slices covering ``range(n)``, each at most ``size`` long."""
    size = max(1, n if size is None else size)
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))


def check_finite_dataset(dataset: Any, name: str = "inputs") -> None:
    """Raise a ValueError for a ``tf.data.Dataset`` known to be infinite (``.repeat()``).

    A dataset of unknown size (``tf.data.UNKNOWN_CARDINALITY``, e.g. after ``filter``) is
    accepted: it is read once, batch by batch.
    """
    import tensorflow as tf

    if int(dataset.cardinality()) == int(tf.data.INFINITE_CARDINALITY):
        raise ValueError(
            f"`{name}` must be a finite tf.data.Dataset, got an infinite one "
            "(cardinality tf.data.INFINITE_CARDINALITY, e.g. after `.repeat()`); "
            "use `.take(n)` or drop the `.repeat()`"
        )
