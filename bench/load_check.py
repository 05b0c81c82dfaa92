"""What a load into the servers left there, as digests and rankings (bench/backends_bench.py --load-only).

:func:`fingerprint` returns ``{"neo4j_nodes", "neo4j_relationships", "opensearch_docs": sha256 hex
digests of every node (labels, properties), relationship (type, properties, end ids) and
document (_id, _source) sorted, "counts": {...}, "knn_top10", "bm25_top10", "paper_bm25_top10":
{query: [ids]}}``: two loads of the same built corpus that store the same records and rank the same
top 10 give equal fingerprints (the HNSW graph is approximate: on a small corpus with the default
400 candidates per query its top 10 is exact, so a changed load path that changes recall shows).
The k-NN queries are the stored vectors of every ``step``-th chunk (no encoder needed), the BM25
queries the first words of the same chunks.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def _digest(rows) -> str:
    h = hashlib.sha256()
    for row in sorted(json.dumps(r, sort_keys=True, default=str) for r in rows):
        h.update(row.encode())
        h.update(b"\n")
    return h.hexdigest()


def _neo4j(driver) -> dict[str, Any]:
    def rows(query: str) -> list[dict]:
        return [r.data() for r in driver.execute_query(query).records]

    nodes = rows("MATCH (n) WHERE NOT n:Lit3rLoadLock RETURN labels(n) AS labels, properties(n) AS props")
    for n in nodes:
        n["labels"] = sorted(n["labels"])
    rels = rows("MATCH (a)-[r]->(b) RETURN type(r) AS type, properties(r) AS props, "
                "coalesce(a.paper_id, a.chunk_id, a.work_id, a.name) AS a_key, "
                "coalesce(b.paper_id, b.chunk_id, b.work_id, b.name) AS b_key")
    return {"neo4j_nodes": _digest(nodes), "neo4j_relationships": _digest(rels),
            "node_count": len(nodes), "relationship_count": len(rels)}


def fingerprint(neo4j_uri: str, index, local_search, texts: dict[str, str], step: int = 97) -> dict[str, Any]:
    """The fingerprint of the module docstring; ``index`` an opened OpenSearchIndex, ``local_search``
    the built embedded index (its vectors give the k-NN queries), ``texts`` ``{chunk_id: text}`` of
    the corpus (the BM25 queries)."""
    import neo4j
    from opensearchpy import helpers

    from graph.search.tokenize import tokenize

    with neo4j.GraphDatabase.driver(neo4j_uri, auth=None, notifications_min_severity="OFF") as driver:
        out = _neo4j(driver)
    index.client.indices.refresh(index=f"{index.chunk_index},{index.paper_index}")
    docs = [{"_index": d["_index"], "_id": d["_id"], "_source": d["_source"]}
            for d in helpers.scan(index.client, index=f"{index.chunk_index},{index.paper_index}", size=2000)]
    out.update(opensearch_docs=_digest(docs), doc_count=len(docs))
    ids = sorted(texts)[::step]
    vectors = local_search.vectors_of(ids)
    out["knn_top10"] = {i: [c for c, _ in index.chunk_dense(v, 10)] for i, v in zip(ids, vectors)}
    queries = [q for q in (" ".join(tokenize(texts[i])[:8]) for i in ids) if q]
    out["bm25_top10"] = {q: [c for c, _ in index.chunk_bm25(q, 10)] for q in queries}
    out["paper_bm25_top10"] = {q: [p for p, _ in index.paper_bm25(q, 10)] for q in queries}
    return out
