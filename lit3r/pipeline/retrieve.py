"""The complete Retrieve step with an LLM: decomposition, hybrid retrieval per subquery, shared
pool, verification, iterative rounds (seed paper section 2.1; DESIGN.md Retrieve steps 1-7).

Round 1: the LLM writes 4 subqueries (the question itself is always searched too). The new
subqueries of a round run together in :meth:`lit3r.pipeline.subquery.SubquerySearch.run` (lanes, RRF,
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
from typing import Annotated, Optional

from pydantic import BaseModel, BeforeValidator, Field

from graph.progress import SILENT, Progress, Reporter
from graph.store import GraphStore
from ingest.metadata import VENUE_PATTERN
from lit3r.config import RetrieveParams
from lit3r.errors import LLMError
from lit3r.llm.client import StructuredLLM
from lit3r.llm.labels import Resolver
from lit3r.pipeline.pool import Pool
from lit3r.pipeline.subquery import SubquerySearch, SubqueryTrace
from lit3r.prompts import render


def _cut(n: int) -> BeforeValidator:
    """Cuts a longer string or list to ``n``. Beside ``Field(max_length=n)``: the JSON schema
    caps the length, so a grammar-constrained local model has to stop there (a small one can
    otherwise repeat itself until ``llm.max_tokens`` and leave unfinished JSON), and a longer
    value from an endpoint that ignores the cap is cut, not refused."""
    return BeforeValidator(lambda v: v[:n] if isinstance(v, (str, list)) else v)


_Query = Annotated[str, Field(max_length=300), _cut(300)]
_PaperId = Annotated[str, Field(max_length=40), _cut(40)]


class Subqueries(BaseModel):
    """Decomposition output (at most 8 queries of 300 characters)."""

    subqueries: Annotated[list[_Query], Field(max_length=8), _cut(8)] = Field(default_factory=list)


class Verdict(BaseModel):
    """Verifier output (at most 10 paper ids of 40 characters, 300 characters missing)."""

    evidence_papers: Annotated[list[_PaperId], Field(max_length=10), _cut(10)] = Field(default_factory=list)
    sufficient: bool = False
    missing: Annotated[str, Field(max_length=300), _cut(300)] = ""


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
    """The pool (None when the user fixed the papers), Ranking A (``[(paper_id, score)]``, best
    first), the seeds for Relate, and the trace (rounds and subqueries)."""

    pool: Optional[Pool]
    ranking_a: list[tuple[str, float]]
    seeds: list[str]
    rounds: list[RoundTrace]
    subqueries: list[SubqueryTrace]


def venue_year(question: str) -> Optional[str]:
    """``"[ACL 2020]"`` when the question names a venue with a year, else None."""
    m = re.search(rf"\b({VENUE_PATTERN})\s*'?((?:19|20)\d\d)\b", question)
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


def _round_line(rt: RoundTrace, rounds_max: int, verdict: Optional[Verdict]) -> str:
    """One progress line for a finished round: subqueries, pool size, the verifier's report."""
    if verdict is None:
        report = "no verifier report" + (f" ({rt.errors[-1][:80]})" if rt.errors else "")
    else:
        report = (f"{len(verdict.evidence_papers)} evidence paper(s), "
                  + ("sufficient" if verdict.sufficient else "not sufficient"))
    return (f"retrieve round {rt.round}/{rounds_max}: {len(rt.subqueries)} subqueries, {rt.pool_size} chunks "
            f"pooled, verifier: {report} ({rt.seconds:.0f} s)")


