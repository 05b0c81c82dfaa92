"""Corpus build: records -> embeddings -> graph store and search index (the embedded backend).

``build_stores(settings)`` reads the corpus files in ``settings.home`` (written by
:func:`ingest.corpus.ingest_corpus`), encodes chunks (chunk encoder) and papers (paper encoder,
title + abstract as SPECTER2 expects), computes the SIMILAR_TO top-k neighbours, and writes:

    home/index/graph/      the embedded graph store (papers, chunks, CITES, SIMILAR_TO)
    home/index/search/     chunk BM25, paper BM25, dense chunk vectors
    home/index/emb/        per-paper embedding cache (model + chunk texts -> vectors)
    home/index/manifest.json   what was built from what, with which models

Incremental: a paper whose chunk texts and model are unchanged reuses its cached vectors, so
adding PDFs only encodes the new papers; BM25 and the graph are rebuilt (seconds). A build
whose corpus and models are unchanged is skipped.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from graph.embedded import EmbeddedGraphStore
from graph.records import Chunk, Neighbour, Paper
from ingest.corpus import load_corpus
from lit3r.config import Settings
from lit3r.embedded_index import EmbeddedSearchIndex

BUILD_VERSION = "1"


@dataclass
class BuildReport:
    """What a build did: counts, how many papers were (re-)encoded, timings in seconds."""

    papers: int = 0
    chunks: int = 0
    references: int = 0
    neighbours: int = 0
    encoded_papers: int = 0
    skipped: bool = False
    seconds: dict = None  # type: ignore[assignment]
    servers: Optional[dict] = None


def _digest(*parts: str) -> str:
    h = hashlib.sha1()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def _fingerprint(home: Path, settings: Settings) -> str:
    h = hashlib.sha1(BUILD_VERSION.encode())
    for name in ("papers.jsonl", "chunks.jsonl", "references.jsonl"):
        h.update((home / name).read_bytes())
    h.update(settings.models.model_dump_json().encode())
    h.update(str(settings.relate.similar_k).encode())
    h.update(f"{settings.retrieve.bm25_k1},{settings.retrieve.bm25_b}".encode())
    if settings.backend != "embedded":  # the servers must be (re)loaded too
        h.update(settings.model_dump_json(include={"backend", "neo4j", "opensearch"}).encode())
    return h.hexdigest()


def paper_text_for_encoder(paper: Paper) -> str:
    """SPECTER2's input: ``title [SEP] abstract`` (sentence-transformers adds special tokens)."""
    return f"{paper.title} [SEP] {paper.abstract}".strip()


def _cached_vectors(cache: Path, key: str, texts: list[str], encode: Callable[[list[str]], np.ndarray]) -> tuple[np.ndarray, bool]:
    path = cache / f"{key}.npy"
    if path.is_file():
        return np.load(path), False
    vecs = encode(texts) if texts else np.zeros((0, 0), dtype=np.float32)
    tmp = cache / f"{key}.tmp.npy"
    np.save(tmp, vecs)
    tmp.replace(path)
    return vecs, True


def top_k_neighbours(paper_ids: Sequence[str], vectors: np.ndarray, k: int) -> list[Neighbour]:
    """SIMILAR_TO edges: for each paper its ``k`` most cosine-similar other papers.

    ``vectors``: (n, dim) L2-normalised. Ties break by paper id. O(n^2 dim) in blocks of 1,024
    rows, fine for tens of thousands of papers.
    """
    out: list[Neighbour] = []
    n = len(paper_ids)
    if n < 2:
        return out
    kk = min(k, n - 1)
    for start in range(0, n, 1024):
        sims = vectors[start:start + 1024] @ vectors.T
        for r, row in enumerate(sims):
            i = start + r
            row[i] = -np.inf
            top = np.argpartition(-row, kk - 1)[:kk]
            top = sorted(top, key=lambda j: (-row[j], paper_ids[j]))
            out.extend(Neighbour(paper_id=paper_ids[i], neighbour_id=paper_ids[j], score=float(row[j]), rank=rank)
                       for rank, j in enumerate(top, start=1))
    return out


