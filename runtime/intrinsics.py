"""LLVM intrinsics for the CPU kernels: range facts and a spinning barrier.

- :func:`assume` hands LLVM a fact it cannot prove (``j >= 0`` for a loop index that
  starts at a computed bound).  Without it, numba's negative-index wrap-around stays in
  every inlined read of ``M``, and a chunked loop ran 1.5x slower than a sweep from 0.
- :func:`arrive` is a barrier for kernels whose threads are one ``prange`` iteration each:
  every thread adds one to a counter and spins until the counter reaches the target it
  passes (``threads * (step + 1)``), so the counter never needs a reset.

Assumptions: ``arrive`` is only correct when every ``prange`` iteration runs on its own
thread at the same time (numba's ``omp`` and ``workqueue`` layers split ``prange(T)``
into one iteration per thread when ``T`` equals the thread count); under a layer that may
run two iterations on one thread it would spin for ever, so callers check
:func:`runtime.cpu.barrier_safe` first.
"""

from __future__ import annotations

from typing import Any

__all__ = ["assume", "arrive"]


def _build() -> tuple[Any, Any]:
    import numba
    import numpy as np
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def assume(typingctx: Any, cond: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            builder.assume(args[0])
            return context.get_dummy_value()

        return types.none(cond), codegen

    @intrinsic
    def atomic_add(typingctx: Any, arr: Any, val: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            return builder.atomic_rmw("add", ary.data, args[1], "seq_cst")

        return types.int64(arr, val), codegen

    @intrinsic
    def atomic_load(typingctx: Any, arr: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            return builder.load_atomic(ary.data, "acquire", 8)

        return types.int64(arr), codegen

    @numba.njit(inline="always")
    def arrive(bar, target):  # pragma: no cover - compiled
        atomic_add(bar, np.int64(1))
        while atomic_load(bar) < target:
            pass

    return assume, arrive


_CACHE: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    """Build the intrinsics on first use, so importing ``runtime`` does not import numba."""
    if name in __all__:
        if not _CACHE:
            _CACHE.update(zip(__all__, _build()))
        return _CACHE[name]
    raise AttributeError(name)
