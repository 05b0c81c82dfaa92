"""The question-answering engine: open the stores once, then per question
Retrieve -> Relate -> Read -> validate (seed paper section 2; docs/ARCHITECTURE.md).

:meth:`Engine.ask` reads top-down: the question's texts are encoded once (one batch; the
vectors go to the reader), :class:`lit3r.pipeline.retrieve.Retrieve` builds the pool and Ranking
A (LLM decomposition and verification when an LLM is configured; one round with the question
alone without), :func:`lit3r.pipeline.relate.relate` expands the seeds (the verified evidence
papers plus the top paper of Ranking A) into Ranking B and the candidates, the reader
(:mod:`lit3r.read`) answers, and :func:`lit3r.littraceqa.validate.validate_read` turns its
result into the LitTraceQA submission line. A fixed paper set (``papers=``) skips Retrieve and
Relate. Every component comes from :mod:`lit3r.factory`.
"""

from __future__ import annotations

import contextlib
import difflib
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Sequence

from graph.progress import SILENT, Reporter
from graph.records import Paper
from lit3r import factory
from lit3r.config import Settings
from lit3r.errors import BadQuestion, shown_id
from lit3r.littraceqa.format import evidence_chunks
from lit3r.littraceqa.validate import QuestionSpec, validate_read
from lit3r.llm.client import StructuredLLM, Usage, track_usage
from lit3r.models import CachedQueryEncoder
from lit3r.pipeline.pool import PaperOf
from lit3r.pipeline.relate import RelateResult, relate
from lit3r.pipeline.retrieve import Retrieve, RetrieveResult, RoundTrace
from lit3r.pipeline.subquery import SubquerySearch, SubqueryTrace
from lit3r.protocols import Encoder
from lit3r.read.base import ReadRequest, ReadResult
from lit3r.read.scoring import ask_part


@dataclass
class AskResult:
    """Everything one question produced: Ranking A (``[(paper_id, score)]``), Relate's result,
    the reader's candidates and result, the trace (subqueries, rounds, LLM usage, the LLM
    ``profile`` in force: :meth:`lit3r.config.Settings.profile_trace`), per-stage ``timings`` in
    seconds (``load`` on the engine's first question), and the validated submission ``line``
    with the ``problems`` validation repaired."""

    query_id: str
    question: str
    ranking_a: list[tuple[str, float]]
    relate: RelateResult
    candidates: list[str]
    read: ReadResult
    subqueries: list[SubqueryTrace]
    timings: dict[str, float] = field(default_factory=dict)
    answer_types: tuple[str, ...] = ("freeform",)
    rounds: list[RoundTrace] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    line: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    profile: dict[str, Any] = field(default_factory=dict)

    def submission(self) -> dict[str, Any]:
        """The validated LitTraceQA submission line (its fields: :mod:`lit3r.littraceqa.validate`)."""
        return self.line

    def answered_by(self) -> str:
        """Which path answered: "llm" (the LLM reader's synthesis), "fallback" (an LLM is
        configured but its synthesis failed: the extractive answer stands), "extractive" (no
        LLM) or "none" (retrieval only)."""
        reader = self.read.reader
        if reader.startswith("none"):
            return "none"
        if reader == "llm":
            return "llm"
        return "fallback" if reader.startswith("llm") else "extractive"

    def degraded(self) -> bool:
        """An LLM step failed (its fault classes are in ``usage.faults``) or the fallback answered."""
        return bool(self.usage.faults) or self.answered_by() == "fallback"

    def trace(self) -> dict[str, Any]:
        """Which path answered (``answered_by``, ``degraded``), the question, subqueries by round
        (with their pooled chunks ``[[chunk_id, score]]``, best first), verifier reports, pool
        sizes, Ranking A ``[[paper_id, score]]``, Ranking B and its per-source lists, the seeds, the submission line (``answer``) and the chunk ids behind
        its evidence items (``evidence_chunks``), LLM calls and tokens, the LLM profile, timings:
        what :func:`lit3r.traces.trace_graph.trace_graph` turns into the evidence-trace graph."""
        return {
            "answered_by": self.answered_by(),
            "degraded": self.degraded(),
            "question": self.question,
            "rounds": [asdict(r) for r in self.rounds],
            "subqueries": [{"query": t.query, "prf_query": t.prf_query, "pooled": len(t.pooled),
                            "pooled_chunks": [[c, float(s)] for c, s in t.pooled],
                            "seconds": t.seconds} for t in self.subqueries],
            "ranking_a": [[p, float(s)] for p, s in self.ranking_a],
            "ranking_b": self.relate.ranking_b,
            "relate_sources": self.relate.sources,
            "seeds": self.relate.seeds,
            "answer": self.line,
            "evidence_chunks": [c.chunk_id for c in evidence_chunks(self.read.evidence, self.line)],
            "reader": {"name": self.read.reader, "supporting": self.read.supporting, "facts": self.read.facts,
                       "options": self.read.option_support, "notes": self.read.notes},
            "validation": self.problems,
            "llm": asdict(self.usage),
            "profile": self.profile,
            "timings": self.timings,
        }

    def to_json(self) -> dict[str, Any]:
        """Submission plus the ranked candidates, rankings A and B, and timings (seconds)."""
        return {
            "submission": self.submission(),
            "candidates": self.candidates,
            "ranking_a": [{"paper_id": p, "score": s} for p, s in self.ranking_a],
            "ranking_b": self.relate.ranking_b,
            "relate_sources": self.relate.sources,
            "trace": self.trace(),
            "timings": self.timings,
        }


