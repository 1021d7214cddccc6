"""Compiled kernels, cached per recurrence cell function and reused.

Keys are the user's cell function (weakly held) and a tuple naming the kernel (backend,
kind, dimensions, number of args, layout...).  A recurrence built again by a family from
the same function object reuses the kernels.
"""

from __future__ import annotations

import textwrap
import weakref
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["KernelCache", "CACHE", "compile_source", "arg_tail"]


class KernelCache:
    """Build-once storage of compiled kernels per cell function.

    Examples
    --------
    >>> cache = KernelCache()
    >>> def f(M, i): return 0
    >>> cache.get(f, ("k",), lambda: 42), cache.get(f, ("k",), lambda: 0)
    (42, 42)
    """

    def __init__(self) -> None:
        self._store: weakref.WeakKeyDictionary[Callable[..., Any], dict[Hashable, Any]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, func: Callable[..., Any], key: Hashable, build: Callable[[], Any]) -> Any:
        kernels = self._store.setdefault(func, {})
        if key not in kernels:
            kernels[key] = build()
        return kernels[key]


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
