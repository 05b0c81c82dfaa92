"""Deterministic validation and repair of a submission line (every locator must point at a real
chunk of a selected paper; seed paper section 2.3, output checks).

Whatever the reader (extractive or LLM) produced, the line that leaves the system obeys the
LitTraceQA submission format (:mod:`lit3r.littraceqa.format`):

- ``gold_papers``: paper ids among the candidates, without duplicates, only the ``paper_id`` key;
- ``evidence``: every item is rebuilt from a stored chunk of a selected paper (physical page,
  object ids normalised like "Table 4", ``source_type`` from the chunk kind, citation_context for
  reference entries, only the allowed locator keys); an item whose paper is a candidate but not
  selected adds that paper; items that match no stored chunk are dropped; duplicates (same
  official evidence key) are dropped;
- ``answer``: only the requested answer types; the multiple-choice letter is one of the option
  labels; table rows keep the schema's columns, in schema order, with values cast to the column
  types (numbers without ``%`` or thousands separators, booleans), rows without a key and
  duplicate keys dropped.

Each repair is reported as one line in ``problems`` (the trace keeps them per question).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from graph.records import Chunk
from graph.store import GraphStore
from lit3r.littraceqa.format import ABBREVIATIONS, evidence_item, evidence_key, normalize_text, object_id
from lit3r.read.base import ReadResult


@dataclass
class QuestionSpec:
    """What a question asks for: ``answer_types``, MC option ``labels``, the table ``schema``
    (list of ``{name, type, is_row_key}``)."""

    query_id: str
    answer_types: tuple[str, ...] = ("freeform",)
    labels: tuple[str, ...] = ()
    schema: list[dict] = field(default_factory=list)


def validate_line(line: dict, spec: QuestionSpec, candidates: Sequence[str], graph: GraphStore) -> tuple[dict, list[str]]:
    """Repair ``line`` (a submission object from anywhere: evidence items may carry an internal
    ``chunk_id``) against ``spec``, the ``candidates`` (paper ids) and the stored chunks of
    ``graph``: each evidence item is matched to a stored chunk of its paper.

    Returns ``(clean_line, problems)``; never raises for bad content (only for a ``graph`` that
    fails)."""
    problems: list[str] = []
    cand_set = set(candidates)
    line_out = _Line(spec, cand_set, [p.get("paper_id") if isinstance(p, dict) else p
                                      for p in line.get("gold_papers") or []], problems)
    chunks_cache: dict[str, list[Chunk]] = {}
    for item in line.get("evidence") or []:
        pid = item.get("paper_id") if isinstance(item, dict) else None
        if pid not in cand_set:
            problems.append(f"evidence on {pid!r}, not a candidate: dropped")
            continue
        if pid not in chunks_cache:
            chunks_cache[pid] = graph.chunks_of(pid)
        chunk = _match_chunk(item, chunks_cache[pid])
        if chunk is None:
            problems.append(f"evidence {_short(item)} matches no stored chunk of {pid}: dropped")
            continue
        if line_out.add(chunk) and _changed(item, evidence_item(chunk)):
            problems.append(f"evidence {_short(item)} rebuilt from chunk {chunk.chunk_id}")
    out = line_out.finish(line.get("answer") or {})
    if line.get("query_id") not in (None, spec.query_id):
        problems.append(f"query_id {line.get('query_id')!r} replaced by {spec.query_id!r}")
    return out, problems


def validate_read(read: ReadResult, spec: QuestionSpec, candidates: Sequence[str]) -> tuple[dict, list[str]]:
    """The submission line of a reader's result: its papers, its evidence chunks (stored chunks
    already, so nothing is matched again) and its answers, checked against ``spec`` and the
    ``candidates`` as :func:`validate_line` checks a line. Returns ``(line, problems)``."""
    problems: list[str] = []
    cand_set = set(candidates)
    line_out = _Line(spec, cand_set, read.papers, problems)
    for c in read.evidence:
        if c.paper_id in cand_set:
            line_out.add(c)
        else:
            problems.append(f"evidence on {c.paper_id!r}, not a candidate: dropped")
    answer: dict[str, Any] = {}
    if read.freeform is not None:
        answer["freeform"] = {"text": read.freeform}
    if read.choice is not None:
        answer["multiple_choice"] = {"gold": read.choice}
    if read.rows is not None:
        answer["table"] = {"rows": read.rows}
    return line_out.finish(answer), problems


class _Line:
    """A clean line being built: candidate papers without duplicates (plus the papers of the
    evidence), one evidence item per official evidence key, then the requested answers."""

    def __init__(self, spec: QuestionSpec, cand_set: set[str], papers: Sequence[Any], problems: list[str]) -> None:
        self.spec, self.problems = spec, problems
        self.papers: list[str] = []
        for pid in papers:
            if pid in cand_set and pid not in self.papers:
                self.papers.append(pid)
            elif pid not in cand_set:
                problems.append(f"paper {pid!r} is not a candidate: dropped")
        self.evidence: list[dict] = []
        self._keys: set = set()

    def add(self, chunk: Chunk) -> bool:
        """Cite ``chunk`` (a stored chunk of a candidate); False when its evidence key is cited already."""
        if chunk.paper_id not in self.papers:
            self.papers.append(chunk.paper_id)
            self.problems.append(f"paper {chunk.paper_id} added: its chunk is cited as evidence")
        clean = evidence_item(chunk)
        key = evidence_key(clean)
        if key in self._keys:
            return False
        self._keys.add(key)
        self.evidence.append(clean)
        return True

    def finish(self, answer: dict) -> dict:
        return {"query_id": self.spec.query_id, "gold_papers": [{"paper_id": p} for p in self.papers],
                "evidence": self.evidence, "answer": _answer(answer, self.spec, self.problems)}


def _short(item: Any) -> str:
    if not isinstance(item, dict):
        return repr(item)[:60]
    loc = item.get("locator") or {}
    return f"({item.get('source_type')}, {', '.join(f'{k}={v}' for k, v in loc.items() if k != 'section')})"[:100]


def _changed(item: dict, clean: dict) -> bool:
    loc = {k: v for k, v in (item.get("locator") or {}).items()}
    return item.get("source_type") != clean["source_type"] or any(
        str(loc.get(k)) != str(v) for k, v in clean["locator"].items() if k != "section")


def _page(loc: dict) -> Optional[int]:
    try:
        return int(loc["page"])
    except (KeyError, TypeError, ValueError):
        return None


def _match_chunk(item: dict, chunks: list[Chunk]) -> Optional[Chunk]:
    """The stored chunk an evidence item points at: its ``chunk_id``; else its object id (on its
    page when the object spans several chunks); else a text chunk on its page (in its section
    when it names one)."""
    if not chunks:
        return None
    if item.get("chunk_id"):
        hit = next((c for c in chunks if c.chunk_id == item["chunk_id"]), None)
        if hit is not None:
            return hit
    loc = item.get("locator") or {}
    page = _page(loc)
    obj = _ABBREV.sub(lambda m: ABBREVIATIONS[m.group(1).lower().rstrip(".")] + " ", object_id(loc))
    obj = " ".join(re.sub(r"[()\[\]]", " ", obj).split())
    if obj:
        same = [c for c in chunks if c.object_id and _norm_obj(c.object_id) == obj]
        if same:
            return next((c for c in same if c.page == page), same[0])
    if page is not None:
        on_page = [c for c in chunks if c.page == page]
        text = [c for c in on_page if c.kind == "text" and not (c.object_id or "").startswith("Citation")]
        same_section = [c for c in text if loc.get("section") and c.section == loc.get("section")]
        return next(iter(same_section or text or on_page), None)
    return None


_ABBREV = re.compile(r"^(fig\.?|tab\.?|eqn?\.?|alg\.?|ref\.?)\s*(?=\(?\d)", re.I)


def _norm_obj(obj: str) -> str:
    """A stored object id ("Table 4", "Citation 57") in the metric's form ("table 4")."""
    return " ".join(obj.split()).lower()


