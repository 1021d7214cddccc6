"""Shared fixtures: recurrence files written on the fly."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

HEADER = "import numpy as np\nfrom depgraph import recurrence, family\n"


@pytest.fixture
def write_rec(tmp_path: Path) -> Callable[[str], str]:
    """Write a recurrence file (body after the standard imports) and return its path."""
    count = [0]

    def write(body: str) -> str:
        count[0] += 1
        path = tmp_path / f"rec{count[0]}.py"
        path.write_text(HEADER + textwrap.dedent(body))
        return str(path)

    return write
