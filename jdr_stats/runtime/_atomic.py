"""Atomic file writes: the one helper every writer of results files uses.

:func:`atomic_write` writes to a temporary file in the target's folder,
flushes and ``fsync``-s it, then moves it over the target with
``os.replace`` (atomic on POSIX and Windows).  A failure at any point (a
full disk, an exception of the writer, Ctrl-C) leaves the previous file
byte for byte as it was and removes the temporary file: a reader sees the
old file or the new one, never a part of either.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from typing import IO, Any, Literal

__all__ = ["atomic_write", "write_bytes", "write_text"]

PathLike = str | os.PathLike


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: Literal["wb", "w"] = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on a clean exit replace ``path`` with it.

    Parameters
    ----------
    path : str or path-like
        The file to (re)write.
    mode : {"wb", "w"}
        Binary, or text (UTF-8, ``"\\n"`` line ends).

    Yields
    ------
    file object
        The temporary file.  Its content replaces ``path`` only if the
        ``with`` block ends without an exception (after ``flush`` and
        ``fsync``); otherwise it is removed and ``path`` is untouched.

    Notes
    -----
    The new file gets the permissions of the file it replaces, or those of
    a new file under the process's umask.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_write(path, "w") as fh:
    ...     _ = fh.write("kept\\n")
    >>> try:
    ...     with atomic_write(path, "w") as fh:
    ...         _ = fh.write("half")
    ...         raise OSError("disk full")
    ... except OSError:
    ...     pass
    >>> open(path).read(), os.listdir(os.path.dirname(path))
    ('kept\\n', ['out.txt'])
    """
    if mode not in ("wb", "w"):
        raise ValueError(f'mode must be "wb" or "w"; got {mode!r}')
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    tmp = os.path.join(folder, f".{os.path.basename(target)}.{secrets.token_hex(6)}.tmp")
    # O_EXCL: a fresh file; 0o666 under the umask, as open() would create it
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                 0o666)
    try:
        with (os.fdopen(fd, "wb") if mode == "wb"
              else os.fdopen(fd, "w", encoding="utf-8", newline="\n")) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):  # keep the replaced file's permissions
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    """``fsync`` the folder so that the rename itself survives a crash (POSIX)."""
    with contextlib.suppress(OSError, AttributeError):
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def write_text(path: PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic_write`)."""
    with atomic_write(path, "w") as fh:
        fh.write(text)


def write_bytes(path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_write`)."""
    with atomic_write(path, "wb") as fh:
        fh.write(data)