def build_stores(settings: Settings, *, progress: bool = False, force: bool = False,
                 encoder_loader: Optional[Callable] = None) -> BuildReport:
    """Build (or update) the embedded stores of the corpus in ``settings.home``.

    Raises FileNotFoundError when no corpus has been ingested there, and
    ``lit3r.models.ModelError`` when an encoder cannot be loaded.
    """
    from lit3r.models import load_encoder

    load = encoder_loader or load_encoder
    home = Path(settings.home)
    t0 = time.perf_counter()
    papers, chunks, refs = load_corpus(home)
    index_dir = settings.index_dir
    manifest_path = index_dir / "manifest.json"
    fp = _fingerprint(home, settings)
    report = BuildReport(papers=len(papers), chunks=len(chunks), references=len(refs), seconds={})
    if not force and manifest_path.is_file() and json.loads(manifest_path.read_text()).get("fingerprint") == fp:
        report.skipped = True
        report.seconds["total"] = time.perf_counter() - t0
        return report
    m = settings.models
    chunk_enc = load(m.chunk_encoder, device=m.device, batch_size=m.batch_size, query_prompt=m.query_prompt, dtype=m.dtype)
    paper_enc = chunk_enc if (m.paper_encoder, m.paper_adapter) == (m.chunk_encoder, None) else load(
        m.paper_encoder, device=m.device, batch_size=m.batch_size, adapter=m.paper_adapter, dtype=m.dtype)
    cache = index_dir / "emb"
    cache.mkdir(parents=True, exist_ok=True)

    by_paper: dict[str, list[Chunk]] = {}
    for c in chunks:
        by_paper.setdefault(c.paper_id, []).append(c)
    t = time.perf_counter()
    keys = {p.paper_id: _digest(chunk_enc.name, *(c.text for c in by_paper.get(p.paper_id, []))) for p in papers}
    todo = [p for p in papers if not (cache / f"{keys[p.paper_id]}.npy").is_file()]
    pending = [c.text for p in todo for c in by_paper.get(p.paper_id, [])]
    fresh = iter(chunk_enc.encode(pending, progress=progress)) if pending else iter(())
    vec_parts = []
    for p in papers:
        cs = by_paper.get(p.paper_id, [])
        vecs, new = _cached_vectors(cache, keys[p.paper_id], [c.text for c in cs],
                                    lambda texts: np.stack([next(fresh) for _ in texts]).astype(np.float32))
        report.encoded_papers += new
        vec_parts.append(vecs.reshape(len(cs), chunk_enc.dim))
    chunk_vectors = np.concatenate(vec_parts) if vec_parts else np.zeros((0, chunk_enc.dim), np.float32)
    report.seconds["encode_chunks"] = time.perf_counter() - t

    t = time.perf_counter()
    ptexts = [paper_text_for_encoder(p) for p in papers]
    pkey = _digest("papers", paper_enc.name, str(m.paper_adapter), *ptexts)
    paper_vectors, _ = _cached_vectors(cache, pkey, ptexts, lambda x: paper_enc.encode(x, progress=progress))
    neighbours = top_k_neighbours([p.paper_id for p in papers], paper_vectors, settings.relate.similar_k)
    report.neighbours = len(neighbours)
    report.seconds["encode_papers"] = time.perf_counter() - t

    t = time.perf_counter()
    EmbeddedGraphStore(index_dir / "graph").load(papers, chunks, refs, neighbours)
    report.seconds["graph"] = time.perf_counter() - t
    t = time.perf_counter()
    ordered = [c for p in papers for c in by_paper.get(p.paper_id, [])]
    EmbeddedSearchIndex.build(
        index_dir / "search", [c.chunk_id for c in ordered], [c.text for c in ordered],
        [p.paper_id for p in papers], ["\n".join(c.text for c in by_paper.get(p.paper_id, [])) for p in papers],
        chunk_vectors, k1=settings.retrieve.bm25_k1, b=settings.retrieve.bm25_b)
    report.seconds["search_index"] = time.perf_counter() - t
    if settings.backend == "neo4j+opensearch":
        from lit3r.backends import load_servers

        t = time.perf_counter()
        report.servers = load_servers(settings, papers, ordered, refs, neighbours,
                                      ["\n".join(c.text for c in by_paper.get(p.paper_id, [])) for p in papers],
                                      chunk_vectors)
        report.seconds["servers"] = time.perf_counter() - t
    report.seconds["total"] = time.perf_counter() - t0
    manifest_path.write_text(json.dumps({
        "fingerprint": fp, "build_version": BUILD_VERSION, "models": m.model_dump(), "dim": chunk_enc.dim,
        "report": asdict(report)}, indent=2), encoding="utf-8")
    _prune_cache(cache, keep=set(keys.values()) | {pkey})
    return report


def _prune_cache(cache: Path, keep: set[str]) -> None:
    for f in cache.glob("*.npy"):
        if f.stem not in keep:
            f.unlink()
