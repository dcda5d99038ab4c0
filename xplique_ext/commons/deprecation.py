"""Renamed parameters: the old name keeps working for one release, with a warning.

xplique_ext speaks one vocabulary (Xplique's where Xplique has a word): ``nb_samples`` for
a number of random samples, ``seed`` for randomness, ``progress`` (False by default) for
progress bars. Where a public signature used another word, :func:`renamed_kwarg` keeps the
old keyword working with a :class:`DeprecationWarning` naming the new one; where a
parameter had no effect at all, :func:`deprecated_kwarg` keeps accepting it, with a
:class:`DeprecationWarning` saying why, and drops it.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, TypeVar

__all__ = ["deprecated_kwarg", "renamed_kwarg"]

F = TypeVar("F", bound=Callable[..., Any])


def renamed_kwarg(removal: str = "the next release", **renames: str) -> Callable[[F], F]:
    """Decorator accepting old keyword names for renamed parameters, with a warning.

    Parameters
    ----------
    removal
        When the old names stop working, quoted in the warning.
    **renames
        ``old_name="new_name"`` pairs.

    Returns
    -------
    decorator
        It wraps a function (or a method such as ``__init__``) so that a call with
        ``old_name=value`` runs as ``new_name=value`` after a :class:`DeprecationWarning`;
        giving both names is a :class:`TypeError`. The wrapped signature is unchanged
        (``inspect.signature`` shows the new names only).

    Examples
    --------
    >>> import warnings
    >>> @renamed_kwarg(num_samples="nb_samples")
    ... def draw(nb_samples=10):
    ...     return nb_samples
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     draw(num_samples=3)
    3
    >>> print(caught[0].message)
    draw: `num_samples` is deprecated and will be removed in the next release; use `nb_samples`.
    """
    for old, new in renames.items():
        if not isinstance(new, str) or not new.isidentifier() or new == old:
            raise ValueError(f"renamed_kwarg: `{old}` must map to a new parameter name, got {new!r}")

    def decorate(function: F) -> F:
        owner = function.__qualname__.replace(".__init__", "")

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{owner}: give `{new}` only (`{old}` is its deprecated name), "
                        "not both"
                    )
                warnings.warn(
                    f"{owner}: `{old}` is deprecated and will be removed in {removal}; "
                    f"use `{new}`.",
                    DeprecationWarning,
                    stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def deprecated_kwarg(
    *names: str, reason: str, removal: str = "the next release"
) -> Callable[[F], F]:
    """Decorator still accepting removed keyword parameters, with a warning, and ignoring them.

    Parameters
    ----------
    *names
        The removed parameters.
    reason
        Why they are gone (they had no effect...), quoted in the warning.
    removal
        When they stop being accepted, quoted in the warning.

    Returns
    -------
    decorator
        It wraps a function (or ``__init__``) so that a call giving one of ``names``
        emits a :class:`DeprecationWarning` and runs without it. The wrapped signature is
        unchanged (``inspect.signature`` does not show the removed names).

    Examples
    --------
    >>> import warnings
    >>> @deprecated_kwarg("seed", reason="nothing is drawn at random")
    ... def score(x):
    ...     return x
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     score(2, seed=0)
    2
    >>> print(caught[0].message)
    score: `seed` has no effect (nothing is drawn at random) and will be removed in the next release; leave it out.
    """  # noqa: E501
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"deprecated_kwarg: parameter names must be identifiers, got {name!r}")

    def decorate(function: F) -> F:
        owner = function.__qualname__.replace(".__init__", "")

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for name in names:
                if name in kwargs:
                    kwargs.pop(name)
                    warnings.warn(
                        f"{owner}: `{name}` has no effect ({reason}) and will be removed in "
                        f"{removal}; leave it out.",
                        DeprecationWarning,
                        stacklevel=2,
                    )
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
