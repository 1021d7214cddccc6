"""Writing a view's files whole or not at all.

Every file a view writes (a picture, a report's JSON, Markdown and plots) goes to a fresh
temporary file beside its path, which is renamed over the path once written: a failure
(a full disk, an interrupt) leaves the old file or none, never half of one, and two
processes writing one folder never share a temporary file.

Assumption: the path's folder exists and renames within it are atomic (POSIX).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from depgraph.errors import UsageError

__all__ = ["atomic_write", "write_text", "check_writable"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: Path, write: Callable[[str], object]) -> Path:
    """Call ``write(tmp_path)`` on a fresh temporary file beside ``path``, then rename it
    over ``path``; returns ``path``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = atomic_write(Path(d) / "a.txt", lambda tmp: Path(tmp).write_text("hi"))
    ...     p.read_text()
    'hi'
    """
    parent = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise UsageError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def write_text(path: Path, text: str) -> Path:
    """``text`` written to ``path`` whole or not at all (:func:`atomic_write`)."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)

    return atomic_write(path, write)


def check_writable(path: Path) -> None:
    """``UsageError`` unless a file can be written at ``path``: its folder exists and is
    writable, and the path is not a folder or a read-only file.

    Examples
    --------
    >>> check_writable(Path("/no/such/folder/out.png"))
    Traceback (most recent call last):
    ...
    depgraph.errors.UsageError: cannot write '/no/such/folder/out.png': directory '/no/such/folder' does not exist
    """
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise UsageError(f"cannot write {str(path)!r}: it is a directory")
    if not parent.exists():
        raise UsageError(f"cannot write {str(path)!r}: directory {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise UsageError(f"cannot write {str(path)!r}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {str(path)!r}: directory {str(parent)!r} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"cannot write {str(path)!r}: the file is not writable")
