"""``runtime.backends.cuda.device``: a table's way back to the host, and a kernel kept
across processes (under numba's simulator: the logic, not the speed)."""

import numpy as np
import pytest

from depgraph import fill, load
from runtime.backends.cuda import device
from runtime.backends.emit import stable


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("stage_bytes", [4, 40, 10_000])
def test_a_table_comes_back_whole_through_the_staging_buffers(order, stage_bytes):
    cuda = device.require()
    table = np.asarray(np.arange(7 * 9, dtype=np.int32).reshape(7, 9), order=order)
    out = device.to_host(cuda, cuda.to_device(table), stage_bytes)
    np.testing.assert_array_equal(out, table)
    assert out.flags[f"{order}_CONTIGUOUS"]


def test_a_table_left_on_the_device_gives_the_last_cell(write_rec):
    from sources import LCS

    rec = load(write_rec(LCS))
    kept = fill(rec, backend="cuda", copy_back=False)
    assert kept.table is None and kept.device_table is not None
    assert kept.target == (7, 6) and kept.value == fill(rec, backend="python").table[7, 6]
    if not device.simulated():  # the simulator's arrays do not offer it
        assert hasattr(kept.device_table, "__cuda_array_interface__")
    np.testing.assert_array_equal(kept.device_table.copy_to_host(),
                                  fill(rec, backend="python").table)


def test_names_a_kernel_sees_are_described_by_what_they_are():
    import math

    def helper(x):
        return x + 1

    assert stable({"cuda": device.cuda_module(), "math": math, "k": 3, "helper": helper})
    assert not stable({"thing": object()})


def test_the_driver_starts_early_once_a_process_and_quietly(monkeypatch):
    """``open_early``: nothing under the simulator or for a host backend; else one daemon
    thread a process, which ends without a word where no driver library is (as here and
    in CI) and retains the GPU's context where one is."""
    monkeypatch.setattr(device, "_opening", None)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    device.open_early()
    assert device._opening is None
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM")
    device.open_early("cpu")  # a host backend's fill needs no GPU
    assert device._opening is None
    device.open_early("auto")
    first = device._opening
    assert first is not None and first.daemon
    device.open_early()
    assert device._opening is first
    first.join(timeout=60)
    assert not first.is_alive()
