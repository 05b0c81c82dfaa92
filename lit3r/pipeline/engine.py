"""The question-answering engine: open the stores once, then Retrieve -> Relate -> Read per question.

Retrieve is :func:`lit3r.rounds.run_retrieve` (LLM decomposition and verification when an LLM
is configured; one round with the question alone without); seeds for Relate = the verified
evidence papers plus the top paper of Ranking A. Read is :class:`lit3r.read_llm.LLMReader` with
an LLM, :class:`lit3r.read.ExtractiveReader` without. A fixed paper set (``papers=``) skips
Retrieve and Relate. Every submission line is checked and repaired by
:func:`lit3r.validate.validate_line`; its problems go to the trace. ``Engine.ask`` returns the
LitTraceQA submission object plus the ranked candidates and per-stage timings.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from lit3r.backends import open_stores
from lit3r.config import Settings
from lit3r.evidence import evidence_item
from lit3r.read import ExtractiveReader, ReadResult, ask_part
from lit3r.read_llm import LLMReader
from lit3r.validate import QuestionSpec, validate_line
from lit3r.relate import RelateResult, candidates, relate
from lit3r.llm import Usage
from lit3r.retrieve import Retriever, SubqueryTrace
from lit3r.rounds import RoundTrace, run_retrieve


@dataclass
class AskResult:
    """Everything one question produced."""

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

    def raw_submission(self) -> dict[str, Any]:
        """The reader's line before validation (evidence items carry their ``chunk_id``)."""
        answer: dict[str, Any] = {}
        if self.read.freeform is not None:
            answer["freeform"] = {"text": self.read.freeform}
        if self.read.choice is not None:
            answer["multiple_choice"] = {"gold": self.read.choice}
        if self.read.rows is not None:
            answer["table"] = {"rows": self.read.rows}
        return {
            "query_id": self.query_id,
            "gold_papers": [{"paper_id": p} for p in self.read.papers],
            "evidence": [{**evidence_item(c), "chunk_id": c.chunk_id} for c in self.read.evidence],
            "answer": {k: v for k, v in answer.items() if k in self.answer_types},
        }

    def submission(self) -> dict[str, Any]:
        """The validated LitTraceQA submission line (../shared/docs/LITTRACEQA.md)."""
        return self.line

    def trace(self) -> dict[str, Any]:
        """Subqueries by round, verifier reports, pool sizes, LLM calls and tokens, timings."""
        return {
            "rounds": [asdict(r) for r in self.rounds],
            "subqueries": [{"query": t.query, "prf_query": t.prf_query, "pooled": len(t.pooled),
                            "seconds": t.seconds} for t in self.subqueries],
            "seeds": self.relate.seeds,
            "reader": {"name": self.read.reader, "supporting": self.read.supporting, "facts": self.read.facts,
                       "notes": self.read.notes},
            "validation": self.problems,
            "llm": asdict(self.usage),
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


def _check_models(settings: Settings, index, encoder) -> None:
    """The index must have been built with the configured chunk encoder (ValueError otherwise)."""
    built, dim = getattr(index, "encoder", None), getattr(index, "dim", None)
    if (built and built != settings.models.chunk_encoder) or (dim and dim != encoder.dim):
        where = f"the index in {settings.index_dir}" if settings.backend == "embedded" else \
            f"the OpenSearch index {settings.opensearch.index_prefix}-chunks"
        raise ValueError(f"{where} was built with the chunk encoder {built or '?'} "
                         f"({dim}-d), the configuration says {settings.models.chunk_encoder} ({encoder.dim}-d): "
                         f"run `lit3r ingest PDF_DIR` to rebuild the index with it, or set models.chunk_encoder back")


class Engine:
    """Stores, models and pipeline stages of one corpus (``settings.home``).

    Raises FileNotFoundError when the corpus has not been ingested and built, and
    ``lit3r.models.ModelError`` when a model cannot be loaded.
    """

    def __init__(self, settings: Settings, encoder=None, llm=None) -> None:
        from lit3r.llm import make_llm
        from lit3r.models import CachedQueryEncoder, load_encoder, make_reranker

        t = time.perf_counter()
        self.settings = settings
        self.graph, self.index = open_stores(settings)
        m = settings.models
        self.encoder = CachedQueryEncoder(encoder or load_encoder(
            m.chunk_encoder, device=m.device, batch_size=m.batch_size, query_prompt=m.query_prompt, dtype=m.dtype))
        _check_models(settings, self.index, self.encoder)
        reranker = make_reranker(m, self.encoder) if m.reranker == "cross-encoder" else None
        self.retriever = Retriever(self.index, self.graph, self.encoder, settings.retrieve, reranker)
        self.extractive = ExtractiveReader(self.graph, self.index, self.encoder, settings.read)
        self.llm = llm if llm is not None else make_llm(settings)
        self.reader = LLMReader(self.extractive, self.llm, settings.read, Path(settings.home)) if self.llm \
            else self.extractive
        self.load_seconds = time.perf_counter() - t

    def ask(self, question: str, *, options: Optional[dict[str, str]] = None, query_id: str = "q",
            answer_types: Optional[tuple[str, ...]] = None, table_schema: Optional[list[dict]] = None,
            papers: Optional[Sequence[str]] = None, answer: bool = True) -> AskResult:
        """Answer one question. ``options``: multiple-choice ``{label: text}``; ``table_schema``:
        ``[{name, type, is_row_key}]`` for a table answer; ``papers``: a fixed paper set (Retrieve
        and Relate are skipped, the reader reads those papers only); ``answer`` False stops after
        Relate (retrieval only: candidates and rankings, an empty submission line). Raises
        ValueError for an empty question or an unknown paper id."""
        if not question.strip():
            raise ValueError("the question is empty: pass a question in quotes")
        with self.snapshot():
            return self._ask(question, options=options, query_id=query_id, answer_types=answer_types,
                             table_schema=table_schema, papers=papers, answer=answer)

    def snapshot(self) -> contextlib.ExitStack:
        """Context manager: the stores' reads in the block see one committed corpus (a build that
        publishes meanwhile is seen by the next question)."""
        stack = contextlib.ExitStack()
        for store in (self.index, self.graph):  # the embedded stores share one connection: re-entrant
            if hasattr(store, "snapshot"):
                stack.enter_context(store.snapshot())
        return stack

    def _ask(self, question: str, *, options, query_id, answer_types, table_schema, papers, answer) -> AskResult:
        types = tuple(answer_types or (("freeform", "multiple_choice") if options else ("freeform",)))
        if table_schema and "table" not in types:
            types += ("table",)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        self.encoder.encode_queries([question, ask_part(question)])  # every text of the question, one batch
        usage = Usage(**vars(self.llm.usage)) if self.llm else Usage()
        if papers is not None:
            if not papers:
                raise ValueError("no paper ids given: pass ids like 2007.14062,1706.03762")
            known = self.graph.has_papers(papers)
            unknown = [p for p in papers if p not in known]
            if unknown:
                import difflib

                close = difflib.get_close_matches(unknown[0], self.graph.paper_ids(), n=3)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                raise ValueError(f"unknown paper id(s) {', '.join(unknown)}{hint}: the ids are the paper_id "
                                 f"fields of {Path(self.settings.home) / 'papers.jsonl'}")
            pool, a, traces, rounds, cands = None, [], [], [], list(dict.fromkeys(papers))
            rel = RelateResult([], [])
        else:
            ret = run_retrieve(question, self.retriever, self.settings.retrieve, self.llm)
            pool, a, traces, rounds = ret.pool, ret.ranking_a, ret.subqueries, ret.rounds
            timings["retrieve"] = time.perf_counter() - t0
            t = time.perf_counter()
            rel = relate(ret.seeds, self.graph, self.index, self.settings.relate) if ret.seeds else RelateResult([], [])
            cands = candidates([p for p, _ in a], rel.ranking_b, self.settings.relate)
            timings["relate"] = time.perf_counter() - t
        t = time.perf_counter()
        if not answer:
            read = ReadResult([], [], reader="none (retrieval only)")
        else:
            read = self.reader.read(question, cands, pool=pool, options=options, schema=table_schema,
                                    answer_types=types)
        timings["read"] = time.perf_counter() - t
        timings["total"] = time.perf_counter() - t0
        usage = self.llm.usage.since(usage) if self.llm else Usage()
        res = AskResult(query_id, question, a, rel, cands, read, traces, timings, types, rounds, usage)
        spec = QuestionSpec(query_id, types, tuple(options or ()), list(table_schema or []))
        res.line, res.problems = validate_line(res.raw_submission(), spec, cands, self.graph)
        return res
