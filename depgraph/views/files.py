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

from depgraph.errors import OutputError, UsageError

__all__ = ["atomic_write", "write_text", "check_writable", "check_folder"]


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
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise OutputError(f"could not write {str(path)!r}: {exc.strerror or exc}; "
                              "nothing was written there") from None
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


def check_folder(path: Path, label: str) -> None:
    """``UsageError`` unless files can be written in the folder ``path``: it is a writable
    folder, or it is missing and its nearest existing parent is a writable folder (it is
    made when written).  ``label`` names the path in the message (a flag or a setting).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     check_folder(Path(d) / "new" / "report", "-o DIR")  # made when written
    ...     _ = write_text(Path(d) / "notes.txt", "")
    ...     check_folder(Path(d) / "notes.txt" / "report", "-o DIR")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    depgraph.errors.UsageError: -o DIR: cannot make a folder in '...notes.txt': it is a file
    """
    if path.exists() and not path.is_dir():
        raise UsageError(f"{label} is a file; give a directory for the report")
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{label}: cannot make a folder in {str(existing)!r}: it is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{label}: directory {str(existing)!r} is not writable")
