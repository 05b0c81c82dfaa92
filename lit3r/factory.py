"""The one factory of the stores: the graph store and search index that ``settings.backend``
names, with their drivers and clients built from the settings and injected.

- ``embedded``: :class:`graph.embedded.EmbeddedGraphStore` + :class:`graph.search.embedded.EmbeddedSearchIndex`
  over ``home/index`` (SQLite + memory-mapped files; nothing is loaded at open).
- ``neo4j+opensearch``: :class:`graph.neo4j_store.Neo4jGraphStore` + :class:`graph.search.opensearch.OpenSearchIndex`,
  the servers as the system of record (no local file is read; opening costs two round trips).
"""

from __future__ import annotations

from lit3r.config import Settings


def neo4j_driver(settings: Settings):
    """A ``neo4j.Driver`` from ``settings.neo4j``."""
    from graph.neo4j_store import connect

    n = settings.neo4j
    return connect(n.uri, n.user, n.password)


def opensearch_client(settings: Settings):
    """An ``opensearchpy.OpenSearch`` client from ``settings.opensearch`` (every node URL given)."""
    from graph.search.opensearch import make_client

    o = settings.opensearch
    return make_client(o.urls, o.user, o.password, o.verify_certs, o.ca_certs)


def neo4j_store(settings: Settings):
    """A :class:`graph.neo4j_store.Neo4jGraphStore` over the configured database, whether or not
    it holds a corpus (for loads, `lit3r cypher` and `lit3r doctor`)."""
    from graph.neo4j_store import Neo4jGraphStore

    return Neo4jGraphStore(neo4j_driver(settings), settings.neo4j.database)


def opensearch_index(settings: Settings):
    """A :class:`graph.search.opensearch.OpenSearchIndex` over the configured prefix, whether
    or not its indices exist."""
    from graph.search.opensearch import OpenSearchIndex

    return OpenSearchIndex(opensearch_client(settings), settings.opensearch.index_prefix,
                           candidates=settings.opensearch.knn_candidates)


def open_stores(settings: Settings):
    """``(graph_store, search_index)`` over a built corpus. Raises FileNotFoundError when
    nothing was built (locally or on the servers), and the drivers' connection errors when a
    server cannot be reached."""
    if settings.backend == "embedded":
        from graph.embedded import EmbeddedGraphStore
        from graph.search.embedded import DB_NAME, EmbeddedSearchIndex
        from graph.sqlite import Database

        r = settings.retrieve
        db = Database(settings.index_dir / DB_NAME)  # one connection per thread for both stores: one snapshot
        index = EmbeddedSearchIndex.open(settings.index_dir, k1=r.bm25_k1, b=r.bm25_b, db=db)
        return EmbeddedGraphStore.open(settings.index_dir / DB_NAME, db=db), index
    from graph.neo4j_store import Neo4jGraphStore
    from graph.search.opensearch import OpenSearchIndex

    from lit3r.servers import check_pairing

    graph = Neo4jGraphStore.open(neo4j_driver(settings), settings.neo4j.database)
    try:
        check_pairing(graph, settings.opensearch.index_prefix)
        index = OpenSearchIndex.open(opensearch_client(settings), settings.opensearch.index_prefix,
                                     candidates=settings.opensearch.knn_candidates)
    except BaseException:
        graph.close()
        raise
    return graph, index
