"""The CUDA backend (numba.cuda): one module per kernel family.

- :mod:`~runtime.backends.cuda.device`: whether a GPU is usable, memory checks, compiling
  generated kernels, running a fill's launches with each phase timed;
- :mod:`~runtime.backends.cuda.cells`: the cell function as the kernels call it;
- :mod:`~runtime.backends.cuda.steps`: a launch per step, a cooperative launch, stages,
  the ready-check fill;
- :mod:`~runtime.backends.cuda.tiles`: diagonal patterns by shared-memory tiles;
- :mod:`~runtime.backends.cuda.strips`, :mod:`~runtime.backends.cuda.strip_source`,
  :mod:`~runtime.backends.cuda.strip_layout`: diagonal patterns in registers;
- :mod:`~runtime.backends.cuda.bands`: row and column patterns by bands;
- :mod:`~runtime.backends.cuda.score`: score-only fills;
- :mod:`~runtime.backends.cuda.probes`: the fixed kernels the cost model times.

Importing this package imports no numba.cuda: :func:`runtime.backends.cuda.device.
cuda_module` does, on first use, so nothing outside it needs a GPU or numba-cuda.
Under ``NUMBA_ENABLE_CUDASIM=1`` every kernel runs on numba's simulator (logic only).
"""
