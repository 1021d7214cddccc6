import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sources import CYCLE, LCS

from depgraph.cli import main

OOB = """
@recurrence(shape=(5, 5), dtype=np.int64)
def oob(M, i, j):
    return M[i - 1, j] if j == 1 else 0
"""

REQUIRED = ["name", "shape", "cells", "edges", "base_cases", "stages", "max_stage_width",
            "regions", "patterns", "pattern", "pattern_stages"]


def test_analyze_json_has_the_contract_fields(write_rec, capsys):
    assert main(["analyze", write_rec(LCS), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert all(k in d for k in REQUIRED)
    assert d["name"] == "lcs" and d["shape"] == [8, 7] and d["cells"] == 56
    assert d["regions"] == ["Left", "Up", "UpLeft"] and d["patterns"] == ["NOSE"]
    assert d["pattern"] == "NOSE" and d["pattern_stages"] == 14 and d["base_cases"] == 14


def test_analyze_text(write_rec, capsys):
    assert main(["analyze", write_rec(LCS)]) == 0
    out = capsys.readouterr().out
    assert "selected     NOSE: 14 steps" in out and "edges" in out and "B/edge" in out


def test_target_option(write_rec, capsys):
    assert main(["analyze", write_rec(LCS), "--target", "2,2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["target"] == [2, 2] and d["cells"] < 56


@pytest.mark.parametrize("body, code, text", [
    (CYCLE, 1, "(1, 2) -> (1, 3) -> (1, 2)"),
    (OOB, 1, "cell (0, 1) reads (-1, 1), outside shape (5, 5)"),
    ("x = 1\n", 2, "defines no recurrence"),
])
def test_errors_exit_status_and_message(write_rec, capsys, body, code, text):
    assert main(["analyze", write_rec(body)]) == code
    err = capsys.readouterr().err
    assert text in err and "Traceback" not in err


def test_usage_errors_exit_2(tmp_path, capsys):
    assert main(["analyze", str(tmp_path / "missing.py")]) == 2
    with pytest.raises(SystemExit) as e:
        main(["analyze"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["analyze", "x.py", "--target", "a,b"])
    assert e.value.code == 2


def test_console_script_no_traceback(write_rec):
    path = write_rec(CYCLE)
    r = subprocess.run([sys.executable, "-m", "depgraph", "analyze", path],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("depgraph: error: the recurrence is cyclic")
    r = subprocess.run([sys.executable, "-m", "depgraph", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "analyze" in r.stdout


def test_run_score_prints_the_last_cell(write_rec, capsys):
    path = write_rec(LCS)
    assert main(["run", path, "--score", "--verify", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "score        M(7, 6) = 4  (the last cell of NOSE)" in out
    assert "verify       M(7, 6) equals the sequential reference exactly" in out
    assert main(["run", path, "--score", "--json", "--backend", "python"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["value"], data["cell"], data["pattern"]) == (4, [7, 6], "NOSE")
    assert data["kept_cells"] == 2 * 7 and data["cells"] == 8 * 7


@pytest.mark.parametrize("extra, code, text", [
    (["-o", "t.npy"], 2, "this one walks anti-diagonals and keeps no whole line"),
    (["-o", "t.txt"], 2, "name it OUT.npy"),
    (["--schedule", "stages"], 2, "leave out --schedule stages"),
])
def test_run_score_usage_errors(write_rec, capsys, extra, code, text):
    assert main(["run", write_rec(LCS), "--score", *extra]) == code
    assert text in capsys.readouterr().err


def test_run_score_of_rows_and_its_limits(write_rec, capsys, tmp_path):
    import numpy as np

    knapsack = """
@recurrence(shape=(4, 6), dtype=np.int64, args=(np.array([1, 2, 3, 1]),))
def knap(M, i, j, w):
    return 0 if i == 0 else max(M[i - 1, j], M[i - 1, j - w[i]] + 1 if j >= w[i] else 0)
"""
    out_path = tmp_path / "last.npy"
    assert main(["run", write_rec(knapsack), "--score", "--verify", "-o", str(out_path)]) == 0
    out = capsys.readouterr().out
    assert "M(3, 5) = 2  (the last cell of RUD)" in out and "the last 2 rows kept" in out
    assert "last row     M[3, :] (6 cells): 0, 1, 1, 2, 2, 2" in out
    assert "verify       M[3, :] equals the sequential reference exactly" in out
    assert np.load(out_path).tolist() == [0, 1, 1, 2, 2, 2]
    updown = """
@recurrence(shape=(4, 6), dtype=np.int64)
def updown(M, i, j):
    return 0 if i in (0, 3) else M[i - 1, j] + M[i + 1, j]
"""
    assert main(["run", write_rec(updown), "--score"]) == 1
    err = capsys.readouterr().err
    assert "rows: reads rows [-1, 1] away, not all on one side" in err and "Traceback" not in err


def test_a_closed_output_pipe_ends_quietly(write_rec):
    # `depgraph ... | head`: the reader leaves before the output is written
    import os

    read, write = os.pipe()
    os.close(read)
    r = subprocess.run([sys.executable, "-m", "depgraph", "analyze", write_rec(LCS)],
                       stdout=write, stderr=subprocess.PIPE, text=True)
    os.close(write)
    assert r.returncode == 141 and r.stderr == ""


@pytest.mark.parametrize("body, argv, code, error", [
    (OOB, ["run", "--backend", "cpu"], 1,
     {"kind": "OutOfBoundsError", "cell": [0, 1],
      "message": "cell (0, 1) reads (-1, 1), outside shape (5, 5)"}),
    (CYCLE, ["analyze"], 1, {"kind": "CycleError", "cell": None}),
    (LCS, ["run", "--schedule", "ready", "--backend", "cpu"], 2,
     {"kind": "UsageError", "cell": None, "message": "--schedule ready runs on the cuda backend"}),
])
def test_json_errors_print_one_object(write_rec, capsys, body, argv, code, error):
    assert main([argv[0], write_rec(body), *argv[1:], "--json"]) == code
    out, err = capsys.readouterr()
    got = json.loads(out)["error"]
    assert {k: got[k] for k in error if k != "message"} == {k: v for k, v in error.items()
                                                           if k != "message"}
    assert error.get("message", "") in got["message"] and got["message"] in err


def test_an_output_path_is_checked_before_any_work(write_rec, capsys, tmp_path):
    # the file is cyclic (exit 1 once loaded): exit 2 shows nothing was loaded
    assert main(["run", write_rec(CYCLE), "-o", str(tmp_path / "no" / "t.npy")]) == 2
    assert "directory" in capsys.readouterr().err
    assert main(["report", write_rec(CYCLE), "-o", str(tmp_path / "rec1.py" / "r")]) == 2
    assert "it is a file" in capsys.readouterr().err


def test_a_full_disk_leaves_no_file(write_rec, capsys, tmp_path, monkeypatch):
    import errno

    import numpy as np

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "save", full)
    out = tmp_path / "t.npy"
    assert main(["run", write_rec(LCS), "--backend", "cpu", "-o", str(out)]) == 1
    assert "No space left on device; nothing was written there" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec1.py"]


def test_an_unwritable_report_folder_is_refused_before_measuring(write_rec, capsys, tmp_path,
                                                                   monkeypatch):
    import depgraph.views.files as files

    monkeypatch.setattr(files.os, "access", lambda path, mode: False)
    assert main(["report", write_rec(CYCLE), "-o", str(tmp_path / "r")]) == 2
    assert "is not writable" in capsys.readouterr().err


SPIN = """
import os, pathlib
pathlib.Path(os.environ["SPIN_LOADED"]).touch()  # the fill's compile and run come next

@recurrence(shape=(1, 2), dtype=np.int64)
def spin(M, i, j):
    s = 0
    for k in range(3_000_000_000):  # half a minute in compiled code
        s = (s + k * j) % 1000003
    return s
"""


def test_an_interrupt_ends_a_compiled_fill_at_once(write_rec, tmp_path):
    import os
    import signal
    import time

    loaded = tmp_path / "loaded"
    proc = subprocess.Popen(
        [sys.executable, "-m", "depgraph", "run", write_rec(SPIN), "--backend", "cpu",
         "--schedule", "sequential"],
        env={**os.environ, "SPIN_LOADED": str(loaded)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as from a terminal
    while not loaded.exists() and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(3)  # compiled and spinning by now
    sent = time.perf_counter()
    for _ in range(2):  # pressed twice: one quiet exit
        try:
            proc.send_signal(signal.SIGINT)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    out, err = proc.communicate(timeout=60)
    assert time.perf_counter() - sent < 5
    assert proc.returncode == 130 and err == "depgraph: interrupted\n" and out == ""


def test_run_json_gives_phases_that_add_up_and_the_last_cell(write_rec, capsys):
    assert main(["run", write_rec(LCS), "--backend", "cpu", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    phases = d["phases"]
    parts = sum(v for k, v in phases.items() if k != "total_s" and v is not None)
    assert abs(parts - phases["total_s"]) < 1e-6 + 0.05 * phases["total_s"]
    assert d["target"] == [7, 6] and d["value"] == 4 and d["on_device"] is False
    assert phases["output_s"] >= 0  # making the object is timed too
    assert main(["run", write_rec(LCS), "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "value        M(7, 6) = 4 (the last cell filled)" in out and "s in all: startup" in out


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_run_score_gives_phases_that_add_up(write_rec, capsys, backend):
    assert main(["run", write_rec(LCS), "--score", "--backend", backend, "--verify",
                 "--json"]) == 0
    phases = json.loads(capsys.readouterr().out)["phases"]
    parts = sum(v for k, v in phases.items() if k != "total_s" and v is not None)
    assert abs(parts - phases["total_s"]) < 1e-6 + 0.05 * phases["total_s"]
    assert phases["verify_s"] is not None and phases["check_s"] is not None
    assert phases["output_s"] >= 0 and list(phases)[-2:] == ["output_s", "total_s"]
    assert main(["run", write_rec(LCS), "--score", "--backend", backend]) == 0
    assert "s in all: startup" in capsys.readouterr().out


def test_analyze_beyond_the_trace_of_a_3d_table_gives_its_hyperplane(write_rec, capsys):
    big = write_rec("""
@recurrence(shape=(2000, 3000, 4000), dtype=np.int64)
def cube(M, i, j, k):
    return 0 if i == 0 or k == 0 else M[i - 1, j, k] + M[i, j, k - 1]
""")
    assert main(["analyze", big]) == 0
    out = capsys.readouterr().out
    assert "schedule     hyperplane pi = (1, 0, 1): 5,999 steps" in out
    assert "regions" not in out and "needs trace  edges" in out


def test_analyze_beyond_the_trace_answers_from_the_certificate(write_rec, capsys):
    big = write_rec("""
@recurrence(shape=(10**6, 10**6), dtype=np.int64)
def paths(M, i, j):
    return 1 if i == 0 or j == 0 else M[i - 1, j] + M[i, j - 1]
""")
    assert main(["analyze", big, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["regions"], d["patterns"], d["pattern"], d["pattern_stages"]) == (
        ["Left", "Up"], ["NOSE"], "NOSE", 1999999)
    assert d["stages"] is None and "stages" in d["needs_trace"] and "memory" in d["not_traced"]
    assert main(["analyze", big]) == 0
    assert "needs trace  edges" in capsys.readouterr().out
    unproven = write_rec("""
@recurrence(shape=(10**6, 10**6), dtype=np.int64)
def loop(M, i, j):
    k = 0
    while k < 2:
        k += 1
    return 1 if i == 0 else M[i - 1, j + k - 2]  # k after the loop: unknown to the proof
""")
    assert main(["analyze", unproven]) == 1
    assert "needs about" in capsys.readouterr().err


def test_threads_option(write_rec, capsys, tmp_path):
    assert main(["run", write_rec(LCS), "--backend", "cpu", "--threads", "1", "--schedule",
                 "tiled", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["value"] == 4 and "filled on 1 CPU thread(s)" in d["notes"]
    assert main(["run", write_rec(LCS), "--backend", "cpu", "--threads", "0"]) == 2
    assert "--threads 0: give 1 to" in capsys.readouterr().err
    assert main(["run", write_rec(LCS), "--score", "--backend", "cpu", "--threads", "1"]) == 0
    capsys.readouterr()
    assert main(["report", write_rec(LCS), "--backend", "cpu", "--repeat", "1", "--threads", "1",
                 "-o", str(tmp_path / "rep")]) == 0
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["settings"]["threads"] == 1


SKEW = """
@recurrence(shape=(6, 8), dtype=np.int64)
def skew(M, i, j):
    if i == 0 or j == 0 or j == 7:
        return 1
    return M[i - 1, j + 1] + M[i, j - 1]
"""
CUBE_OOB = """
idx = np.arange(4)
idx[2] = 9
@recurrence(shape=(3, 4, 4), dtype=np.int64, args=(idx,))
def cube(M, k, i, j, idx):
    return i if k == 0 else M[k - 1, i, idx[j]] + M[k - 1, i, j]
"""


def test_analyze_reports_the_schedule(write_rec, capsys):
    assert main(["analyze", write_rec(SKEW), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["pattern"] is None
    assert d["schedule"] == {"kind": "hyperplane", "pi": [2, 1], "steps": 18}
    assert main(["analyze", write_rec(SKEW)]) == 0
    assert "schedule     hyperplane pi = (2, 1): 18 steps" in capsys.readouterr().out
    assert main(["analyze", write_rec(LCS), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["schedule"] == {"kind": "pattern", "pi": [1, 1], "steps": 14}


def test_run_by_a_hyperplane(write_rec, capsys):
    assert main(["run", write_rec(SKEW), "--backend", "cpu", "--schedule", "hyperplane",
                 "--verify", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["schedule"], d["pi"], d["steps"]) == ("hyperplane", [2, 1], 18)
    assert d["verified"] == "equals the sequential reference exactly"
    assert main(["run", write_rec(SKEW), "--backend", "python"]) == 0
    assert "schedule     hyperplane pi = (2, 1): 18 steps" in capsys.readouterr().out


def test_a_k_dimensional_bad_read_exits_1_and_writes_nothing(write_rec, tmp_path, capsys):
    out = tmp_path / "t.npy"
    for backend in ("cpu", "cuda"):
        assert main(["run", write_rec(CUBE_OOB), "--backend", backend, "-o", str(out)]) == 1
        err = capsys.readouterr().err
        assert "cell (1, 0, 2) reads (0, 0, 9), outside shape (3, 4, 4)" in err
        assert "Traceback" not in err and not out.exists()


def test_run_recovers_the_solution(write_rec, tmp_path, capsys):
    out = tmp_path / "sol.json"
    assert main(["run", write_rec(LCS), "--backend", "cpu", "--solution", "--json",
                 "--solution-out", str(out)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["solution"]["target"] == [7, 6] and d["solution"]["edges"][0][0] == [7, 6]
    assert json.loads(out.read_text()) == d["solution"] and d["phases"]["solution_s"] >= 0
    assert main(["run", write_rec(LCS), "--solution", "--target", "3,3"]) == 0
    assert "solution     " in capsys.readouterr().out


def test_run_score_recovers_the_solution_from_checkpoints(write_rec, tmp_path, capsys):
    out = tmp_path / "sol.json"
    assert main(["run", write_rec(LCS), "--solution", "--json", "--target", "6,5"]) == 0
    whole = json.loads(capsys.readouterr().out)["solution"]
    assert main(["run", write_rec(LCS), "--score", "--solution", "--json", "--target", "6,5",
                 "--block-rows", "2", "--solution-out", str(out)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["solution"] == whole == json.loads(out.read_text()) and d["value"] == 4
    assert d["solution_memory_bytes"] == d["kept_cells"] * 4 > 0
    assert d["recovery"]["block_rows"] == 2 and d["phases"]["refill_s"] >= 0
    assert main(["run", write_rec(LCS), "--score", "--solution"]) == 0
    text = capsys.readouterr().out
    assert "solution     " in text and "(checkpoints " in text


DOWN = """
@recurrence(shape=(4, 4), dtype=np.int64)
def down(M, i, j):
    return 1 if i == 3 or j == 0 else M[i + 1, j] + M[i, j - 1]
"""


@pytest.mark.parametrize("body, argv, text", [
    (DOWN, ["--solution", "--score"], "goes down; leave out --score"),
    (LCS, ["--solution", "--score", "-o", "x.npy"], "leave out -o"),
    (LCS, ["--solution", "--block-rows", "2"], "--block-rows goes with --score --solution"),
])
def test_score_solution_usage_errors_exit_2(write_rec, capsys, body, argv, text):
    assert main(["run", write_rec(body), *argv]) == 2
    assert text in capsys.readouterr().err


@pytest.mark.parametrize("argv, text", [
    (["--target", "1,1"], "go with --solution"),
    (["--solution", "--solution-out", "x.txt"], "FILE.json"),
])
def test_solution_usage_errors_exit_2(write_rec, capsys, argv, text):
    assert main(["run", write_rec(LCS), *argv]) == 2
    assert text in capsys.readouterr().err


#: A local alignment's best cell: the recurrence names it as its answer.
BEST = """
X = np.frombuffer(b"TTACGTAA", dtype=np.uint8)
Y = np.frombuffer(b"GGACGTCC", dtype=np.uint8)

def best(M):
    return np.unravel_index(np.argmax(M), M.shape)

@recurrence(shape=(len(X) + 1, len(Y) + 1), dtype=np.int32, args=(X, Y), target=best)
def local(M, i, j, X, Y):
    if i == 0 or j == 0:
        return 0
    diag = M[i - 1, j - 1] + (2 if X[i - 1] == Y[j - 1] else -1)
    return max(0, diag, M[i - 1, j] - 1, M[i, j - 1] - 1)
"""


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_run_reads_the_recurrences_answer(write_rec, capsys, backend):
    path = write_rec(BEST)
    assert main(["run", path, "--backend", backend, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["target"] == [6, 6] and d["value"] == 8 and d["answer"] is True  # ACGT: 4 x 2
    assert main(["run", path, "--backend", backend, "--solution", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["solution"]
    assert s["target"] == [6, 6] and [e[1] for e in s["edges"]] == [[5, 5], [4, 4], [3, 3], [2, 2]]
    assert main(["run", path, "--backend", backend, "--solution", "--target", "8,8"]) == 0
    out = capsys.readouterr().out
    assert "value        M(6, 6) = 8 (the recurrence's answer)" in out
    assert "solution     7 cells from M(8, 8) = 6 (6 edges)" in out  # ACGT, then gaps


def test_run_score_solution_asks_for_the_cell_a_target_function_finds(write_rec, capsys):
    path = write_rec(BEST)
    assert main(["run", path, "--score", "--solution"]) == 2
    err = capsys.readouterr().err
    assert "the target function best of 'local' needs the whole filled table, which the score " \
           "does not keep; give the cell (--target) or leave out --score" in err
    assert main(["run", path, "--score", "--solution", "--target", "6,6", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["solution"]["target"] == [6, 6]


#: A chain over the upper triangle whose reads are at constant offsets (Left and Down:
#: SONE), naming the whole chain's cell (0, 5), SONE's last, as its answer.  (Matrix
#: chain's own reads, ``M[i, k]``, are at no constant offset: a score refuses it.)
CHAIN = """
D = np.array([3, 1, 4, 1, 5, 9, 2], dtype=np.int64)

@recurrence(shape=(6, 6), dtype=np.int64, args=(D,), target=(0, 5))
def chain(M, i, j, D):
    if j <= i:
        return 0
    return min(M[i, j - 1], M[i + 1, j]) + D[i] * D[j + 1]
"""


def _filled(path, capsys):
    """``depgraph run --json``'s object: the whole table filled, the answer read off it."""
    assert main(["run", path, "--backend", "python", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("body, answer", [(CHAIN, (0, 5)),
                                          (LCS.replace("args=(X, Y)", "args=(X, Y), target=(4, 3)"),
                                           (4, 3))])
def test_run_score_prints_the_answer_the_recurrence_names(write_rec, capsys, body, answer):
    # the walk's last cell (the chain's) or a cell the CPU walk stops after (LCS's (4, 3))
    path = write_rec(body)
    whole = _filled(path, capsys)
    assert whole["target"] == list(answer) and whole["answer"] is True
    assert main(["run", path, "--score", "--backend", "cpu", "--verify"]) == 0
    out = capsys.readouterr().out
    assert f"score        M{answer} = {whole['value']}  (the recurrence's answer)" in out
    assert "equals the sequential reference exactly" in out
    assert main(["run", path, "--score", "--backend", "cpu", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["cell"], d["value"], d["answer"]) == (list(answer), whole["value"], True)
    # its rate counts the cells it computed: LCS's 8 x 7 walk stopped after anti-diagonal 7
    assert d["filled_cells"] == (d["cells"] if answer == (0, 5) else 35)
    assert d["cells_per_s"] == pytest.approx(d["filled_cells"] / d["compute_s"])
    stopped = [n for n in d["notes"] if n.startswith("the walk stopped after")]
    assert stopped == ([] if answer == (0, 5) else
                       ["the walk stopped after the recurrence's answer M(4, 3), before its "
                        "last cell M(7, 6)"])


def test_run_score_of_smith_waterman_says_its_value_is_not_the_answer(capsys):
    path = str(Path(__file__).resolve().parent.parent / "examples" / "smith_waterman.py")
    note = ("the answer of 'smith_waterman' is the cell best_cell finds in the whole filled "
            "table, which a score does not keep: M(12, 12) is the walk's last cell, not the "
            "answer; a fill of the whole table (not a score) finds it")
    assert main(["run", path, "--size", "12", "--score", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "score        M(12, 12) = " in out and "(the last cell of NOSE)" in out
    assert "the recurrence's answer" not in out and f"why          {note}" in out
    assert main(["run", path, "--size", "12", "--score", "--backend", "cpu", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["cell"], d["answer"], d["notes"][-1]) == ([12, 12], False, note)


def test_analyze_says_the_answer_the_recurrence_names_and_keeps_the_whole_table(capsys):
    path = str(Path(__file__).resolve().parent.parent / "examples" / "matrix_chain.py")
    assert main(["analyze", path, "--size", "10", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert all(k in d for k in REQUIRED) and d["cells"] == 100 and d["target"] is None
    assert (d["answer_cell"], d["answer_function"]) == ([0, 9], None)
    assert main(["analyze", path, "--size", "10"]) == 0
    assert ("answer       cell (0, 9), named by the recurrence (--target 0,9 keeps its "
            "solution-generated graph)") in capsys.readouterr().out
    assert main(["analyze", path, "--size", "10", "--target", "0,9"]) == 0
    out = capsys.readouterr().out
    assert "target       (0, 9): solution-generated graph only (55 of 100 cells)" in out
    assert "answer       cell (0, 9), named by the recurrence (its solution-generated graph " \
           "above)" in out


def test_analyze_says_where_a_target_function_finds_the_answer(write_rec, capsys):
    assert main(["analyze", write_rec(BEST)]) == 0
    assert "answer       cell (6, 6), where best finds it in the filled table" in \
        capsys.readouterr().out


def test_render_solution_starts_from_the_answer_the_recurrence_names(write_rec, tmp_path,
                                                                     capsys):
    assert main(["render", write_rec(CHAIN), "--view", "solution", "-o",
                 str(tmp_path / "s.dot")]) == 0
    assert "the solution: 6 cells from M(0, 5) = " in capsys.readouterr().out


def test_run_target_outside_the_table_exits_2_before_filling(write_rec, capsys):
    for target, text in [("9,9", "--target (9, 9): outside the table's shape (8, 7)"),
                         ("1,2,3", "--target (1, 2, 3): 3 indices for a 2-D table")]:
        assert main(["run", write_rec(LCS), "--solution", "--target", target]) == 2
        err = capsys.readouterr().err
        assert text in err and "Traceback" not in err


def test_a_bad_recovery_function_exits_1_naming_the_cell(write_rec, capsys):
    body = LCS.replace("args=(X, Y))", "args=(X, Y), recover=lambda M, i, j, X, Y: [(0, 0)])")
    assert main(["run", write_rec(body), "--backend", "python", "--solution"]) == 1
    err = capsys.readouterr().err
    assert "cell (7, 6): the recovery function <lambda> of 'lcs' returned (0, 0), which the " \
           "cell does not read" in err and "Traceback" not in err


def test_a_sum_of_reads_is_said_in_a_note(write_rec, capsys):
    body = """
    @recurrence(shape=(5, 5), dtype=np.int64)
    def binom(M, i, j):
        if j == 0 or j >= i:
            return int(j == 0 or j == i)
        return M[i - 1, j - 1] + M[i - 1, j]
    """
    path = write_rec(body)
    assert main(["run", path, "--backend", "python", "--solution", "--target", "4,2", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(n.startswith("solution: 4 cell(s) read several cells") for n in notes)
    assert main(["run", path, "--backend", "python", "--solution", "--target", "4,2"]) == 0
    assert "why          solution: 4 cell(s) read several cells" in capsys.readouterr().out
    assert main(["run", path, "--score", "--solution", "--target", "4,2"]) == 0
    assert "why          solution: 4 cell(s) read several cells" in capsys.readouterr().out


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_a_command_ending_its_process_releases_only_a_gpu_it_opened(write_rec, capsys,
                                                                    backend):
    # the simulator (cuda here) opens no GPU: nothing to hand back, no release phase
    assert main(["run", write_rec(LCS), "--backend", backend, "--json"], ending=True) == 0
    phases = json.loads(capsys.readouterr().out)["phases"]
    assert "release_s" not in phases and phases["compute_s"] > 0


@pytest.mark.parametrize("score", [False, True])
def test_a_command_ending_its_process_leaves_its_result_to_the_exit(write_rec, capsys,
                                                                   monkeypatch, score):
    """Its result and output are freed by the exit, wholesale, not object by object after
    the output; a command called from Python keeps nothing."""
    from depgraph import cli

    monkeypatch.setattr(cli, "_LEFT_TO_EXIT", [])
    args = ["run", write_rec(LCS), "--backend", "cpu", "--json"] + ["--score"] * score
    assert main(args) == 0 and cli._LEFT_TO_EXIT == []
    assert main(args, ending=True) == 0
    res, data = cli._LEFT_TO_EXIT
    printed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert data["value"] == printed["value"]
    assert data["phases"]["load_s"] == printed["phases"]["load_s"]
    assert hasattr(res, "compute_s")


def test_analyze_of_a_3d_table_prints_its_certificate(capsys):
    assert main(["analyze", "examples/floyd_warshall.py", "--size", "4", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["regions"] is None and d["patterns"] is None
    assert d["schedule"] == {"kind": "hyperplane", "pi": [1, 0, 0], "steps": 5}
    cert = d["certificate"]
    assert (cert["ndim"], cert["regions"], cert["patterns"]) == (3, None, None)
    assert cert["holds_for_this_data"] and cert["hyperplane"] == {"pi": [1, 0, 0],
                                                                  "proven": True, "why": None}
    assert [r["span"] for r in cert["reads"]][1] == [[-1, -1], [0, 0], [None, None]]
    assert main(["analyze", "examples/lcs3.py", "--size", "4"]) == 0
    out = capsys.readouterr().out
    assert ("certificate  proven for every shape when X.shape[0] == M.shape[0] - 1, "
            "Y.shape[0] == M.shape[1] - 1, Z.shape[0] == M.shape[2] - 1: reads "
            "(i - 1, j - 1, k - 1) at (-1, -1, -1), "
            "(i - 1, j, k) at (-1, 0, 0), (i, j - 1, k) at (0, -1, 0), (i, j, k - 1) at "
            "(0, 0, -1), always in bounds; pi = (1, 1, 1) puts every read on an earlier "
            "step\n") in out
    assert "schedule     hyperplane pi = (1, 1, 1): 13 steps" in out


def test_run_names_the_read_a_3d_data_requirement_let_out(write_rec, capsys):
    from test_certify import KNAPSACKS

    path = write_rec(KNAPSACKS.format(last=-2))
    assert main(["run", path, "--size", "12", "--backend", "cpu"]) == 1
    err = capsys.readouterr().err
    assert re.search(r"cell \(\d, 12, 3\d\) reads \(\d, 11, 3\d\), outside shape \(2, 13, 37\)",
                     err) and "Traceback" not in err
    assert main(["run", write_rec(KNAPSACKS.format(last=3)), "--size", "12"]) == 0
