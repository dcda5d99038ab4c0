"""Keep TensorFlow's console noise away from users: in the command line and in notebooks.

TensorFlow, XLA and absl write native (C++) log lines to file descriptor 2 whatever
``TF_CPP_MIN_LOG_LEVEL`` says ("All log messages before absl::InitializeLog() is called are
written to STDERR", "Compiled cluster using XLA!", "failed call to cuInit"); Jupyter kernels
copy that descriptor into the cell outputs. TensorFlow's Python logger prints tf.function
retracing notes, and ``tqdm.auto`` warns "IProgress not found" in a kernel without
ipywidgets. Python's own ``sys.stderr`` (tracebacks, warnings, progress bars) is left alone.

Nothing here is imported by the metrics: the command line and the tutorials call it.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import warnings
from typing import Iterator, Optional

__all__ = ["quiet_tensorflow", "quiet_console"]

_LOGGERS = ("tensorflow", "absl")


class _ErrorsOnly(logging.Filter):
    """Lets errors through, nothing below: it holds where a level does not, since
    TensorFlow sets its logger back to INFO on first use in an interactive session."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR


_ERRORS_ONLY = _ErrorsOnly()


def _quiet_loggers() -> dict:
    """``TF_CPP_MIN_LOG_LEVEL=3`` where not set; TensorFlow's and absl's loggers show
    errors only. Returns their former levels."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    levels = {name: logging.getLogger(name).level for name in _LOGGERS}
    for name in _LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    return levels


def _silence_fd2() -> Optional[int]:
    """Point file descriptor 2 at the null device; returns a duplicate of the old one
    (None where there is no descriptor 2). When ``sys.stderr`` writes to descriptor 2
    itself (a terminal), it is replaced by a stream on the duplicate, so Python's
    messages still reach the real standard error."""
    try:
        sys.stderr.flush()
        real_stderr = sys.stderr.fileno() == 2
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        real_stderr = False  # a Jupyter kernel, a test harness or an IDE
    try:
        saved = os.dup(2)
    except OSError:
        return None
    with open(os.devnull, "wb") as devnull:
        os.dup2(devnull.fileno(), 2)
    if real_stderr:
        encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
        sys.stderr = io.TextIOWrapper(
            os.fdopen(os.dup(saved), "wb", buffering=0),
            encoding=encoding,
            errors="backslashreplace",
            line_buffering=True,
            write_through=True,
        )
    return saved


def quiet_tensorflow(native: bool = True) -> None:
    """Quieten TensorFlow for the rest of the session (a notebook, a script).

    - ``TF_CPP_MIN_LOG_LEVEL=3`` (where not set, and only effective before TensorFlow is
      imported);
    - TensorFlow's and absl's Python loggers show errors only (no retracing notes), also
      after TensorFlow sets its logger back to INFO on first use in a notebook;
    - tqdm's "IProgress not found" warning is ignored (text progress bars are used);
    - ``native=True``: file descriptor 2 goes to the null device, so that native log
      lines vanish; Python's ``sys.stderr`` keeps working (see the module's docstring).
      A native crash message is then hidden too: pass ``native=False`` while debugging.

    Examples
    --------
    >>> from xplique_ext.commons.console import quiet_tensorflow
    >>> quiet_tensorflow(native=False)
    >>> import logging; logging.getLogger("tensorflow").level == logging.ERROR
    True
    """
    _quiet_loggers()
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _ERRORS_ONLY not in logger.filters:
            logger.addFilter(_ERRORS_ONLY)
    warnings.filterwarnings("ignore", message=r"IProgress not found")
    if native and not getattr(quiet_tensorflow, "_fd2_silenced", False):
        quiet_tensorflow._fd2_silenced = _silence_fd2() is not None  # type: ignore[attr-defined]


@contextlib.contextmanager
def quiet_console(verbose: bool = False) -> Iterator[None]:
    """:func:`quiet_tensorflow` for the duration of a ``with`` block (the command line);
    descriptor 2, ``sys.stderr`` and the loggers' levels are restored on exit.
    ``verbose=True`` changes nothing."""
    if verbose:
        yield
        return
    levels = _quiet_loggers()
    stderr = sys.stderr
    saved = _silence_fd2()  # may replace sys.stderr
    try:
        yield
    finally:
        if sys.stderr is not stderr:
            sys.stderr.close()  # flushed first
            sys.stderr = stderr
        if saved is not None:
            os.dup2(saved, 2)
            os.close(saved)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
