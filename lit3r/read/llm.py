"""The LLM reader: local reading per candidate paper, then cross-paper synthesis (seed paper
section 2.3).

Stage 1, local reading: for each of the first ``read.llm_papers`` candidates (bounded
concurrency, candidate order), the ``read.chunks_per_paper`` chunks of that paper that the
extractive scorer ranks best (cut to ``read.chunk_chars`` characters; figure/table crops attached
when the LLM accepts images) go to the LLM, which names the supporting chunks and the facts
(value, unit, what it measures, source chunk) first, then judges relevance and sufficiency.
Reading stops once ``read.sufficient_papers`` papers were judged sufficient alone (the papers
not read are noted).

Filtering (issue 14, item 7): a paper is passed to synthesis only when it was judged relevant
*and* names at least one of its listed passages; a fact is kept only when it cites one of its
paper's supporting passages and its numbers are in that passage; supporting labels, facts and
answers that copy the prompt's reply shape are dropped (:func:`lit3r.prompts.echoes_example`).
Everything dropped is noted. When no paper is left, the extractive reader's papers are read.

Stage 2, synthesis: the supporting chunks and facts of the relevant papers (those judged
sufficient first, then candidate order, at most ``read.synth_papers``) go to one call that
returns the supporting papers, the evidence chunks and the requested answers: free text
(calculations and comparisons included), the multiple-choice letter (constrained to the option
labels) and table rows (one JSON field per schema column, typed).

Labels: stage 1 names a paper's passages P1.., stage 2 names all passages E1..; each is mapped
back to stored chunk ids, so the LLM cannot invent a locator, and a stage-1 fact reaches stage 2
with the E label of the passage it cites (never a P label). Failures fall back to the
extractive reader, per stage and per answer field, and are recorded in ``ReadResult.notes``.
"""

from __future__ import annotations

import base64
import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from graph.records import Chunk
from lit3r.config import ReadParams
from lit3r.errors import Lit3rError, LLMError
from lit3r.llm.bounds import ID_CHARS, LABEL_CHARS, Label, cut, items, text
from lit3r.llm.client import StructuredLLM, in_context
from lit3r.llm.faults import one_line
from lit3r.llm.labels import Resolver
from lit3r.present.redact import logger
from lit3r.prompts import echoes_example, render
from lit3r.read.base import ReadRequest, ReadResult
from lit3r.read.extractive import ExtractiveReader
from lit3r.read.llm_answers import (
    answer_spec,
    apply_answers,
    check_grounding,
    clean_rows,
    draft_lines,
    option_match,
    stated,
)


def _all_required(schema: dict[str, Any]) -> None:
    schema["required"] = list(schema.get("properties", {}))


#: Characters of a stage-1 fact's value and description, of a synthesised free-text answer and of
#: a string table cell (bounded replies: issue 14, item 2; :mod:`lit3r.llm.bounds`).
FACT_CHARS = 300
ANSWER_CHARS = 600
CELL_CHARS = 200
_FactText = Annotated[str, Field(max_length=FACT_CHARS), cut(FACT_CHARS)]


class Fact(BaseModel):
    """A value or statement found by stage 1."""

    value: Union[_FactText, float] = ""
    unit: Annotated[str, Field(max_length=40), cut(40)] = ""
    what: _FactText = ""
    passage: Label = ""


class PaperReading(BaseModel):
    """Stage 1 output for one paper: the supporting passages and facts first, then the
    judgements they justify (every property required, in this order, as in
    :func:`synthesis_model`: a grammar-constrained backend writes them so)."""

    model_config = ConfigDict(json_schema_extra=_all_required)

    supporting: Annotated[list[Label], Field(max_length=8), cut(8)] = Field(default_factory=list)
    facts: Annotated[list[Fact], Field(max_length=6), cut(6)] = Field(default_factory=list)
    relevant: bool = False
    sufficient: bool = False


