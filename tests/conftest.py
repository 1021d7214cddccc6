"""Shared fixtures: recurrence files written on the fly."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

# the examples' modules (lcs, knapsack, binomial...), which tests build recurrences from
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "catalog"))

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
