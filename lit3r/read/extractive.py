"""The offline extractive reader (no LLM): candidates -> supporting papers, evidence, answer.

For the top ``read.papers`` candidates, every chunk is scored against the question:

    score = cosine(question, chunk) + 0.5 * token overlap + 0.3 / (1 + candidate rank)
            + 0.1 if the chunk is in the Retrieve pool

(token overlap = share of the question's tokens that occur in the chunk; reference-list entries
count half unless the question is about citations). Supporting papers: the best paper plus
those whose best chunk scores at least ``support_ratio`` of the best, at most 3; evidence: the
best chunk of each. A multiple-choice question takes the option best supported by the evidence
(its numbers and words found in the top chunks, plus the option's cosine with the best chunk);
a free-text answer is the line or sentence of the best chunk that overlaps the question most.
This is a transparent baseline for the LLM reader of the seed paper (section 2.3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from graph.records import Chunk
from graph.search.protocol import SearchIndex
from graph.search.tokenize import tokenize
from graph.store import GraphStore
from lit3r.config import ReadParams
from lit3r.pipeline.pool import Pool
from lit3r.read.base import ReadRequest, ReadResult
from lit3r.read.claims import Support, Unit, choose_option, units_of
from lit3r.read.scoring import CITE_Q, NUM, NUMERIC_Q, ask_part, chunk_lines, named_objects, overlap, question_entities


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

    def score_chunks(self, question: str, qvecs: np.ndarray, candidates: Sequence[str], *,
                     pool: Optional[Pool] = None, limit: Optional[int] = None) -> ScoredChunks:
        """Every chunk of the first ``limit`` (default ``read.papers``) candidates with its score
        (module docstring), best first, and the question's closeness to them (for abstention).
        ``qvecs``: the question's and its ask part's query vectors, ``(2, dim)``."""
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
                if pool is not None and c.chunk_id in pool.scores:
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
        scored.sort(key=lambda sc: -sc[0])
        closest = np.sort(np.concatenate(cosines))[::-1][: self.params.abstain_chunks] if cosines else np.zeros(0)
        return ScoredChunks(scored, float(closest.mean()) if len(closest) else -1.0)

    def read(self, request: ReadRequest, scored: Optional[ScoredChunks] = None) -> ReadResult:
        """Answer ``request`` from its candidates. Every answer type is produced (the validator
        keeps the requested ones); ``scored``: the output of :meth:`score_chunks` when the caller
        already has it (chunks beyond the first ``read.papers`` candidates are ignored)."""
        question, candidates, pool = request.question, request.candidates, request.pool
        options, schema = request.options, request.schema
        if not candidates:
            return ReadResult([], [])
        ask = ask_part(question)
        numeric_q = bool(NUMERIC_Q.search(ask))
        given = scored if scored is not None else self.score_chunks(question, request.qvecs, candidates, pool=pool)
        first = set(candidates[: self.params.papers])
        read = [sc for sc in given.items if sc[1].paper_id in first]
        if not read or given.closeness < self.params.abstain_cosine:  # far from everything read
            return ReadResult([], [], freeform=f"no supporting evidence in this corpus for: {question.strip()}",
                              notes=["abstained: no read chunk is close enough to the question (read.abstain_cosine)"])
        best: dict[str, tuple[float, Chunk]] = {}
        for s, c in read:
            best.setdefault(c.paper_id, (s, c))
        ranked = sorted(best.items(), key=lambda kv: -kv[1][0])
        if not ranked:
            return ReadResult([], [])
        top = ranked[0][1][0]
        chosen = [pid for pid, (s, _) in ranked if s >= self.params.support_ratio * top][:3]
        evidence = [best[pid][1] for pid in chosen][: self.params.max_evidence]
        if numeric_q and evidence[0].kind not in ("table", "figure"):
            # a value question: also cite the top paper's best-matching table or figure
            obj = next((c for _, c in read if c.paper_id == chosen[0] and c.kind in ("table", "figure")), None)
            if obj is not None:
                evidence.insert(1, obj)
                evidence = evidence[: self.params.max_evidence]
        result = ReadResult(chosen, evidence, paper_scores={pid: s for pid, (s, _) in ranked})
        units = [u for s, c in read if c.paper_id in chosen for u in units_of(c, max(s, 0.0) / top if top > 0 else 0.0)]
        support = Support(question, units)
        answer_unit = None
        if options:
            result.choice, result.option_scores, answer_unit = choose_option(options, units, support)
            if result.choice is None:
                result.notes.append("no option is supported more than the others by the evidence: no letter given")
        if answer_unit is None and units:
            answer_unit = max(units, key=lambda u: support.relevance(u) + (0.2 if numeric_q and u.values else 0.0))
        if answer_unit is not None:
            result.freeform = answer_unit.text[:400]
            result.evidence = _cite_first(answer_unit.chunk, result.evidence, self.params.max_evidence)
            if answer_unit.chunk.paper_id not in result.papers:
                result.papers.insert(0, answer_unit.chunk.paper_id)
        if schema:
            result.rows = extractive_rows(question, schema, [c for _, c in read if c.paper_id in chosen][:30],
                                          {pid: self.graph.paper(pid).title for pid in chosen}, units)
        result.supporting = {pid: [c.chunk_id for c in result.evidence if c.paper_id == pid] for pid in result.papers}
        return result


def _cite_first(chunk: Chunk, evidence: list[Chunk], limit: int) -> list[Chunk]:
    """``chunk`` first, then the rest of ``evidence`` without it, at most ``limit``; a chunk of
    the same paper that answers nothing more (the best-scored one of that paper) is replaced."""
    rest = [c for c in evidence if c.chunk_id != chunk.chunk_id]
    same = [c for c in rest if c.paper_id == chunk.paper_id]
    if same and same[0].kind not in ("table", "figure"):
        rest.remove(same[0])
    return [chunk, *rest][:limit]


_PAPER_COLUMN = re.compile(r"\b(paper|title|work|publication|article|study)\b", re.I)
def extractive_rows(question: str, schema: list[dict], chunks: list[Chunk], titles: dict[str, str],
                    units: Sequence[Unit] = ()) -> list[dict]:
    """Table rows without an LLM: the row keys are the supporting papers' titles when the key
    column names a paper, else the names the question lists, else each supporting paper's short
    name. For a named row, a number cell comes from the table cell (``units``,
    :mod:`lit3r.read.claims`) whose row key is the name, in the one table block that names most of
    the rows, and whose column label matches the column's name and the question best; otherwise
    from the first number after the name in the best-scored ``chunks`` (tables first). For a paper
    row, from the paper's line that matches the column's name best, else from its best table
    cell. A string cell is the rest of the best line. A value that is not found stays empty:
    nothing is invented."""
    keys = [c for c in schema if c.get("is_row_key")] or schema[:1]
    others = [c for c in schema if c not in keys]
    key = keys[0]["name"]
    lines = [(ln, c.paper_id) for c in sorted(chunks, key=lambda c: c.kind != "table") for ln in chunk_lines(c)]
    cells = [u for u in units if u.kind == "cell"]
    rows: list[dict] = []
    if _PAPER_COLUMN.search(key):
        for pid, title in titles.items():
            row: dict[str, object] = {key: title}
            best = [ln for ln, p in lines if p == pid]
            for col in others:
                found = _cell(_best_line(best, col["name"]), col)
                if found is None:  # a paper's figure is usually stated in its text; else its tables
                    found = _table_cell(question, col, [u for u in cells if u.chunk.paper_id == pid])
                row[col["name"]] = found
            rows.append(row)
        return rows
    names = question_entities(question) or [t.split(":")[0].strip()[:60] for t in titles.values()]
    block = _one_block(cells, names)
    for name in names:
        row = {key: name}
        pat = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.I)
        hit = next((ln for ln, _ in lines if pat.search(ln)), "")
        rest = pat.split(hit, maxsplit=1)[-1] if hit else ""
        named = [u for u in block if _names_row(u, name)] or [u for u in cells if _names_row(u, name)]
        for col in others:
            found = _table_cell(question, col, named)
            row[col["name"]] = found if found is not None else _cell(rest, col)
        rows.append(row)
    return rows


def _best_line(lines: Sequence[str], name: str) -> str:
    """The line that holds most of the tokens of ``name`` ("" when there is none)."""
    want = set(tokenize(name))
    return max(lines, key=lambda x: overlap(want, set(tokenize(x))), default="")


def _names_row(unit: Unit, name: str) -> bool:
    """The cell's row key is ``name``, case and spacing aside."""
    return " ".join(unit.row_key.lower().split()) == " ".join(name.lower().split())


