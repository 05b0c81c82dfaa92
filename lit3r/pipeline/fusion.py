"""Pure ranking functions of the Retrieve and Relate steps (seed paper sections 2.1-2.3).

Rankings are ordered lists of ids (best first); ranks are 1-based. No I/O, no models: every
formula here is unit-tested against hand-computed values (tests/unit/test_fusion.py).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Hashable, Iterable, Mapping, Optional, Sequence, TypeVar

K = TypeVar("K", bound=Hashable)


def rrf_scores(rankings: Sequence[Sequence[K]], k: int = 60, weights: Optional[Sequence[float]] = None) -> dict[K, float]:
    """Reciprocal rank fusion scores: ``score(d) = sum_i w_i / (k + rank_i(d))``.

    ``rankings``: lists of ids, best first (rank 1). ``weights`` default to 1 (equal-weight
    RRF). An id absent from a ranking contributes nothing for it. (Cormack et al. 2009; the
    seed paper uses k=60 for lanes and Relate sources, k=10 for the A/B fusion.)
    """
    weights = weights or [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[K, float] = defaultdict(float)
    for ranking, w in zip(rankings, weights):
        for rank, item in enumerate(ranking, start=1):
            scores[item] += w / (k + rank)
    return dict(scores)


def rrf(rankings: Sequence[Sequence[K]], k: int = 60, weights: Optional[Sequence[float]] = None) -> list[K]:
    """Ids ordered by :func:`rrf_scores` (ties: first appearance across the input rankings)."""
    scores = rrf_scores(rankings, k, weights)
    order = {item: i for i, item in enumerate(dict.fromkeys(x for r in rankings for x in r))}
    return sorted(scores, key=lambda x: (-scores[x], order[x]))


def papers_by_best_chunk(chunk_ranking: Sequence[K], paper_of: Mapping[K, str]) -> list[str]:
    """Paper ranking from a chunk ranking: each paper at the rank of its best chunk."""
    return list(dict.fromkeys(paper_of[c] for c in chunk_ranking))


def round_robin(lists: Sequence[Sequence[K]], exclude: Iterable[K] = ()) -> list[K]:
    """Merge ranked lists by rank: all rank-1 items (in list order), then all rank-2 items...

    Duplicates keep their first position; ids in ``exclude`` are skipped (seed paper 2.2:
    merging the neighbour lists of several seeds per source).
    """
    seen = set(exclude)
    out: list[K] = []
    for rank in range(max((len(x) for x in lists), default=0)):
        for lst in lists:
            if rank < len(lst) and lst[rank] not in seen:
                seen.add(lst[rank])
                out.append(lst[rank])
    return out


def prf_query(query: str, feedback_text: str, chars: int = 512) -> str:
    """Pseudo-relevance feedback query: the query plus the first ``chars`` characters of the
    top paper's title-and-abstract text (seed paper 2.1, step 3)."""
    feedback = " ".join(feedback_text.split())[:chars]
    return f"{query} {feedback}".strip()


def rerank_blend(
    retrieval: Sequence[K],
    reranker_scores: Mapping[K, float],
    weights: tuple[float, float] = (0.6, 0.4),
    k: int = 60,
    pin: int = 20,
) -> list[tuple[K, float]]:
    """Blend retrieval and reranker ranks; pin the retrieval top ``pin`` above the rest.

    ``retrieval``: the chunks given to the reranker, best first (r_ret = position, 1-based);
    ``reranker_scores``: reranker score per chunk (r_rr = rank by descending score). Returns
    ``(chunk, s)`` with ``s = w_ret/(k + r_ret) + w_rr/(k + r_rr)``, ordered: the first ``pin``
    chunks of ``retrieval`` sorted by s, then the others sorted by s (seed paper 2.1, step 4).
    """
    rr_order = sorted(retrieval, key=lambda c: (-reranker_scores[c], retrieval.index(c)))
    r_rr = {c: i for i, c in enumerate(rr_order, start=1)}
    scored = [(c, weights[0] / (k + i) + weights[1] / (k + r_rr[c])) for i, c in enumerate(retrieval, start=1)]
    head = sorted(scored[:pin], key=lambda cs: -cs[1])
    tail = sorted(scored[pin:], key=lambda cs: -cs[1])
    return head + tail


def relate_ranking(per_source: Mapping[str, Sequence[str]], seeds: Sequence[str], k: int = 60, keep: int = 100) -> list[str]:
    """Ranking B: RRF (k) over the per-source lists, seeds first, ``keep`` papers (seed paper 2.2)."""
    fused = [p for p in rrf(list(per_source.values()), k=k) if p not in seeds]
    return (list(dict.fromkeys(seeds)) + fused)[:keep]


def fuse_ab(ranking_a: Sequence[str], ranking_b: Sequence[str], k: int = 10, top: int = 50) -> list[str]:
    """The candidate list: RRF (k=10) over Ranking A (full length) and Ranking B, top ``top``."""
    return rrf([list(ranking_a), list(ranking_b)], k=k)[:top]


def jaccard(a: set, b: set) -> float:
    """|a & b| / |a | b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0
