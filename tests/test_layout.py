"""The layout the design fixes (``docs/architecture.md``): modules import one way, layer by
layer (``docs/make_architecture.py``'s ``LAYERS``), with no cycle; none is over 800 lines;
a module imports the project's own modules inside a function only to delay numba.cuda."""

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import depgraph

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("make_architecture",
                                               ROOT / "docs" / "make_architecture.py")
arch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(arch)

MODULES = arch.modules()
IMPORTS = arch.imports(MODULES)
#: Modules another may import inside a function: they import numba.cuda when imported.
DELAYED = {"runtime.backends.cuda.probes"}


def _inside_functions(module: str) -> set[str]:
    """The project modules ``module`` imports inside a function."""
    tree = ast.parse(MODULES[module].read_text())
    names = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and node.module:
                    names |= {f"{node.module}.{a.name}" for a in node.names}
                elif isinstance(node, ast.Import):
                    names |= {a.name for a in node.names}
    return {m for m in MODULES for n in names if n == m} - {module}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down_the_layers(module):
    mine = arch.layer_of(module)
    for importer, target in IMPORTS:
        if importer == module:
            assert arch.layer_of(target) <= mine, (
                f"{module} ({arch.LAYERS[mine][0]}) imports {target} "
                f"({arch.LAYERS[arch.layer_of(target)][0]}), a layer above it")


def test_no_import_cycle():
    cycles = [sorted(c) for c in nx.strongly_connected_components(nx.DiGraph(IMPORTS))
              if len(c) > 1]
    assert cycles == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_project_imports_inside_functions_only_delay_numba_cuda(module):
    late = _inside_functions(module)
    assert late <= DELAYED, f"{module} imports {late - DELAYED} inside a function"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_over_800_lines(module):
    assert MODULES[module].read_text().count("\n") <= 800


def test_numba_cuda_is_imported_only_by_the_cuda_backend():
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            cuda = (isinstance(node, ast.Import) and any(a.name.startswith("numba.cuda")
                                                         for a in node.names)) or (
                isinstance(node, ast.ImportFrom) and node.module is not None
                and (node.module.startswith("numba.cuda")
                     or node.module == "numba" and any(a.name == "cuda" for a in node.names)))
            assert not cuda or module.startswith("runtime.backends.cuda"), module


def test_the_architecture_picture_is_drawn_from_the_code():
    dot = arch.dot_source()
    assert all(f'"{name}"' in dot for name, _, _ in arch.LAYERS)
    assert '"analysis" -> "frontend" [label=" Trace, CellIR"]' in dot
    assert (ROOT / "docs" / "img" / "architecture.dot").read_text() == dot, (
        "docs/img/architecture.dot is stale: run python docs/make_architecture.py")


def test_every_top_level_name_is_there():
    assert all(getattr(depgraph, name) is not None for name in depgraph.__all__)
    assert set(depgraph.__all__) <= set(dir(depgraph))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        depgraph.nope  # noqa: B018


def test_import_depgraph_leaves_the_runtime_and_views_for_first_use():
    # a recurrence file's `from depgraph import recurrence` and `depgraph analyze` pay
    # for neither; `depgraph.fill` imports the runtime when first used
    code = ("import sys, depgraph\n"
            "late = lambda: sorted(m for m in sys.modules if m.startswith(('runtime', "
            "'depgraph.views', 'numba', 'matplotlib', 'graphviz')))\n"
            "print(late()); depgraph.fill; print('runtime.run' in late())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.split("\n")
    assert out[:2] == ["[]", "True"]
