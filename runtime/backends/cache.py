"""Compiled kernels, cached per cell function and reused (in memory; what depgraph keeps
on disk is :mod:`depgraph.usercache`'s).

A compiled kernel depends on everything the cell function's compiled form reads: its code,
its closure values and defaults (numba freezes both as constants) and the values of the
module globals it names (frozen likewise).  So kernels are kept under a digest of exactly
that (:func:`cell_digest`), not under the function object: every size of a family, and the
same recurrence loaded twice, share one set of kernels, while a module global that changed
(a family that sets one per size) gets kernels of its own.  The inner key names the
kernel (:func:`runtime.backends.emit.digest` of its source and names, for a generated one).

Assumption: a value the digest cannot name by its contents (an arbitrary object) is named
by its identity, so it never shares kernels with another, which is safe.
"""

from __future__ import annotations

import hashlib
import inspect
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

__all__ = ["KernelCache", "CACHE", "cell_digest", "content_digest"]


def _code(code: types.CodeType) -> tuple[Any, ...]:
    """A code object by its contents (not its file, lines or address)."""
    consts = tuple(_code(c) if inspect.iscode(c) else repr(c) for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars,
            code.co_cellvars, code.co_argcount, code.co_kwonlyargcount, code.co_flags)


def _names(code: types.CodeType) -> set[str]:
    """The names ``code`` and the code nested in it look up (globals among them)."""
    out = set(code.co_names)
    for c in code.co_consts:
        if inspect.iscode(c):
            out |= _names(c)
    return out


def _value(value: Any, seen: set[int]) -> Any:
    """A value a compiled function reads, by its contents where they can be named."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return repr(value)
    if isinstance(value, np.ndarray) and not value.dtype.hasobject:
        data = np.ascontiguousarray(value)
        return ("ndarray", value.dtype.str, value.shape,
                hashlib.sha256(data.view(np.uint8).reshape(-1)).hexdigest())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_value(v, seen) for v in value))
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__)
    if isinstance(value, type):
        return ("type", value.__module__, value.__qualname__)
    if isinstance(value, types.FunctionType):
        return ("function", _function(value, seen))
    inner = getattr(value, "py_func", None)  # a numba dispatcher: its options and function
    if isinstance(inner, types.FunctionType):
        options = sorted((k, repr(v)) for k, v in getattr(value, "targetoptions", {}).items())
        return (type(value).__qualname__, tuple(options), _function(inner, seen))
    defining = getattr(value, "_defn", None)  # a numba intrinsic: the function defining it
    if isinstance(defining, types.FunctionType):
        return (type(value).__qualname__, _function(defining, seen))
    return ("object", type(value).__qualname__, f"{_IDENTITY}{id(value):x}")


def _function(func: types.FunctionType, seen: set[int]) -> Any:
    if id(func) in seen:  # a function that reads itself, or two that read each other
        return ("again", func.__qualname__)
    seen = seen | {id(func)}
    read = sorted(n for n in _names(func.__code__) if n in func.__globals__)
    closure = tuple(_value(c.cell_contents, seen) for c in func.__closure__ or ())
    return (_code(func.__code__), closure, _value(func.__defaults__, seen),
            tuple((n, _value(func.__globals__[n], seen)) for n in read))


def cell_digest(func: Callable[..., Any]) -> str:
    """A digest of what ``func``'s compiled form depends on: its code, its closure values
    and defaults, and the values of the globals it reads (functions among them, each by
    the same digest).

    Examples
    --------
    >>> def make(c):
    ...     def g(M, i):
    ...         return c
    ...     return g
    >>> cell_digest(make(1)) == cell_digest(make(1)), cell_digest(make(1)) == cell_digest(make(2))
    (True, False)
    """
    return hashlib.sha256(repr(_function(func, set())).encode()).hexdigest()[:32]


#: How an object known only by its identity shows in what a digest is made of.
_IDENTITY = "object at "


def content_digest(func: Callable[..., Any]) -> str | None:
    """:func:`cell_digest` when everything ``func`` depends on is named by its contents,
    so another process computes the same; ``None`` when something is known only by its
    identity (an object of no kind named here).

    Examples
    --------
    >>> def f(M, i, scale=2):
    ...     return scale * i
    >>> def g(M, i, marker=object()):  # a default known only by its identity
    ...     return i
    >>> content_digest(f) == cell_digest(f), content_digest(g)
    (True, None)
    """
    text = repr(_function(func, set()))
    return None if _IDENTITY in text else hashlib.sha256(text.encode()).hexdigest()[:32]


class KernelCache:
    """Build-once storage of compiled kernels per cell function, by :func:`cell_digest`;
    the kernels of the ``most`` cell functions used last are kept.

    Examples
    --------
    >>> cache = KernelCache()
    >>> def f(M, i): return 0
    >>> cache.get(f, ("k",), lambda: 42), cache.get(f, ("k",), lambda: 0)
    (42, 42)
    >>> def make(c):
    ...     def g(M, i):
    ...         return c
    ...     return g
    >>> cache.get(make(1), ("k",), lambda: 1), cache.get(make(2), ("k",), lambda: 2)
    (1, 2)
    """

    def __init__(self, most: int = 256) -> None:
        self._store: OrderedDict[str, dict[Hashable, Any]] = OrderedDict()
        self._most = most

    def get(self, func: Callable[..., Any], key: Hashable, build: Callable[[], Any]) -> Any:
        """The kernel ``key`` of cell function ``func``, built by ``build`` the first time."""
        owner = cell_digest(func)
        kernels = self._store.setdefault(owner, {})
        self._store.move_to_end(owner)
        while len(self._store) > self._most:
            self._store.popitem(last=False)
        if key not in kernels:
            kernels[key] = build()
        return kernels[key]


CACHE = KernelCache()