def _answer(answer: dict, spec: QuestionSpec, problems: list[str]) -> dict:
    out: dict[str, Any] = {}
    for k in answer:
        if k not in spec.answer_types:
            problems.append(f"answer type {k!r} was not requested: dropped")
    if "freeform" in spec.answer_types:
        text = (answer.get("freeform") or {}).get("text") if isinstance(answer.get("freeform"), dict) else None
        if isinstance(text, (int, float)) and not isinstance(text, bool):
            text = str(text)
        if isinstance(text, str) and text.strip():
            out["freeform"] = {"text": " ".join(text.split())}
        else:
            problems.append("no freeform answer")
    if "multiple_choice" in spec.answer_types:
        mc = answer.get("multiple_choice")
        letter = str((mc or {}).get("gold", "") if isinstance(mc, dict) else "").strip().upper().strip("().")
        if letter and (not spec.labels or letter in spec.labels):
            out["multiple_choice"] = {"gold": letter}
        elif not letter:
            problems.append("no multiple-choice letter: the reader chose none")
        else:
            problems.append(f"multiple-choice letter {letter!r} is not one of "
                            f"{', '.join(spec.labels) or 'the options'}: dropped")
    if "table" in spec.answer_types:
        rows = (answer.get("table") or {}).get("rows") if isinstance(answer.get("table"), dict) else None
        out["table"] = {"rows": table_rows(rows or [], spec.schema, problems)}
        if not out["table"]["rows"]:
            problems.append("no table rows")
    return out


