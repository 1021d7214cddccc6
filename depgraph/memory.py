"""Memory sizes: what this process may still use, and byte counts worded for a person.

Assumption: Linux's ``/proc/meminfo`` where it exists; elsewhere the free physical pages.
"""

from __future__ import annotations

import os

__all__ = ["available_memory", "format_bytes"]


def available_memory() -> int:
    """Bytes of memory available to this process (``MemAvailable``), best effort.

    Examples
    --------
    >>> available_memory() > 0
    True
    """
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))


def format_bytes(nbytes: float) -> str:
    """A byte count for a person: GB from 0.1 GB, MB from 0.1 MB, else kB.

    Examples
    --------
    >>> format_bytes(12_345_678_901), format_bytes(216_000), format_bytes(216)
    ('12.3 GB', '0.2 MB', '0.2 kB')
    """
    if nbytes >= 1e8:
        return f"{nbytes / 1e9:.1f} GB"
    return f"{nbytes / 1e6:.1f} MB" if nbytes >= 1e5 else f"{nbytes / 1e3:.1f} kB"
