"""The complete Retrieve step with an LLM: decomposition, hybrid retrieval per subquery, shared
pool, verification, iterative rounds (seed paper section 2.1).

Round 1: the LLM writes 4 subqueries (the question itself is always searched too). The new
subqueries of a round run together in :meth:`lit3r.pipeline.subquery.SubquerySearch.run` (lanes, RRF,
PRF, rerank, 20 chunks each into the pool; one encoder batch and one dense scan per step). The verifier reads the top 20 pool papers (2 best chunks each, cut to 1,800 chars)
and reports evidence papers, sufficiency and what is missing. Stop when sufficient, when a
round brings no new subquery, or after ``max_rounds``; otherwise the LLM writes at most 4 new
subqueries from the question, the earlier ones and the missing note (an empty note asks for a
different angle). A question naming a venue and year gets ``[VENUE YEAR]`` on every subquery.

Decomposition is kept from hurting recall (issue 14, item 8): the reply schema caps the list at
the number asked for; :func:`clean_subqueries` drops vague queries, repeats across rounds and
copies of the prompt's reply shape, but keeps a one-word query that names one of the question's
entities; the question's own pooled chunks are anchored in the pool, so the pool ranking lists
the question's own papers first (:class:`lit3r.pipeline.pool.Pool`); the verifier reads that
ranking, and Ranking A is its part that the question found or the verifier named, so subqueries
can only add to it, and only papers that were checked.
Without an LLM: one round with the question as the only subquery. LLM failures are recorded in
the trace and the step continues with what it has.
"""

from __future__ import annotations

import functools
import re
import textwrap
import time
from dataclasses import dataclass, field
from typing import Annotated, Any, Optional

from pydantic import BaseModel, Field, create_model

from graph.progress import SILENT, Progress, Reporter
from graph.search.tokenize import tokenize
from graph.store import GraphStore
from ingest.metadata import VENUE_PATTERN
from lit3r.config import RetrieveParams
from lit3r.errors import LLMError
from lit3r.llm.bounds import cut, items
from lit3r.llm.client import StructuredLLM
from lit3r.llm.labels import Resolver
from lit3r.pipeline.pool import Pool
from lit3r.pipeline.subquery import SubquerySearch, SubqueryTrace
from lit3r.prompts import echoes_example, render

_Query = Annotated[str, Field(max_length=300), cut(300)]
_PaperId = Annotated[str, Field(max_length=40), cut(40)]


class Subqueries(BaseModel):
    """Decomposition output (at most 8 queries of 300 characters)."""

    subqueries: Annotated[list[_Query], Field(max_length=8), cut(8)] = Field(default_factory=list)


class Verdict(BaseModel):
    """Verifier output (at most 10 paper ids of 40 characters, 300 characters missing)."""

    evidence_papers: Annotated[list[_PaperId], Field(max_length=10), cut(10)] = Field(default_factory=list)
    sufficient: bool = False
    missing: Annotated[str, Field(max_length=300), cut(300)] = ""


@dataclass
class RoundTrace:
    """One round: its subqueries, the verifier's report, pool size after it, seconds, LLM
    errors, and the LLM subqueries dropped (``dropped``: one note each, with the reason)."""

    round: int
    subqueries: list[str]
    verdict: Optional[dict] = None
    pool_size: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


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


#: Words that name no particular thing: a subquery made only of these (and stop words) is vague
#: ("full method", "cited papers", "the results of the paper") and is dropped.
GENERIC_WORDS = frozenset("""
method methods approach approaches technique techniques paper papers work works study studies article
cited cite cites citing citation citations reference references related full main key overall general
result results finding findings detail details information description descriptions section sections
experiment experiments experimental evaluation evaluations analysis performance proposed propose
proposes new novel different other specific relevant important model models system systems author
authors question answer answers evidence passage passages query queries search find using used use
based data value values number numbers table tables figure figures equation equations setting settings
""".split())

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")


def question_entities(question: str) -> set[str]:
    """The named entities of a question, as lower-case tokens (:func:`graph.search.tokenize.
    tokenize`): words with a digit or an inner capital ("GSM8K", "GPT-4", "LLaMA"), all-capital
    words ("BLEU") and capitalised words that do not start a sentence ("Codex")."""
    out: set[str] = set()
    for m in _WORD.finditer(question):
        w = m.group(0)
        before = question[: m.start()].rstrip()
        starts = not before or before[-1] in ".?!:;\"("
        if (any(ch.isdigit() for ch in w) and any(ch.isalpha() for ch in w)) or any(ch.isupper() for ch in w[1:]) \
                or (w[0].isupper() and not starts):
            out.update(t for t in tokenize(w) if not t.isdigit())
    return out


def _stem(token: str) -> str:
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token


_GENERIC_STEMS = frozenset(_stem(w) for w in GENERIC_WORDS)


