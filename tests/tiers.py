"""The test tiers: what a test needs beyond the installed package, found from its code.

A test needs one or more of :data:`NEEDS` (each a pytest marker); a test that needs none of them
is marked ``fast`` and runs in ``make test-fast`` (no network, no torch, no ../shared/data: the
guard in ``tests/fast_tier/sitecustomize.py`` and an unreachable data folder make sure of it).
``tests/conftest.py`` marks every collected test with :func:`needs_of`, so a test added in a new
module or folder is tiered without a marker of its own. It reads the code objects of the test
function, of every fixture it uses (transitively) and of the test modules' helpers they call:

- a fixture named in :data:`FIXTURES` (``shared_data``, ``servers``, ``minilm``, ...);
- a name in :data:`NAMES` used by that code (``neo4j_server``, ``opensearch_server``: a test
  server is started; ``llama_server``; ``torch``; the library's entry points that load the
  encoder), or a string constant in :data:`CONSTANTS` (the CLI commands ``ingest`` and ``ask``);
- a global that is a path inside the shared data folder (``CORPUS / "pdfs"``, a module constant
  such as ``PDF = CORPUS / ...``), or such a path among the test's parameters.

What the code cannot show (a model loaded inside the library, a subprocess that ingests with the
default encoder) is declared with the marker itself, on the test or as the module's
``pytestmark``; the fast tier's guard fails such a test loudly when it is missing.
"""

from __future__ import annotations

import inspect
import types
from pathlib import Path
from typing import Any, Callable, Iterator

#: marker -> what the test needs (the markers' descriptions in pyproject.toml say the same).
NEEDS = {
    "data": "the real papers and questions in ../shared/data",
    "models": "torch and model weights (the packaged MiniLM, a cross-encoder)",
    "servers": "a real Neo4j or OpenSearch (tests/servers/: java 17+ and mvn)",
    "llm": "a real local LLM server (llama_cpp.server with the packaged SmolLM2)",
}
#: fixture name -> the marker it implies (fixtures that use these inherit them).
FIXTURES = {"shared_data": "data", "servers": "servers", "minilm": "models", "tiny_cross_encoder": "models",
            "subset_ingest": "models"}  # subset_ingest: a real `lit3r ingest` with the default encoder
#: a name used by a test's or fixture's code -> the marker it implies (the library's entry points that
#: load the configured encoder count as models: a home built with ``hashing:<dim>`` would not need
#: one, but a test marked for more than it needs only runs later, never not at all).
NAMES = {"neo4j_server": "servers", "opensearch_server": "servers", "llama_server": "llm", "torch": "models",
         "build_stores": "models", "Engine": "models", "load_encoder": "models", "SentenceEncoder": "models"}
#: a string constant in that code -> the marker it implies: the CLI commands that encode
#: (``[sys.executable, "-m", "lit3r.cli", "ingest", ...]``, ``CliRunner().invoke(main, ["ask", ...])``).
CONSTANTS = {"ingest": "models", "ask": "models"}
#: how many helper calls deep the walk follows test-module functions.
DEPTH = 4


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    """``code`` and the code objects nested in it (lambdas, comprehensions, inner functions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _under(value: Any, folder: Path) -> bool:
    return isinstance(value, Path) and (value == folder or folder in value.parents)


def _function(obj: Any) -> Callable | None:
    obj = getattr(obj, "__func__", obj)
    try:
        obj = inspect.unwrap(obj)
    except ValueError:
        return None
    return obj if isinstance(obj, types.FunctionType) else None


def code_needs(fn: Any, shared: Path, seen: set | None = None, depth: int = DEPTH) -> set[str]:
    """The markers that the code of ``fn`` (a test or fixture function), and of the functions of
    test modules it calls by their global name, implies; ``shared`` is the shared data folder."""
    fn = _function(fn)
    seen = set() if seen is None else seen
    if fn is None or fn in seen:
        return set()
    seen.add(fn)
    found: set[str] = set()
    for code in _codes(fn.__code__):
        found |= {CONSTANTS[c] for c in code.co_consts if isinstance(c, str) and c in CONSTANTS}
        for name in code.co_names:
            if name in NAMES:
                found.add(NAMES[name])
            value = fn.__globals__.get(name)
            if _under(value, shared):
                found.add("data")
            elif depth and getattr(value, "__module__", "").startswith("tests"):
                found |= code_needs(value, shared, seen, depth - 1)
    return found


def needs_of(item: Any, shared: Path) -> set[str]:
    """The markers of :data:`NEEDS` that the collected test ``item`` needs: its own markers, its
    fixtures' (:data:`FIXTURES` and their code) and its code's."""
    found = {m.name for m in item.iter_markers() if m.name in NEEDS}
    seen: set = set()
    found |= code_needs(getattr(item, "obj", None), shared, seen)
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        if name in FIXTURES:
            found.add(FIXTURES[name])
        for fixturedef in (info.name2fixturedefs.get(name, ()) if info else ()):
            found |= code_needs(fixturedef.func, shared, seen)
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(_under(v, shared) for v in params.values()):
        found.add("data")
    return found
