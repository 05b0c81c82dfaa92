"""The LLM reader's answer handling (:mod:`lit3r.read.llm`, stage 2): the extractive draft shown to
synthesis, the answer fields asked for, the reply's answers applied to the result, the grounding
check of a synthesised answer against the cited evidence, and the cleaning of synthesised table
rows. Split from :mod:`lit3r.read.llm` (module size); behaviour as there."""

from __future__ import annotations

import json
import re
from typing import Any, Optional, Sequence, Union

from graph.search.tokenize import tokenize
from lit3r.prompts import is_placeholder
from lit3r.read.base import ReadResult
from lit3r.read.grounding import ungrounded


def option_match(option_support: dict[str, dict], label: str) -> Optional[dict]:
    """The first ``{"chunk_id", "text"}`` the extractive reader found for option ``label``
    (``ReadResult.option_support``), or None (no evidence, or entries without a chunk)."""
    for e in (option_support.get(label) or {}).get("evidence") or []:
        if isinstance(e, dict) and e.get("chunk_id"):
            return e
    return None


def draft_lines(result: ReadResult, types: Sequence[str], options: Optional[dict[str, str]],
                label_of: dict[str, str]) -> str:
    """The extractive answer in ``result`` as the stage-2 prompt's draft, one ``- field: value``
    line each: papers, evidence (as the prompt's E labels: ``label_of`` maps chunk id -> label),
    the answer, per option the passage that matches it best (its text and label) and the choice,
    the rows as JSON objects. Only the fields of ``types``; ``- none`` when there is no draft."""

    def cite(chunk_ids: Sequence[str]) -> str:
        labs = [label_of[c] for c in chunk_ids if c in label_of]
        return ", ".join(dict.fromkeys(labs)) or "none of the passages above"

    lines = [f"- papers: {', '.join(result.papers) or 'none'}",
             f"- evidence: {cite([c.chunk_id for c in result.evidence])}"]
    if "freeform" in types and result.freeform:
        lines.append(f"- answer: {result.freeform}")
    if "multiple_choice" in types and options:
        for lab in options:
            m = option_match(result.option_support, lab)
            if m:
                lines.append(f"- option {lab} matches: \"{str(m.get('text') or '')[:200]}\" ({cite([m['chunk_id']])})")
        if result.choice:
            lines.append(f"- choice: {result.choice}")
    if "table" in types and result.rows:
        lines += [f"- row: {json.dumps(r, ensure_ascii=False)}" for r in result.rows[:30]]
    return "\n".join(lines) if result.papers else "- none"


_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def stated(value: Union[str, float], text: str) -> bool:
    """A stage-1 fact's ``value`` is stated by the passage ``text``: each of its numbers occurs
    there as written ("3e-4" is not stated by "a learning rate of 0.001"; commas ignored); a value
    without numbers shares at least one term with the passage (case and stop words aside)."""
    if isinstance(value, float):
        value = str(int(value)) if value.is_integer() else repr(value)
    body = text.replace(",", "")
    nums = _NUMBER.findall(value.replace(",", ""))
    if nums:
        return all(re.search(rf"(?<![\d.]){re.escape(n)}(?![\d]|\.\d)", body) for n in nums)
    words = set(tokenize(value))
    return not words or bool(words & set(tokenize(body)))


def answer_spec(types: Sequence[str], options: Optional[dict[str, str]], schema: Optional[list[dict]]) -> dict[str, str]:
    """The ``options``, ``schema`` and ``fields`` parts of the synthesis prompt."""
    opts = "".join(f"\n  {k}. {v}" for k, v in (options or {}).items())
    cols = "; ".join(f"{c['name']} ({c.get('type', 'string')}{', row key' if c.get('is_row_key') else ''})"
                     for c in schema or [])
    fields = []
    if "freeform" in types or "multiple_choice" in types:
        fields.append('- "calculation": the values you use and any arithmetic or comparison, in one or two '
                      'lines ("" if none is needed);')
    if "freeform" in types:
        fields.append('- "answer": the answer as a short text (a value with its unit, a name, or a sentence);')
    if "multiple_choice" in types:
        fields.append('- "choice": the letter of the correct option;')
    if "table" in types:
        fields.append('- "rows": the answer table, one object per row with exactly the columns above;')
    return {"options": f"Options:{opts}\n" if opts else "", "schema": f"Answer table columns: {cols}\n" if cols else "",
            "fields": "\n".join(fields)}


def check_grounding(out: Any, options: Optional[dict[str, str]], result: ReadResult,
                     extractive: tuple[Optional[str], Optional[str]]) -> None:
    """A free-text answer or chosen option that states a number neither in the cited evidence
    nor computed from it by the stated calculation (:mod:`lit3r.read.grounding`) is flagged in
    the notes and replaced by the extractive answer."""
    texts = [c.text for c in result.evidence]
    calculation = getattr(out, "calculation", "") or ""
    if result.freeform and result.freeform != extractive[0]:
        missing = ungrounded(result.freeform, calculation, texts)
        if missing:
            result.notes.append(f"stage 2 answer states {', '.join(missing)}, which the cited evidence does not: "
                                "the extractive answer is used")
            result.freeform = extractive[0]
    if options and result.choice and result.choice != extractive[1] and result.choice in options:
        missing = ungrounded(options[result.choice], calculation, texts)
        if missing:
            result.notes.append(f"stage 2 chose {result.choice}, whose {', '.join(missing)} the cited evidence does "
                                "not state: the extractive choice is used")
            result.choice = extractive[1]


_LABEL_VALUE = re.compile(r"^\s*\[?\s*[PE]\d{1,3}\s*\]?\s*$")


def clean_rows(rows: list[dict], titles: dict[str, str], notes: list[str]) -> list[dict]:
    """Table rows without prompt machinery as values (issue 14, item 9): a cell that is a
    passage label ("P2", "[E1]") is emptied, and one that is a read paper's id ("2401.06104",
    "[2401.06104]") becomes its title; each change is noted once."""
    ids = {pid.lower(): title for pid, title in titles.items()}
    changed = set()
    out = []
    for row in rows:
        clean = {}
        for col, value in row.items():
            if isinstance(value, str) and _LABEL_VALUE.match(value):
                changed.add("passage labels emptied")
                value = None
            elif is_placeholder(value):
                changed.add("placeholders of the prompt's reply shape emptied")
                value = None
            elif isinstance(value, str) and value.strip().strip("[]").lower() in ids:
                changed.add("paper ids replaced by titles")
                value = ids[value.strip().strip("[]").lower()]
            clean[col] = value
        out.append(clean)
    notes += [f"stage 2 table: {c}" for c in sorted(changed)]
    return out


def apply_answers(out: Any, types: Sequence[str], result: ReadResult) -> None:
    """The reply's answers -> ``result`` (an empty free text or table keeps the extractive one)."""
    if "freeform" in types:
        if out.answer.strip():
            result.freeform = out.answer.strip()
        else:
            result.notes.append("stage 2 gave no free-text answer: the extractive one is kept")
    if "multiple_choice" in types:
        result.choice = out.choice
    if "table" in types:
        if out.rows:
            result.rows = [r.model_dump(by_alias=True) for r in out.rows]
        else:
            result.notes.append("stage 2 gave no table rows: the extractive rows are kept")