@dataclass
class Reading:
    """One paper's stage-1 reading as checked (:meth:`LLMReader._checked`): its supporting
    chunks, the kept facts with the chunk each cites, and the sufficiency judgement."""

    paper_id: str
    support: list[Chunk]
    facts: list[tuple[Fact, Chunk]] = field(default_factory=list)
    sufficient: bool = False


_COLUMN_TYPES = {"number": Optional[float], "boolean": Optional[bool], "string": text(CELL_CHARS)}


def synthesis_model(answer_types: Sequence[str], labels: Sequence[str] = (),
                    schema: Optional[list[dict]] = None) -> type[BaseModel]:
    """The stage-2 reply model for one question: ``papers``, ``evidence``, a ``calculation``
    (values used, arithmetic or comparison; generated before the answer) and only the requested
    answer fields (``answer`` text; ``choice`` constrained to ``labels``; ``rows`` with one
    typed field per schema column, named exactly as the column). Every property is listed as
    required, in this order, so that every backend generates the calculation before the answer."""
    fields: dict[str, Any] = {"papers": (items(text(ID_CHARS), 10), Field(default_factory=list)),
                              "evidence": (items(text(LABEL_CHARS), 10), Field(default_factory=list))}
    if "freeform" in answer_types or "multiple_choice" in answer_types:
        fields["calculation"] = (text(600), "")  # worked first, answered after
    if "freeform" in answer_types:
        fields["answer"] = (text(ANSWER_CHARS), "")
    if "multiple_choice" in answer_types and labels:
        fields["choice"] = (Literal[tuple(labels)], ...)
    if "table" in answer_types and schema:
        cols = {f"c{i}": (_COLUMN_TYPES.get(c.get("type", "string"), text(CELL_CHARS)), Field(alias=c["name"]))
                for i, c in enumerate(schema)}
        row: Any = create_model("Row", __config__=ConfigDict(populate_by_name=True), **cols)  # type: ignore[call-overload]
        fields["rows"] = (items(row, 30), Field(default_factory=list))
    # every property required, in this order: a grammar-constrained backend (llama.cpp) writes the
    # required ones first, so the calculation must be required to come before the choice (issue 14,
    # item 5); validation still takes the defaults when a field is missing
    return create_model("Synthesis", __config__=ConfigDict(json_schema_extra=_all_required), **fields)


def image_part(path: Path) -> dict:
    """An OpenAI ``image_url`` content part holding the PNG at ``path`` as a data URL."""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}


def user_message(text: str, chunks: Sequence[Chunk], image_root: Optional[Path], max_images: int) -> dict:
    """A user message: plain text, or text plus the crops of the figure/table ``chunks`` that have
    one under ``image_root`` (at most ``max_images``; None or 0 sends text only)."""
    parts = []
    if image_root is not None and max_images > 0:
        for c in chunks:
            if c.kind in ("figure", "table") and c.image and (image_root / c.image).is_file():
                parts.append(image_part(image_root / c.image))
                if len(parts) >= max_images:
                    break
    if not parts:
        return {"role": "user", "content": text}
    return {"role": "user", "content": [{"type": "text", "text": text}, *parts]}


def _label(c: Chunk) -> str:
    return ", ".join(x for x in (c.kind, f"page {c.page}", c.object_id or "", c.section or "") if x)


