"""The LitTraceQA evidence vocabulary (the shared task's submission format): locator keys, source
types, object ids and the official evidence key, and a stored chunk -> an evidence item.

Every locator is built from a real chunk, so it always points at a physical page and an object
that exists in the corpus. The metrics (:mod:`lit3r.littraceqa.metrics`) and the validator
(:mod:`lit3r.littraceqa.validate`) read the same vocabulary from here.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping, Optional, Sequence

from graph.records import Chunk

#: A stored object label ("Table 4") -> its locator key.
LOCATOR_KEY = {"Table": "table_id", "Figure": "figure_id", "Equation": "equation_id", "Algorithm": "algorithm_id",
               "Citation": "citation_id"}
#: Locator key -> the object prefix of the official evidence key, in the metric's lookup order.
OBJECT_PREFIX = {"table_id": "table", "figure_id": "figure", "equation_id": "equation", "algorithm_id": "equation",
                 "citation_id": "citation"}
#: Abbreviated object labels a reader may write ("Fig. 3", "Eq 2") -> the full label.
ABBREVIATIONS = {"fig": "figure", "tab": "table", "eq": "equation", "eqn": "equation", "alg": "algorithm",
                 "ref": "citation"}


def source_type(chunk: Chunk) -> str:
    """LitTraceQA source type of a chunk: table, figure, equation_algorithm, citation_context
    (reference-list entries) or text_span."""
    if chunk.kind in ("table", "figure"):
        return chunk.kind
    if chunk.kind == "equation":
        return "equation_algorithm"
    if chunk.object_id and chunk.object_id.startswith("Citation"):
        return "citation_context"
    return "text_span"


def locator(chunk: Chunk) -> dict[str, Any]:
    """``{"page": int, "section"?: str, "<kind>_id"?: "Table 4" | int}``: only allowed keys."""
    loc: dict[str, Any] = {"page": chunk.page}
    if chunk.object_id:
        label, _, num = chunk.object_id.partition(" ")
        if label == "Citation":
            loc["citation_id"] = int(num) if num.isdigit() else num
        elif label in LOCATOR_KEY:
            loc[LOCATOR_KEY[label]] = chunk.object_id
    if chunk.section:
        loc["section"] = chunk.section
    return loc


def evidence_item(chunk: Chunk) -> dict[str, Any]:
    """One submission evidence item for a chunk."""
    return {"paper_id": chunk.paper_id, "source_type": source_type(chunk), "locator": locator(chunk)}


def describe(chunk: Chunk) -> str:
    """Short human label: ``"p6 Table 1"`` or ``"p3 §3.1 Encoder"``."""
    where = chunk.object_id or (f"\u00a7 {chunk.section}" if chunk.section else chunk.kind)
    where = re.sub(r"\s+", " ", where)[:60]
    return f"p{chunk.page} {where}"




def normalize_text(value: Any) -> str:
    """Lower-cased, outer quotes stripped, whitespace collapsed (freeform and table strings)."""
    text = " ".join(str(value).split()).lower()
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'\u201c\u201d":
        text = text[1:-1].strip()
    return text.strip("\u201c\u201d").strip()


def object_id(locator: dict) -> str:
    """Normalised object id of a locator: "table 4", "equation 2", "citation 57", or ""."""
    for key, prefix in OBJECT_PREFIX.items():
        if key in locator and locator[key] not in (None, ""):
            raw = str(locator[key]).strip()
            return f"{prefix} {raw}" if re.fullmatch(r"\d+", raw) else raw.lower()
    return ""


def evidence_key(item: dict) -> Optional[tuple]:
    """``(paper_id, source_type, location, object_id)`` or None when the item does not count
    (no paper, no source type, or neither a location nor an object id). location = page, or
    section only when there is no page; text_span items have no object id."""
    loc: dict = item["locator"] if isinstance(item.get("locator"), dict) else {}
    paper, stype = item.get("paper_id"), item.get("source_type")
    page = loc.get("page")
    location = _page(page) if page is not None \
        else (normalize_text(loc["section"]) if loc.get("section") else None)
    obj = "" if stype == "text_span" else object_id(loc)
    if not paper or not stype or (location is None and not obj):
        return None
    return (paper, stype, location, obj)


#: A page number past this does not count (no paper is that long; a 5,000-digit int is not printed).
MAX_PAGE = 10**9


def _page(page: Any) -> Optional[str]:
    """The page of a locator as the evidence key writes it (``"6"`` for 6, 6.0, "6"), or None
    when it is not a number: NaN, infinite, a bool, or past :data:`MAX_PAGE` either way."""
    if isinstance(page, str) and page.isdigit() and len(page) <= 10:
        page = int(page)
    if isinstance(page, bool) or not isinstance(page, (int, float)) \
            or (isinstance(page, float) and not math.isfinite(page)) or abs(page) > MAX_PAGE:
        return None
    return str(int(page))


def evidence_chunks(evidence: Sequence[Chunk], line: Mapping[str, Any]) -> list[Chunk]:
    """The chunks behind the evidence items of the submission ``line``: one per item (its
    official evidence key), in the order of ``evidence`` (the reader's chunks)."""
    wanted = {evidence_key(item) for item in line.get("evidence") or []}
    out, seen = [], set()
    for c in evidence:
        key = evidence_key(evidence_item(c))
        if key in wanted and key not in seen:
            seen.add(key)
            out.append(c)
    return out
