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
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from graph.records import Chunk
from lit3r.config import ReadParams
from graph.search.protocol import SearchIndex
from lit3r.fusion import Pool
from graph.search.tokenize import tokenize

_CITE_Q = re.compile(r"\b(cite[sd]?|citation|reference[sd]?|bibliograph)", re.I)
_NUM = re.compile(r"\d+(?:\.\d+)?")


@dataclass
class ReadResult:
    """Reader output: supporting ``papers`` (best first), ``evidence`` chunks, the answers
    (``freeform`` text, MC ``choice`` letter, table ``rows``), ``paper_scores`` (best chunk score
    per read paper), ``supporting`` chunk ids per paper, ``facts`` (LLM reader: value, unit,
    paper, chunk), which ``reader`` answered and its ``notes`` (stage failures, fallbacks)."""

    papers: list[str]
    evidence: list[Chunk]
    freeform: Optional[str] = None
    choice: Optional[str] = None
    paper_scores: dict[str, float] = field(default_factory=dict)
    option_scores: dict[str, float] = field(default_factory=dict)
    rows: Optional[list[dict]] = None
    supporting: dict[str, list[str]] = field(default_factory=dict)
    facts: list[dict] = field(default_factory=list)
    reader: str = "extractive"
    notes: list[str] = field(default_factory=list)


