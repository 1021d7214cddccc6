"""LLVM intrinsics: range facts and a spinning barrier for the CPU kernels, 16-byte
loads and stores for the GPU's.

- :func:`assume` hands LLVM a fact it cannot prove (``j >= 0`` for a loop index that
  starts at a computed bound).  Without it, numba's negative-index wrap-around stays in
  every inlined read of ``M``, and a chunked loop ran slower than a sweep from 0.
- :func:`arrive` is a barrier for kernels whose threads are one ``prange`` iteration each:
  every thread adds one to a counter and spins until the counter reaches the target it
  passes (``threads * (step + 1)``), so the counter never needs a reset.  After
  :data:`SPINS` looks at the counter a waiting thread yields its core at each further
  look (``sched_yield``): a thread the others wait for may have been descheduled (a busy
  machine, more threads than free cores), and a thread that only spun would hold the core
  it needs for the rest of its time slice, at every step.

Assumptions: ``arrive`` is only correct when every ``prange`` iteration runs on its own
thread at the same time (numba's ``omp`` and ``workqueue`` layers split ``prange(T)``
into one iteration per thread when ``T`` equals the thread count); under a layer that may
run two iterations on one thread it would spin for ever, so callers check
:func:`runtime.backends.cpu.barrier_threads` first.

- :func:`load4` and :func:`store4` move four 4-byte elements of an array, from index ``i``
  on, as one vector (``ld.v4`` and ``st.v4`` on the GPU, in shared or global memory
  alike: one instruction where numba makes four).  Assumption: the array's data and ``i``
  make a 16-byte aligned address (the caller's layout guarantees it; nothing checks).
"""

from __future__ import annotations

from typing import Any

__all__ = ["assume", "arrive", "load4", "store4"]

#: Looks at a barrier's counter before a waiting thread starts yielding its core: a step's
#: threads on free cores meet well within them.
SPINS = 256


def _build() -> tuple[Any, Any, Any, Any]:
    import numba
    import numpy as np
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
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

    def vector(context: Any, builder: Any, aryty: Any, ary: Any, index: Any, ity: Any) -> Any:
        data = context.make_array(aryty)(context, builder, ary).data
        i = context.cast(builder, index, ity, types.uint64)
        vty = ir.VectorType(context.get_data_type(aryty.dtype), 4)
        return builder.bitcast(builder.gep(data, [i]), vty.as_pointer(data.type.addrspace))

    @intrinsic
    def load4(typingctx: Any, arr: Any, i: Any) -> Any:
        ret = types.UniTuple(arr.dtype, 4)

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            vec = builder.load(vector(context, builder, sig.args[0], args[0], args[1],
                                      sig.args[1]), align=16)
            return context.make_tuple(builder, ret, [
                builder.extract_element(vec, ir.Constant(ir.IntType(32), k)) for k in range(4)])

        return ret(arr, i), codegen

    @intrinsic
    def store4(typingctx: Any, arr: Any, i: Any, a: Any, b: Any, c: Any, d: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            aryty = sig.args[0]
            vec = ir.Constant(ir.VectorType(context.get_data_type(aryty.dtype), 4), ir.Undefined)
            for k in range(4):
                x = context.cast(builder, args[2 + k], sig.args[2 + k], aryty.dtype)
                vec = builder.insert_element(vec, x, ir.Constant(ir.IntType(32), k))
            builder.store(vec, vector(context, builder, aryty, args[0], args[1], sig.args[1]),
                          align=16)
            return context.get_dummy_value()

        return types.none(arr, i, a, b, c, d), codegen

    @intrinsic
    def sched_yield(typingctx: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            # the C library's sched_yield, linked by name: no address baked into the code,
            # so a kernel that calls it is still kept on disk
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.IntType(32), []), "sched_yield")
            builder.call(fn, [])
            return context.get_dummy_value()

        return types.none(), codegen

    @numba.njit(inline="always")
    def arrive(bar, target):  # pragma: no cover - compiled
        atomic_add(bar, np.int64(1))
        spins = 0
        while atomic_load(bar) < target:
            spins += 1
            if spins >= SPINS:
                sched_yield()

    return assume, arrive, load4, store4


_CACHE: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    """Build the intrinsics on first use, so importing ``runtime`` does not import numba."""
    if name in __all__:
        if not _CACHE:
            _CACHE.update(zip(__all__, _build()))
        return _CACHE[name]
    raise AttributeError(name)
