"""The corpus tools of ``lit3r mcp``: find papers (``search_papers``), find evidence without
reading it (``find_evidence``: Retrieve + Relate), read a chunk or a page (``read``), and the
paper metadata behind the ``lit3r://papers`` resources.

Every function takes the open :class:`lit3r.serve.session.Session` and returns JSON-ready data;
the pipeline pieces are the engine's own (:class:`lit3r.pipeline.subquery.SubquerySearch` lanes
and RRF, :meth:`lit3r.pipeline.engine.Engine.ask` with ``answer=False``). A chunk is shown with
its locator: ``{chunk_id, paper_id, page, kind, object_id, section}`` (the LitTraceQA evidence
fields) and its stored text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from graph import explore
from graph.records import Chunk
from lit3r.errors import InputError, shown_id
from lit3r.pipeline.fusion import papers_by_best_chunk
from lit3r.serve.errors import echoed

if TYPE_CHECKING:
    from lit3r.pipeline.engine import AskResult
    from lit3r.serve.session import Session

#: Characters of a chunk's text in a search_papers result (its best passage).
PASSAGE_CHARS = 300
#: The three Retrieve lanes in the order of :meth:`SubquerySearch.lanes`.
LANES = ("chunk_bm25", "paper_bm25", "dense")


def locator(c: Chunk, text: bool = True) -> dict[str, Any]:
    """A chunk's locator (module docstring), with its ``text`` unless ``text`` is False."""
    out: dict[str, Any] = {"chunk_id": c.chunk_id, "paper_id": c.paper_id, "page": c.page, "kind": c.kind,
                           "object_id": c.object_id, "section": c.section}
    if text:
        out["text"] = c.text
    return out


def search_papers(session: "Session", query: str, limit: int) -> dict[str, Any]:
    """The ``limit`` papers that best match ``query``: the Retrieve lanes of one subquery (chunk
    BM25, paper BM25, dense chunk search) fused by RRF, as the first step of Retrieve ranks
    papers (no PRF, no LLM). Each paper: ``{rank, paper_id, title, venue, year, authors, why,
    lanes, passage}``: its rank in each lane that found it, and the best passage of the chunk
    lanes (a locator with the first :data:`PASSAGE_CHARS` characters)."""
    engine = session.engine()
    qvec = engine.encoder.encode_queries([query])[0]
    with engine.snapshot():
        lanes = engine.search.lanes(query, qvec)
        ranking = engine.search.paper_ranking(lanes)[:limit]
        paper_of = engine.search.paper_of
        cb, pb, dn = ([c for c, _ in hits] for hits in lanes)
        ranks = {"chunk_bm25": papers_by_best_chunk(cb, paper_of), "paper_bm25": pb,
                 "dense": papers_by_best_chunk(dn, paper_of)}
        best: dict[str, str] = {}
        for c in [*cb, *dn]:  # a paper's best passage: its first chunk in the chunk lanes
            best.setdefault(paper_of[c], c)
        heads = engine.paper_heads(ranking)
        chunks = {c.chunk_id: c for c in engine.graph.chunks([best[p] for p in ranking if p in best])}
    rows = []
    for i, pid in enumerate(ranking, start=1):
        found = {lane: ranks[lane].index(pid) + 1 for lane in LANES if pid in ranks[lane]}
        chunk = chunks.get(best.get(pid, ""))
        passage = None
        if chunk is not None:
            passage = {**locator(chunk, text=False), "text": echoed(chunk.text, PASSAGE_CHARS)}
        where = f"; best passage on page {chunk.page}" + (f" ({chunk.section})" if chunk.section else "") \
            if chunk is not None else ""
        why = "matched by " + ", ".join(f"{lane.replace('_', ' ')} #{r}" for lane, r in found.items()) + where
        rows.append({"rank": i, **explore.head(heads[pid]), "why": why, "lanes": found, "passage": passage})
    return {"query": echoed(query), "papers": rows}


