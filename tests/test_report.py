"""``depgraph report``: JSON schema, Markdown, plots, verdict, skips, errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sources import CYCLE
from sources import LCS as FIXED_LCS

from depgraph import memory, pick, recurrence
from depgraph.cli import main, parse_sizes
from depgraph.errors import UsageError
from depgraph.views import report as rp
from depgraph.views import report_data, report_measure
from depgraph.views.report_data import PLOTS, SCHEDULES
from depgraph.views.report_markdown import markdown
from depgraph.views.verdict import compute_verdict

ROOT = Path(__file__).resolve().parent.parent
LCS_FAMILY = str(ROOT / "examples" / "lcs.py")
SKEW_FAMILY = str(ROOT / "examples" / "skew.py")

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def family_report(tmp_path_factory):
    """One CLI run on the LCS family at three sizes, all backends (cuda is unavailable)."""
    out = tmp_path_factory.mktemp("lcs_report")
    code = main(["report", LCS_FAMILY, "--sizes", "32,8,16", "-o", str(out), "--repeat", "2"])
    data = json.loads((out / "report.json").read_text())
    return code, out, data


def test_json_schema_markdown_and_plots(family_report):
    code, out, data = family_report
    assert code == 0
    rows = data["rows"]
    assert [r["shape"] for r in rows] == [[9, 9], [17, 17], [33, 33]]  # sorted sizes
    for r in rows:
        assert {"shape", "cells", "edges", "stages", "pattern", "overhead", "fill"} <= set(r)
        assert r["cells"] == r["shape"][0] * r["shape"][1]
        assert r["edges"] > r["cells"] and r["shape"][0] <= r["stages"] <= 2 * r["shape"][0] - 1
        assert r["pattern"] == "NOSE" and r["pattern_steps"] == 2 * r["shape"][0] - 1
        ov, f = r["overhead"], r["fill"]
        for key in ("trace_s", "graph_s", "stages_s"):
            assert ov[key] > 0 and ov[key.replace("_s", "_spread_s")][0] <= ov[key]
        assert ov["graph_bytes"] > r["table_bytes"] > 0 and ov["runs"] == 2
        for key in ("sequential_s", "pattern_s", "stages_s"):
            assert f[key] > 0
        assert f["backend"] == "cpu" and f["sequential_backend"] == "cpu"
        for b in ("python", "cpu"):
            for s in ("sequential", "pattern", "stages"):
                e = f[b][s]
                assert e["runs"] == 2 and e["min_s"] <= e["median_s"] <= e["max_s"]
                assert e["cells_per_s"] > 0 and e["verified"] and f[b][f"{s}_s"] == e["median_s"]
        assert f["cpu"]["pattern_s"] == f["pattern_s"]
        assert "unavailable" in f["cuda"]  # no real GPU here: said so, and the rest ran
    m = data["machine"]
    assert m["cpu"] and m["cores"] >= 1 and m["numpy"] == np.__version__ and m["date"]
    assert m["gpu"] is None and m["gpu_why_none"]
    assert data["backends"]["cuda"].startswith("unavailable")
    md = (out / "report.md").read_text()
    for text in ("## Machine", "## Structure", "## What the graph costs", "## Fills",
                 "### cpu", "### cuda", "Not measured", "n=32 (33×33)", "min–max",
                 data["verdict"]["sentence"]):
        assert text in md
    for name in PLOTS:
        assert (out / name).read_bytes()[:8] == PNG and f"]({name})" in md


def _from_on(flags):
    k = len(flags)
    while k and flags[k - 1]:
        k -= 1
    return None if k == len(flags) else k


def test_verdict_agrees_with_the_numbers(family_report):
    _, _, data = family_report
    rows, v = data["rows"], data["verdict"]
    paths = [r["overhead"]["trace_s"] + r["overhead"]["graph_s"] + r["overhead"]["stages_s"]
             + r["fill"]["stages_s"] for r in rows]
    pays = [p < r["fill"]["sequential_s"] for p, r in zip(paths, rows)]
    beats = [r["fill"]["pattern_s"] < p for p, r in zip(paths, rows)]
    assert v["graph_pays"] == pays and v["pattern_beats_graph"] == beats
    k = _from_on(beats)
    expected = None if k is None else f"n={rows[k]['size']}"
    assert v["pattern_wins_from"] == expected
    s = v["sentence"]
    assert s.startswith("For lcs, ")
    assert ("does not pay for itself" in s) == (not any(pays))
    if expected is None:
        assert "does not beat graph + stage fill" in s
    else:
        assert f"from {expected} on" in s and "NOSE" in s
    assert compute_verdict("lcs", rows)["sentence"] == s


def test_fixed_recurrence_one_row_and_sizes_is_a_usage_error(write_rec, tmp_path, capsys):
    path = write_rec(FIXED_LCS)
    out = tmp_path / "fixed"
    assert main(["report", path, "-o", str(out), "--repeat", "1", "--backend", "python"]) == 0
    data = json.loads((out / "report.json").read_text())
    assert len(data["rows"]) == 1 and data["kind"] == "recurrence"
    row = data["rows"][0]
    assert row["shape"] == [8, 7] and row["size"] is None and row["pattern"] == "NOSE"
    assert row["fill"]["backend"] == "python" and row["fill"]["pattern_s"] > 0
    assert capsys.readouterr().out.strip().endswith(data["verdict"]["sentence"])
    assert main(["report", path, "--sizes", "8", "-o", str(tmp_path / "x")]) == 2
    assert "fixed recurrence" in capsys.readouterr().err


def test_size_too_large_is_skipped_with_the_estimate(monkeypatch, tmp_path):
    # 200 kB: the 9x9 trace fits, the 65x65 trace (~0.9 MB) does not, the 1001x1001
    # table (3 copies of 4 MB) does not either
    monkeypatch.setattr(memory, "available_memory", lambda: 200_000)
    fam = pick(LCS_FAMILY)
    rep = rp.report(fam, [8, 64, 1000], "cpu", tmp_path / "r", repeat=1, progress=False)
    small, mid, big = rep.rows
    assert small["overhead"]["trace_s"] > 0 and small["fill"]["stages_s"] > 0
    why = mid["overhead"]["skipped"]
    assert "needs about 0.9 MB" in why and "0.2 MB is available" in why
    assert mid["overhead"]["trace_s"] is None and mid["fill"]["stages_s"] is None
    assert mid["fill"]["pattern_s"] > 0 and mid["fill"]["sequential_s"] > 0  # no graph needed
    assert "needs the graph's stages" in mid["fill"]["cpu"]["stages"]["skipped"]
    assert big["skipped"] and "12.0 MB" in big["skipped"] and "skipped" in big["skipped"]
    assert rep.verdict["graph_pays"] == [small["overhead"]["total_s"] + small["fill"]["stages_s"]
                                         < small["fill"]["sequential_s"], None, None]
    md = (tmp_path / "r" / "report.md").read_text()
    assert "graph not measured" in md and "skipped: n=1000" in md


def test_too_large_error_from_the_tracer_is_caught(monkeypatch):
    monkeypatch.setattr(report_measure, "_trace_estimate", lambda cells, history: (0, 3.0, None))

    @recurrence(shape=(9, 9), dtype=np.int32)
    def grid(M, i, j):
        return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]

    rep = rp.report(grid, backends="python", repeat=1, memory_limit=5_000, progress=False)
    row = rep.rows[0]
    assert "needs about" in row["overhead"]["skipped"]  # the tracer's own TooLargeError
    assert row["fill"]["pattern_s"] > 0 and row["edges"] is None
    assert "could not be measured" in rep.sentence


def test_failing_executor_is_reported_and_the_others_run(monkeypatch, tmp_path):
    real = report_measure.fill

    def flaky(rec, backend, schedule, **kwargs):
        if (backend, schedule) == ("cpu", "stages"):
            raise RuntimeError("simulated executor failure")
        return real(rec, backend=backend, schedule=schedule, **kwargs)

    monkeypatch.setattr(report_measure, "fill", flaky)
    rec = pick(LCS_FAMILY)(6)
    rep = rp.report(rec, backends="python,cpu", out_dir=tmp_path / "r", repeat=1, progress=False)
    f = rep.rows[0]["fill"]
    assert f["cpu"]["stages"]["error"] == "RuntimeError: simulated executor failure"
    assert f["cpu"]["stages_s"] is None
    assert f["cpu"]["pattern_s"] > 0 and f["cpu"]["sequential_s"] > 0
    assert all((f["python"][f"{s}_s"] or 0) > 0 for s in SCHEDULES), f["python"]
    # the cpu filled the pattern, so it stays the top-level backend
    assert f["backend"] == "cpu" and f["stages_s"] is None
    md = (tmp_path / "r" / "report.md").read_text()
    assert "**error**: RuntimeError: simulated executor failure" in md


def test_no_pattern_recurrence(write_rec, tmp_path):
    path = write_rec("""
    @family
    def skew(n):
        @recurrence(shape=(n, n), dtype=np.int64)
        def skew(M, i, j):
            if i == 0 or j == 0 or j == n - 1:
                return 1
            return M[i, j - 1] + M[i - 1, j + 1]
        return skew
    """)
    rep = rp.report(pick(path), [5, 7], "python", repeat=1, progress=False)
    assert [r["pattern"] for r in rep.rows] == [None, None]
    assert all(r["fill"]["python"]["pattern"]["skipped"] == "no pattern fits the reads"
               for r in rep.rows)
    assert all(r["fill"]["stages_s"] > 0 for r in rep.rows)
    assert all(r["fill"]["hyperplane_s"] > 0 and r["hyperplane"] == [2, 1] for r in rep.rows)
    assert "no pattern fits" in rep.sentence and rep.verdict["pattern_wins_from"] is None


def test_a_recurrence_only_a_hyperplane_fits_times_the_hyperplane_fill(tmp_path):
    # examples/skew.py: n x (n+1) random rewards, reads Left and UpRight, pi = (2, 1)
    rep = rp.report(pick(SKEW_FAMILY), [4, 9], "cpu", tmp_path / "r", repeat=2, progress=False)
    for r, n in zip(rep.rows, (4, 9)):
        assert r["shape"] == [n, n + 1] and r["pattern"] is None
        assert r["hyperplane"] == [2, 1] and r["hyperplane_steps"] == 2 * (n - 1) + n + 1
        f = r["fill"]
        e = f["cpu"]["hyperplane"]
        assert e["verified"] == "equals the sequential reference exactly"
        assert e["steps"] == r["hyperplane_steps"] and e["runs"] == 2
        assert 0 < e["min_s"] <= e["median_s"] == f["cpu"]["hyperplane_s"] == f["hyperplane_s"]
        for key in ("sequential_s", "stages_s"):  # the other columns are still there
            assert f[key] > 0
        assert f["cpu"]["pattern"]["skipped"] == "no pattern fits the reads"
    v = rep.verdict
    paths = [r["overhead"]["total_s"] + r["fill"]["stages_s"] for r in rep.rows]
    assert v["hyperplane_beats_graph"] == [r["fill"]["hyperplane_s"] < p
                                           for r, p in zip(rep.rows, paths)]
    assert v["pattern_beats_graph"] == [None, None] and v["pattern_wins_from"] is None
    assert "no pattern fits; the hyperplane pi = (2, 1) fill" in rep.sentence
    md = (tmp_path / "r" / "report.md").read_text()
    assert "| pattern steps | hyperplane pi | hyperplane steps |" in md
    assert "| none | – | (2, 1) | 26 |" in md  # n=9: 2 * 8 + 10 steps
    assert md.count("| hyperplane pi = (2, 1) | ") == 2 and "hyperplane beats graph?" in md
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["rows"][1]["fill"]["hyperplane_s"] == rep.rows[1]["fill"]["hyperplane_s"]


def test_a_hyperplane_fill_that_differs_from_the_reference_is_an_error(monkeypatch):
    real = report_measure.fill

    def wrong(rec, backend, schedule, **kwargs):
        res = real(rec, backend=backend, schedule=schedule, **kwargs)
        if schedule == "hyperplane":
            res.table[-1, -1] += 1
        return res

    monkeypatch.setattr(report_measure, "fill", wrong)
    rep = rp.report(pick(SKEW_FAMILY)(5), backends="cpu", repeat=1, progress=False)
    f = rep.rows[0]["fill"]
    assert f["cpu"]["hyperplane"]["error"].startswith("verify failed: cell (4, 5)")
    assert f["hyperplane_s"] is None and f["stages_s"] > 0


def test_a_hyperplane_fill_under_the_simulator():
    rep = rp.report(pick(SKEW_FAMILY)(3), backends="cpu,cuda", repeat=1, allow_simulator=True,
                    progress=False)
    cu = rep.rows[0]["fill"]["cuda"]["hyperplane"]
    assert cu["median_s"] > 0 and cu["verified"] and cu["h2d_s"] >= 0 and cu["d2h_s"] >= 0
    assert rep.rows[0]["fill"]["backend"] == "cpu"  # simulated times never the headline


def test_cuda_under_the_simulator_reports_transfers_apart(tmp_path):
    @recurrence(shape=(4, 4), dtype=np.int64)
    def grid(M, i, j):
        return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]

    rep = rp.report(grid, backends="cpu,cuda", repeat=1, allow_simulator=True, progress=False)
    cu = rep.rows[0]["fill"]["cuda"]
    for s in ("pattern", "stages"):
        assert cu[s]["median_s"] > 0 and cu[s]["h2d_s"] >= 0 and cu[s]["d2h_s"] >= 0
    assert "no sequential executor" in cu["sequential"]["skipped"]
    assert rep.primary == "cpu"  # simulated times never become the headline
    md = markdown(rep)
    assert "host→device" in md and "simulated" in rep.backends["cuda"]


@pytest.mark.parametrize("argv, code, text", [
    (["--sizes", "8,x"], 2, "'x' is not an integer"),
    (["--sizes", "0"], 2, "must be positive"),
    ([], 2, "is a family: give its sizes"),
    (["--sizes", "8", "--backend", "tpu"], 2, "unknown backend 'tpu'"),
    (["--sizes", "8", "--repeat", "0"], 2, "--repeat must be at least 1"),
    (["--sizes", "8", "--name", "nope"], 2, "no recurrence named 'nope'"),
])
def test_cli_usage_errors(argv, code, text, tmp_path, capsys):
    assert main(["report", LCS_FAMILY, "-o", str(tmp_path / "o"), *argv]) == code
    err = capsys.readouterr().err
    assert text in err and "Traceback" not in err


def test_cli_missing_file_and_invalid_recurrence(write_rec, tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing.py"), "-o", str(tmp_path / "o")]) == 2
    assert main(["report", write_rec(CYCLE), "-o", str(tmp_path / "c")]) == 1
    err = capsys.readouterr().err
    assert "(1, 2) -> (1, 3) -> (1, 2)" in err and "Traceback" not in err
    data = json.loads((tmp_path / "c" / "report.json").read_text())
    assert "cyclic" in data["rows"][0]["error"]
    assert data["verdict"]["sentence"].startswith("For cyc, nothing could be measured")
    with pytest.raises(SystemExit) as e:  # -o is required
        main(["report", write_rec(CYCLE)])
    assert e.value.code == 2


def test_parse_options():
    assert parse_sizes(" 16,8 ,16") == [8, 16]
    with pytest.raises(UsageError):
        parse_sizes("8,,-1")
    assert report_data.parse_backends("cuda,cpu") == ["cpu", "cuda"]
    assert report_data.parse_backends("auto") == ["cpu"]  # the simulator is not a GPU


def test_thesis_script_quick(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_thesis_results",
                                                  ROOT / "docs" / "make_thesis_results.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    code = mod.main([str(tmp_path), "--cases", "binomial,matrix_chain", "--binomial", "6",
                     "--matrix-chain", "6,4096", "--repeat", "1", "--backend", "python"])
    assert code == 0
    index = (tmp_path / "README.md").read_text()
    assert "For binomial" in index and "For matrix_chain" in index
    assert "size 4096 was not run" in index
    assert json.loads((tmp_path / "matrix_chain" / "report.json").read_text())["rows"][0]["pattern"] == "SONE"
