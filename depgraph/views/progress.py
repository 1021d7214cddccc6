"""Progress lines for long work, shown only on a terminal.

Progress goes to standard error and only when it is a terminal, so ``--json`` output and
pipes stay clean.  Assumption: one progress line at a time.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["progress"]


def progress(label: str, total: int | None = None, stream: TextIO | None = None,
             enabled: bool | None = None) -> Callable[[int], None]:
    """A callback ``update(done)`` that redraws ``label: done/total`` at most 10 times a second.

    Examples
    --------
    >>> import io
    >>> buf = io.StringIO()
    >>> update = progress("tracing", 10, stream=buf, enabled=True)
    >>> update(10)
    >>> "tracing: 10/10" in buf.getvalue()
    True
    """
    out = sys.stderr if stream is None else stream
    show = out.isatty() if enabled is None else enabled
    last = [0.0]

    def update(done: int) -> None:
        if not show:
            return
        now = time.monotonic()
        final = total is not None and done >= total
        if now - last[0] < 0.1 and not final:
            return
        last[0] = now
        of = f"/{total:,}" if total else ""
        pct = f" ({100 * done / total:.0f}%)" if total else ""
        out.write(f"\r{label}: {done:,}{of}{pct}" + ("\n" if final else ""))
        out.flush()

    return update
