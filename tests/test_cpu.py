"""``runtime.backends.cpu``: a generated kernel compiled once for arguments of the same
kinds, then called at once."""

import numpy as np

from depgraph import recurrence
from runtime.backends import cpu


def test_a_kernel_is_compiled_once_for_arguments_of_the_same_kinds(monkeypatch):
    rec = recurrence(shape=(2, 2), dtype=np.int64)(lambda M, i, j: 0)
    make = cpu.kernel(rec, "def add(A, x):\n    A[0] += x\n", "add", None)
    compiled = []
    real = cpu._compile
    monkeypatch.setattr(cpu, "_compile", lambda m, args: compiled.append(args) or real(m, args))
    A, B = np.zeros(3, np.int64), np.zeros(3, np.float64)
    for _ in range(3):
        cpu.call(make, A, 2)
    cpu.call(make, B, 2)  # another dtype: compiled for it
    cpu.call(make, A[::2], 2)  # another layout: likewise
    assert len(compiled) == 3 and A[0] == 8 and B[0] == 2
