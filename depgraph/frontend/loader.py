"""Load a recurrence file and pick a recurrence from it (SPEC section 6).

A recurrence file is a Python file that defines, at module level, recurrences made with
``@recurrence`` and/or families made with ``@family``.  ``--name`` picks one by its name;
``--size`` instantiates a family.  Assumption: running the file has no side effects beyond
defining things (it is executed once, as a fresh module).
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from depgraph.errors import DepgraphError, RecurrenceError, UsageError, setting
from depgraph.model import Family, Recurrence

__all__ = ["load_module", "definitions", "pick", "load"]


def load_module(path: str | Path) -> ModuleType:
    """Execute a recurrence file as a fresh module.

    A missing file is a ``UsageError``; an exception while running it (a recurrence
    defined with a bad shape or dtype, ``sys.exit``) is a ``RecurrenceError`` naming the
    file and line.
    """
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"no such recurrence file: {str(path)!r}")
    name = f"_depgraph_user_{abs(hash(str(p.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise UsageError(f"{str(path)!r} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # numba needs the module importable for its caches
    try:
        spec.loader.exec_module(module)
    except UsageError as exc:  # a recurrence defined wrongly: the file is what is invalid
        raise RecurrenceError(f"{path}{_line(exc, p)}: {exc}") from None
    except DepgraphError:
        raise
    except SyntaxError as exc:
        raise RecurrenceError(f"{path}, line {exc.lineno}: syntax error: {exc.msg}") from None
    except SystemExit as exc:  # a script's exit, even exit(0), leaves no recurrence
        raise RecurrenceError(
            f"{path}{_line(exc, p)}: the file called sys.exit({exc.code!r}) while loading; a "
            "recurrence file only defines recurrences") from None
    except Exception as exc:
        raise RecurrenceError(
            f"{path}{_line(exc, p)}: running the file failed: {type(exc).__name__}: {exc}"
        ) from None
    return module


def _line(exc: BaseException, path: Path) -> str:
    """``, line N``: the last line of ``path`` in ``exc``'s traceback ("" if none)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    return f", line {frames[-1].lineno}" if frames else ""


def definitions(module: ModuleType) -> dict[str, Recurrence | Family]:
    """The recurrences and families a module defines, by name (definition order)."""
    out: dict[str, Recurrence | Family] = {}
    for value in vars(module).values():
        if isinstance(value, (Recurrence, Family)):
            out.setdefault(value.name, value)
    return out


def pick(path: str | Path, name: str | None = None) -> Recurrence | Family:
    """The recurrence or family ``name`` (or the only one) a file defines, not yet sized.

    Examples
    --------
    >>> import os, tempfile, textwrap
    >>> src = textwrap.dedent('''
    ...     import numpy as np
    ...     from depgraph import family, recurrence
    ...     @family
    ...     def ones(n):
    ...         @recurrence(shape=(n, n), dtype=np.int32)
    ...         def ones(M, i, j):
    ...             return 1
    ...         return ones
    ... ''')
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "r.py")
    ...     _ = open(p, "w").write(src)
    ...     pick(p)
    Family('ones')
    """
    found = definitions(load_module(path))
    if not found:
        raise UsageError(
            f"{path} defines no recurrence: decorate a cell function with "
            "@depgraph.recurrence or a sized builder with @depgraph.family"
        )
    if name is None:
        if len(found) > 1:
            raise UsageError(
                f"{path} defines several recurrences ({', '.join(found)}): pick one with "
                f"{setting('name')}"
            )
        return next(iter(found.values()))
    if name not in found:
        raise UsageError(f"{path} has no recurrence named {name!r}; it has: {', '.join(found)}")
    return found[name]


def load(path: str | Path, name: str | None = None, size: int | None = None) -> Recurrence:
    """Load the recurrence ``name`` (or the only one) from a file, sizing a family.

    Examples
    --------
    >>> import os, tempfile, textwrap
    >>> src = textwrap.dedent('''
    ...     import numpy as np
    ...     from depgraph import recurrence
    ...     @recurrence(shape=(3, 3), dtype=np.int32)
    ...     def ones(M, i, j):
    ...         return 1
    ... ''')
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "r.py")
    ...     _ = open(p, "w").write(src)
    ...     load(p).name
    'ones'
    """
    obj = pick(path, name)
    if isinstance(obj, Family):
        if size is None:
            raise UsageError(f"{obj.name!r} is a family: give its size with {setting('size', 'N')}")
        if size < 1:
            raise UsageError(f"{setting('size', size)}: a size must be a positive integer")
        try:
            return obj(size)
        except UsageError as exc:
            raise RecurrenceError(f"family {obj.name!r} at size {size}: {exc}") from None
        except DepgraphError:
            raise
        except (Exception, SystemExit) as exc:
            raise RecurrenceError(
                f"family {obj.name!r} failed at size {size}: {type(exc).__name__}: {exc}"
            ) from None
    if size is not None:
        raise UsageError(f"{obj.name!r} is a fixed recurrence of shape {obj.shape}; drop "
                         f"{setting('size')}")
    return obj
