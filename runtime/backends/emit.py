"""The one emitter of generated kernel source, and what names a generated kernel.

Kernels that depend on the recurrence (its cell function, its number of arguments and
dimensions, a block's shape) are generated as Python source that numba compiles.  An
:class:`Emitter` collects that source line by line, each line at the depth of the blocks
open around it (:meth:`Emitter.block`), so no piece of source is ever pasted into another
at a guessed indentation, and a piece built apart (:class:`Emitter` too) is inserted at
the depth where it lands (:meth:`Emitter.insert`).  :func:`compile_source` executes the
source in a namespace and returns the function; :func:`digest` names what a kernel was
built from (its source and every name it sees), so compiled kernels are cached under
that (:class:`runtime.backends.cache.KernelCache`), never under a key kept by hand.

Assumptions: generated source is plain Python that numba (CPU or CUDA) compiles; four
spaces a level.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from depgraph.usercache import cached, module_file
from runtime.backends.cache import content_digest

__all__ = ["Emitter", "compile_source", "compile_kept", "digest", "stable", "remember",
           "arg_names", "arg_tail"]

_INDENT = "    "


class Emitter:
    """Source lines, each at the depth of the blocks open when it was added.

    Examples
    --------
    >>> e = Emitter()
    >>> with e.block("def f(x)"):
    ...     e("y = x + 1")
    ...     with e.block("if y > 2"):
    ...         e("y = 2")
    ...     e("return y")
    >>> print(e.source, end="")
    def f(x):
        y = x + 1
        if y > 2:
            y = 2
        return y
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, *lines: str) -> None:
        """Add ``lines`` at the current depth."""
        self.lines.extend(_INDENT * self.depth + line for line in lines)

    @contextmanager
    def block(self, head: str) -> Iterator[None]:
        """``head:`` at the current depth, then the lines added inside one level deeper."""
        self(f"{head}:")
        with self.deeper():
            yield

    @contextmanager
    def deeper(self, levels: int = 1) -> Iterator[None]:
        """Lines added inside go ``levels`` deeper."""
        self.depth += levels
        try:
            yield
        finally:
            self.depth -= levels

    def insert(self, piece: Emitter) -> None:
        """The lines of ``piece``, built apart from depth 0, at the current depth.

        Examples
        --------
        >>> piece = Emitter()
        >>> piece("a = 1", "b = 2")
        >>> e = Emitter()
        >>> with e.block("while True"):
        ...     e.insert(piece)
        >>> e.lines
        ['while True:', '    a = 1', '    b = 2']
        """
        self.lines.extend(_INDENT * self.depth + line if line else line
                          for line in piece.lines)

    @property
    def source(self) -> str:
        """The lines as one text, ending with a newline."""
        return "\n".join(self.lines) + "\n"


def arg_names(count: int) -> list[str]:
    """The generated kernels' names for a recurrence's args: ``a0, a1, ...``.

    Examples
    --------
    >>> arg_names(2)
    ['a0', 'a1']
    """
    return [f"a{k}" for k in range(count)]


def arg_tail(count: int) -> str:
    """``", a0, a1, ..."``: the recurrence's args (:func:`arg_names`), each after a comma,
    so a call reads ``cell(M, i, j{tail})`` with or without args.

    Examples
    --------
    >>> arg_tail(2), arg_tail(0)
    (', a0, a1', '')
    """
    return "".join(f", {a}" for a in arg_names(count))


def compile_source(source: str, name: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """Execute generated ``source`` in ``namespace`` and return its function ``name``.

    Examples
    --------
    >>> compile_source("def f(x):\\n    return x + k\\n", "f", {"k": 2})(1)
    3
    """
    code = compile(source, f"<depgraph generated {name}>", "exec")
    exec(code, namespace)
    return namespace[name]


#: The attribute in which :func:`remember` keeps what a compiled function was made from.
_MADE_FROM = "_depgraph_made_from"


def remember(built: Any, key: str) -> Any:
    """Note on ``built`` (a compiled function) that it was made from what ``key`` names,
    so a kernel that calls it is named by that (:func:`digest`); returns ``built``."""
    setattr(built, _MADE_FROM, key)
    return built


def _describe(value: Any) -> str:
    """A name for a value a kernel sees: what a function built here was made from, the
    representation of a number, a type or a text, else the object's type and identity."""
    known = getattr(value, _MADE_FROM, None)
    if isinstance(known, str):
        return known
    if value is None or isinstance(value, (bool, int, float, str, type)) \
            or type(value).__module__ == "numpy":
        return repr(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(_describe(v) for v in value) + ")"
    if isinstance(value, dict):  # options: by their contents, in a fixed order
        return "{" + ", ".join(f"{_describe(k)}: {_describe(v)}"
                               for k, v in sorted(value.items(), key=repr)) + "}"
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    # a numba dispatcher: the function it compiles; an intrinsic: the function defining it
    func = getattr(value, "py_func", None) or getattr(value, "_defn", None) or value
    if isinstance(func, types.FunctionType):
        content = content_digest(func)
        if content is not None:
            return f"function {func.__qualname__} {content}"
    return f"{type(value).__qualname__}@{id(value):x}"


def compile_kept(source: str, name: str, names: Mapping[str, Any], key: str,
                 jit: Callable[[Callable[..., Any], bool], Any], keep: bool = True,
                 refresh: bool = True) -> Any:
    """The function ``name`` of generated ``source`` seeing ``names``, compiled by
    ``jit(function, cache)``.  Where ``keep`` and every name is described by what it is
    (:func:`stable`), its source is kept as the file ``key`` in the cache root and numba's
    disk cache beside it, so a second process loads what numba compiled instead of
    compiling it again (:func:`depgraph.usercache.module_file`)."""
    module = module_file(key, source, dict(names)) if keep and stable(names) else None
    if module is None:
        return jit(compile_source(source, name, dict(names)), False)
    return cached(lambda cache: jit(getattr(module, name), cache), refresh)


def stable(key_names: Mapping[str, Any]) -> bool:
    """Whether every name a kernel sees is described by what it is, not by where it sits
    in this process's memory, so its :func:`digest` names the same kernel in another
    process.

    Examples
    --------
    >>> stable({"cell": None, "width": 8}), stable({"buffer": bytearray(1)})
    (True, False)
    """
    return all("@" not in _describe(v) for v in key_names.values())


def digest(source: str, names: Mapping[str, Any] = {}) -> str:
    """A name for a kernel made from ``source`` seeing ``names``: the same for the same
    source and names, another when any of them changes.

    Examples
    --------
    >>> digest("def f(): pass") == digest("def f(): pass")
    True
    >>> digest("def f(): pass", {"k": 1}) == digest("def f(): pass", {"k": 2})
    False
    """
    h = hashlib.sha256(source.encode())
    for key in sorted(names):
        h.update(f"\n{key}={_describe(names[key])}".encode())
    return h.hexdigest()[:32]
