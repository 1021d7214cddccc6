"""``depgraph.views.text``: the commands' text output, made from the same data as their
``--json`` objects."""

import json
import re

import numpy as np
import pytest
from sources import LCS

from depgraph.cli import main
from depgraph.views.text import format_analysis, format_run, format_score, preview


def _masked(line: str) -> str:
    return re.sub(r"\d[\d,.]*", "#", line)


def test_a_line_is_previewed_by_its_ends():
    assert preview(np.arange(5)) == "0, 1, 2, 3, 4"
    assert preview(np.arange(20), ends=2) == "0, 1, ..., 18, 19"


@pytest.mark.parametrize("args, text", [(["analyze"], format_analysis),
                                        (["run", "--backend", "cpu"], format_run),
                                        (["run", "--backend", "cpu", "--score"], format_score)])
def test_the_text_says_what_the_json_holds(write_rec, capsys, args, text):
    path = write_rec(LCS)
    assert main([args[0], path, *args[1:], "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    lines = text(data).splitlines()
    assert main([args[0], path, *args[1:]]) == 0
    printed = capsys.readouterr().out.splitlines()
    # Numbers are times (measured, or predicted from a calibration another test process may
    # write between the two runs), so lines are compared with their numbers masked; the
    # "time" line differs too, as only the JSON's run has timed its own output.
    differing = [a for a, b in zip(lines, printed) if _masked(a) != _masked(b)]
    assert len(printed) == len(lines) and all(a.startswith("time") for a in differing)
    assert any(str(data.get("value", data.get("pattern"))) in line for line in printed)
