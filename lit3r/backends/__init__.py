"""The storage backends: one :class:`Backend` object per ``settings.backend`` name, in one
registry (:data:`BACKENDS`). Everything that differs between backends is a field of its object,
so no other module branches on a backend name (``tests/unit/test_registries.py`` checks it):

- ``open_stores`` / ``open_graph`` / ``open_traces``: its ``(graph store, search index)``, its
  graph store alone (``lit3r graph``; driver settings as keywords), its evidence-trace store;
- ``load_targets``: the write seam of the servers load (:mod:`lit3r.index.load`,
  :class:`lit3r.protocols.GraphLoadTarget`), None when the stores are the local build itself;
- ``doctor_checks``: the names of its store checks in ``lit3r doctor``, ``(before the model
  checks, after them)``;
- ``runs_cypher``: whether it has a Neo4j store that Cypher runs on (``lit3r cypher``, MCP);
- ``reads_live``: its stores are read live from servers (no local index manifest to watch);
- ``unknown_id_line``: the CLI's line for an id a store does not know;
- ``description``: the settings' description of the choice.

The settings' choices (:class:`lit3r.config.Settings.backend`) are :data:`NAMES`. A backend
module reads the settings by attribute only: :mod:`lit3r.config` imports this package.
Modules: :mod:`lit3r.backends.embedded`, :mod:`lit3r.backends.servers`, and
:mod:`lit3r.backends.cypher_run` (Cypher on a backend's Neo4j store).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

from lit3r.backends import embedded, servers

if TYPE_CHECKING:
    from graph.search.protocol import SearchIndex
    from graph.store import GraphStore
    from graph.trace import TraceStore
    from lit3r.config import Settings
    from lit3r.protocols import GraphLoadTarget, SearchLoadTarget


@dataclass(frozen=True)
class Backend:
    """A storage backend (module docstring): how to open its stores and what it can do."""

    name: str
    description: str
    open_stores: Callable[["Settings"], tuple["GraphStore", "SearchIndex"]]
    open_graph: Callable[..., "GraphStore"]
    open_traces: Callable[["Settings", Optional["GraphStore"]], "TraceStore"]
    load_targets: Optional[Callable[["Settings"], tuple["GraphLoadTarget", "SearchLoadTarget"]]]
    doctor_checks: tuple[tuple[str, ...], tuple[str, ...]]
    runs_cypher: bool
    reads_live: bool
    unknown_id_line: Callable[[BaseException], str]


#: ``settings.backend`` -> its :class:`Backend`; the first is the default.
BACKENDS: dict[str, Backend] = {b.name: b for b in (
    Backend("embedded", "SQLite + files in home/index", embedded.open_stores, embedded.open_graph,
            embedded.open_traces, load_targets=None, doctor_checks=(("corpus", "index"), ()), runs_cypher=False,
            reads_live=False, unknown_id_line=str),
    Backend("neo4j+opensearch", "the servers", servers.open_stores, servers.open_graph, servers.open_traces,
            load_targets=servers.load_targets, doctor_checks=((), ("neo4j", "opensearch", "servers agree")),
            runs_cypher=True, reads_live=True, unknown_id_line=servers.unknown_id_line),
)}

#: The backend names, in registry order (the settings' choices).
NAMES: tuple[str, ...] = tuple(BACKENDS)


def backend_of(settings: "Settings") -> Backend:
    """The :class:`Backend` that ``settings.backend`` names (the settings allow only :data:`NAMES`)."""
    return BACKENDS[settings.backend]


def choices_description() -> str:
    """``name (description) or name (description)``: the settings' description of the choice."""
    return " or ".join(f"{b.name} ({b.description})" for b in BACKENDS.values())