@dataclass(frozen=True)
class Question:
    """One question as the engine takes it: ``text``, ``answer_types``, MC ``options``
    (``{label: text}``), the table ``schema`` and the ``query_id`` of its submission line."""

    text: str
    answer_types: tuple[str, ...]
    options: Optional[dict[str, str]] = None
    schema: Optional[list[dict]] = None
    query_id: str = "q"

    @classmethod
    def make(cls, text: str, *, options: Optional[dict[str, str]] = None, answer_types: Optional[Sequence[str]] = None,
             schema: Optional[list[dict]] = None, query_id: str = "q") -> "Question":
        """The answer types default to free text (plus multiple choice with options, plus table
        with a schema). Control characters and lone surrogates (undecodable bytes) are dropped
        from the text. Raises BadQuestion for an empty question or a single option."""
        text = "".join(ch for ch in text if ch in "\t\n" or unicodedata.category(ch) not in ("Cc", "Cs"))
        if not text.strip():
            raise BadQuestion("the question is empty: pass a question in quotes")
        if options is not None and len(options) < 2:
            raise BadQuestion("a multiple-choice question needs at least two options: give --option A=... "
                              "--option B=...")
        types = tuple(answer_types or (("freeform", "multiple_choice") if options else ("freeform",)))
        if schema and "table" not in types:
            types += ("table",)
        return cls(text, types, options, schema, query_id)


