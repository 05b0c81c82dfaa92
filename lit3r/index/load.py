"""Incremental load of the built corpus into Neo4j and OpenSearch (backend "neo4j+opensearch").

The ingesting machine builds its embedded stores first (they hold the encoded vectors: the
encoder runs once per changed paper); this module then makes the servers hold the same corpus,
writing only what differs. Per paper, the server hash is a digest of its records' hash and its
chunk hash (chunk ids, texts, encoder); Neo4j stores it on the Paper node as the *last* write of
the paper (:mod:`graph.neo4j_store`). A load:

1. reads ``{paper_id: (hash, SIMILAR_TO hash)}`` from Neo4j (one query);
2. deletes the OpenSearch documents of every paper to write or prune (after a refresh, so the
   documents of a killed load go too), then the pruned papers in Neo4j;
3. per batch of about ``BATCH_CHUNKS`` chunks: Neo4j nodes (the papers forgotten first) and, beside
   them in a second thread, OpenSearch documents (NDJSON bulk requests, 4 in flight, refresh off;
   :mod:`graph.search.opensearch_bulk`); once both are written, the papers' hashes;
4. rewrites the SIMILAR_TO lists whose hash differs, and deletes orphaned works and authors.

Killed at any point (kill -9 included), the next load finds the unfinished papers by their
missing or stale hash and writes them again from step 2: no duplicates (documents and nodes are
keyed by id), nothing missing.
"""

from __future__ import annotations

import hashlib
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Optional, Sequence

import numpy as np

from graph.progress import Reporter
from graph.search.tokenize import tokenize
from lit3r.backends import backend_of
from lit3r.backends.servers import check_pairing
from lit3r.config import Settings

#: Chunks per load batch (one Neo4j write and one OpenSearch bulk per batch).
BATCH_CHUNKS = 5000


def _server_hash(graph_hash: str, chunk_hash: str, dim: int) -> str:
    return hashlib.sha256(f"{graph_hash}\0{chunk_hash}\0{dim}".encode()).hexdigest()


def _paper_tokens(sizes: list[int], chunk_tokens: list[str]) -> list[str]:
    """Each paper's tokens joined by spaces, from its chunks' (``sizes[i]`` consecutive entries of
    ``chunk_tokens`` each): the tokens of the chunk texts joined by newlines, since no token spans
    a newline (:func:`graph.search.tokenize.tokenize`)."""
    out, at = [], 0
    for n in sizes:
        out.append(" ".join(t for t in chunk_tokens[at:at + n] if t))
        at += n
    return out


def _write_graph(graph, recs: list, chunks: list[dict], stats: dict) -> None:
    """One batch's Neo4j write (``recs``: ``[(paper, chunks, refs)]``), its nodes, wall and CPU
    seconds (of the calling thread: the driver packs and sends in it) added to ``stats``."""
    ts, tc = time.perf_counter(), time.thread_time()
    stats["nodes"] += graph.write_papers([p for p, _, _ in recs], chunks, [x for _, _, rs in recs for x in rs])
    stats["seconds"] += time.perf_counter() - ts
    stats["client_cpu_s"] += time.thread_time() - tc