def find_evidence(session: "Session", question: str, limit: int, papers: Optional[Sequence[str]] = None,
                  ) -> dict[str, Any]:
    """Retrieve + Relate without reading (:meth:`Engine.ask` with ``answer=False``): the
    ``limit`` best chunks of the pool (each chunk's best score over the subqueries, as the
    pool keeps it) with their locators, text and ``score``, and the candidate papers in the
    order the reader would read them, each with its ``rank_a`` (Ranking A, by best pooled
    chunk) and ``rank_b`` (Ranking B, Relate) or None. With ``papers`` Retrieve and Relate are
    skipped: the chunks are those of these papers, by cosine of the question's vector with the
    index vectors (the bi-encoder score), the candidates these papers. Unknown paper ids raise
    BadQuestion."""
    engine = session.engine()
    with engine.snapshot():
        result = engine.ask(question, papers=papers, answer=False, query_id="evidence")
        scored = _pooled(result) if papers is None else _by_cosine(engine, result.question, result.candidates)
        top = scored[:limit]
        chunks = {c.chunk_id: c for c in engine.graph.chunks([c for c, _ in top])}
        heads = engine.paper_heads(result.candidates)
    rank_a = {p: i for i, (p, _) in enumerate(result.ranking_a, start=1)}
    rank_b = {p: i for i, p in enumerate(result.relate.ranking_b, start=1)}
    return {
        "question": echoed(question),
        "chunks": [{"rank": i, **locator(chunks[c]), "score": round(s, 6)} for i, (c, s) in enumerate(top, start=1)],
        "candidates": [{"rank": i, "paper_id": p, "title": heads[p].title, "venue": heads[p].venue,
                        "year": heads[p].year, "rank_a": rank_a.get(p), "rank_b": rank_b.get(p)}
                       for i, p in enumerate(result.candidates, start=1)],
        "seeds": result.relate.seeds,
    }


def _pooled(result: "AskResult") -> list[tuple[str, float]]:
    best: dict[str, float] = {}
    for sq in result.subqueries:
        for c, s in sq.pooled:
            best[c] = max(best.get(c, float("-inf")), float(s))
    return sorted(best.items(), key=lambda x: (-x[1], x[0]))


def _by_cosine(engine: Any, question: str, papers: Sequence[str]) -> list[tuple[str, float]]:
    ids = [c.chunk_id for p in papers for c in engine.graph.chunks_of(p)]
    if not ids:
        return []
    scores = engine.index.vectors_of(ids) @ engine.encoder.encode_queries([question])[0]
    return sorted(((c, float(s)) for c, s in zip(ids, scores)), key=lambda x: (-x[1], x[0]))


def read(session: "Session", chunk_id: Optional[str] = None, paper_id: Optional[str] = None,
         page: Optional[int] = None) -> dict[str, Any]:
    """The stored text of one chunk (``chunk_id``) or of every chunk on ``page`` of ``paper_id``
    (in reading order), with their locators and the paper's head. Raises InputError for a call
    that names neither or both, or a page the paper does not have; UnknownIdError for an
    unknown id."""
    if (chunk_id is None) == (paper_id is None) or (paper_id is not None and page is None) or (
            chunk_id is not None and page is not None):
        raise InputError("pass either chunk_id, or paper_id and page (find_evidence and ask return both)")
    store = session.graph()
    with store.snapshot():
        if chunk_id is not None:
            chunk = store.chunk(chunk_id)
            return {"paper": explore.head(store.paper(chunk.paper_id)), "chunks": [locator(chunk)]}
        assert paper_id is not None
        head = store.paper(paper_id)
        chunks = [c for c in store.chunks_of(paper_id) if c.page == page]
    if not chunks:
        raise InputError(f"paper {shown_id(paper_id)} has no stored text on page {page} (its pages: 1 to "
                         f"{head.n_pages}): pass another page")
    return {"paper": explore.head(head), "page": page, "chunks": [locator(c) for c in chunks]}


def paper_list(session: "Session") -> list[dict]:
    """Every paper's head (``{paper_id, title, year, venue, authors}``), by id."""
    return explore.papers(session.graph())


def paper_record(session: "Session", paper_id: str) -> dict[str, Any]:
    """One paper's metadata: its head, abstract, page count and parser (UnknownIdError when
    unknown)."""
    p = session.graph().paper(paper_id)
    return {**explore.head(p), "abstract": p.abstract, "pages": p.n_pages, "parser": p.parser}
