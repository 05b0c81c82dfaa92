"""The complete Retrieve step with an LLM: decomposition, hybrid retrieval per subquery, shared
pool, verification, iterative rounds (seed paper section 2.1; DESIGN.md Retrieve steps 1-7).

Round 1: the LLM writes 4 subqueries (the question itself is always searched too). The new
subqueries of a round run together in :meth:`lit3r.retrieve.Retriever.subqueries` (lanes, RRF,
PRF, rerank, 20 chunks each into the pool; one encoder batch and one dense scan per step). The verifier reads the top 20 pool papers (2 best chunks each, cut to 1,800 chars)
and reports evidence papers, sufficiency and what is missing. Stop when sufficient, when a
round brings no new subquery, or after ``max_rounds``; otherwise the LLM writes at most 4 new
subqueries from the question, the earlier ones and the missing note (an empty note asks for a
different angle). A question naming a venue and year gets ``[VENUE YEAR]`` on every subquery.
Without an LLM: one round with the question as the only subquery. LLM failures are recorded in
the trace and the step continues with what it has.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Optional

from pydantic import BaseModel, Field

from lit3r.config import RetrieveParams
from lit3r.fusion import Pool
from lit3r.llm import LLMError, StructuredLLM, Usage
from lit3r.prompts import render
from lit3r.retrieve import Retriever, SubqueryTrace

_VENUES = r"ACL|EMNLP|NAACL|EACL|COLING|NeurIPS|NIPS|ICML|ICLR|CVPR|ICCV|ECCV|AAAI|IJCAI|KDD|SIGIR|CHI|MIDL|TACL|JMLR|arXiv"


class Subqueries(BaseModel):
    """Decomposition output."""

    subqueries: list[str] = Field(default_factory=list, max_length=8)


class Verdict(BaseModel):
    """Verifier output."""

    evidence_papers: list[str] = Field(default_factory=list)
    sufficient: bool = False
    missing: str = ""


@dataclass
class RoundTrace:
    """One round: its subqueries, the verifier's report, pool size after it, seconds."""

    round: int
    subqueries: list[str]
    verdict: Optional[dict] = None
    pool_size: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)


@dataclass
class RetrieveResult:
    """The pool, Ranking A, the seeds for Relate, and the trace."""

    pool: Pool
    ranking_a: list[tuple[str, float]]
    seeds: list[str]
    rounds: list[RoundTrace]
    subqueries: list[SubqueryTrace]
    usage: Usage


def venue_year(question: str) -> Optional[str]:
    """``"[ACL 2020]"`` when the question names a venue with a year, else None."""
    m = re.search(rf"\b({_VENUES})\s*'?((?:19|20)\d\d)\b", question)
    return f"[{m.group(1)} {m.group(2)}]" if m else None


def _tagged(subqueries: list[str], tag: Optional[str]) -> list[str]:
    out = []
    for q in subqueries:
        q = " ".join(q.split())
        if len(re.findall(r"[^\W_]{2,}", q)) < 2:
            continue  # "...", "query 1": nothing to search (small models echo the format)
        if q and tag and not q.startswith(tag):
            q = f"{tag} {q}"
        if q:
            out.append(q)
    return out


def run_retrieve(question: str, retriever: Retriever, params: RetrieveParams,
                 llm: Optional[StructuredLLM] = None) -> RetrieveResult:
    """The Retrieve step for one question (see the module docstring)."""
    pool = Pool()
    usage_before = Usage(**vars(llm.usage)) if llm else Usage()
    tag = venue_year(question)
    venue_rule = (f"The question names {tag[1:-1]}: start every query with \"{tag}\"." if tag else "")
    traces: list[SubqueryTrace] = []
    rounds: list[RoundTrace] = []
    seeds: list[str] = []
    seen: set[str] = set()
    todo = [question]
    missing = ""
    for rnd in range(1, (params.max_rounds if llm else 1) + 1):
        t = time.perf_counter()
        rt = RoundTrace(rnd, [])
        if llm is not None:
            try:
                if rnd == 1:
                    prompt = render("decompose_first", n=str(params.subqueries_first_round), question=question,
                                    venue_rule=venue_rule)
                else:
                    prompt = render("decompose_next", n=str(params.max_subqueries_later), question=question,
                                    earlier="\n".join(f"- {q}" for q in sorted(seen)),
                                    missing=missing or "nothing was named: search from a different angle",
                                    venue_rule=venue_rule)
                limit = params.subqueries_first_round if rnd == 1 else params.max_subqueries_later
                todo += _tagged(llm.ask([{"role": "user", "content": prompt}], Subqueries).subqueries, tag)[:limit]
            except LLMError as exc:
                rt.errors.append(f"decomposition: {exc}")
        new = [q for q in dict.fromkeys(todo) if q.lower() not in {s.lower() for s in seen}]
        todo = []
        if not new:
            rounds.append(rt)
            break
        seen.update(new)
        traces += retriever.subqueries(new, pool)
        rt.subqueries = new
        rt.pool_size = len(pool)
        if llm is not None:
            try:
                verdict = _verify(question, pool, retriever, params, llm)
                rt.verdict = verdict.model_dump()
                known = retriever.graph.has_papers(verdict.evidence_papers)
                seeds += [p for p in verdict.evidence_papers if p in known and p not in seeds]
                missing = verdict.missing
                if verdict.sufficient:
                    rt.seconds = time.perf_counter() - t
                    rounds.append(rt)
                    break
            except LLMError as exc:
                rt.errors.append(f"verification: {exc}")
        rt.seconds = time.perf_counter() - t
        rounds.append(rt)
    ranking_a = pool.ranking_a(retriever.paper_of)
    if ranking_a and ranking_a[0][0] not in seeds:
        seeds.insert(0, ranking_a[0][0])
    usage = llm.usage.since(usage_before) if llm else Usage()
    return RetrieveResult(pool, ranking_a, seeds, rounds, traces, usage)


def _verify(question: str, pool: Pool, retriever: Retriever, params: RetrieveParams, llm: StructuredLLM) -> Verdict:
    """Ask the verifier about the top pool papers (2 best chunks each, cut to 1,800 chars)."""
    graph = retriever.graph
    blocks = []
    for pid, _ in pool.ranking_a(retriever.paper_of)[: params.verify_papers]:
        p = graph.paper(pid)
        venue = " ".join(str(x) for x in (p.venue, p.year) if x)
        lines = [f"[{pid}] {p.title}" + (f" ({venue})" if venue else "")]
        for cid, _ in pool.chunks_of(pid, retriever.paper_of)[: params.verify_chunks_per_paper]:
            c = graph.chunk(cid)
            where = ", ".join(x for x in (c.kind, f"page {c.page}", c.section or "", c.object_id or "") if x)
            lines.append(f"  ({where}) {c.text[: params.verify_chunk_chars]}")
        blocks.append("\n".join(lines))
    prompt = render("verify", question=question, papers="\n\n".join(blocks))
    return llm.ask([{"role": "user", "content": prompt}], Verdict)
