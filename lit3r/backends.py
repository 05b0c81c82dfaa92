"""Open the graph store and search index that ``settings.backend`` names.

- ``embedded``: :class:`graph.embedded.EmbeddedGraphStore` + :class:`lit3r.embedded_index.EmbeddedSearchIndex`
  under ``home/index``.
- ``neo4j+opensearch``: :class:`graph.neo4j_store.Neo4jGraphStore` + :class:`lit3r.opensearch_index.OpenSearchIndex`
  (which reads ids, vectors and paper heads from the local build under ``home/index/search``).
"""

from __future__ import annotations

from lit3r.config import Settings
from lit3r.embedded_index import EmbeddedSearchIndex


def open_stores(settings: Settings):
    """``(graph_store, search_index)``; raises FileNotFoundError when nothing was built, and the
    drivers' connection errors when a server cannot be reached."""
    local = EmbeddedSearchIndex.open(settings.index_dir / "search")
    if settings.backend == "embedded":
        from graph.embedded import EmbeddedGraphStore

        return EmbeddedGraphStore.open(settings.index_dir / "graph"), local
    from graph.neo4j_store import Neo4jGraphStore
    from lit3r.opensearch_index import OpenSearchIndex, make_client

    n, o = settings.neo4j, settings.opensearch
    graph = Neo4jGraphStore.open(n.uri, n.user, n.password, n.database)
    client = make_client(o.url, o.user, o.password, o.verify_certs)
    return graph, OpenSearchIndex(client, o.index_prefix, local)


def load_servers(settings: Settings, papers, chunks, references, neighbours, paper_texts, vectors) -> dict:
    """Load a built corpus into Neo4j and OpenSearch (backend "neo4j+opensearch"); returns load
    timings and rates."""
    from graph.neo4j_store import Neo4jGraphStore
    from lit3r.opensearch_index import OpenSearchIndex, make_client

    n, o = settings.neo4j, settings.opensearch
    graph = Neo4jGraphStore(n.uri, n.user, n.password, n.database)
    try:
        neo = graph.load(papers, chunks, references, neighbours)
    finally:
        graph.close()
    local = EmbeddedSearchIndex.open(settings.index_dir / "search")
    index = OpenSearchIndex(make_client(o.url, o.user, o.password, o.verify_certs), o.index_prefix, local)
    osr = index.load(chunks, [p.paper_id for p in papers], paper_texts, vectors,
                     settings.retrieve.bm25_k1, settings.retrieve.bm25_b)
    return {"neo4j": neo, "opensearch": osr}
