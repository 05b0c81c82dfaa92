"""Relate (paper-anchored, Ranking B) and the A/B fusion: seed paper section 2.2.

Per seed paper, three neighbour lists: SIMILAR_TO neighbours (paper-embedding kNN), bibliographic
coupling (Jaccard of cited-work sets, at least 2 shared works), and paper BM25 queried with the
seed's first 1,200 indexed characters as is. Each source merges its seeds' lists by round robin;
the three sources are fused with RRF (k=60); seeds come first; 100 are kept. Ranking A (full
length) and Ranking B are fused with RRF k=10; the top 50 go to the reader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from graph.search.protocol import SearchIndex
from graph.store import GraphStore
from lit3r.config import RelateParams
from lit3r.pipeline.fusion import fuse_ab, relate_ranking, round_robin


@dataclass
class RelateResult:
    """Ranking B with its per-source lists (for the trace), and the reader's ``candidates``
    (Ranking A and B fused)."""

    seeds: list[str]
    ranking_b: list[str]
    sources: dict[str, list[str]] = field(default_factory=dict)
    candidates: list[str] = field(default_factory=list)


def relate(seeds: Sequence[str], ranking_a: Sequence[str], graph: GraphStore, index: SearchIndex,
           params: RelateParams) -> RelateResult:
    """Ranking B for ``seeds`` and the candidates: RRF (``ab_rrf_k``) over ``ranking_a`` (paper
    ids, best first) and Ranking B, the first ``top_candidates``. No seeds: Ranking B is empty
    and the candidates are Ranking A's head. Unknown seed ids raise UnknownIdError."""
    if not seeds:
        return RelateResult([], [], candidates=candidates(ranking_a, [], params))
    seeds = list(dict.fromkeys(seeds))
    n = params.per_source
    similar = [[p for p, _ in graph.similar_papers(s, n)] for s in seeds]
    coupled = [[p for p, _, _ in graph.coupled_papers(s, params.coupling_min_shared, n)] for s in seeds]
    bm25 = [[p for p, _ in index.paper_bm25(index.paper_head(s, params.seed_query_chars), n + 1) if p != s]
            for s in seeds]
    sources = {
        "similar": round_robin(similar, exclude=seeds),
        "coupling": round_robin(coupled, exclude=seeds),
        "paper_bm25": round_robin(bm25, exclude=seeds),
    }
    ranking_b = relate_ranking(sources, seeds, k=params.rrf_k, keep=params.keep)
    return RelateResult(seeds, ranking_b, sources, candidates(ranking_a, ranking_b, params))


def candidates(ranking_a: Sequence[str], ranking_b: Sequence[str], params: RelateParams) -> list[str]:
    """The reader's candidate papers: RRF (``ab_rrf_k``) over A and B, the first ``top_candidates``."""
    return fuse_ab(ranking_a, ranking_b, k=params.ab_rrf_k, top=params.top_candidates)
