"""Backends: where and how a table is filled.

- :mod:`runtime.backends.python`: the cell function in plain Python (the reference);
- :mod:`runtime.backends.cpu` and :mod:`runtime.backends.cpu_score`: numba on every CPU
  core;
- :mod:`runtime.backends.cuda`: numba.cuda, one module per kernel family.

They share the emitter of generated kernels (:mod:`runtime.backends.emit`), the kernel
cache (:mod:`runtime.backends.cache`), the rewrite of the cell's reads
(:mod:`runtime.backends.rewrite`, :mod:`runtime.backends.speculate`) and what a
score-only walk keeps (:mod:`runtime.backends.walk`).  A backend takes plain values (the
recurrence, its cell IR, a pattern's index, stage arrays); it decides nothing about the
schedule (:mod:`runtime.schedule`).
"""
