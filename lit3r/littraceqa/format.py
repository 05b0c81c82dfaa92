"""Evidence locators: a stored chunk -> a LitTraceQA evidence item (../shared/docs/LITTRACEQA.md).

Every locator is built from a real chunk, so it always points at a physical page and an object
that exists in the corpus.
"""

from __future__ import annotations

import re
from typing import Any

from graph.records import Chunk

_LOCATOR_KEY = {"Table": "table_id", "Figure": "figure_id", "Equation": "equation_id", "Algorithm": "algorithm_id"}


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
        elif label in _LOCATOR_KEY:
            loc[_LOCATOR_KEY[label]] = chunk.object_id
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
