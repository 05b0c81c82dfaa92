"""What ``lit3r mcp`` keeps open between tool calls: the settings, the engines (stores, encoder,
reranker, LLM: :class:`lit3r.pipeline.engine.Engine`), a graph store for the graph tools, a
Neo4j store for Cypher, and the run that the traces of its answers go to.

Everything opens on first use and stays open; a call that fails to open something (a home that
was never built, a server that is down) opens it again on the next call. On the embedded backend
the index manifest (``index/manifest.json``) is looked at before every call: when a build
changed it (an ingest, or ``--rebuild`` swapping in a new index) the stores are opened again and
the loaded models kept, so the next call sees the new corpus without a restart. A change of
``config.toml`` needs a restart. Calls run one at a time (:attr:`Session.lock`).
"""

from __future__ import annotations

import itertools
import threading
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Optional

from lit3r.backends import backend_of
from lit3r.config import Settings
from lit3r.present.redact import secret_values

if TYPE_CHECKING:
    from graph.neo4j_store import Neo4jGraphStore
    from graph.store import GraphStore
    from lit3r.pipeline.engine import Engine

#: Seconds to wait for the Neo4j server to answer the first connection of the graph store.
CONNECT_TIMEOUT = 4.0


def manifest_stamp(settings: Settings) -> Optional[tuple[int, int, int]]:
    """``(inode, mtime_ns, size)`` of the embedded index manifest; None on the servers backend
    (the servers are read live) or when there is no manifest."""
    if backend_of(settings).reads_live:
        return None
    try:
        st = (settings.index_dir / "manifest.json").stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


class Session:
    """The open state of one ``lit3r mcp`` process over ``settings`` (module docstring).
    ``encoder``: an encoder to use instead of loading the configured one (tests, benches)."""

    def __init__(self, settings: Settings, encoder: Any = None) -> None:
        self.settings = settings
        self.secrets = secret_values(settings)
        self.lock = threading.RLock()
        self.run = "mcp-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        self._encoder = encoder
        self._engines: dict[str, "Engine"] = {}
        self._graph: Optional["GraphStore"] = None
        self._neo4j: Optional["Neo4jGraphStore"] = None
        self._stamp = manifest_stamp(settings)
        self._ids = itertools.count(1)

    def next_query_id(self) -> str:
        """The query id of the next ``ask``: ``q1``, ``q2``, ... within :attr:`run`."""
        return f"q{next(self._ids)}"

    def refresh(self) -> bool:
        """Open the stores again (the models kept) when the index manifest changed since they
        were opened; True when it did."""
        stamp = manifest_stamp(self.settings)
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        engines, self._engines = self._engines, {}
        for name, engine in engines.items():
            _close(engine.graph, engine.index)
            if self._encoder is None:  # keep the loaded encoder (and the LLM) for the reopened stores
                self._encoder = engine.encoder.encoder
            self._engines[name] = self._engine_for(name, engine.llm)
        if self._graph is not None:
            _close(self._graph)
            self._graph = None
        return True

    def engine(self, llm: Optional[str] = None) -> "Engine":
        """The engine of the configured LLM provider, or of provider ``llm`` (its own engine,
        sharing the encoder). Raises what :class:`Engine` raises (NotBuiltError, ModelError, ...)."""
        name = llm or self.settings.llm.provider
        if name not in self._engines:
            self._engines[name] = self._engine_for(name)
        return self._engines[name]

    def _engine_for(self, name: str, model: Any = None) -> "Engine":
        from lit3r.pipeline.engine import Engine

        settings = self.settings
        if name != settings.llm.provider:  # as `lit3r ask --llm NAME` loads them
            from lit3r.config import load_settings

            settings = load_settings(home=settings.home, llm={"provider": name})
        first = next(iter(self._engines.values()), None)
        encoder = self._encoder or (first.encoder.encoder if first is not None else None)
        engine = Engine(settings, encoder=encoder, llm=model)
        self._encoder = engine.encoder.encoder
        return engine

    def graph(self) -> "GraphStore":
        """The graph store of the corpus (papers, chunks, citations), opened once."""
        if self._graph is None:
            from lit3r.factory import open_graph

            self._graph = open_graph(self.settings, connection_timeout=CONNECT_TIMEOUT, max_transaction_retry_time=2.0)
        return self._graph

    def neo4j(self) -> "Neo4jGraphStore":
        """The Neo4j store Cypher runs on, reached once (:func:`lit3r.backends.cypher_run.connect`:
        CypherFailed with the fix on the embedded backend or when Neo4j is down)."""
        if self._neo4j is None:
            from lit3r.backends.cypher_run import connect

            self._neo4j = connect(self.settings)
        return self._neo4j

    def close(self) -> None:
        """Close every store and client."""
        for engine in self._engines.values():
            _close(engine.graph, engine.index)
        self._engines = {}
        _close(*(s for s in (self._graph, self._neo4j) if s is not None))
        self._graph = self._neo4j = None


def _close(*stores: Any) -> None:
    for store in stores:
        try:
            store.close()
        except Exception:  # noqa: BLE001 - a store that cannot close cleanly is dropped all the same
            pass
