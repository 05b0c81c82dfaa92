"""The offline extractive reader (no LLM): candidates -> supporting papers, evidence, answer.

For the top ``read.papers`` candidates, every chunk is scored against the question:

    score = cosine(question, chunk) + 0.5 * token overlap + 0.3 / (1 + candidate rank)
            + 0.1 if the chunk is in the Retrieve pool

(token overlap = share of the question's tokens that occur in the chunk; reference-list entries
count half unless the question is about citations). Supporting papers: as many as the question
needs (:mod:`lit3r.read.selection`: the papers it names, the count it states, the papers a paper
cites, else the best paper and those within ``support_ratio`` of it); evidence: the best chunk of
each (at least ``max_evidence``). A multiple-choice question takes the option its evidence
units state best (:mod:`lit3r.read.claims`: per-option support in the trace, no letter on a
tie); a free-text answer is the best evidence unit (a cell, row or sentence), and its chunk is
always cited first; the reader abstains below ``abstain_cosine``.
This is a transparent baseline for the LLM reader of the seed paper (section 2.3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional, Sequence

import numpy as np

from graph.records import Chunk
from graph.search.protocol import SearchIndex
from graph.search.tokenize import tokenize
from graph.store import GraphStore
from lit3r.config import ReadParams
from lit3r.read.base import ReadRequest, ReadResult
from lit3r.read.citations import asks_citing, pick_listed, reference_chunk
from lit3r.read.claims import OptionSupport, Query, Support, Unit, choose_option, own_names, terms, units_of
from lit3r.read.defining import Ask, defining_sentence, definition_ask, introducing_paper
from lit3r.read.grids import pick_grid
from lit3r.read.ratios import pick_factor
from lit3r.read.roles import role_choice
from lit3r.read.rows import extractive_rows
from lit3r.read.scoring import CITE_Q, NUMERIC_Q, ask_part, chunk_lines, named_objects, overlap
from lit3r.read.selection import names_in, select_papers
from lit3r.read.tables import continued_table


@dataclass
class ScoredChunks:
    """The chunks read for one question: ``items`` ``[(score, chunk)]``, best first, and
    ``closeness``, the mean cosine of the question with its ``read.abstain_chunks`` closest
    chunks (-1 when nothing was read); the reader abstains when it is below
    ``read.abstain_cosine`` (calibrated on questions_dev and off-topic questions)."""

    items: list[tuple[float, Chunk]]
    closeness: float


class ExtractiveReader:
    """See the module docstring. Reads chunks from ``graph`` and their vectors from ``index``."""

    def __init__(self, graph: GraphStore, index: SearchIndex, params: ReadParams) -> None:
        self.graph = graph
        self.index = index
        self.params = params

    def _names(self, paper_id: str) -> list[str]:
        """The paper's own names, as the question would name it (no frequency-coined ones), and its
        full title (of three words or more)."""
        paper = self.graph.paper(paper_id)
        title = [paper.title] if len(paper.title.split()) >= 3 else []
        return own_names(paper.title, paper.abstract or "", frequent=False) + title

    def _close_anyway(self, question: str, read: Sequence[tuple[float, Chunk]]) -> bool:
        """A question far from the read chunks by cosine is still answered when it names a read
        paper (its own name or full title), or when it has ``ABSTAIN_TERMS`` terms or more and one
        read paper's chunks hold ``ABSTAIN_COVERAGE`` of them (issue 24, item 3: abstain only when
        nothing in the corpus is close)."""
        papers = list(dict.fromkeys(c.paper_id for _, c in read))
        if any(names_in(question, self._names(pid)) for pid in papers):
            return True
        asked = Query.of(question).terms
        if len(asked) < ABSTAIN_TERMS:
            return False
        held: dict[str, set[str]] = {pid: set() for pid in papers}
        for _, c in read:
            held[c.paper_id] |= terms(c.text)
        return any(len(asked & have) >= ABSTAIN_COVERAGE * len(asked) for have in held.values())

    def _introducing(self, ask: Ask, order: Sequence[str]) -> Optional[str]:
        """The read paper (``order``: best first) that introduces the subject of ``ask``
        (:func:`lit3r.read.defining.introducing_paper`; own names with the abstract's coined ones)."""
        def names(pid: str) -> list[str]:
            paper = self.graph.paper(pid)
            return own_names(paper.title, paper.abstract or "")

        def title_abstract(pid: str) -> tuple[str, str]:
            paper = self.graph.paper(pid)
            return paper.title, paper.abstract or ""

        return introducing_paper(ask.subject, order, names, title_abstract)

    def _define(self, ask: Ask, paper_id: str) -> Optional[ReadResult]:
        """The answer to a definition or mechanism question from ``paper_id``, the paper that
        introduces its subject: the sentence :func:`lit3r.read.defining.defining_sentence` picks,
        its chunk the evidence; None when no sentence of that paper answers."""
        found = defining_sentence(ask, self.graph.chunks_of(paper_id))
        if found is None:
            return None
        chunk, sentence = found
        kind = "mechanism" if ask.how else "defining"
        return ReadResult([paper_id], [chunk], freeform=sentence[:400], supporting={paper_id: [chunk.chunk_id]},
                          notes=[f"{kind} sentence of the paper that introduces {ask.subject!r}"])

    def _venue(self, paper_id: str) -> tuple[Optional[str], Optional[int]]:
        """The paper's ``(venue, year)`` from its metadata."""
        paper = self.graph.paper(paper_id)
        return paper.venue, paper.year

    def _cited(self, paper_id: str) -> list[str]:
        """The corpus papers ``paper_id`` cites (the citation graph)."""
        return [target for _, _, target in self.graph.cites(paper_id) if target]

    def _citing(self, target: str, lead: Chunk, options: Optional[dict[str, str]]) -> ReadResult:
        """The answer to "which corpus papers cite ``target``" (:mod:`lit3r.read.citations`):
        ``target`` and its citing corpus papers, ``lead`` (its best chunk) and each citing paper's
        reference entry as evidence, the option that lists the citing papers best."""
        citing = [pid for pid in self.graph.cited_by(target) if pid != target]
        evidence = [lead]
        for pid in citing:
            numbers = [n for n, _, cited in self.graph.cites(pid) if cited == target]
            entry = reference_chunk(self.graph.chunks_of(pid), numbers)
            if entry is not None:
                evidence.append(entry)
        papers = [target, *citing]
        titles = [self.graph.paper(pid).title for pid in citing]
        result = ReadResult(papers, evidence, freeform=("Cited by: " + "; ".join(titles))[:400] if titles else
                            "no corpus paper cites it", notes=[f"citing papers from the citation graph: {len(citing)}"])
        if options:
            corpus = [self.graph.paper(pid) for pid in self.graph.paper_ids()]
            result.choice, f1 = pick_listed(options, set(citing), corpus)
            result.option_scores = {lab: round(v, 4) for lab, v in f1.items()}
        result.supporting = {pid: [c.chunk_id for c in evidence if c.paper_id == pid] for pid in papers}
        return result

    def score_chunks(self, question: str, qvecs: np.ndarray, candidates: Sequence[str], *,
                     pooled: Optional[frozenset[str]] = None, limit: Optional[int] = None) -> ScoredChunks:
        """Every chunk of the first ``limit`` (default ``read.papers``) candidates with its score
        (module docstring), best first, and the question's closeness to them (for abstention).
        ``qvecs``: the question's and its ask part's query vectors, ``(2, dim)``; ``pooled``: the
        chunk ids of the Retrieve pool (those get the pool bonus)."""
        ask = ask_part(question)
        qtok, atok = set(tokenize(question)), set(tokenize(ask))
        cite_q = bool(CITE_Q.search(question))
        numeric_q = bool(NUMERIC_Q.search(ask))
        named = named_objects(question)
        scored: list[tuple[float, Chunk]] = []
        cosines: list[np.ndarray] = []
        for rank, pid in enumerate(candidates[: limit or self.params.papers]):
            chunks = self.graph.chunks_of(pid)
            if not chunks:
                continue
            vecs = self.index.vectors_of([c.chunk_id for c in chunks])
            cos_q, cos_a = vecs @ qvecs[0], vecs @ qvecs[1]
            cosines.append(cos_q)
            for c, sq, sa in zip(chunks, cos_q, cos_a):
                ctok = set(tokenize(c.text))
                s = (float(sq) + float(sa) + 0.5 * overlap(qtok, ctok) + 0.5 * overlap(atok, ctok)
                     + 0.3 / (1 + rank))
                if pooled is not None and c.chunk_id in pooled:
                    s += 0.1
                if numeric_q and c.kind == "table":
                    s += 0.15
                if c.kind == "title_abstract":
                    s -= 0.1
                if c.object_id and c.object_id.startswith("Citation") and not cite_q:
                    s *= 0.5
                if c.object_id in named:
                    s += 1.0  # the question names this object: "Figure 1 of ...", "reference [57]"
                scored.append((s, c))
        # ties: candidate rank, then the chunk's place in its paper (the list is built in that order;
        # Python's sort is stable), never a hash-seeded set order
        scored.sort(key=lambda sc: -sc[0])
        closest = np.sort(np.concatenate(cosines))[::-1][: self.params.abstain_chunks] if cosines else np.zeros(0)
        return ScoredChunks(scored, float(closest.mean()) if len(closest) else -1.0)

    def read(self, request: ReadRequest, scored: Optional[ScoredChunks] = None) -> ReadResult:
        """Answer ``request`` from its candidates. Every answer type is produced (the validator
        keeps the requested ones); ``scored``: the output of :meth:`score_chunks` when the caller
        already has it (chunks beyond the first ``read.papers`` candidates are ignored).

        Steps: abstain when nothing read is close; identify the supporting papers
        (:func:`lit3r.read.selection.select_papers`, or the citation graph for "which papers cite
        ..."); locate their evidence; extract the option, the free-text answer and the table rows."""
        question, candidates = request.question, request.candidates
        if not candidates:
            return ReadResult([], [])
        given = scored if scored is not None else self.score_chunks(question, request.qvecs, candidates,
                                                                         pooled=request.pooled)
        first = set(candidates[: self.params.papers])
        read = [sc for sc in given.items if sc[1].paper_id in first]
        ask = definition_ask(question) if not request.options and not request.schema else None
        order = list(dict.fromkeys(c.paper_id for _, c in read))
        introducing = self._introducing(ask, order) if ask is not None and read else None
        if not read or (given.closeness < self.params.abstain_cosine and introducing is None
                        and not self._close_anyway(question, read)):
            return _abstain(question)
        if ask is not None and introducing is not None:  # "what is X", "how does X work": the paper that introduces X
            defined = self._define(ask, introducing)
            if defined is not None:
                return defined
        best: dict[str, tuple[float, Chunk]] = {}
        for s, c in read:
            best.setdefault(c.paper_id, (s, c))
        ranked = sorted(best.items(), key=lambda kv: -kv[1][0])  # ties: candidate rank (stable sort)
        chosen = select_papers(question, [(pid, s) for pid, (s, _) in ranked], self.params.support_ratio,
                               names_of=self._names, cited_by=self._cited, venue_of=self._venue)
        if asks_citing(question) and not request.schema:  # "which corpus papers cite ...": the citation graph
            return self._citing(chosen[0], best[chosen[0]][1], request.options)
        return self._extract(request, chosen, best, ranked, read)

    def _extract(self, request: ReadRequest, chosen: list[str], best: dict[str, tuple[float, Chunk]],
                 ranked: list[tuple[str, tuple[float, Chunk]]], read: Sequence[tuple[float, Chunk]]) -> ReadResult:
        """Locate the evidence of the ``chosen`` papers and extract the answers from their units."""
        question = request.question
        limit = max(self.params.max_evidence, len(chosen))  # each supporting paper with its evidence
        result = ReadResult(chosen, _located(question, chosen, best, read, limit),
                            paper_scores={pid: s for pid, (s, _) in ranked})
        top = ranked[0][1][0]
        units = [u for s, c in read if c.paper_id in chosen for u in units_of(c, max(s, 0.0) / top if top > 0 else 0.0)]
        papers = {pid: self.graph.paper(pid) for pid in chosen}
        support = Support(question, units, [n for p in papers.values() for n in own_names(p.title, p.abstract or "")])
        answer_unit, stating = self._option(request, result, units, support, read) if request.options else (None, [])
        if answer_unit is None and units:
            answer_unit = _free_text(question, units, support, chosen[0])
        if answer_unit is not None:
            cited = self._continued_table(answer_unit)  # its table, when the unit is a row left out of it
            stating = [cited.chunk if c.chunk_id == answer_unit.chunk.chunk_id else c for c in stating]
            _answer_with(result, cited, stating, limit)
        if request.schema:
            self._rows(request, result, [c for _, c in read if c.paper_id in chosen][:30], units, papers, limit)
        result.supporting = {pid: [c.chunk_id for c in result.evidence if c.paper_id == pid] for pid in result.papers}
        return result

    def _continued_table(self, unit: Unit) -> Unit:
        """``unit``, or the same unit cited from the table chunk just before its chunk when it is a
        row the parser left out of that table (:func:`lit3r.read.tables.continued_table`)."""
        chunk = unit.chunk
        if unit.kind != "line" or chunk.kind != "text" or chunk.seq == 0:
            return unit
        previous = next((c for c in self.graph.chunks_of(chunk.paper_id) if c.seq == chunk.seq - 1), None)
        table = continued_table(unit.text, chunk, previous)
        return unit if table is None else replace(unit, chunk=table)

    def _option(self, request: ReadRequest, result: ReadResult, units: list[Unit], support: Support,
                read: Sequence[tuple[float, Chunk]]) -> tuple[Optional[Unit], list[Chunk]]:
        """Choose the option (:func:`lit3r.read.claims.choose_option`; a factor option by
        :func:`lit3r.read.ratios.pick_factor`; the option a value grid's named cells state by
        :func:`lit3r.read.grids.pick_grid`) into ``result``; returns the unit that states it and
        the chunks that state its other parts."""
        options = request.options or {}
        chosen = result.papers
        answer_unit, stating = None, []
        if not CITE_Q.search(request.question):  # "[20] Hill et al." states no "20%": entries support no option
            units = [u for u in units if not _reference(u.chunk)]
        named = {pid: terms(" ".join([p.title, *self._names(pid)])) for pid in chosen for p in [self.graph.paper(pid)]}
        result.choice, per_option = choose_option(options, units, support, named)
        result.option_scores = {lab: sup.score for lab, sup in per_option.items()}
        result.option_support = {lab: sup.trace() for lab, sup in per_option.items()}
        if result.choice is None:
            result.choice = _by_roles(request.question, options, per_option, units, result.notes)
        if result.choice is None:
            result.notes.append("no option is supported more than the others by the evidence: no letter given")
        else:
            won = per_option[result.choice]
            stating = _stating(won, result)
            answer_unit = next((u for u in won.units if u is not None), None)
        factor = pick_factor(request.question, options, [c for _, c in read if c.paper_id in chosen])
        if factor is None:
            grid = pick_grid(request.question, options, [c for _, c in read if c.paper_id in chosen])
            if grid is None:
                return answer_unit, stating
            result.choice = grid.label  # the named cells of a value grid (a heat map's text) state the option
            result.notes.append(grid.text)
            return Unit(grid.chunk, grid.text, set(), set(), "row"), []
        # "by what factor ...": the quotient of two table cells states the option
        result.choice = factor.label
        result.notes.append(f"factor option {factor.label}: {factor.text}")
        return Unit(factor.chunk, factor.text, set(), set(), "row"), []

    def _rows(self, request: ReadRequest, result: ReadResult, chunks: list[Chunk], units: list[Unit],
              papers: dict, limit: int) -> None:
        """The table answer (:func:`lit3r.read.rows.extractive_rows`) into ``result``; the tables its
        cells were read from are cited first."""
        cited: list[Chunk] = []
        result.rows = extractive_rows(request.question, request.schema or [], chunks,
                                      {pid: p.title for pid, p in papers.items()}, units,
                                      {pid: self._names(pid) for pid in papers},
                                      {pid: [ln for c in self.graph.chunks_of(pid) for ln in chunk_lines(c)]
                                       for pid in papers}, cited)
        if cited:  # a table answer read from table cells cites those tables first
            result.evidence = _cite_first(cited[0], result.evidence, max(limit, len(cited)), cited[1:])


def _by_roles(question: str, options: dict[str, str], per_option: dict[str, OptionSupport], units: list[Unit],
              notes: list[str]) -> Optional[str]:
    """The tie-break of options of equal support by the roles of their numbers
    (:func:`lit3r.read.roles.role_choice`), noted when it chooses."""
    top = max((sup.score for sup in per_option.values()), default=0.0)
    tied = [lab for lab in options if top > 0 and per_option[lab].score == top]
    label = role_choice(question, options, tied, units)
    if label is not None:
        notes.append(f"options {', '.join(tied)} equally supported: {label} by the roles of its numbers")
    return label


def _stating(won: OptionSupport, result: ReadResult) -> list[Chunk]:
    """The chunks that state the chosen option: its claims' units, then a claim stated again by
    another supporting paper (that paper's statement is its evidence; a sentence does not displace
    a paper's best chunk when that is a table or figure)."""
    stating = [u.chunk for u in won.units if u is not None]
    objects = {c.paper_id for c in result.evidence if c.kind in ("table", "figure")}
    stating += [u.chunk for u in won.also if u.chunk.paper_id in result.papers
                and all(c.paper_id != u.chunk.paper_id for c in stating)
                and (u.kind != "line" or u.chunk.paper_id not in objects)]
    return stating


def _answer_with(result: ReadResult, unit: Unit, stating: Sequence[Chunk], limit: int) -> None:
    """The free-text answer is ``unit``'s text; its chunk is cited first, then ``stating``
    (:func:`_cite_first`); a paper whose chunk is cited becomes a supporting paper."""
    result.freeform = unit.text[:400]
    result.evidence = _cite_first(unit.chunk, result.evidence, limit, stating, single=len(result.papers) == 1)
    for c in reversed(result.evidence):
        if c.paper_id not in result.papers:
            result.papers.insert(0, c.paper_id)


def _abstain(question: str) -> ReadResult:
    """The answer when nothing read is close to the question: no papers, no evidence."""
    asked = " ".join(question.split())
    asked = asked if len(asked) <= _ECHO_CHARS else asked[:_ECHO_CHARS].rstrip() + "..."
    return ReadResult([], [], freeform=f"no supporting evidence in this corpus for: {asked}",
                      notes=["abstained: no read chunk is close enough to the question (read.abstain_cosine)"])


def _located(question: str, chosen: Sequence[str], best: dict[str, tuple[float, Chunk]],
             read: Sequence[tuple[float, Chunk]], limit: int) -> list[Chunk]:
    """The first evidence: each supporting paper's best chunk, and for a value question whose
    best chunk is text, the first paper's best table or figure after it."""
    evidence = [best[pid][1] for pid in chosen][:limit]
    if NUMERIC_Q.search(ask_part(question)) and evidence[0].kind not in ("table", "figure"):
        obj = next((c for _, c in read if c.paper_id == chosen[0] and c.kind in ("table", "figure")), None)
        if obj is not None:
            evidence.insert(1, obj)
    return evidence[:limit]


def _reference(chunk: Chunk) -> bool:
    """The chunk is a reference-list entry (``Citation N``)."""
    return bool(chunk.object_id and chunk.object_id.startswith("Citation"))


def _free_text(question: str, units: Sequence[Unit], support: Support, first: str) -> Unit:
    """The unit that answers in free text: the most relevant (a unit with values counts more for a
    value question); never a reference entry unless the question is about citations; for a "how"
    question, among the ``first`` paper's own units, a sentence that states a mechanism over one
    that reports an experiment (:func:`_how_share`)."""
    ask = ask_part(question)
    numeric_q = bool(NUMERIC_Q.search(ask))
    how = bool(_HOW_Q.search(ask)) and not numeric_q
    if not CITE_Q.search(question):  # a reference entry names a work, it never defines or explains one
        units = [u for u in units if not _reference(u.chunk)] or units
    own = [u for u in units if u.chunk.paper_id == first] if how else []
    return max(own or units, key=lambda u: support.relevance(u) * (_how_share(u) if how else 1.0)
               + (0.2 if numeric_q and u.values else 0.0))


#: A question about a mechanism: "How does X build / bias / route ...?", "In what way ...".
_HOW_Q = re.compile(r"^\s*(?:how (?:does|do|is|are|can|did)\b|in what way\b|by what (?:means|mechanism)\b)", re.I)
#: A sentence that reports an experiment rather than states a mechanism.
_EVALUATION = re.compile(r"\b(?:experiments?|evaluat\w*|we (?:test|conduct|measure|report|observe|compare)\w*|results?|"
                         r"performance|performed|outperforms?|accuracy|baselines?|ablation|Table \d+|Figure \d+)\b", re.I)
#: A sentence that states how something is done.
_MECHANISM = re.compile(r"\b(?:by|via|using|instead of|consists? of|is computed|computes?|we (?:propose|introduce|use|apply|"
                        r"construct|build|define)|first\b.*\bthen|recursively|each)\b", re.I)
#: The share of its relevance an evaluation sentence keeps for a mechanism question, and the
#: factor a sentence that states a mechanism gets (item 3: the sentence that answers "how").
EVALUATION_SHARE, MECHANISM_FACTOR = 0.6, 1.25


def _how_share(unit: Unit) -> float:
    """The factor of a unit's relevance for a "how" question (``EVALUATION_SHARE``,
    ``MECHANISM_FACTOR``): table cells and rows state results, not mechanisms."""
    if unit.kind != "line":
        return EVALUATION_SHARE
    share = EVALUATION_SHARE if _EVALUATION.search(unit.text) or _EVALUATION.search(unit.chunk.section or "") else 1.0
    return share * (MECHANISM_FACTOR if _MECHANISM.search(unit.text) else 1.0)


#: Abstention by coverage (:meth:`ExtractiveReader._close_anyway`): a question of this many terms
#: or more, and the share of them one read paper must hold.
ABSTAIN_TERMS, ABSTAIN_COVERAGE = 8, 0.75
#: How much of the question an abstention repeats.
_ECHO_CHARS = 200


def _cite_first(chunk: Chunk, evidence: list[Chunk], limit: int, stating: Sequence[Chunk] = (),
                single: bool = False) -> list[Chunk]:
    """The evidence of an answer: ``chunk`` (the answer unit's) first, then the chunks that state
    the chosen option's other parts (``stating``), then the rest of ``evidence``, at most
    ``limit``, without repeats. A chunk of the answer's paper that answers nothing more (that
    paper's best-scored chunk) is dropped, and so is another table or figure of a paper whose
    answer a table or figure already states; for an answer from one paper (``single``) only the
    chunks that state the answer are kept."""
    first: dict[str, Chunk] = {}
    for c in [chunk, *stating]:
        first.setdefault(c.chunk_id, c)
    lead = list(first.values())
    rest = [c for c in evidence if all(c.chunk_id != d.chunk_id for d in lead)]
    if single:
        return lead[:limit]
    answered = {c.paper_id for c in lead}
    objects = {c.paper_id for c in lead if c.kind in ("table", "figure")}
    rest = [c for c in rest if c.paper_id not in answered or (c.kind in ("table", "figure") and c.paper_id not in objects)]
    return [*lead, *rest][:limit]