class LLMReader:
    """Stage 1 + stage 2 with ``llm`` (see the module docstring). ``extractive`` scores chunks and
    answers whatever the LLM could not; ``image_root`` is the corpus folder (crops are stored
    relative to it)."""

    def __init__(self, extractive: ExtractiveReader, llm: StructuredLLM, params: ReadParams,
                 image_root: Optional[Path] = None) -> None:
        self.extractive = extractive
        self.graph = extractive.graph
        self.llm = llm
        self.params = params
        self.images = image_root if (params.images and getattr(llm.chat, "supports_images", False)) else None
        self._no_images = threading.Event()

    def read(self, request: ReadRequest) -> ReadResult:
        """Answer ``request`` from its candidates (paper ids, best first); never raises for LLM
        failures (the extractive answer fills in)."""
        question, candidates = request.question, request.candidates
        if not candidates:
            return ReadResult([], [])
        read_ids = list(candidates[: self.params.llm_papers])
        scored = self.extractive.score_chunks(question, request.qvecs, candidates, pooled=request.pooled,
                                              limit=max(len(read_ids), self.params.papers))
        fallback = self.extractive.read(request, scored=scored)
        try:
            return self._read_llm(request, scored, fallback, read_ids)
        except Lit3rError:
            raise  # a server or index fault (graph.errors.ServerFault) is the run's to report (it may stop the batch)
        except Exception as exc:  # a defect in the LLM path must not lose the question: the extractive answer stands
            log = logger("lit3r.read")  # one line, secrets masked; the traceback only at DEBUG
            log.warning("LLM reader failed (%s: %s); the extractive answer is used", type(exc).__name__, one_line(exc))
            log.debug("the LLM reader's failure", exc_info=True)
            fallback.reader = "llm failed + extractive"
            fallback.notes.append(f"LLM reader failed ({type(exc).__name__}: {one_line(exc)}): the extractive "
                                  "answer is used")
            return fallback

    def _read_llm(self, request: ReadRequest, scored: Any, fallback: ReadResult, read_ids: list[str]) -> ReadResult:
        """Stages 1 and 2 over ``read_ids`` (:meth:`read`), ``fallback`` the extractive answer: the
        chunks each paper shows, stage 1 (:meth:`_stage1`), the papers passed to synthesis
        (:meth:`_for_synthesis`), stage 2 (:meth:`_stage2`)."""
        per_paper = self._chunks_per_paper(scored, read_ids)
        notes: list[str] = []
        relevant = self._stage1(request, per_paper, read_ids, notes)
        relevant = self._for_synthesis(relevant, request.options, fallback, per_paper, notes)
        return self._stage2(request, relevant, fallback, len(read_ids), notes)

    def _chunks_per_paper(self, scored: Any, read_ids: list[str]) -> dict[str, list[Chunk]]:
        """``{paper id: its best-scored chunks}``, at most ``read.chunks_per_paper`` each, in the
        extractive scorer's order (``scored.items``: ``(score, chunk)`` best first)."""
        per_paper: dict[str, list[Chunk]] = {pid: [] for pid in read_ids}
        for _, c in scored.items:
            if c.paper_id in per_paper and len(per_paper[c.paper_id]) < self.params.chunks_per_paper:
                per_paper[c.paper_id].append(c)
        return per_paper

    def _stage1(self, request: ReadRequest, per_paper: dict[str, list[Chunk]], read_ids: list[str],
                notes: list[str]) -> list[Reading]:
        """Stage 1: each paper of ``read_ids`` read on its chunks (at most ``read.concurrency`` at
        once), checked (:meth:`_checked`), in candidate order; stops once ``read.sufficient_papers``
        readings were judged sufficient. Returns the checked readings; failures and the stop go to
        ``notes``."""
        question = request.question
        workers = max(1, self.params.concurrency if getattr(self.llm.chat, "concurrent", True) else 1)

        def one(pid: str) -> tuple[PaperReading, Optional[str]]:
            reading = self._read_paper(question, pid, per_paper[pid])
            bar.update()
            return reading

        relevant: list[Reading] = []
        read_n, stop_at = 0, self.params.sufficient_papers
        with ThreadPoolExecutor(max_workers=workers) as ex, \
                request.progress.bar("reading papers", len(read_ids), "paper") as bar:
            # each reading in a copy of this question's context: its LLM usage counts for it;
            # at most ``workers`` readings are submitted ahead and results are taken in candidate
            # order, so where reading stops does not depend on timing (readings still under way
            # when it stops are not used)
            todo = iter(read_ids)
            window: deque[tuple[str, Future]] = deque()
            while True:
                while len(window) < workers and (nxt := next(todo, None)) is not None:
                    window.append((nxt, ex.submit(in_context(one), nxt)))
                if not window:
                    break
                pid, fut = window.popleft()
                reading, error = fut.result()
                read_n += 1
                if error:
                    notes.append(f"stage 1 {pid}: {error}")
                    continue
                checked = self._checked(pid, reading, per_paper[pid], notes)
                if checked is not None:
                    relevant.append(checked)
                if stop_at and sum(r.sufficient for r in relevant) >= stop_at:
                    break
        if read_n < len(read_ids):
            notes.append(f"stage 1 stopped after {read_n} of {len(read_ids)} papers: {stop_at} judged sufficient")
        notes.append(f"stage 1: {len(relevant)} of {read_n} papers read passed to synthesis "
                     f"({sum(r.sufficient for r in relevant)} judged sufficient)")
        return relevant

    def _for_synthesis(self, relevant: list[Reading], options: Optional[dict[str, str]], fallback: ReadResult,
                       per_paper: dict[str, list[Chunk]], notes: list[str]) -> list[Reading]:
        """The readings stage 2 sees: stage 1's (or, when it passed none, the extractive reader's
        papers with their evidence), those judged sufficient first, then candidate order, at most
        ``read.synth_papers``; with ``read.draft`` the draft's evidence and the passage behind each
        option added (:func:`with_draft_evidence`)."""
        if not relevant:
            notes.append("stage 1 found no relevant paper: the extractive reader's papers are read")
            relevant = [Reading(pid, [c for c in fallback.evidence if c.paper_id == pid] or per_paper.get(pid, [])[:2])
                        for pid in fallback.papers]
        relevant = sorted(relevant, key=lambda r: not r.sufficient)  # stable: sufficient first, then candidate order
        relevant = relevant[: self.params.synth_papers]
        if self.params.draft:  # the draft's evidence and the passage behind each option, among the passages
            behind = [m["chunk_id"] for lab in options or {} if (m := option_match(fallback.option_support, lab))]
            shown = list(fallback.evidence) + self.graph.chunks(list(dict.fromkeys(behind)))  # de-duplicated below
            relevant = with_draft_evidence(relevant, shown)
        return relevant

    def _stage2(self, request: ReadRequest, relevant: list[Reading], fallback: ReadResult, n_read: int,
                notes: list[str]) -> ReadResult:
        """Stage 2 (:meth:`_synthesize`) on a copy of ``fallback``; when its call fails the
        extractive answer is kept and noted."""
        result = ReadResult(fallback.papers, fallback.evidence, fallback.freeform, fallback.choice,
                            paper_scores=fallback.paper_scores, option_scores=fallback.option_scores,
                            option_support=fallback.option_support,
                            rows=fallback.rows, reader="llm", notes=notes)
        result.supporting = {r.paper_id: [c.chunk_id for c in r.support] for r in relevant}
        t = time.perf_counter()
        try:
            self._synthesize(request.question, relevant, request.options, request.schema, request.answer_types,
                             result)
        except LLMError as exc:
            result.reader = "llm stage 1 + extractive"
            notes.append(f"stage 2: {exc}; the extractive answer is kept")
        request.progress.line(f"synthesis from {len(relevant)} relevant paper(s) of {n_read} read "
                              f"({time.perf_counter() - t:.0f} s)")
        return result

    def _ask(self, text: str, chunks: Sequence[Chunk], model: type[BaseModel], stage: str):
        if self.images is not None and not self._no_images.is_set():
            msg = user_message(text, chunks, self.images, self.params.max_images)
            if isinstance(msg["content"], list):
                try:
                    return self.llm.ask([msg], model, stage)
                except LLMError:
                    self._no_images.set()  # the endpoint refuses images: text only from now on
        return self.llm.ask([{"role": "user", "content": text}], model, stage)

    def _checked(self, pid: str, reading: PaperReading, chunks: list[Chunk], notes: list[str]) -> Optional[Reading]:
        """The reading of paper ``pid`` (whose passages P1.. were ``chunks``) as passed to
        synthesis, or None when the paper is not: judged not relevant, or relevant without one
        listed supporting passage. Supporting labels and facts that copy the prompt's reply shape,
        facts that cite no supporting passage and facts whose numbers their passage does not
        state are dropped; each drop is appended to ``notes``."""
        if not reading.relevant or not chunks:
            return None
        labels = {f"P{i + 1}": c for i, c in enumerate(chunks)}
        said = [s for s in reading.supporting if not echoes_example("read_paper", s)]
        if len(said) < len(reading.supporting):
            notes.append(f"stage 1 {pid}: supporting labels copied from the prompt's reply shape: dropped")
        label_of = Resolver(list(labels))
        names = label_of.resolve_all(said)
        notes += [f"stage 1 {pid}: {n}" for n in label_of.notes]
        if not names:
            notes.append(f"stage 1 {pid}: judged relevant but named none of its passages: not passed to synthesis")
            return None
        facts: list[tuple[Fact, Chunk]] = []
        for f in reading.facts:
            what = f"fact {f.what or f.value!r}"
            if any(echoes_example("read_paper", str(x)) for x in (f.value, f.what, f.unit) if x != ""):
                notes.append(f"stage 1 {pid}: {what} copies the prompt's reply shape: dropped")
                continue
            cited = Resolver(list(labels)).resolve(f.passage)
            if cited not in names:
                notes.append(f"stage 1 {pid}: {what} cites {f.passage or 'no passage'!r}, not one of its supporting "
                             f"passages {names}: dropped")
                continue
            if not stated(f.value, labels[cited].text):
                notes.append(f"stage 1 {pid}: {what} has the value {f.value!r}, which {cited} does not state: dropped")
                continue
            facts.append((f, labels[cited]))
        return Reading(pid, [labels[n] for n in names], facts, reading.sufficient)

    def _read_paper(self, question: str, pid: str, chunks: list[Chunk]) -> tuple[PaperReading, Optional[str]]:
        if not chunks:
            return PaperReading(), None
        p = self.graph.paper(pid)
        venue = " ".join(str(x) for x in (p.venue, p.year) if x)
        passages = "\n\n".join(f"[P{i + 1}] ({_label(c)}) {c.text[: self.params.chunk_chars]}"
                               for i, c in enumerate(chunks))
        text = render("read_paper", question=question, paper_id=pid, title=p.title,
                      venue=f" ({venue})" if venue else "", passages=passages)
        try:
            return self._ask(text, chunks, PaperReading, "read_paper"), None
        except LLMError as exc:
            return PaperReading(), str(exc)

    def _synthesize(self, question: str, relevant: list[Reading],
                    options: Optional[dict[str, str]], schema: Optional[list[dict]],
                    answer_types: Sequence[str], result: ReadResult) -> None:
        """Stage 2: one call over the relevant papers' chunks and facts; its reply overwrites the
        fields of ``result`` it answers (raises LLMError when the call fails)."""
        labels, blocks = self._evidence_blocks(relevant)
        types = [t for t in answer_types if t != "multiple_choice" or options]
        types = [t for t in types if t != "table" or schema]
        draft = draft_lines(result, types, options, {c.chunk_id: lab for lab, c in labels.items()}) \
            if self.params.draft else "- none"
        text = render("synthesize", question=question, evidence="\n\n".join(blocks), draft=draft,
                      **answer_spec(types, options, schema))
        out = self._ask(text, list(labels.values()), synthesis_model(types, list(options or {}), schema), "synthesize")
        self._apply_support(out, labels, relevant, result)
        extractive = (result.freeform, result.choice)
        for name in ("answer", "calculation"):
            if echoes_example("synthesize", getattr(out, name, None)):
                result.notes.append(f"stage 2 {name} {getattr(out, name)!r} copies the prompt's reply shape: ignored")
                setattr(out, name, "")
        apply_answers(out, types, result)
        if "table" in types and out.rows:
            titles = {r.paper_id: self.graph.paper(r.paper_id).title for r in relevant}
            result.rows = clean_rows(result.rows or [], titles, result.notes)
        check_grounding(out, options, result, extractive)
        result.facts = [{"paper_id": r.paper_id, **f.model_dump(), "chunk_id": c.chunk_id}
                        for r in relevant for f, c in r.facts]
        if getattr(out, "calculation", ""):
            result.notes.append(f"stage 2 calculation: {out.calculation}")

    def _evidence_blocks(self, relevant: list[Reading]) -> tuple[dict[str, Chunk], list[str]]:
        """``({label E1..: chunk}, one text block per paper)``: the papers' supporting chunks
        (labelled, cut to ``read.chunk_chars``) and stage-1 facts, each followed by the E label
        of the chunk it cites (stage-1 P labels never reach stage 2)."""
        labels: dict[str, Chunk] = {}
        blocks = []
        for r in relevant:
            p = self.graph.paper(r.paper_id)
            lines = [f"[{r.paper_id}] {p.title}"]
            label_of: dict[str, str] = {}
            for c in r.support:
                lab = f"E{len(labels) + 1}"
                labels[lab] = c
                label_of[c.chunk_id] = lab
                lines.append(f"  [{lab}] ({_label(c)}) {c.text[: self.params.chunk_chars]}")
            for f, c in r.facts:
                src = f" ({label_of[c.chunk_id]})" if c.chunk_id in label_of else ""
                lines.append(f"  fact: {f.what}: {f.value} {f.unit}".rstrip() + src)
            blocks.append("\n".join(lines))
        return labels, blocks

    def _apply_support(self, out: Any, labels: dict[str, Chunk], relevant: list[Reading],
                       result: ReadResult) -> None:
        """The reply's supporting papers and evidence labels -> ``result.papers`` / ``evidence``
        (only known papers and labels; the first relevant paper when it names none)."""
        label_of = Resolver(list(labels))
        evidence = [labels[e] for e in label_of.resolve_all(out.evidence)]
        paper_of = Resolver([r.paper_id for r in relevant])
        papers = paper_of.resolve_all(out.papers)
        result.notes += [f"stage 2: {n}" for n in label_of.notes + paper_of.notes]
        papers = list(dict.fromkeys(papers + [c.paper_id for c in evidence]))  # de-duplicated before the cap
        if not papers:
            papers = [relevant[0].paper_id]
            result.notes.append("stage 2 named no supporting paper: the first relevant paper is kept")
        if not evidence:
            evidence = [c for r in relevant if r.paper_id in papers for c in r.support[:1]]
        result.papers, result.evidence = papers, evidence[: max(self.params.max_evidence, len(papers))]


def with_draft_evidence(relevant: list[Reading], evidence: Sequence[Chunk]) -> list[Reading]:
    """``relevant`` with the chunks the draft cites (:func:`draft_lines`: the extractive reader's
    evidence, the passage that matches each option) among the passages stage 2 sees: each is
    added to its paper's reading, or as a reading of its own after the others when stage 1 did
    not pass its paper."""
    out = [Reading(r.paper_id, list(r.support), list(r.facts), r.sufficient) for r in relevant]
    by_paper = {r.paper_id: r for r in out}
    for c in evidence:
        r = by_paper.get(c.paper_id)
        if r is None:
            r = by_paper[c.paper_id] = Reading(c.paper_id, [])
            out.append(r)
        if all(s.chunk_id != c.chunk_id for s in r.support):
            r.support.append(c)
    return out