def table_rows(rows: list, schema: list[dict], problems: list[str]) -> list[dict]:
    """Rows restricted to the schema's columns (schema order), values cast to the column types;
    rows without a key value and rows with a duplicate key are dropped. Without a schema the
    rows pass with string values."""
    if not schema:
        return [{str(k): v for k, v in r.items()} for r in rows if isinstance(r, dict)]
    names = [c["name"] for c in schema]
    keys = [c["name"] for c in schema if c.get("is_row_key")] or names[:1]
    by_norm = {normalize_text(n): n for n in names}
    out, seen = [], set()
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            problems.append(f"table row {i + 1} is not an object: dropped")
            continue
        fixed: dict[str, Any] = {}
        for k, v in row.items():
            name = k if k in names else by_norm.get(normalize_text(k))
            if name is None:
                problems.append(f"table row {i + 1}: column {k!r} is not in the schema: dropped")
                continue
            fixed[name] = v
        for col in schema:
            fixed[col["name"]] = _cast(fixed.get(col["name"]), col.get("type", "string"), i, col["name"], problems)
        key = tuple(normalize_text(fixed[k]) for k in keys)
        if not all(key):
            problems.append(f"table row {i + 1}: no value for the key column(s) {', '.join(keys)}: dropped")
            continue
        if key in seen:
            problems.append(f"table row {i + 1}: duplicate key {key}: dropped")
            continue
        seen.add(key)
        out.append({n: fixed[n] for n in names})
    return out


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _cast(value: Any, col_type: str, i: int, name: str, problems: list[str]) -> Any:
    if value is None:
        return None if col_type == "number" else ("" if col_type == "string" else None)
    if col_type == "number":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        text = str(value).replace(",", "").replace("%", "").strip()
        m = _NUMBER.fullmatch(text) or _NUMBER.match(text)
        if m:
            num = float(m.group(0))
            return int(num) if num.is_integer() and "." not in m.group(0) else num
        problems.append(f"table row {i + 1}: {name!r} = {str(value)[:40]!r} is not a number: kept as text")
        return str(value)
    if col_type == "boolean":
        if isinstance(value, bool):
            return value
        low = str(value).strip().lower()
        if low in ("true", "yes", "y", "1"):
            return True
        if low in ("false", "no", "n", "0"):
            return False
        problems.append(f"table row {i + 1}: {name!r} = {str(value)[:40]!r} is not a boolean: kept as text")
        return str(value)
    return " ".join(str(value).split())
