"""The eight fill patterns and the regions they allow (SPEC section 4).

One definition shared by analysis (``depgraph.analysis.classify``), rendering and the runtime.
"""

from patterns.eight import (
    BY_CODE,
    CANONICAL,
    DIAGONAL_FLIPS,
    PATTERNS,
    STEP_SOURCE,
    SWEEPS,
    Pattern,
    StepSource,
    Sweep,
    breaking_regions,
    frame_offset,
    last_cell,
    matching,
    select,
    step_line,
    sweep_for,
)
from patterns.lexorder import LexOrder, lex_order
from patterns.regions import REGION_CODE, REGIONS, axis_signs, region_codes, region_names, \
    region_of

__all__ = [
    "BY_CODE",
    "CANONICAL",
    "DIAGONAL_FLIPS",
    "PATTERNS",
    "Pattern",
    "REGIONS",
    "REGION_CODE",
    "axis_signs",
    "breaking_regions",
    "frame_offset",
    "last_cell",
    "LexOrder",
    "lex_order",
    "matching",
    "region_codes",
    "region_names",
    "region_of",
    "select",
    "step_line",
    "STEP_SOURCE",
    "StepSource",
    "SWEEPS",
    "Sweep",
    "sweep_for",
]
