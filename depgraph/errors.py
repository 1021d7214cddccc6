"""One hierarchy for every error depgraph reports to a user.

Every error carries ``exit_code``: 1 when the recurrence itself is invalid or failed
(cycle, out-of-bounds read, exception in the cell function, too large to trace), 2 for a
usage error (missing file, no such recurrence, bad option).  The CLI prints the message
(worded in its flags) as one paragraph and exits with that code; no traceback reaches the
user.

Cells are printed as index tuples, ``(1, 2)``; a cycle as ``(1, 2) -> (1, 3) -> (1, 2)``.

A message that names one of the caller's settings (the schedule to use, the backend to try)
names it through :func:`setting`, so each caller words it in its own terms: ``str(err)`` in
the library's (``schedule='stages'``), :meth:`DepgraphError.worded` in another's (the CLI
passes its flags: ``--schedule stages``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = [
    "setting",
    "word",
    "DepgraphError",
    "UsageError",
    "RecurrenceError",
    "OutputError",
    "CycleError",
    "OutOfBoundsError",
    "CellFunctionError",
    "BadIndexError",
    "WriteError",
    "TooLargeError",
    "CompileError",
    "BackendUnavailableError",
    "NoPatternError",
    "ScheduleMismatchError",
    "format_cell",
]

Cell = tuple[int, ...]

#: How :func:`setting` marks a setting in a message: ``\u2039name=value\u203a``.
_SETTING = re.compile("\u2039([a-z_]+)(?:=([^\u203a]*))?\u203a")


def setting(name: str, value: object = None) -> str:
    """A reference to the caller's setting ``name`` (with ``value``, when the message
    suggests one) inside an error message, worded by whoever shows the error.

    Examples
    --------
    >>> err = UsageError(f"no pattern fits; use {setting('schedule', 'stages')}")
    >>> str(err)
    "no pattern fits; use schedule='stages'"
    >>> err.worded(lambda name, value: f"--{name} {value}")
    'no pattern fits; use --schedule stages'
    """
    return f"\u2039{name}{'' if value is None else f'={value}'}\u203a"


def _library_wording(name: str, value: str | None) -> str:
    """A setting as the library's caller writes it: a keyword argument."""
    if value is None:
        return f"{name}=..."
    bare = value in ("True", "False") or value.isdigit() or value.isupper()  # N: a placeholder
    return f"{name}={value}" if bare else f"{name}={value!r}"


def word(message: str, spell: Callable[[str, str | None], str]) -> str:
    """``message`` with every :func:`setting` in it written by ``spell(name, value)``."""
    return _SETTING.sub(lambda m: spell(m[1], m[2]), message)


def format_cell(cell: Sequence[int]) -> str:
    """Format a cell as a tuple of plain ints.

    Examples
    --------
    >>> format_cell((1, 2))
    '(1, 2)'
    >>> format_cell((4,))
    '(4,)'
    """
    return repr(tuple(int(c) for c in cell))


class DepgraphError(Exception):
    """Base of every error depgraph reports; ``exit_code`` is what the CLI returns.

    ``str(err)`` words the settings the message names as the library's keyword arguments;
    :meth:`worded` words them another way (:func:`setting`).
    """

    exit_code: int = 1

    def __str__(self) -> str:
        return self.worded(_library_wording)

    def worded(self, spell: Callable[[str, str | None], str]) -> str:
        """The message, each setting it names written by ``spell(name, value)``."""
        return word(super().__str__(), spell)


class UsageError(DepgraphError):
    """The user asked for something that does not exist or cannot be done (exit 2)."""

    exit_code = 2


class RecurrenceError(DepgraphError):
    """The recurrence is invalid or failed while being traced or filled (exit 1)."""

    exit_code = 1


class OutputError(DepgraphError):
    """A result could not be written (a full disk, a folder removed meanwhile); nothing
    half-written is left (exit 1)."""

    exit_code = 1


class CycleError(RecurrenceError):
    """The dependencies contain a cycle; ``cycle`` lists it, first cell repeated last."""

    def __init__(self, cycle: Sequence[Cell]):
        self.cycle = [tuple(int(c) for c in x) for x in cycle]
        path = " -> ".join(format_cell(x) for x in self.cycle)
        super().__init__(
            f"the recurrence is cyclic: {path}. A cell may not depend, directly or "
            "through other cells, on itself."
        )


class OutOfBoundsError(RecurrenceError):
    """A cell read an index outside the table (negative indices included)."""

    def __init__(self, cell: Cell, read: Sequence[object], shape: Sequence[int]):
        self.cell, self.read, self.shape = tuple(cell), tuple(read), tuple(shape)
        super().__init__(
            f"cell {format_cell(cell)} reads {_format_index(read)}, outside shape "
            f"{format_cell(shape)}. Negative indices are out of bounds, not Python's "
            "wrap-around; guard the read with a base case."
        )


class CellFunctionError(RecurrenceError):
    """The cell function raised an exception (or returned an unusable value)."""

    def __init__(self, cell: Cell, message: str):
        self.cell, self.message = tuple(cell), message
        super().__init__(f"cell {format_cell(cell)}: the cell function failed: {message}")


class BadIndexError(RecurrenceError):
    """``M`` was indexed with a non-integer or with the wrong number of indices."""

    def __init__(self, cell: Cell, index: object, why: str):
        self.cell, self.index = tuple(cell), index
        super().__init__(f"cell {format_cell(cell)} reads M[{index!r}]: {why}")


class WriteError(RecurrenceError):
    """The cell function tried to write into ``M``."""

    def __init__(self, cell: Cell, index: object):
        self.cell, self.index = tuple(cell), index
        super().__init__(
            f"cell {format_cell(cell)} writes M[{index!r}]: a cell function must only read "
            "M and return its cell's value"
        )


class TooLargeError(RecurrenceError):
    """The table is too large for the requested work; the message states the estimate."""


class CompileError(RecurrenceError):
    """numba could not compile the cell function for a backend."""


class BackendUnavailableError(RecurrenceError):
    """The requested backend cannot run here (no GPU, no numba-cuda, ...)."""


class NoPatternError(RecurrenceError):
    """A pattern fill was asked for but the recurrence matches none of the eight patterns."""


class ScheduleMismatchError(RecurrenceError):
    """A fill read a cell its schedule did not allow (reads depend on the data or size)."""


def _format_index(index: Sequence[object]) -> str:
    try:
        return format_cell(index)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return repr(tuple(index))