def _one_block(cells: Sequence[Unit], names: Sequence[str]) -> list[Unit]:
    """The cells of the one table block (chunk and row group) that names the most of ``names``
    (ties: the earlier block), so that a table answer reads one comparison, not a mix."""
    blocks: dict[tuple[str, str], set[str]] = {}
    for u in cells:
        for name in names:
            if _names_row(u, name):
                blocks.setdefault((u.chunk.chunk_id, u.row_group), set()).add(name)
    if not blocks:
        return []
    best = max(blocks, key=lambda b: len(blocks[b]))
    return [u for u in cells if (u.chunk.chunk_id, u.row_group) == best]


def _table_cell(question: str, col: dict, cells: Sequence[Unit]) -> Optional[object]:
    """The value of the cell among ``cells`` whose context matches the column's name (twice) and
    the question best, cast to the column's type; None when no cell has a value of that type."""
    if col.get("type") != "number" or not cells:
        return None
    support = Support(f"{col['name']} {col['name']}. {question}", cells)
    for u in sorted(cells, key=lambda u: -support.relevance(u)):
        value = _cell(u.text.rsplit(":", 1)[-1], col)
        if value is not None:
            return value
    return None


def _cell(text: str, col: dict) -> object:
    if col.get("type") == "number":
        for m in NUM.finditer(text):
            num = m.group(0)
            if "." not in num and 1900 <= int(num) <= 2100:
                continue  # a year ("Gu et al., 2023"), not a result
            return float(num) if "." in num else int(num)
        return None
    return " ".join(text.split()).strip(" |:")[:80]
