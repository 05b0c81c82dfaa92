"""The servers backend ("neo4j+opensearch"): :class:`graph.neo4j_store.Neo4jGraphStore` +
:class:`graph.search.opensearch.OpenSearchIndex`, the servers as the system of record (no local
file is read; opening costs two round trips), traces in Neo4j
(:class:`graph.neo4j_trace.Neo4jTraceStore`). Drivers and clients are built here from
``settings.neo4j`` / ``settings.opensearch`` and injected into the stores. The local build is
loaded into the servers by :mod:`lit3r.index.load` through :func:`load_targets`.

Settings are read by attribute only (no runtime import of :mod:`lit3r.config`, which takes the
backend names from :mod:`lit3r.backends`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from graph.cypher import statement
from lit3r.errors import ServersMismatch

if TYPE_CHECKING:
    from graph.neo4j_store import Neo4jGraphStore
    from graph.search.opensearch import OpenSearchIndex
    from graph.search.protocol import SearchIndex
    from graph.store import GraphStore
    from graph.trace import TraceStore
    from lit3r.config import Settings
    from lit3r.protocols import GraphLoadTarget, SearchLoadTarget

#: How to point a Neo4j corpus at other indices (in messages and the README).
MOVE_HINT = f"`lit3r cypher --write \"{statement('forget_corpus_marker')}\"` then `lit3r ingest PDF_DIR`"


def neo4j_driver(settings: "Settings", **config):
    """A ``neo4j.Driver`` from ``settings.neo4j``; ``config`` goes to the driver (e.g.
    ``connection_timeout``)."""
    from graph.neo4j_store import connect

    n = settings.neo4j
    return connect(n.uri, n.user, n.password, **config)


def opensearch_client(settings: "Settings"):
    """An ``opensearchpy.OpenSearch`` client from ``settings.opensearch`` (every node URL given)."""
    from graph.search.opensearch import make_client

    o = settings.opensearch
    return make_client(o.urls, o.user, o.password, o.verify_certs, o.ca_certs)


def neo4j_store(settings: "Settings", **config) -> "Neo4jGraphStore":
    """A :class:`graph.neo4j_store.Neo4jGraphStore` over the configured database, whether or not
    it holds a corpus (for loads, `lit3r cypher` and `lit3r doctor`); ``config``: driver settings."""
    from graph.neo4j_store import Neo4jGraphStore

    return Neo4jGraphStore(neo4j_driver(settings, **config), settings.neo4j.database)


def opensearch_index(settings: "Settings") -> "OpenSearchIndex":
    """A :class:`graph.search.opensearch.OpenSearchIndex` over the configured prefix, whether
    or not its indices exist."""
    from graph.search.opensearch import OpenSearchIndex

    return OpenSearchIndex(opensearch_client(settings), settings.opensearch.index_prefix,
                           candidates=settings.opensearch.knn_candidates)


def check_pairing(graph, prefix: str, loading: bool = False) -> None:
    """Raise :class:`ServersMismatch` when the Neo4j database's corpus was loaded with another
    OpenSearch index prefix (one Neo4j database holds one corpus; its hashes say what the
    indices of that prefix hold)."""
    recorded = graph.corpus_prefix()
    if recorded is None or recorded == prefix:
        return
    what = "loading it into" if loading else "reading it with"
    raise ServersMismatch(
        f"the Neo4j database holds the corpus indexed in OpenSearch as {recorded}-*, and {what} {prefix}-* would "
        f"mix two corpora: set opensearch.index_prefix = \"{recorded}\", use another Neo4j database "
        f"(neo4j.database), or move this corpus to {prefix}-* with {MOVE_HINT}")


def open_stores(settings: "Settings") -> tuple["GraphStore", "SearchIndex"]:
    """``(graph_store, search_index)`` over the loaded corpus; Neo4j is reached once
    (``reach``) so a server that is down is one line at once. Raises NotBuiltError
    when nothing was loaded, ServersMismatch (:func:`check_pairing`), and the drivers' errors."""
    from graph.neo4j_store import Neo4jGraphStore
    from graph.search.opensearch import OpenSearchIndex

    driver = neo4j_driver(settings)
    try:  # reach: one attempt (connection_timeout): a server down is one line at once
        graph = Neo4jGraphStore.open(driver, settings.neo4j.database, reach=True)
    except BaseException:
        driver.close()
        raise
    try:
        check_pairing(graph, settings.opensearch.index_prefix)
        index = OpenSearchIndex.open(opensearch_client(settings), settings.opensearch.index_prefix,
                                     candidates=settings.opensearch.knn_candidates)
    except BaseException:
        graph.close()
        raise
    return graph, index


def open_graph(settings: "Settings", **config: object) -> "GraphStore":
    """The Neo4j graph store alone (``lit3r graph``); ``config``: driver settings."""
    from graph.neo4j_store import Neo4jGraphStore

    driver = neo4j_driver(settings, **config)
    try:  # reach: one attempt (connection_timeout), not the retries of a transaction
        return Neo4jGraphStore.open(driver, settings.neo4j.database, reach=True)
    except BaseException:
        driver.close()
        raise


def open_traces(settings: "Settings", graph: Optional["GraphStore"]) -> "TraceStore":
    """The Neo4j trace store, on the driver of ``graph`` when it has one (one driver for both)."""
    from graph.neo4j_trace import Neo4jTraceStore

    driver = getattr(graph, "driver", None)  # the question's store: one driver for both
    if driver is not None:
        return Neo4jTraceStore(driver, settings.neo4j.database, own_driver=False)
    return Neo4jTraceStore(neo4j_driver(settings), settings.neo4j.database)


def load_targets(settings: "Settings") -> tuple["GraphLoadTarget", "SearchLoadTarget"]:
    """The write seam of the load (:class:`lit3r.protocols.GraphLoadTarget`,
    :class:`~lit3r.protocols.SearchLoadTarget`): the Neo4j store and the OpenSearch index, whether
    or not they hold a corpus yet (the caller closes both)."""
    return neo4j_store(settings), opensearch_index(settings)


def unknown_id_line(exc: BaseException) -> str:
    """The line for an id one store knows and the other does not (the CLI's UnknownIdError)."""
    return (f"the servers disagree: {exc} is in one of Neo4j and OpenSearch, not in the other (a load "
            f"changed or was edited by hand): run `lit3r ingest PDF_DIR` to repair the load")
