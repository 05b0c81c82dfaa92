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
from typing import Optional, Sequence

import numpy as np

from graph.records import Chunk
from graph.search.protocol import SearchIndex
from graph.search.tokenize import tokenize
from graph.store import GraphStore
from lit3r.config import ReadParams
from lit3r.pipeline.pool import Pool
from lit3r.read.base import ReadRequest, ReadResult
from lit3r.read.scoring import CITE_Q, NUM, NUMERIC_Q, ask_part, chunk_lines, named_objects, overlap, question_entities


class ExtractiveReader:
    """See the module docstring. Reads chunks from ``graph`` and their vectors from ``index``."""

    def __init__(self, graph: GraphStore, index: SearchIndex, params: ReadParams) -> None:
        self.graph = graph
        self.index = index
        self.params = params

    def score_chunks(self, question: str, qvecs: np.ndarray, candidates: Sequence[str], *,
                     pool: Optional[Pool] = None, limit: Optional[int] = None) -> list[tuple[float, Chunk]]:
        """``[(score, chunk)]`` for every chunk of the first ``limit`` (default ``read.papers``)
        candidates, best first (the score of the module docstring). ``qvecs``: the question's and
        its ask part's query vectors, ``(2, dim)``."""
        ask = ask_part(question)
        qtok, atok = set(tokenize(question)), set(tokenize(ask))
        cite_q = bool(CITE_Q.search(question))
        numeric_q = bool(NUMERIC_Q.search(ask))
        named = named_objects(question)
        scored: list[tuple[float, Chunk]] = []
        for rank, pid in enumerate(candidates[: limit or self.params.papers]):
            chunks = self.graph.chunks_of(pid)
            if not chunks:
                continue
            vecs = self.index.vectors_of([c.chunk_id for c in chunks])
            cos_q, cos_a = vecs @ qvecs[0], vecs @ qvecs[1]
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
        return scored

    def read(self, request: ReadRequest, scored: Optional[list[tuple[float, Chunk]]] = None) -> ReadResult:
        """Answer ``request`` from its candidates. Every answer type is produced (the validator
        keeps the requested ones); ``scored``: the output of :meth:`score_chunks` when the caller
        already has it (chunks beyond the first ``read.papers`` candidates are ignored)."""
        question, candidates, pool = request.question, request.candidates, request.pool
        options, schema = request.options, request.schema
        if not candidates:
            return ReadResult([], [])
        ask = ask_part(question)
        qtok, atok = set(tokenize(question)), set(tokenize(ask))
        numeric_q = bool(NUMERIC_Q.search(ask))
        if scored is None:
            scored = self.score_chunks(question, request.qvecs, candidates, pool=pool)
        else:
            first = set(candidates[: self.params.papers])
            scored = [sc for sc in scored if sc[1].paper_id in first]
        best: dict[str, tuple[float, Chunk]] = {}
        for s, c in scored:
            best.setdefault(c.paper_id, (s, c))
        ranked = sorted(best.items(), key=lambda kv: -kv[1][0])
        if not ranked:
            return ReadResult([], [])
        top = ranked[0][1][0]
        chosen = [pid for pid, (s, _) in ranked if s >= self.params.support_ratio * top][:3]
        evidence = [best[pid][1] for pid in chosen][: self.params.max_evidence]
        if numeric_q and evidence[0].kind not in ("table", "figure"):
            # a value question: also cite the top paper's best-matching table or figure
            obj = next((c for _, c in scored if c.paper_id == chosen[0] and c.kind in ("table", "figure")), None)
            if obj is not None:
                evidence.insert(1, obj)
                evidence = evidence[: self.params.max_evidence]
        result = ReadResult(chosen, evidence, paper_scores={pid: s for pid, (s, _) in ranked})
        read_chunks = [c for _, c in scored if c.paper_id in chosen][:8]
        lines = [(ln, c) for c in read_chunks for ln in chunk_lines(c)]
        line_score = [(overlap(qtok, t) + overlap(atok, t), ln, t) for ln, c in lines for t in [set(tokenize(ln))]]
        if line_score:
            result.freeform = max(line_score, key=lambda x: (x[0] + (0.2 if numeric_q and NUM.search(x[1]) else 0)))[1][:400]
        if options:
            result.choice, result.option_scores = self._choose(options, line_score)
        if schema:
            result.rows = extractive_rows(question, schema, [c for _, c in scored if c.paper_id in chosen][:30],
                                          {pid: self.graph.paper(pid).title for pid in chosen})
        result.supporting = {pid: [c.chunk_id for c in evidence if c.paper_id == pid] for pid in chosen}
        return result

    def _choose(self, options: dict[str, str], line_score: list[tuple[float, str, set]]) -> tuple[str, dict[str, float]]:
        """The option whose numbers and words occur in the lines that match the question best:
        support(option) = max over lines of (line's question overlap) x (share of the option's
        numbers, else words, found in that line)."""
        labels = list(options)
        scores = {}
        for lab in labels:
            opt = options[lab]
            onums = set(NUM.findall(opt))
            otok = set(tokenize(opt)) - onums
            best = 0.0
            for qs, ln, toks in line_score:
                if onums:
                    found = len(onums & set(NUM.findall(ln))) / len(onums)
                    found = found * 0.8 + 0.2 * overlap(otok, toks) if otok else found
                else:
                    found = overlap(otok, toks)
                best = max(best, (0.2 + qs) * found)
            scores[lab] = best
        return max(labels, key=lambda k: (scores[k], -labels.index(k))), scores


_PAPER_COLUMN = re.compile(r"\b(paper|title|work|publication|article|study)\b", re.I)
def extractive_rows(question: str, schema: list[dict], chunks: list[Chunk], titles: dict[str, str]) -> list[dict]:
    """Table rows without an LLM (a baseline): the row keys are the supporting papers' titles when
    the key column names a paper, else the names the question lists, else each supporting paper's
    short name; a non-key cell is the first number (number columns) or the rest of the line
    (string columns) after the row key in the best-scored ``chunks`` (tables first), empty when
    no line names the key."""
    keys = [c for c in schema if c.get("is_row_key")] or schema[:1]
    others = [c for c in schema if c not in keys]
    key = keys[0]["name"]
    lines = [(ln, c.paper_id) for c in sorted(chunks, key=lambda c: c.kind != "table") for ln in chunk_lines(c)]
    rows: list[dict] = []
    if _PAPER_COLUMN.search(key):
        for pid, title in titles.items():
            row: dict[str, object] = {key: title}
            best = [ln for ln, p in lines if p == pid]
            for col in others:
                ctok = set(tokenize(col["name"]))
                ln = max(best, key=lambda x: overlap(ctok, set(tokenize(x))), default="")
                row[col["name"]] = _cell(ln, col)
            rows.append(row)
        return rows
    names = question_entities(question) or [t.split(":")[0].strip()[:60] for t in titles.values()]
    for name in names:
        row: dict[str, object] = {key: name}  # type: ignore[no-redef]
        pat = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.I)
        hit = next((ln for ln, _ in lines if pat.search(ln)), "")
        rest = pat.split(hit, maxsplit=1)[-1] if hit else ""
        for col in others:
            row[col["name"]] = _cell(rest, col)
        rows.append(row)
    return rows


def _cell(text: str, col: dict) -> object:
    if col.get("type") == "number":
        for m in NUM.finditer(text):
            num = m.group(0)
            if "." not in num and 1900 <= int(num) <= 2100:
                continue  # a year ("Gu et al., 2023"), not a result
            return float(num) if "." in num else int(num)
        return None
    return " ".join(text.split()).strip(" |:")[:80]
