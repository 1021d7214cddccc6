"""Where the no-pattern example's GPU fill spends its time (issue 42): LCS at the same size
and at the sheared table's size, ``examples/skew.py`` under ``auto`` (sheared, filled as
NOSE, gathered back), and the sheared table filled directly: as generated, sheared the
other way (twice the strips, each half as long), and two timing variants whose tables
differ from the skew's: the reward loaded by column only (a window load, as LCS's second
string) and no load of the reward at all.  Fills only
(``compute_s``), medians of ``--repeat`` after a warm-up.

    python benchmarks/skew_variants.py [--size 16384] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import lcs  # noqa: E402
import skew  # noqa: E402

from depgraph import cell_ir, fill, load  # noqa: E402
from patterns.hyperplane import Shear, shear  # noqa: E402
from runtime.backends.shear import _source  # noqa: E402


def timed(rec, label: str, repeat: int) -> None:
    first = fill(rec, backend="cuda", copy_back=False)
    t = statistics.median(fill(rec, backend="cuda", copy_back=False).compute_s
                          for _ in range(repeat))
    kernel = " ".join(n for n in first.notes if n.startswith(("kernel", "sheared")))
    print(f"{label:44s} {str(rec.shape):16s} {t * 1e3:8.2f} ms  {kernel[-150:]}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    n = a.size
    base = skew.skew(n)
    timed(lcs.lcs(n), "LCS", a.repeat)
    rng = np.random.default_rng(n)
    timed(lcs.make_lcs(rng.integers(0, 4, n, dtype=np.uint8),
                       rng.integers(0, 4, 2 * n - 1, dtype=np.uint8)),
          "LCS at the sheared table's size", a.repeat)
    timed(base, "skew, auto (sheared, gathered back)", a.repeat)
    wide = shear([(-1, 1), (0, -1)], base.shape)
    tall = Shear(((1, 1), (1, 0)), ((0, 1), (1, -1)), (0, 0), (2 * n, n))  # (i + j, i)
    folder = Path(tempfile.mkdtemp())
    np.save(folder / "A.npy", base.args[0])

    def reward(load: str):  # the reward's load replaced
        return lambda source: source.replace("A[_dg_p, _dg_q - _dg_p]", load)

    variants = [("sheared as generated", wide, str), ("sheared the other way", tall, str),
                ("sheared, the reward by column only", wide, reward("A[0, _dg_q // 2]")),
                ("sheared, no load of the reward", wide,
                 reward("(_dg_p + _dg_q) % 16 - 8"))]
    for k, (label, sh, edit) in enumerate(variants):
        path = folder / f"variant{k}.py"
        source = edit(_source(cell_ir(base), sh))
        path.write_text("import numpy as np\nfrom depgraph import recurrence\n"
                        f"A = np.load({str(folder / 'A.npy')!r})\n"
                        f"@recurrence(shape={tuple(sh.box)}, dtype=np.int32, "
                        f"args=({n}, {n + 1}, A))\n" + source)
        timed(load(path), label, a.repeat)


if __name__ == "__main__":
    main()
