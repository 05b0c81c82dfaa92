"""Retrieve (question-anchored, Ranking A): seed paper section 2.1, DESIGN.md steps 2-5 and 7.

Per subquery:
1. three lanes: chunk BM25, paper BM25, dense chunk search (``lane_depth`` hits each);
2. each lane -> a paper ranking (chunk lanes: paper at the rank of its best chunk); equal-weight
   RRF (k=60) over the three;
3. pseudo-relevance feedback: the query plus the first 512 chars of the top paper's
   title-and-abstract chunk searches the three lanes again; original and expanded paper
   rankings are fused with equal-weight RRF;
4. the chunk retrieval ranking (our reading of the seed paper, which ranks chunks but fuses at
   paper level): chunk score = RRF score of its paper in the fused paper ranking + RRF score of
   the chunk over the four chunk lists (BM25 and dense, original and expanded query);
5. the reranker scores the top ``rerank_depth`` (200) chunks; s = 0.6/(60+r_ret) +
   0.4/(60+r_rr) with the retrieval top 20 pinned above the rest; the 20 best enter the pool,
   which keeps each chunk's maximum score.
Ranking A = the pool grouped by paper, paper score = best chunk score.

Reranking: a configured cross-encoder scores (query, chunk text) pairs; the offline
``bi-encoder`` fallback scores by the cosine of the query vector with the chunk vectors already
in the index (same model as the dense lane, no re-encoding).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional, Protocol

import numpy as np

from lit3r.config import RetrieveParams
from lit3r.search import Hit, SearchIndex
from lit3r.fusion import Pool, papers_by_best_chunk, prf_query, rerank_blend, rrf, rrf_scores


class ScoresReranker(Protocol):
    def scores(self, query: str, texts: list[str]) -> np.ndarray: ...


@dataclass
class SubqueryTrace:
    """What one subquery did: its PRF query, fused paper ranking head, pooled chunks, seconds."""

    query: str
    prf_query: str = ""
    papers: list[str] = field(default_factory=list)
    pooled: list[tuple[str, float]] = field(default_factory=list)
    seconds: dict = field(default_factory=dict)


class Retriever:
    """One Retrieve round over a search index and graph store.

    ``encoder``: has ``encode_queries(list[str]) -> (n, dim)``; ``reranker``: None for the
    bi-encoder fallback (index vectors), else an object with ``scores(query, texts)``.
    """

    def __init__(self, index: SearchIndex, graph, encoder, params: RetrieveParams,
                 reranker: Optional[ScoresReranker] = None) -> None:
        self.index = index
        self.graph = graph
        self.encoder = encoder
        self.params = params
        self.reranker = reranker
        self._row = {cid: i for i, cid in enumerate(index.chunk_ids)}
        self.paper_of = {cid: graph.chunk(cid).paper_id for cid in index.chunk_ids}
        self._ta = {pid: next((c.text for c in graph.chunks_of(pid) if c.kind == "title_abstract"), "")
                    for pid in graph.paper_ids()}

    def lanes(self, query: str, qvec: np.ndarray) -> tuple[list[Hit], list[Hit], list[Hit]]:
        """(chunk BM25, paper BM25, dense chunk) hits for one query."""
        d = self.params.lane_depth
        return self.index.chunk_bm25(query, d), self.index.paper_bm25(query, d), self.index.chunk_dense(qvec, d)

    def paper_ranking(self, lanes: tuple[list[Hit], list[Hit], list[Hit]]) -> list[str]:
        """Equal-weight RRF over the three lanes' paper rankings."""
        cb, pb, dn = lanes
        return rrf([papers_by_best_chunk([c for c, _ in cb], self.paper_of), [p for p, _ in pb],
                    papers_by_best_chunk([c for c, _ in dn], self.paper_of)], k=self.params.rrf_k)

    def subquery(self, query: str, pool: Pool) -> SubqueryTrace:
        """Run steps 1-5 for one subquery and add its best chunks to ``pool``."""
        p = self.params
        tr = SubqueryTrace(query)
        t = time.perf_counter()
        q0 = self.encoder.encode_queries([query])[0]
        l0 = self.lanes(query, q0)
        p0 = self.paper_ranking(l0)
        tr.seconds["search"] = time.perf_counter() - t
        t = time.perf_counter()
        rankings, chunk_lists = [p0], [[c for c, _ in l0[0]], [c for c, _ in l0[2]]]
        qvecs = [q0]
        if p0 and p.prf_chars > 0:
            tr.prf_query = prf_query(query, self._ta.get(p0[0], ""), p.prf_chars)
            q1 = self.encoder.encode_queries([tr.prf_query])[0]
            l1 = self.lanes(tr.prf_query, q1)
            rankings.append(self.paper_ranking(l1))
            chunk_lists += [[c for c, _ in l1[0]], [c for c, _ in l1[2]]]
            qvecs.append(q1)
        paper_score = rrf_scores(rankings, k=p.rrf_k)
        tr.papers = sorted(paper_score, key=lambda x: -paper_score[x])[:20]
        chunk_score = rrf_scores(chunk_lists, k=p.rrf_k)
        retrieval = sorted(chunk_score, key=lambda c: (-(chunk_score[c] + paper_score.get(self.paper_of[c], 0.0)), c))
        retrieval = retrieval[: p.rerank_depth]
        tr.seconds["prf"] = time.perf_counter() - t
        t = time.perf_counter()
        rr = self._rerank(query, q0, retrieval)
        blended = rerank_blend(retrieval, rr, tuple(p.rerank_weights), k=p.rrf_k, pin=p.rerank_pin)
        tr.pooled = blended[: p.pool_per_subquery]
        pool.add(tr.pooled)
        tr.seconds["rerank"] = time.perf_counter() - t
        return tr

    def _rerank(self, query: str, qvec: np.ndarray, chunk_ids: list[str]) -> dict[str, float]:
        if not chunk_ids:
            return {}
        if self.reranker is None:
            vecs = np.asarray(self.index.vectors[[self._row[c] for c in chunk_ids]])
            scores = vecs @ qvec
        else:
            scores = self.reranker.scores(query, [self.graph.chunk(c).text for c in chunk_ids])
        return {c: float(s) for c, s in zip(chunk_ids, scores)}


def ranking_a(pool: Pool, paper_of: dict[str, str]) -> list[tuple[str, float]]:
    """Ranking A from the pool (step 7)."""
    return pool.ranking_a(paper_of)
