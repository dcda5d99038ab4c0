"""Progress bars that cost nothing when they are off.

Library calls show no bar by default (``progress=False``); the command line turns them on.
:func:`progress_bar` imports tqdm only when the bar is on, and otherwise returns a silent
stand-in with the same small interface (iteration, ``update``, ``close``, ``with``).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

__all__ = ["progress_bar"]


class _NoBar:
    """What :func:`progress_bar` returns when the bar is off: iterates, counts nothing."""

    def __init__(self, iterable: Optional[Iterable]) -> None:
        self._iterable = iterable

    def __iter__(self) -> Iterator:
        if self._iterable is None:
            raise TypeError("progress_bar: nothing to iterate (no `iterable` was given)")
        return iter(self._iterable)

    def update(self, n: int = 1) -> None:
        """Do nothing (tqdm's ``update``)."""

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        """Do nothing (tqdm's ``set_postfix``)."""

    def close(self) -> None:
        """Do nothing (tqdm's ``close``)."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        """Do nothing (exceptions propagate)."""


def progress_bar(
    iterable: Optional[Iterable] = None,
    *,
    enabled: bool = False,
    total: Optional[int] = None,
    desc: Optional[str] = None,
    unit: str = "it",
    leave: bool = False,
) -> Any:
    """A tqdm bar over ``iterable`` (or a manual one, with ``total``) when ``enabled``;
    else a silent stand-in, without importing tqdm.

    Parameters
    ----------
    iterable
        What to iterate over; None for a bar advanced by ``update(n)``.
    enabled
        The caller's ``progress`` option.
    total, desc, unit, leave
        As in ``tqdm.auto.tqdm``.

    Returns
    -------
    bar
        ``tqdm.auto.tqdm`` when enabled, else an object with the same ``__iter__``,
        ``update``, ``set_postfix``, ``close`` and context-manager methods that does nothing.

    Examples
    --------
    >>> [x for x in progress_bar(range(3))]   # off: plain iteration, tqdm not imported
    [0, 1, 2]
    >>> with progress_bar(total=10, desc="demo") as bar:
    ...     bar.update(10)
    """
    if not isinstance(enabled, (bool, int)):  # numpy booleans are not ints: say so
        raise TypeError(f"`progress` must be a bool, got {type(enabled).__name__}")
    if not enabled:
        return _NoBar(iterable)
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave)