def _key(query: str) -> frozenset[str]:
    """What a query searches for, for repeat detection: its specific terms (stop words, generic
    words and one-letter tokens aside), plural "s" cut."""
    stems = (_stem(t) for t in tokenize(query) if len(t) > 1 or t.isdigit())
    return frozenset(t for t in stems if t not in _GENERIC_STEMS)


def clean_subqueries(raw: list[str], question: str, tag: Optional[str], seen: set[str], limit: int,
                     template: str) -> tuple[list[str], list[str]]:
    """``(kept, notes)``: the LLM's subqueries worth searching, at most ``limit``, each with
    ``tag`` (``[VENUE YEAR]``) in front (issue 14, items 6 and 8). Dropped, each with a note:
    a copy of the prompt's reply shape (``template``'s placeholders); a vague query (fewer than
    two specific terms, unless it names one of the question's entities: "GSM8K" and "Codex"
    alone are kept, "full method" is not); a repeat of the question, of a query in ``seen``
    (earlier rounds) or of an earlier one in ``raw`` (the same specific terms, case, order,
    plurals and the tag aside); those beyond ``limit``."""
    entities = question_entities(question)
    tag_terms = set(tokenize(tag)) if tag else set()
    keys = {_key(q) - tag_terms for q in [question, *seen]}
    kept: list[str] = []
    notes: list[str] = []
    for q in raw:
        q = " ".join(q.split())
        if not q:
            continue
        if echoes_example(template, q):
            notes.append(f"subquery {q!r} copies the prompt's reply shape: dropped")
            continue
        key = _key(q) - tag_terms
        if len(key) < 2 and not key & {_stem(e) for e in entities}:
            notes.append(f"subquery {q!r} is vague (names no particular thing): dropped")
            continue
        if key in keys:
            notes.append(f"subquery {q!r} repeats an earlier query: dropped")
            continue
        if len(kept) >= limit:
            notes.append(f"subquery {q!r} is beyond the {limit} asked for: dropped")
            continue
        keys.add(key)
        kept.append(f"{tag} {q}" if tag and not q.startswith(tag) else q)
    return kept, notes


@functools.lru_cache(maxsize=None)
def subqueries_model(n: int) -> type[Subqueries]:
    """:class:`Subqueries` whose JSON schema allows at most ``n`` queries (``maxItems``), so that
    a grammar-constrained backend cannot write more than were asked for. Validation still takes
    up to 8 (from an endpoint that ignores the schema): :func:`clean_subqueries` caps the count
    after dropping the bad ones, so a vague query does not take a good one's place."""
    capped: Any = items(_Query, 8, schema_n=n)
    return create_model(f"Subqueries{n}", __base__=Subqueries, subqueries=(capped, Field(default_factory=list)))


def _round_line(rt: RoundTrace, rounds_max: int, verdict: Optional[Verdict]) -> str:
    """One progress line for a finished round: subqueries, pool size, the verifier's report."""
    if verdict is None:
        report = "no verifier report" + (f" ({textwrap.shorten(rt.errors[-1], 100, placeholder=' ...')})"
                                          if rt.errors else "")
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
            new = ([question] if rnd == 1 else []) + self._decompose(question, rnd, tag, seen, missing, rt)
            if not new:
                break
            seen.update(new)
            traces += self.search.run(new, pool, anchors=[question])
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
        # Ranking A: the question's own papers, then those only subqueries found that the verifier
        # named (the verifier reads the whole pool); unverified ones would only dilute the A/B fusion
        own, verified = pool.own_papers(), set(seeds)
        ranking_a = [(p, s) for p, s in pool.ranking_a() if p in own or p in verified]
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
        if limit <= 0:
            return []
        try:
            raw = self.llm.ask([{"role": "user", "content": prompt}], subqueries_model(limit), "decompose").subqueries
        except LLMError as exc:
            rt.errors.append(f"decomposition: {exc}")
            return []
        kept, rt.dropped = clean_subqueries(raw, question, tag, seen, limit,
                                            "decompose_first" if rnd == 1 else "decompose_next")
        return kept

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
            verdict = self.llm.ask([{"role": "user", "content": prompt}], Verdict, "verify")
        except LLMError as exc:
            rt.errors.append(f"verification: {exc}")
            return None
        rt.verdict = verdict.model_dump()
        if verdict.missing and echoes_example("verify", verdict.missing):
            rt.errors.append(f"verification: missing {verdict.missing!r} copies the prompt's reply shape: ignored")
            verdict.missing = ""
        ids = Resolver(listed)  # "[2006.16236]", a whole header, a near miss -> the listed id
        verdict.evidence_papers = ids.resolve_all(verdict.evidence_papers)
        rt.errors += [f"verification: {n}" for n in ids.notes]
        return verdict
