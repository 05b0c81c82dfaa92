"""The reference section for the PyMuPDF parser: its lines, collected by the page flow, split
into entries (step 7 of the method in :mod:`ingest.parsers.pymupdf`).

- Numbered lists ("[12]" or "12.") split at the numbers and stop where the numbering breaks
  (author or affiliation lists after the references are not references).
- Other lists split at hanging indents (per page column: the entry start is the column's most
  common left edge), else at lines that start a new "Surname, ..." entry after a line that ends
  an entry; the list ends at an appendix heading or after three non-references in a row.

Coordinates are PDF points.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from ingest.document import RawReference
from ingest.parsers.pymupdf.layout import APPENDIX_HEADING, YEAR
from ingest.parsers.pymupdf.pages import Line
from ingest.text import join_lines

_REF_NUM = re.compile(r"^\[(\d{1,4})\]\s*")
_REF_DOTNUM = re.compile(r"^(\d{1,3})\.\s+(?=[A-Z])")
_AUTHOR_START = re.compile(r"^[A-Z][\w'\-]+,?\s")
#: A list is "[n]"-numbered with this many marked lines, "n."-numbered with this many, one of
#: them among the first three lines.
_MIN_BRACKETS, _MIN_DOTNUMS = 3, 5
#: A number may skip at most this many entries before the numbering counts as broken.
_MAX_SKIP = 3
#: A numbered list's last entry longer than this many characters ran into the text after it.
_LONG_LAST = 1200
#: A reference entry has 20..1500 characters (20000 in a numbered list) and a year or "arXiv".
_REF_CHARS, _MAX_REF_CHARS, _MAX_NUMBERED_REF_CHARS = 20, 1500, 20000
#: Hanging indent: continuation lines sit 3..30 points right of the entry start.
_INDENT = (3, 30)
#: A line starts an entry when its left edge is within this many points of the entry start.
_START_TOL = 1.5
#: Non-references in a row that end an author-year list.
_MAX_MISSES = 3

#: One line of the reference section: ``(page, column 0/1, line)``.
RefLine = tuple[int, int, Line]


@dataclass
class ReferenceSection:
    """The reference section as the page flow meets it: ``active`` while inside it, ``done``
    after it ended (a second "References" heading is then an ordinary one), and its ``lines``."""

    active: bool = False
    done: bool = False
    lines: list[RefLine] = field(default_factory=list)


def _looks_like_reference(raw: str, max_len: int = _MAX_REF_CHARS) -> bool:
    """Long enough, not too long, and with a year or "arXiv" in it."""
    return _REF_CHARS <= len(raw) <= max_len and (YEAR.search(raw) is not None or "arxiv" in raw.lower())


def _trim_last(raw: str) -> str:
    """The last entry of a numbered list absorbs whatever follows the list (author or
    affiliation lists, appendix text): keep it up to the first sentence end after a year."""
    m = YEAR.search(raw)
    if m:
        end = re.search(r"\.(\s|$)", raw[m.end():])
        if end:
            return raw[: m.end() + end.start() + 1]
    return raw[:600]


def numbering(texts: list[str]) -> Optional["re.Pattern"]:
    """The marker pattern of a numbered list ("[n]" or "n."), or None for other lists:
    3 "[n]" lines or 5 "n." lines, one of them among the first three; the more frequent marker
    wins ("[n]" on a tie)."""
    bracket = sum(1 for t in texts if _REF_NUM.match(t))
    dotnum = sum(1 for t in texts if _REF_DOTNUM.match(t))
    head = texts[:3]
    numbered = (bracket >= _MIN_BRACKETS and any(_REF_NUM.match(t) for t in head)) or (
        dotnum >= _MIN_DOTNUMS and any(_REF_DOTNUM.match(t) for t in head)
    )
    if not numbered:
        return None
    return _REF_NUM if bracket >= dotnum else _REF_DOTNUM


def split_numbered(ref_lines: list[RefLine], pat: "re.Pattern") -> list[RawReference]:
    """Entries of a numbered list: a new entry at each marker ``pat`` matches, until a number
    goes back or skips more than three (the list is over); unmarked lines continue the open
    entry. An over-long last entry is trimmed; entries that do not look like references drop."""
    entries: list[RawReference] = []
    expected = None
    for pno, _, ln in ref_lines:
        m = pat.match(ln.text)
        if m:
            num = int(m.group(1))
            if expected is not None and num != expected and entries:
                if num < expected or num > expected + _MAX_SKIP:
                    break  # numbering broke: the list is over
            entries.append(RawReference(pno, ln.text[m.end():], num))
            expected = num + 1
        elif entries:
            entries[-1].raw = join_lines([entries[-1].raw, ln.text])
    if entries and len(entries[-1].raw) > _LONG_LAST:
        entries[-1].raw = _trim_last(entries[-1].raw)  # text after the list ran into it
    return [e for e in entries if _looks_like_reference(e.raw, max_len=_MAX_NUMBERED_REF_CHARS)]


def column_lefts(ref_lines: list[RefLine]) -> dict[tuple[int, int], Optional[float]]:
    """Per ``(page, column)``: the entry-start left edge (the smallest left edge seen twice, or
    the smallest), or None when the column shows no hanging indent (fewer than two lines
    3..30 points right of it)."""
    by_col: dict[tuple[int, int], Counter] = {}
    for pno, col, ln in ref_lines:
        by_col.setdefault((pno, col), Counter())[round(ln.x0)] += 1
    lefts: dict[tuple[int, int], Optional[float]] = {}
    for k, xs in by_col.items():
        frequent = sorted(x for x, n in xs.items() if n >= 2) or sorted(xs)
        left = frequent[0]
        indented = sum(n for x, n in xs.items() if left + _INDENT[0] <= x <= left + _INDENT[1]) >= 2
        lefts[k] = left if indented else None
    return lefts


def split_hanging(ref_lines: list[RefLine]) -> list[RawReference]:
    """Entries of an author-year list: a line starts an entry at its column's entry-start edge
    (:func:`column_lefts`), or, in columns without a hanging indent, when it starts with
    "Surname," after a line ending with a period. Stops at a bold appendix heading."""
    lefts = column_lefts(ref_lines)
    entries: list[RawReference] = []
    prev_end = True
    for pno, col, ln in ref_lines:
        if len(ln.text) < 60 and APPENDIX_HEADING.match(ln.text) and ln.bold:
            break  # an appendix or checklist heading the block classifier missed
        left = lefts[(pno, col)]
        if left is not None:
            starts = ln.x0 <= left + _START_TOL
        else:
            starts = prev_end and _AUTHOR_START.match(ln.text) is not None
        if starts or not entries:
            entries.append(RawReference(pno, ln.text, None))
        else:
            entries[-1].raw = join_lines([entries[-1].raw, ln.text])
        prev_end = ln.text.rstrip().endswith(".")
    return entries


def keep_references(entries: list[RawReference]) -> list[RawReference]:
    """The entries that look like references, up to three non-references in a row after the
    first reference (the list is over there)."""
    out: list[RawReference] = []
    misses = 0
    for e in entries:
        if _looks_like_reference(e.raw):
            out.append(e)
            misses = 0
        elif out:
            misses += 1
            if misses >= _MAX_MISSES:  # several non-references in a row: the list is over
                break
    return out


def split_references(ref_lines: list[RefLine]) -> list[RawReference]:
    """Split the lines of a reference section into entries (see the module doc)."""
    if not ref_lines:
        return []
    pat = numbering([ln.text for _, _, ln in ref_lines])
    if pat is not None:
        return split_numbered(ref_lines, pat)
    return keep_references(split_hanging(ref_lines))