def sync_servers(settings: Settings, progress: bool = False, batch_chunks: Optional[int] = None,
                 on_batch=None, parallel: bool = True) -> dict:
    """Make Neo4j and OpenSearch hold the corpus built in ``settings.index_dir`` (module
    docstring), writing through the backend's load targets (the writer seam,
    :class:`lit3r.protocols.GraphLoadTarget` / :class:`~lit3r.protocols.SearchLoadTarget`).
    ``on_batch(done_papers, total_papers)`` is called after each committed batch.
    Returns ``{"papers", "written", "deleted", "neighbours", "parallel", "neo4j": {"nodes", "seconds",
    "nodes_per_s", "client_cpu_s"}, "opensearch": {"docs", "seconds", "docs_per_s", "client_cpu_s"},
    "seconds"}`` (``client_cpu_s``: this process's CPU seconds in the batches' writes to that server).
    ``parallel``: each batch's Neo4j write runs in a second thread while its OpenSearch documents
    are written (False: one after the other); each server's seconds are its own writes'. Raises
    graph.errors.ServerFault (the driver's error as its ``cause``) when a server cannot be reached."""
    from graph.embedded import EmbeddedGraphStore
    from graph.neo4j_store import neighbours_hash
    from graph.search.embedded import DB_NAME, EmbeddedSearchIndex
    from graph.sqlite import Database

    t0 = time.perf_counter()
    db = Database(settings.index_dir / DB_NAME, readonly=True)
    local_g = EmbeddedGraphStore.open(settings.index_dir / DB_NAME, db=db)
    local_s = EmbeddedSearchIndex.open(settings.index_dir, db=db)
    load_targets = backend_of(settings).load_targets
    if load_targets is None:
        raise ValueError(f"the {settings.backend} backend's stores are the local build: nothing to load")
    graph, index = load_targets(settings)
    o, r = settings.opensearch, settings.retrieve
    stats = {"neo4j": {"nodes": 0, "seconds": 0.0, "client_cpu_s": 0.0},
             "opensearch": {"docs": 0, "seconds": 0.0, "client_cpu_s": 0.0}}
    try:
        with db.snapshot():
            ghash, chash = local_g.content_hashes(), local_s.chunk_hashes()
            want = {p: _server_hash(ghash[p], chash.get(p, ""), local_s.dim) for p in sorted(ghash)}
            graph.ensure_schema()
            check_pairing(graph, o.index_prefix, loading=True)
            encoder = settings.models.chunk_identity
            meta = index.stored_meta()
            if meta is None or meta.get("dim") != local_s.dim or meta.get("chunk_encoder") != encoder:
                graph.clear_hashes()  # new indices: every paper must be written, first marked unfinished
            index.ensure_indices(local_s.dim, r.bm25_k1, r.bm25_b, shards=o.shards, replicas=o.replicas,
                                 encoder=encoder, hnsw_m=o.hnsw_m, hnsw_ef_construction=o.hnsw_ef_construction)
            graph.set_corpus_prefix(o.index_prefix)
            stored = graph.stored_hashes()
            gone = sorted(set(stored) - set(want))
            sizes = local_g.chunks_per_paper()
            # the hashes say what was written; the counts say what is there (documents deleted
            # or nodes edited by hand since): a paper whose counts differ is written again
            index.refresh(timeout_s=600)
            in_graph, in_index = graph.chunks_per_paper(), index.documents_per_paper()
            in_papers = index.documents_per_paper(index.paper_index)
            todo = [p for p in want if stored.get(p, (None, None))[0] != want[p]
                    or in_graph.get(p, 0) != sizes.get(p, 0) or in_index.get(p, 0) != sizes.get(p, 0)
                    or in_papers.get(p, 0) != 1]
            shown = progress and bool(todo)
            with index.bulk_mode(), Reporter(enabled=shown).bar("servers", len(todo), "paper") as bar, \
                    ThreadPoolExecutor(1, thread_name_prefix="neo4j-load") as pool:
                writer = pool if parallel else None
                index.delete_papers(todo + gone)
                graph.delete_papers(gone)
                batch: list[str] = []
                pending, done = 0, 0
                limit = batch_chunks or BATCH_CHUNKS

                def flush() -> None:
                    nonlocal batch, pending, done
                    if not batch:
                        return
                    recs = local_g.records(batch)
                    chunks = [c for _, cs, _ in recs for c in cs]
                    ts, tc = time.perf_counter(), time.process_time()
                    neo_cpu = stats["neo4j"]["client_cpu_s"]
                    # Neo4j's write runs beside OpenSearch's: each server indexes while the other does
                    neo = writer.submit(_write_graph, graph, recs, chunks, stats["neo4j"]) if writer else None
                    if neo is None:
                        _write_graph(graph, recs, chunks, stats["neo4j"])
                        ts, tc = time.perf_counter(), time.process_time()
                    vectors = local_s.vectors_of([c["chunk_id"] for c in chunks]) if chunks else \
                        np.zeros((0, local_s.dim), np.float32)
                    toks = [" ".join(tokenize(c["text"])) for c in chunks]  # once: a paper's are its chunks'
                    stats["opensearch"]["docs"] += index.write_chunks(chunks, vectors, toks)
                    stats["opensearch"]["docs"] += index.write_papers(
                        [p["paper_id"] for p, _, _ in recs], ["\n".join(c["text"] for c in cs) for _, cs, _ in recs],
                        _paper_tokens([len(cs) for _, cs, _ in recs], toks))
                    stats["opensearch"]["seconds"] += time.perf_counter() - ts
                    if neo is not None:
                        neo.result()  # raises the Neo4j write's error
                        tc += stats["neo4j"]["client_cpu_s"] - neo_cpu  # the other thread's share
                    stats["opensearch"]["client_cpu_s"] += time.process_time() - tc
                    graph.mark_loaded({p: want[p] for p in batch})
                    done += len(batch)
                    bar.update(len(batch))
                    if on_batch is not None:
                        on_batch(done, len(todo))
                    batch, pending = [], 0

                for pid in todo:
                    batch.append(pid)
                    pending += sizes.get(pid, 0)
                    if pending >= limit:
                        flush()
                flush()
            lists = local_g.neighbour_lists()
            written = set(todo)
            relink: dict[str, Sequence[tuple[str, float]]] = {p: ns for p, ns in lists.items()
                      if p in written or stored.get(p, (None, None))[1] != neighbours_hash(ns)}
            ts = time.perf_counter()
            graph.write_neighbours(relink)
            if todo or gone:
                graph.prune_orphans()
            stats["neo4j"]["seconds"] += time.perf_counter() - ts
    finally:
        graph.close()
        index.close()
        db.close()
    for name, key in (("neo4j", "nodes"), ("opensearch", "docs")):
        s = stats[name]
        s[f"{key}_per_s"] = s[key] / s["seconds"] if s["seconds"] else 0.0
    return {"papers": len(want), "written": len(todo), "deleted": len(gone), "neighbours": len(relink),
            "parallel": parallel, **stats, "seconds": time.perf_counter() - t0}
