"""Open the graph store and search index that ``settings.backend`` names.

- ``embedded``: :class:`graph.embedded.EmbeddedGraphStore` + :class:`graph.search.embedded.EmbeddedSearchIndex`
  over ``home/index`` (SQLite + memory-mapped files; nothing is loaded at open).
- ``neo4j+opensearch``: :class:`graph.neo4j_store.Neo4jGraphStore` + :class:`graph.search.opensearch.OpenSearchIndex`
  (which reads vectors and paper heads from the local build under ``home/index``).
"""

from __future__ import annotations

import numpy as np

from lit3r.config import Settings
from graph.search.embedded import DB_NAME, EmbeddedSearchIndex


def open_stores(settings: Settings):
    """``(graph_store, search_index)``; raises FileNotFoundError when nothing was built, and the
    drivers' connection errors when a server cannot be reached."""
    from graph.sqlite import Database

    r = settings.retrieve
    db = Database(settings.index_dir / DB_NAME)  # one connection per thread for both stores: one snapshot
    local = EmbeddedSearchIndex.open(settings.index_dir, k1=r.bm25_k1, b=r.bm25_b, db=db)
    if settings.backend == "embedded":
        from graph.embedded import EmbeddedGraphStore

        return EmbeddedGraphStore.open(settings.index_dir / DB_NAME, db=db), local
    from graph.neo4j_store import Neo4jGraphStore
    from graph.search.opensearch import OpenSearchIndex, make_client

    n, o = settings.neo4j, settings.opensearch
    graph = Neo4jGraphStore.open(n.uri, n.user, n.password, n.database)
    client = make_client(o.url, o.user, o.password, o.verify_certs)
    return graph, OpenSearchIndex(client, o.index_prefix, local)


def load_servers(settings: Settings) -> dict:
    """Load the built corpus into Neo4j and OpenSearch (backend "neo4j+opensearch"): records
    from the corpus files, vectors from the local index. Returns load timings and rates."""
    from graph.neo4j_store import Neo4jGraphStore
    from graph.embedded import EmbeddedGraphStore
    from ingest.corpus import load_corpus
    from graph.search.opensearch import OpenSearchIndex, make_client

    papers, chunks, refs = load_corpus(settings.home)
    local = EmbeddedSearchIndex.open(settings.index_dir)
    store = EmbeddedGraphStore.open(settings.index_dir / DB_NAME)
    neighbours = [n for p in papers for n in store.neighbours_of(p.paper_id)]
    by_paper: dict[str, list] = {}
    for c in chunks:
        by_paper.setdefault(c.paper_id, []).append(c)
    ordered = [c for p in papers for c in by_paper.get(p.paper_id, [])]
    vectors = local.vectors_of([c.chunk_id for c in ordered]) if ordered else np.zeros((0, local.dim), np.float32)
    n, o = settings.neo4j, settings.opensearch
    graph = Neo4jGraphStore(n.uri, n.user, n.password, n.database)
    try:
        neo = graph.load(papers, chunks, refs, neighbours)
    finally:
        graph.close()
    index = OpenSearchIndex(make_client(o.url, o.user, o.password, o.verify_certs), o.index_prefix, local)
    osr = index.load(ordered, [p.paper_id for p in papers],
                     ["\n".join(c.text for c in by_paper.get(p.paper_id, [])) for p in papers], vectors,
                     settings.retrieve.bm25_k1, settings.retrieve.bm25_b)
    return {"neo4j": neo, "opensearch": osr}
