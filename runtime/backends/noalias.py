"""numba's compiler, its array arguments marked as not aliasing each other.

numba marks the arrays of a ``prange`` body's outlined function ``noalias`` (LLVM's: no
memory reached through one is reached through another) when it sees no alias among them,
and nothing else: a sequential fill's loop reloaded a row's argument (the knapsack's
``w[i - 1]``) after every store into the table, as the store might have changed it, and
ran slower than the same loop outlined (``docs/benchmarks.md``).  :func:`compiler` is
numba's own pipeline with one pass more, setting the ``noalias`` flag, for
``numba.njit``'s ``pipeline_class``.

Sound for a kernel whose arrays are distinct objects or written by none: the fills' table,
check rows and barrier are made for the fill, and a cell that writes no array
(:attr:`depgraph.frontend.ir.CellIR.pure`) only reads its arguments, which may then share
memory.  A barrier's atomic operations keep ordering every access, whatever the
aliasing (an ordered atomic may touch any memory, to LLVM's alias analysis).

Assumptions: numba's ``DefaultPassBuilder`` nopython pipeline, which runs
``IRProcessing`` first; numba is imported when a fill first asks for the compiler.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["compiler"]


@functools.cache
def compiler() -> Any:
    """The compiler class for ``numba.njit(pipeline_class=...)``: numba's nopython
    pipeline, its functions' array arguments ``noalias``.

    Examples
    --------
    >>> import numba
    >>> import numpy as np
    >>> @numba.njit(pipeline_class=compiler())
    ... def scaled(out, a):
    ...     for k in range(len(a)):
    ...         out[k] = 2 * a[k]
    >>> out = np.zeros(3)
    >>> scaled(out, np.arange(3.0))
    >>> out.tolist()
    [0.0, 2.0, 4.0]
    """
    from numba.core.compiler import CompilerBase, DefaultPassBuilder
    from numba.core.compiler_machinery import FunctionPass, register_pass
    from numba.core.untyped_passes import IRProcessing

    @register_pass(mutates_CFG=False, analysis_only=True)
    class NoAlias(FunctionPass):
        _name = "depgraph_noalias"

        def __init__(self) -> None:
            FunctionPass.__init__(self)

        def run_pass(self, state: Any) -> bool:
            state.flags.noalias = True
            return False

    class NoAliasCompiler(CompilerBase):
        def define_pipelines(self) -> list[Any]:
            pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
            pm.add_pass_after(NoAlias, IRProcessing)
            pm.finalize()
            return [pm]

    return NoAliasCompiler