class ExtractiveReader:
    """See the module docstring. ``encoder`` has ``encode_queries`` and ``encode``."""

    def __init__(self, graph, index: SearchIndex, encoder, params: ReadParams) -> None:
        self.graph = graph
        self.index = index
        self.encoder = encoder
        self.params = params

    def score_chunks(self, question: str, candidates: Sequence[str], *, pool: Optional[Pool] = None,
                     qvec: Optional[np.ndarray] = None, limit: Optional[int] = None) -> list[tuple[float, Chunk]]:
        """Every chunk of the first ``limit`` (default ``read.papers``) candidates with its score
        (module docstring), best first."""
        ask = ask_part(question)
        qv = self.encoder.encode_queries([question, ask])
        qvec = qv[0] if qvec is None else qvec
        qtok, atok = set(tokenize(question)), set(tokenize(ask))
        cite_q = bool(_CITE_Q.search(question))
        numeric_q = bool(_NUMERIC_Q.search(ask))
        named = named_objects(question)
        scored: list[tuple[float, Chunk]] = []
        for rank, pid in enumerate(candidates[: limit or self.params.papers]):
            chunks = self.graph.chunks_of(pid)
            if not chunks:
                continue
            vecs = self.index.vectors_of([c.chunk_id for c in chunks])
            cos_q, cos_a = vecs @ qvec, vecs @ qv[1]
            for c, sq, sa in zip(chunks, cos_q, cos_a):
                ctok = set(tokenize(c.text))
                s = (float(sq) + float(sa) + 0.5 * _overlap(qtok, ctok) + 0.5 * _overlap(atok, ctok)
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

    def read(self, question: str, candidates: Sequence[str], *, pool: Optional[Pool] = None,
             options: Optional[dict[str, str]] = None, qvec: Optional[np.ndarray] = None,
             schema: Optional[list[dict]] = None, answer_types: Sequence[str] = (),
             scored: Optional[list[tuple[float, Chunk]]] = None) -> ReadResult:
        """Answer ``question`` from ``candidates`` (paper ids, best first). ``options``: MC
        ``{label: text}``; ``schema``: table columns ``[{name, type, is_row_key}]``;
        ``answer_types`` is accepted for the reader interface (every answer is produced, the
        validator keeps the requested ones); ``scored``: the output of :meth:`score_chunks`
        when the caller already has it (chunks beyond the first ``read.papers`` are ignored)."""
        if not candidates:
            return ReadResult([], [])
        ask = ask_part(question)
        qtok, atok = set(tokenize(question)), set(tokenize(ask))
        numeric_q = bool(_NUMERIC_Q.search(ask))
        if scored is None:
            scored = self.score_chunks(question, candidates, pool=pool, qvec=qvec)
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
        lines = [(ln, c) for c in read_chunks for ln in _lines(c)]
        line_score = [(_overlap(qtok, t) + _overlap(atok, t), ln, t) for ln, c in lines for t in [set(tokenize(ln))]]
        if line_score:
            result.freeform = max(line_score, key=lambda x: (x[0] + (0.2 if numeric_q and _NUM.search(x[1]) else 0)))[1][:400]
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
            onums = set(_NUM.findall(opt))
            otok = set(tokenize(opt)) - onums
            best = 0.0
            for qs, ln, toks in line_score:
                if onums:
                    found = len(onums & set(_NUM.findall(ln))) / len(onums)
                    found = found * 0.8 + 0.2 * _overlap(otok, toks) if otok else found
                else:
                    found = _overlap(otok, toks)
                best = max(best, (0.2 + qs) * found)
            scores[lab] = best
        return max(labels, key=lambda k: (scores[k], -labels.index(k))), scores


_NUMERIC_Q = re.compile(r"\b(how (?:many|much|long|large|fast)|what (?:is|was|are|were) the (?:\w+ )?(?:accuracy|score|"
                        r"number|value|size|rate|time|f1|recall|precision|perplexity)|accuracy|score|reported|"
                        r"parameters|how much)\b", re.I)


_NAMED = re.compile(r"\b(Table|Figure|Fig\.|Equation|Eq\.|Algorithm)\s*\(?(\d{1,3})\)?")
_NAMED_REF = re.compile(r"\b(?:reference|ref\.|citation)\s*\[?(\d{1,4})\]?", re.I)
_LABEL = {"Fig.": "Figure", "Eq.": "Equation"}


def named_objects(question: str) -> set[str]:
    """Object ids a question names: "Figure 1 of ..." -> {"Figure 1"}; "reference [57]" ->
    {"Citation 57"}."""
    found = {f"{_LABEL.get(m.group(1), m.group(1))} {m.group(2)}" for m in _NAMED.finditer(question)}
    found |= {f"Citation {m.group(1)}" for m in _NAMED_REF.finditer(question)}
    return found


def ask_part(question: str) -> str:
    """The part of a question that asks (its last sentence), when it has several sentences."""
    parts = [p for p in re.split(r"(?<=[.?!])\s+", question.strip()) if p]
    return parts[-1] if len(parts) > 1 else question


def _overlap(q: set[str], t: set[str]) -> float:
    return len(q & t) / len(q) if q else 0.0


def _lines(chunk: Chunk) -> list[str]:
    """Table rows (with the header row prefixed) or sentences of a chunk."""
    if chunk.kind == "table":
        rows = [r for r in chunk.text.splitlines() if r.strip()]
        head = " ".join(rows[1:3]) if len(rows) > 2 else ""
        return [f"{r} ({head})" if head and "|" in r else r for r in rows]
    return [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n", chunk.text) if len(p.strip()) > 3] or [chunk.text]


_PAPER_COLUMN = re.compile(r"\b(paper|title|work|publication|article|study)\b", re.I)
_LIST_SPAN = re.compile(r"((?:[^,?;:]{1,60},\s*){1,}(?:and\s+|or\s+)?[^,?;:]{1,60})")
_LEAD = re.compile(r"^.*\b(?:for|of|on|in|between|from|among|to)\s+", re.I)
_TRAIL = re.compile(r"\s+(?:as|given|with|under|when|reported|respectively|in|on|at|using)\b.*$", re.I)


_NOT_NAME = re.compile(r"\b(what|which|each|it|all|who|how|the|their|they|this|these)\b", re.I)


def question_entities(question: str) -> list[str]:
    """The names a question lists: "... on CIFAR-10 for TCM, sCT, ECM-XL (100k iterations), and
    IMM?" -> ["TCM", "sCT", "ECM-XL", "IMM"]. Empty when the question lists nothing."""
    best: list[str] = []
    for m in _LIST_SPAN.finditer(re.sub(r"\s*\([^()]*\)", "", question)):
        parts = [p.strip() for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", m.group(1)) if p.strip()]
        if len(parts) < 2:
            continue
        parts[0] = _LEAD.sub("", parts[0])
        parts[-1] = _TRAIL.sub("", parts[-1]).rstrip("?.! ")
        names = [n for n in parts if 0 < len(n) <= 40 and len(n.split()) <= 4 and re.search(r"[A-Z0-9]", n)
                 and not _NOT_NAME.search(n)]
        if len(names) >= 2 and len(names) > len(best):
            best = names
    return best


def extractive_rows(question: str, schema: list[dict], chunks: list[Chunk], titles: dict[str, str]) -> list[dict]:
    """Table rows without an LLM (a baseline): the row keys are the supporting papers' titles when
    the key column names a paper, else the names the question lists, else each supporting paper's
    short name; a non-key cell is the first number (number columns) or the rest of the line
    (string columns) after the row key in the best-scored ``chunks`` (tables first), empty when
    no line names the key."""
    keys = [c for c in schema if c.get("is_row_key")] or schema[:1]
    others = [c for c in schema if c not in keys]
    key = keys[0]["name"]
    lines = [(ln, c.paper_id) for c in sorted(chunks, key=lambda c: c.kind != "table") for ln in _lines(c)]
    rows: list[dict] = []
    if _PAPER_COLUMN.search(key):
        for pid, title in titles.items():
            row = {key: title}
            best = [ln for ln, p in lines if p == pid]
            for col in others:
                ctok = set(tokenize(col["name"]))
                ln = max(best, key=lambda x: _overlap(ctok, set(tokenize(x))), default="")
                row[col["name"]] = _cell(ln, col)
            rows.append(row)
        return rows
    names = question_entities(question) or [t.split(":")[0].strip()[:60] for t in titles.values()]
    for name in names:
        row = {key: name}
        pat = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.I)
        hit = next((ln for ln, _ in lines if pat.search(ln)), "")
        rest = pat.split(hit, maxsplit=1)[-1] if hit else ""
        for col in others:
            row[col["name"]] = _cell(rest, col)
        rows.append(row)
    return rows


def _cell(text: str, col: dict) -> object:
    if col.get("type") == "number":
        for m in _NUM.finditer(text):
            num = m.group(0)
            if "." not in num and 1900 <= int(num) <= 2100:
                continue  # a year ("Gu et al., 2023"), not a result
            return float(num) if "." in num else int(num)
        return None
    return " ".join(text.split()).strip(" |:")[:80]
