"""Warning classes of xplique_ext, so that users can filter them precisely, and
:func:`warn`, which issues them at the user's line."""

import contextlib
import functools
import os
import sys
import warnings

__all__ = ["XpliqueExtWarning", "UndefinedScoreWarning", "DegenerateSettingWarning", "warn"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_WRAPPER_FILES = frozenset({functools.__file__, contextlib.__file__})


class XpliqueExtWarning(UserWarning):
    """Base class of every warning emitted by xplique_ext."""


class UndefinedScoreWarning(XpliqueExtWarning):
    """A per-sample score is undefined (for instance a correlation with a constant
    vector) and was set to NaN; aggregates skip it and say how many were skipped. The
    message gives the reason."""


class DegenerateSettingWarning(XpliqueExtWarning):
    """The metric's settings make the score degenerate or mostly noise (for instance
    MuFidelity with ``nb_samples=2``, a single grid cell, or a ``subset_percent`` so small
    that most random subsets are empty); the message states the expected share of
    affected subsets."""


def _user_stacklevel() -> int:
    """The ``stacklevel``, counted from the caller of :func:`warn`, of the first frame
    outside xplique_ext (the user's line), however deep the internal calls and whatever
    decorators (``validate_params``) wrap them. Frames of
    functools, contextlib, TensorFlow and Keras are skipped too; where no frame is
    outside (a worker thread, the CLI), the outermost frame is used."""
    # directories whose frames are not the user's: this package, and the libraries
    # (TensorFlow, Keras) through which a user's call reaches it (``model.fit`` calling a
    # callback, a traced function); taken from ``sys.modules``, nothing is imported
    directories = [_PACKAGE_DIR]
    for name in ("tensorflow", "keras", "tf_keras"):
        module = sys.modules.get(name)
        if getattr(module, "__file__", None):
            directories.append(os.path.dirname(os.path.abspath(module.__file__)) + os.sep)
    prefixes = tuple(directories)
    frame = sys._getframe(2)  # the caller of warn()
    level = 1
    while frame.f_back is not None and _is_internal(frame.f_code.co_filename, prefixes):
        frame = frame.f_back
        level += 1
    return level


def _is_internal(filename: str, prefixes: tuple) -> bool:
    """Whether a frame's file is not the user's: a wrapper (functools, contextlib), a file
    under one of ``prefixes``, or a function that TensorFlow's autograph generated."""
    if filename in _WRAPPER_FILES:
        return True
    if os.path.abspath(filename).startswith(prefixes):
        return True
    return os.path.basename(filename).startswith("__autograph_generated_file")


def warn(message: str | Warning, category: type[Warning] = XpliqueExtWarning) -> None:
    """``warnings.warn(message, category)`` located at the user's line (the first frame
    outside xplique_ext, see :func:`_user_stacklevel`) instead of a fixed ``stacklevel``,
    so that ``pytest``/the console show where the user called, and filters keyed on the
    location (``"default"``, ``"module"``) apply to it."""
    warnings.warn(message, category, stacklevel=_user_stacklevel() + 1)