class Retrieve:
    """The Retrieve step (see the module docstring): ``Retrieve(...)(question) -> RetrieveResult``.

    ``search`` runs a round's subqueries; ``graph`` checks the verifier's paper ids and gives the
    verifier its passages; ``llm`` None: one round with the question alone. LLM failures never
    raise: they are recorded in the round's trace."""

    def __init__(self, search: SubquerySearch, graph: GraphStore, params: RetrieveParams,
                 llm: Optional[StructuredLLM] = None) -> None:
        self.search = search
        self.graph = graph
        self.params = params
        self.llm = llm

    def __call__(self, question: str, progress: Reporter = SILENT) -> RetrieveResult:
        """Run the rounds for ``question``; with an LLM, each round reports on ``progress``."""
        rounds_max = self.params.max_rounds if self.llm else 1
        progress = progress if self.llm else SILENT  # one fast round without an LLM: nothing to report
        with progress.bar("retrieve", rounds_max, "round") as bar:
            return self._rounds(question, rounds_max, bar, progress)

    def _rounds(self, question: str, rounds_max: int, bar: Progress, progress: Reporter) -> RetrieveResult:
        pool = Pool(self.search.paper_of)
        tag = venue_year(question)
        traces: list[SubqueryTrace] = []
        rounds: list[RoundTrace] = []
        seeds: list[str] = []
        seen: set[str] = set()
        missing = ""
        for rnd in range(1, rounds_max + 1):
            t = time.perf_counter()
            rt = RoundTrace(rnd, [])
            rounds.append(rt)
            todo = ([question] if rnd == 1 else []) + self._decompose(question, rnd, tag, seen, missing, rt)
            new = [q for q in dict.fromkeys(todo) if q.lower() not in {s.lower() for s in seen}]
            if not new:
                break
            seen.update(new)
            traces += self.search.run(new, pool)
            rt.subqueries, rt.pool_size = new, len(pool)
            verdict = self._verify(question, pool, rt)
            rt.seconds = time.perf_counter() - t
            bar.update()
            progress.line(_round_line(rt, rounds_max, verdict))
            if verdict is not None:
                seeds += [p for p in verdict.evidence_papers if p not in seeds]
                missing = verdict.missing
                if verdict.sufficient:
                    break
        ranking_a = pool.ranking_a()
        if ranking_a and ranking_a[0][0] not in seeds:
            seeds.insert(0, ranking_a[0][0])
        return RetrieveResult(pool, ranking_a, seeds, rounds, traces)

    def _decompose(self, question: str, rnd: int, tag: Optional[str], seen: set[str], missing: str,
                   rt: RoundTrace) -> list[str]:
        """The LLM's subqueries for round ``rnd`` (none without an LLM or when it fails)."""
        if self.llm is None:
            return []
        p = self.params
        venue_rule = f"The question names {tag[1:-1]}: start every query with \"{tag}\"." if tag else ""
        if rnd == 1:
            prompt = render("decompose_first", n=str(p.subqueries_first_round), question=question,
                            venue_rule=venue_rule)
        else:
            prompt = render("decompose_next", n=str(p.max_subqueries_later), question=question,
                            earlier="\n".join(f"- {q}" for q in sorted(seen)),
                            missing=missing or "nothing was named: search from a different angle",
                            venue_rule=venue_rule)
        limit = p.subqueries_first_round if rnd == 1 else p.max_subqueries_later
        try:
            return _tagged(self.llm.ask([{"role": "user", "content": prompt}], Subqueries).subqueries, tag)[:limit]
        except LLMError as exc:
            rt.errors.append(f"decomposition: {exc}")
            return []

    def _verify(self, question: str, pool: Pool, rt: RoundTrace) -> Optional[Verdict]:
        """The verifier's report on the top pool papers (2 best chunks each, cut to 1,800 chars),
        with its evidence papers resolved to the listed ids (:class:`lit3r.llm.labels.Resolver`:
        brackets, whole headers and near misses; the rest dropped and noted); None without an LLM
        or when it fails."""
        if self.llm is None:
            return None
        p, graph = self.params, self.graph
        blocks = []
        listed = [pid for pid, _ in pool.ranking_a()[: p.verify_papers]]
        for pid in listed:
            paper = graph.paper(pid)
            venue = " ".join(str(x) for x in (paper.venue, paper.year) if x)
            lines = [f"[{pid}] {paper.title}" + (f" ({venue})" if venue else "")]
            for cid, _ in pool.chunks_of(pid)[: p.verify_chunks_per_paper]:
                c = graph.chunk(cid)
                where = ", ".join(x for x in (c.kind, f"page {c.page}", c.section or "", c.object_id or "") if x)
                lines.append(f"  ({where}) {c.text[: p.verify_chunk_chars]}")
            blocks.append("\n".join(lines))
        prompt = render("verify", question=question, papers="\n\n".join(blocks))
        try:
            verdict = self.llm.ask([{"role": "user", "content": prompt}], Verdict)
        except LLMError as exc:
            rt.errors.append(f"verification: {exc}")
            return None
        rt.verdict = verdict.model_dump()
        ids = Resolver(listed)  # "[2006.16236]", a whole header, a near miss -> the listed id
        verdict.evidence_papers = ids.resolve_all(verdict.evidence_papers)
        rt.errors += [f"verification: {n}" for n in ids.notes]
        return verdict
