"""The layers hold: import-linter's contracts (.importlinter: graph <- ingest <- lit3r, and
lit3r.read never imports lit3r.pipeline) and no import circle between modules of graph/,
ingest/ or lit3r/ (imports inside functions count; those under ``if TYPE_CHECKING:`` do not)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The packages whose modules must not import each other in a circle.
PACKAGES = tuple(p.name for p in (ROOT / "graph", ROOT / "ingest", ROOT / "lit3r"))

#: Known import circles (none: a circle fails the test).
KNOWN_CIRCLES: list[set[str]] = []


def _circles(graph: grimp.ImportGraph) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    adj = {m: sorted(graph.find_modules_directly_imported_by(m) & graph.modules) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    for root in sorted(adj):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on.add(v)
            if i < len(adj[v]):
                work.append((v, i + 1))
                w = adj[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


@pytest.fixture(scope="module")
def import_graph() -> grimp.ImportGraph:
    sys.path.insert(0, str(ROOT))
    try:
        return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True, cache_dir=None)
    finally:
        sys.path.remove(str(ROOT))


def test_no_import_circle_between_modules(import_graph):
    new = [sorted(c) for c in _circles(import_graph) if not any(c <= known for known in KNOWN_CIRCLES)]
    assert new == [], f"import circles: {new}"


def test_the_circle_finder_finds_a_circle():
    graph = grimp.ImportGraph()
    for a, b in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")):
        graph.add_import(importer=a, imported=b)
    assert _circles(graph) == [{"p.a", "p.b", "p.c"}]


def test_the_import_contracts_are_kept():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe, "lint-imports is missing: pip install -e '.[dev]' (import-linter)"
    res = subprocess.run([exe, "--no-cache", str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "2 kept, 0 broken" in res.stdout
