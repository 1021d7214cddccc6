"""Compiled kernels, cached per recurrence cell function and reused.

Keys are the cell function's *code* (weakly held) when the function has no closure and no
default arguments — then its compiled form depends only on its code and module globals,
so every size of a family (a new function object each time) shares one set of kernels —
and the function object itself otherwise (numba freezes closure values as constants).
The inner key names the kernel (backend, kind, dimensions, number of args...) and the
globals it sees.
"""

from __future__ import annotations

import os
import textwrap
import weakref
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

__all__ = ["KernelCache", "CACHE", "compile_source", "arg_tail", "cache_root"]


def cache_root() -> Path:
    """Where depgraph keeps what it measured once on a machine (the GPU cost model's
    calibration, the strips' cell orders): ``$DEPGRAPH_CACHE``, else
    ``$XDG_CACHE_HOME/depgraph``, else ``~/.cache/depgraph``."""
    return Path(os.environ.get("DEPGRAPH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "depgraph"))


class KernelCache:
    """Build-once storage of compiled kernels per cell function.

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

    def __init__(self) -> None:
        self._store: weakref.WeakKeyDictionary[Any, dict[Hashable, Any]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, func: Callable[..., Any], key: Hashable, build: Callable[[], Any]) -> Any:
        shareable = func.__closure__ is None and not func.__defaults__
        owner: Any = func.__code__ if shareable else func
        kernels = self._store.setdefault(owner, {})
        full = (key, id(func.__globals__))
        if full not in kernels:
            kernels[full] = build()
        return kernels[full]


CACHE = KernelCache()


def arg_tail(count: int) -> str:
    """``", a0, a1, ..."``: the generated kernels' names for a recurrence's args, each
    after a comma, so templates write ``cell(M, i, j{args})`` with or without args.

    Examples
    --------
    >>> arg_tail(2), arg_tail(0)
    (', a0, a1', '')
    """
    return "".join(f", a{k}" for k in range(count))


def compile_source(source: str, name: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """Execute generated source in ``namespace`` and return the function ``name``."""
    code = compile(textwrap.dedent(source), f"<depgraph generated {name}>", "exec")
    exec(code, namespace)
    return namespace[name]
