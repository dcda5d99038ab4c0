"""Output files: written whole or not at all, and never over one of the command's inputs.

Every file the package writes (the rule, ``.names`` and ``.data`` writers, the command
line's outputs, :meth:`AIXIData.save <xplique_ext.datasets.AIXIData.save>`) goes through
:func:`atomic_write`: the text is written to a temporary file beside the target, then
renamed over it (``os.replace``). An interrupted run (an exception, Ctrl-C) leaves the old
file byte-identical and removes the temporary file.

What this means for the target:

- a symbolic link is followed: the file it points to is replaced, the link is kept;
- an existing file keeps its permission bits; a file that is not writable is refused
  (``PermissionError``), as ``open(path, "w")`` would refuse it;
- a hard link is *not* written through: the name written gets the new content, the other
  names of the old file keep the old one (the price of never truncating a file in place);
- a target that is not a regular file (``/dev/null``, a named pipe) is written in place:
  it cannot be replaced, and holds no content to lose;
- the folder must be writable (the temporary file is created there), even where the file
  itself is: a read-only folder is refused rather than the file truncated in place.

:func:`check_writable` tells, before any work, whether :func:`atomic_write` could write a
path, and :func:`same_file` whether two paths name one file (links included), for a
command to refuse writing over its own inputs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from typing import IO, Iterator, Optional, Union

__all__ = ["atomic_write", "check_writable", "same_file"]

PathLike = Union[str, os.PathLike]


def same_file(first: Optional[PathLike], second: Optional[PathLike]) -> bool:
    """Whether two paths name the same existing file: one inode, reached through any
    symbolic or hard link (``os.path.samefile``). False when either is None or missing."""
    if first is None or second is None:
        return False
    try:
        return os.path.samefile(first, second)
    except OSError:  # missing, or not readable
        return False


def _error(code: int, path: PathLike) -> OSError:
    """The OSError ``open`` would raise for ``path`` (the subclass of the errno, the
    path as the caller gave it as ``filename``)."""
    return OSError(code, os.strerror(code), os.fspath(path))


def _in_place(target: str) -> bool:
    """Whether ``target`` exists and is neither a regular file nor a folder (a device, a
    pipe): written in place, since it cannot be replaced."""
    try:
        mode = os.stat(target).st_mode
    except OSError:  # missing (or unreadable: the checks that follow say why)
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _check_target(path: PathLike, target: str) -> None:
    """Raise the OSError that writing ``target`` (``path`` resolved) would meet: a folder,
    a file that is not writable, a missing or read-only folder."""
    if os.path.isdir(target):
        raise _error(errno.EISDIR, path)
    if os.path.exists(target) and not os.access(target, os.W_OK):
        raise _error(errno.EACCES, path)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise _error(errno.ENOENT, path)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise _error(errno.EACCES, path)


def _create_temporary(path: PathLike, target: str) -> str:
    """A new empty file beside ``target``, with the permission bits ``open`` would give
    the target (its own where it exists, else 0o666 less the umask); returns its path."""
    folder = os.path.dirname(target)
    name = os.path.basename(target)[:200]  # the temporary name within the 255 bytes allowed
    while True:
        temporary = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        except OSError as err:
            raise _error(err.errno, path) from None
        break
    os.close(descriptor)
    try:
        if os.path.exists(target):
            os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
    except OSError:
        os.remove(temporary)
        raise
    return temporary


def check_writable(path: PathLike) -> None:
    """Raise the OSError that :func:`atomic_write` would meet on ``path`` (its
    ``filename`` is ``path``), before any work is done; creates nothing that stays.

    Raises
    ------
    OSError
        ``IsADirectoryError`` for a folder, ``FileNotFoundError`` for a missing folder,
        ``PermissionError`` for a file or folder that cannot be written.
    """
    target = os.path.realpath(path)
    if _in_place(target):
        if not os.access(target, os.W_OK):
            raise _error(errno.EACCES, path)
        return
    _check_target(path, target)
    os.remove(_create_temporary(path, target))


@contextlib.contextmanager
def atomic_write(
    path: PathLike, mode: str = "w", *, encoding: Optional[str] = None
) -> Iterator[IO]:
    """Open ``path`` for writing, all or nothing: a context manager yielding a file
    object on a temporary file beside ``path``, renamed over ``path`` when the block ends
    without an exception. When the block raises (or is interrupted), the temporary file is
    removed and ``path`` is left as it was. See the module's docstring for links,
    permissions and special files.

    Parameters
    ----------
    path
        The file to write (a symbolic link is followed and kept).
    mode
        ``"w"`` (text) or ``"wb"`` (bytes).
    encoding
        The encoding of a text file (``open``'s default when None).

    Raises
    ------
    OSError
        Where ``path`` cannot be written (its ``filename`` is ``path``): see
        :func:`check_writable`.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_write(path, encoding="utf-8") as handle:
    ...     _ = handle.write("kept\\n")
    >>> try:
    ...     with atomic_write(path, encoding="utf-8") as handle:
    ...         _ = handle.write("half")
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> open(path, encoding="utf-8").read()
    'kept\\n'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"`mode` must be one of ['w', 'wb'], got {mode!r}")
    target = os.path.realpath(path)
    if _in_place(target):
        with open(target, mode, encoding=encoding) as handle:
            yield handle
        return
    _check_target(path, target)
    temporary = _create_temporary(path, target)
    try:
        with open(temporary, mode, encoding=encoding) as handle:
            yield handle
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