class Engine:
    """Stores, models and pipeline stages of one corpus (``settings.home``), built by
    :mod:`lit3r.factory`; ``encoder`` and ``llm`` may be injected (tests, benches).

    Raises NotBuiltError when the corpus has not been ingested and built, ModelError when a
    model cannot be loaded or does not match the index, LLMError when the LLM cannot be set up.
    """

    def __init__(self, settings: Settings, encoder: Optional[Encoder] = None,
                 llm: Optional[StructuredLLM] = None) -> None:
        t = time.perf_counter()
        self.settings = settings
        self.graph, self.index = factory.open_stores(settings)
        # the LLM before the encoder: the local provider sets OMP_WAIT_POLICY, which OpenMP reads
        # once, when PyTorch (or llama.cpp) loads it
        self.llm = llm if llm is not None else factory.llm(settings)
        self.encoder = CachedQueryEncoder(encoder or factory.chunk_encoder(settings))
        factory.check_index_encoder(settings, self.index, self.encoder)
        self.search = SubquerySearch(self.index, self.graph, self.encoder, settings.retrieve,
                                     factory.reranker(settings), PaperOf(self.graph))
        self.retrieve = Retrieve(self.search, self.graph, settings.retrieve, self.llm)
        self.reader = factory.reader(settings, self.graph, self.index, self.llm)
        self.load_seconds = time.perf_counter() - t
        self._first = True

    def snapshot(self) -> contextlib.ExitStack:
        """Context manager: the stores' reads in the block see one committed corpus (a build that
        publishes meanwhile is seen by the next question)."""
        stack = contextlib.ExitStack()
        for store in (self.index, self.graph):  # the embedded stores share one connection: re-entrant
            stack.enter_context(store.snapshot())
        return stack

    def ask(self, question: str, *, options: Optional[dict[str, str]] = None, query_id: str = "q",
            answer_types: Optional[tuple[str, ...]] = None, table_schema: Optional[list[dict]] = None,
            papers: Optional[Sequence[str]] = None, answer: bool = True,
            progress: Reporter = SILENT) -> AskResult:
        """Answer one question. ``options``: multiple-choice ``{label: text}``; ``table_schema``:
        ``[{name, type, is_row_key}]`` for a table answer; ``papers``: a fixed paper set (Retrieve
        and Relate are skipped, the reader reads those papers only); ``answer`` False stops after
        Relate (retrieval only: candidates and rankings, an empty submission line); ``progress``:
        where the LLM rounds and readings report (:mod:`graph.progress`; default nowhere). Raises
        BadQuestion for an empty question or unknown paper ids."""
        q = Question.make(question, options=options, answer_types=answer_types, schema=table_schema,
                          query_id=query_id)
        with self.snapshot(), track_usage() as usage:  # this question's LLM usage, exact under --workers
            result = self._ask(q, papers, answer, progress)
        result.usage = usage
        return result

    def _ask(self, q: Question, papers: Optional[Sequence[str]], answer: bool, progress: Reporter) -> AskResult:
        timings: dict[str, float] = {}
        if self._first:
            timings["load"], self._first = self.load_seconds, False
        t0 = time.perf_counter()
        qvecs = self.encoder.encode_queries([q.text, ask_part(q.text)])  # every text of the question, one batch
        if papers is not None:
            ret = RetrieveResult(None, [], [], [], [])
            rel = RelateResult([], [], candidates=self._known(papers))
        else:
            ret = self.retrieve(q.text, progress)
            timings["retrieve"] = time.perf_counter() - t0
            t = time.perf_counter()
            rel = relate(ret.seeds, [p for p, _ in ret.ranking_a], self.graph, self.index, self.settings.relate)
            timings["relate"] = time.perf_counter() - t
        t = time.perf_counter()
        pooled = frozenset(ret.pool.scores) if ret.pool is not None else None
        read = self.reader.read(ReadRequest(q.text, qvecs, rel.candidates, pooled, q.options, q.schema,
                                            q.answer_types, progress)) if answer else ReadResult([], [], reader="none (retrieval only)")
        timings["read"] = time.perf_counter() - t
        timings["total"] = time.perf_counter() - t0
        line, problems = validate_read(read, QuestionSpec(q.query_id, q.answer_types, tuple(q.options or ()),
                                                          list(q.schema or [])), rel.candidates)
        return AskResult(q.query_id, q.text, ret.ranking_a, rel, rel.candidates, read, ret.subqueries, timings,
                         q.answer_types, ret.rounds, Usage(), line,
                         problems, self.settings.profile_trace())

    def _known(self, papers: Sequence[str]) -> list[str]:
        """The fixed paper set, without duplicates; BadQuestion naming unknown ids (and close ones)."""
        if not papers:
            raise BadQuestion("no paper ids given: pass ids like 2007.14062,1706.03762")
        known = self.graph.has_papers(papers)
        unknown = [p for p in papers if p not in known]
        if unknown:
            close = difflib.get_close_matches(unknown[0][:200], self.graph.paper_ids(), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            shown = ", ".join(shown_id(p) for p in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise BadQuestion(f"unknown paper id(s) {shown}{more}{hint}: check the ids (`lit3r graph papers "
                              f"--search TEXT` lists them)")
        return list(dict.fromkeys(papers))

    def paper_heads(self, paper_ids: Sequence[str]) -> dict[str, Paper]:
        """``{paper_id: Paper}`` for display (titles, venues) of known ids."""
        return {pid: self.graph.paper(pid) for pid in dict.fromkeys(paper_ids)}
