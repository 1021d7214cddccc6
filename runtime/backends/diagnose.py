"""Why numba refuses a cell function, said in the cell's own terms.

A backend's kernel wraps the cell function (rewritten, inlined into generated source), so
numba's complaint about a kernel points into generated code and often names the wrong
thing (a plain Python helper shows as ``NameError``).  :func:`explain` compiles the cell
function alone for its table's types, where numba points at the user's file, and words
what it finds: the line, a helper to decorate with ``@numba.njit``, a name that is not
defined, or numba's first words on the matter; then where to go instead.

Assumptions: only called after a compile failed (it compiles the cell function again);
numba's messages keep their ``File "...", line N:`` blocks and their phrasing for
untyped globals.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from depgraph.errors import CompileError, setting
from depgraph.frontend.source import function_namespace
from depgraph.model import Recurrence

__all__ = ["explain", "located", "summary"]

_UNDEFINED = re.compile(r"Untyped global name '(\w+)'|NameError: name '(\w+)' is not defined")
_FILE = re.compile(r'^File "([^"]+)", line (\d+):$')
#: Terminal colour codes numba puts in its messages where it thinks a terminal shows them.
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def located(text: str) -> list[tuple[str, int, str]]:
    """``(file, line, code)`` of each ``File "...", line N:`` block of a numba message,
    ``code`` being the line its caret points at; in order, without repeats.

    Examples
    --------
    >>> located('x\\nFile "a.py", line 7:\\ndef f(M, i):\\n    return g(i)\\n    ^\\nDuring: y')
    [('a.py', 7, 'return g(i)')]
    """
    lines = text.splitlines()
    found: list[tuple[str, int, str]] = []
    for k, line in enumerate(lines):
        head = _FILE.match(line.strip())
        if not head:
            continue
        caret = next((c for c in range(k + 1, len(lines)) if lines[c].strip() == "^"), None)
        if caret is not None and caret > k + 1:
            entry = (head.group(1), int(head.group(2)), lines[caret - 1].strip())
            if entry not in found:
                found.append(entry)
    return found


def summary(text: str) -> str:
    """numba's own first words on a failure: its first line after the pipeline's name,
    with the signature when that line announces one, and the specific error an overload
    raised when there is one.

    Examples
    --------
    >>> summary("Failed in nopython mode pipeline (step: x)\\nCan't unify return type\\n")
    "Can't unify return type"
    """
    lines = [s.strip() for s in text.splitlines() if s.strip()]
    body = [s for s in lines if not s.startswith(("Failed in", "During:"))]
    if not body:
        return text.strip()
    first = body[0]
    if first.endswith(":") and len(body) > 1:
        first = f"{first} {body[1]}"
    specific = next((s for s in body if s.startswith(("NumbaTypeError:", "TypingError:"))), None)
    return f"{first} ({specific})" if specific else first


def _signature(rec: Recurrence) -> tuple[Any, ...]:
    from numba import int64, typeof  # numba: only after a compile has failed

    table = np.zeros((1,) * rec.ndim, dtype=rec.dtype)
    return (typeof(table), *([int64] * rec.ndim), *(typeof(a) for a in rec.args))


def _what(rec: Recurrence, text: str) -> str | None:
    """What to do about an undefined name or a plain Python function the cell calls."""
    found = _UNDEFINED.search(text)
    if not found:
        return None
    name = found.group(1) or found.group(2)
    value = function_namespace(rec.func).get(name)
    if value is None:
        return f"it uses {name!r}, which is not defined where the cell function is"
    if callable(value) and not hasattr(value, "py_func"):  # numba's dispatchers have py_func
        return (f"it calls {name}, a plain Python function numba cannot compile: decorate "
                f"{name} with @numba.njit")
    return None


def explain(rec: Recurrence, error: CompileError) -> CompileError:
    """``error`` said in the cell's terms: the cell function compiled alone by numba for
    ``rec``'s table, indices and args, and its failure worded by where it is, what to do
    and what numba says; ``error`` itself when the cell function compiles alone (the
    failure is the kernel's)."""
    from numba import njit  # numba: only after a compile has failed

    try:
        njit(rec.func).compile(_signature(rec))
        return error
    except Exception as exc:  # numba fails in many ways beyond its own error classes
        text = _COLOUR.sub("", str(exc))
        text = text if text.startswith("Failed") else f"{type(exc).__name__}: {text}"
    by_file: dict[str, list[str]] = {}
    for file, line, code in sorted(located(text), key=lambda entry: entry[1]):
        by_file.setdefault(file, []).append(f"line {line}: {code}")
    where = "".join(f" ({file}, {'; '.join(lines)})" for file, lines in by_file.items())
    what = _what(rec, text) or summary(text)
    return CompileError(
        f"numba could not compile the cell function {rec.name}{where}: {what}. Run with "
        f"{setting('backend', 'python')} to fill it in plain Python (it names the cell "
        "where the cell function fails, if one does)")
