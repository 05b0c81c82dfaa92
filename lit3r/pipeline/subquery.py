"""One round's subqueries of the Retrieve step (question-anchored): seed paper section 2.1,
hybrid retrieval, PRF and the rerank blend per subquery. The whole step (rounds, decomposition, verification) is
:mod:`lit3r.pipeline.retrieve`.

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
   which keeps each chunk's maximum score; the question's own chunks are anchored there.
Ranking A = the pool grouped by paper, paper score = best chunk score, the papers of the
question's own chunks first (:mod:`lit3r.pipeline.pool`).

Reranking: a configured cross-encoder scores (query, chunk text) pairs; the offline
``bi-encoder`` fallback scores by the cosine of the query vector with the chunk vectors already
in the index (same model as the dense lane, no re-encoding).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from graph.search.protocol import Hit, SearchIndex
from graph.store import GraphStore
from lit3r.config import RetrieveParams
from lit3r.pipeline.fusion import papers_by_best_chunk, prf_query, rerank_blend, rrf, rrf_scores
from lit3r.pipeline.pool import PaperOf, Pool
from lit3r.protocols import Encoder, Reranker


@dataclass
class SubqueryTrace:
    """What one subquery did: its PRF query, fused paper ranking head, pooled chunks, seconds."""

    query: str
    prf_query: str = ""
    papers: list[str] = field(default_factory=list)
    pooled: list[tuple[str, float]] = field(default_factory=list)
    seconds: dict = field(default_factory=dict)


Lanes = tuple[list[Hit], list[Hit], list[Hit]]


class SubquerySearch:
    """Steps 1-5 for the subqueries of one round, over a search index and graph store.

    ``reranker``: None for the bi-encoder fallback (the index vectors' cosine), else a
    cross-encoder; ``paper_of``: chunk id -> paper id (shared with the question's :class:`Pool`).
    Nothing is read from the stores until a query runs.
    """

    def __init__(self, index: SearchIndex, graph: GraphStore, encoder: Encoder, params: RetrieveParams,
                 reranker: Optional[Reranker] = None, paper_of: Optional[PaperOf] = None) -> None:
        self.index = index
        self.graph = graph
        self.encoder = encoder
        self.params = params
        self.reranker = reranker
        self.paper_of = paper_of if paper_of is not None else PaperOf(graph)
        self._ta: dict[str, str] = {}

    def title_abstract(self, paper_id: str) -> str:
        """The text of a paper's title-and-abstract chunk ("" when it has none)."""
        if paper_id not in self._ta:
            if len(self._ta) > 50_000:
                self._ta = {}
            self._ta[paper_id] = next((c.text for c in self.graph.chunks_of(paper_id) if c.kind == "title_abstract"), "")
        return self._ta[paper_id]

    def lanes_many(self, queries: Sequence[str], qvecs: np.ndarray) -> list[Lanes]:
        """(chunk BM25, paper BM25, dense chunk) hits for each query; the dense lane of all of
        them is one scan (:meth:`SearchIndex.chunk_dense_many`)."""
        d = self.params.lane_depth
        dense = self.index.chunk_dense_many(qvecs, d)
        out = [(self.index.chunk_bm25(q, d), self.index.paper_bm25(q, d), dn) for q, dn in zip(queries, dense)]
        self.paper_of.prefetch(c for cb, _, dn in out for c, _ in (*cb, *dn))
        return out

    def lanes(self, query: str, qvec: np.ndarray) -> Lanes:
        """(chunk BM25, paper BM25, dense chunk) hits for one query."""
        return self.lanes_many([query], np.asarray(qvec)[None, :])[0]

    def paper_ranking(self, lanes: Lanes) -> list[str]:
        """Equal-weight RRF over the three lanes' paper rankings."""
        cb, pb, dn = lanes
        return rrf([papers_by_best_chunk([c for c, _ in cb], self.paper_of), [p for p, _ in pb],
                    papers_by_best_chunk([c for c, _ in dn], self.paper_of)], k=self.params.rrf_k)

    def run(self, queries: Sequence[str], pool: Pool, anchors: Sequence[str] = ()) -> list[SubqueryTrace]:
        """Run steps 1-5 for the subqueries of one round and add their best chunks to ``pool``
        (those of a query in ``anchors``, the question itself, anchored: :class:`Pool`).

        Equal to running each query alone (the pool keeps each chunk's maximum), but the
        queries are encoded in one batch and share one dense scan, and so do their PRF queries.
        Each trace's ``seconds`` holds its share of the shared steps."""
        p = self.params
        queries = list(queries)
        if not queries:
            return []
        n = len(queries)
        trs = [SubqueryTrace(q) for q in queries]
        t = time.perf_counter()
        q0 = self.encoder.encode_queries(queries)
        l0 = self.lanes_many(queries, q0)
        p0 = [self.paper_ranking(lanes) for lanes in l0]
        share = (time.perf_counter() - t) / n
        t = time.perf_counter()
        rankings = [[r] for r in p0]
        chunk_lists = [[[c for c, _ in lanes[0]], [c for c, _ in lanes[2]]] for lanes in l0]
        prf = [i for i in range(n) if p0[i] and p.prf_chars > 0]
        for i in prf:
            trs[i].prf_query = prf_query(queries[i], self.title_abstract(p0[i][0]), p.prf_chars)
        if prf:
            q1 = self.encoder.encode_queries([trs[i].prf_query for i in prf])
            for i, lanes in zip(prf, self.lanes_many([trs[i].prf_query for i in prf], q1)):
                rankings[i].append(self.paper_ranking(lanes))
                chunk_lists[i] += [[c for c, _ in lanes[0]], [c for c, _ in lanes[2]]]
        prf_share = (time.perf_counter() - t) / n
        for i, tr in enumerate(trs):
            t = time.perf_counter()
            paper_score = rrf_scores(rankings[i], k=p.rrf_k)
            tr.papers = sorted(paper_score, key=lambda x: -paper_score[x])[:20]
            chunk_score = rrf_scores(chunk_lists[i], k=p.rrf_k)
            retrieval = sorted(chunk_score,
                               key=lambda c: (-(chunk_score[c] + paper_score.get(self.paper_of[c], 0.0)), c))
            retrieval = retrieval[: p.rerank_depth]
            tr.seconds["search"] = share
            tr.seconds["prf"] = prf_share + time.perf_counter() - t
            t = time.perf_counter()
            rr = self._rerank(queries[i], q0[i], retrieval)
            blended = rerank_blend(retrieval, rr, p.rerank_weights, k=p.rrf_k, pin=p.rerank_pin)
            tr.pooled = blended[: p.pool_per_subquery]
            pool.add(tr.pooled, anchor=queries[i] in anchors)
            tr.seconds["rerank"] = time.perf_counter() - t
        return trs

    def _rerank(self, query: str, qvec: np.ndarray, chunk_ids: list[str]) -> dict[str, float]:
        if not chunk_ids:
            return {}
        if self.reranker is None:
            scores = self.index.vectors_of(chunk_ids) @ qvec
        else:
            scores = self.reranker.scores(query, [c.text for c in self.graph.chunks(chunk_ids)])
        return {c: float(s) for c, s in zip(chunk_ids, scores)}

