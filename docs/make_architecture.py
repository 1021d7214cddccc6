"""Draw ``docs/img/architecture.dot`` (and ``.png`` where Graphviz's ``dot`` is installed):
the layers of depgraph, the modules in each, and which layer imports which, read from the
code itself, each arrow labelled with what crosses it.

Usage: ``python docs/make_architecture.py`` (from anywhere).  ``tests/test_layout.py``
checks that the layers hold (imports only go down, no cycle) and that the committed DOT
file is what this script draws today.
"""

from __future__ import annotations

import ast
import html
import shutil
import subprocess
import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("depgraph", "patterns", "runtime")

#: The layers, lowest first: a module imports modules of its own layer and lower ones only.
#: Each is ``(name, what it owns, module prefixes)``.
LAYERS = (
    ("model", "the recurrence, errors, sizes; the eight patterns' geometry",
     ("depgraph.errors", "depgraph.memory", "depgraph.model", "depgraph.usercache",
      "patterns")),
    ("frontend", "a file and a cell function read: the trace, the cell IR",
     ("depgraph.frontend",)),
    ("analysis", "the DAG, Algorithm 1's stages, regions and patterns",
     ("depgraph.analysis",)),
    ("backends", "kernels: python, cpu, cuda (one module per family, one emitter)",
     ("runtime.backends",)),
    ("schedule", "what a fill may do at its size, and which way is fastest",
     ("runtime.schedule",)),
    ("run", "fill / score: plan -> choose -> backend", ("runtime.run", "runtime")),
    ("views", "pictures and reports", ("depgraph.views",)),
    ("api", "the library's top-level calls", ("depgraph",)),
    ("cli", "flags, wording, progress lines", ("depgraph.cli", "depgraph.__main__")),
)
#: What crosses from a layer to one it imports (the values handed from stage to stage).
CARRIES = {
    ("frontend", "model"): "Recurrence",
    ("analysis", "frontend"): "Trace, CellIR",
    ("analysis", "model"): "Recurrence, patterns",
    ("backends", "frontend"): "CellIR, Narrowing",
    ("backends", "model"): "Recurrence, step geometry",
    ("schedule", "analysis"): "Analysis (stages)",
    ("schedule", "backends"): "checked sweep, probes",
    ("schedule", "frontend"): "CellIR",
    ("run", "schedule"): "Plan, Choice, ScorePlan",
    ("run", "backends"): "DeviceFill, Timing, ScoreResult",
    ("run", "frontend"): "CellIR",
    ("views", "run"): "FillResult",
    ("views", "analysis"): "Analysis",
    ("api", "run"): "fill, score",
    ("api", "views"): "render, report",
    ("cli", "api"): "the library's calls",
}


def modules() -> dict[str, Path]:
    """Every module of the project's packages, by dotted name."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the layer ``module`` belongs to (its longest prefix)."""
    found = [(len(p), k) for k, (_, _, prefixes) in enumerate(LAYERS) for p in prefixes
             if module == p or module.startswith(p + ".")]
    if not found:
        raise ValueError(f"{module} is in no layer of docs/make_architecture.py")
    return max(found)[1]


def imports(mods: dict[str, Path]) -> set[tuple[str, str]]:
    """``(importer, imported)`` of every import of one project module by another."""

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges = set()
    for module, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [resolve(f"{node.module}.{a.name}") for a in node.names]
                if None in targets or resolve(node.module) in targets:
                    targets = [resolve(node.module)]
            elif isinstance(node, ast.Import):
                targets = [resolve(a.name) for a in node.names]
            else:
                continue
            edges |= {(module, t) for t in targets if t and t != module}
    return edges


def _rows(members: list[str], mods: dict[str, Path]) -> str:
    """The modules of a layer as table rows, one a package: ``pkg: a, b, c``."""
    by_package: dict[str, list[str]] = {}
    for m in members:
        if mods[m].name == "__init__.py":
            by_package.setdefault(m, [])
        else:
            package, _, leaf = m.rpartition(".")
            by_package.setdefault(package, []).append(leaf)
    rows = []
    for package, leaves in sorted(by_package.items()):
        text = f"{package}: {', '.join(leaves)}" if leaves else package
        rows.append(f'<tr><td align="left">{html.escape(text)}</td></tr>')
    return "".join(rows)


def dot_source() -> str:
    """The picture as DOT text: a box a layer listing its modules, top (the CLI) to bottom
    (the model); an arrow from a layer to each layer it imports that no other arrow
    already reaches through a layer between, labelled with what crosses it."""
    mods = modules()
    lines = ["digraph architecture {", "  rankdir=TB; nodesep=0.4; ranksep=0.45;",
             '  node [shape=plaintext, fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9, color="#555555"];',
             '  label="depgraph: its layers, and which imports which (an arrow points to '
             'what a layer needs; values travel back up it)"; labelloc=t; '
             'fontname="Helvetica"; fontsize=12;']
    for k, (name, owns, _) in enumerate(LAYERS):
        members = sorted(m for m in mods if layer_of(m) == k)
        lines.append(f'  "{name}" [label=<<table border="1" cellborder="0" cellspacing="1">'
                     f'<tr><td align="left"><b>{name}</b>: {html.escape(owns)}</td></tr>'
                     f"{_rows(members, mods)}</table>>];")
    layered = nx.DiGraph((LAYERS[layer_of(a)][0], LAYERS[layer_of(b)][0])
                         for a, b in imports(mods) if layer_of(a) != layer_of(b))
    for a, b in sorted(nx.transitive_reduction(layered).edges(),
                       key=lambda e: (-_index(e[0]), -_index(e[1]))):
        label = CARRIES.get((a, b), "")
        lines.append(f'  "{a}" -> "{b}"' + (f' [label=" {label}"]' if label else "") + ";")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _index(layer: str) -> int:
    return [name for name, _, _ in LAYERS].index(layer)


def main() -> int:
    """Write the DOT file, and the PNG where ``dot`` is installed."""
    out = ROOT / "docs" / "img" / "architecture.dot"
    out.write_text(dot_source())
    print(f"wrote {out}")
    dot = shutil.which("dot")
    if dot is None:
        print("Graphviz's dot is not installed: no PNG", file=sys.stderr)
        return 0
    png = out.with_suffix(".png")
    subprocess.run([dot, "-Tpng", "-Gdpi=110", str(out), "-o", str(png)], check=True)
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
