"""A stored table chunk read back into rows and cells (the extractive reader's table answers and
multiple-choice support; issue 13).

A table chunk's text is its caption line (``Table 2: ...``), then the header lines, then one line
per row with cells separated by ``" | "`` (:mod:`ingest.chunking`). PDF tables lose their
geometry, so the reading is a heuristic, stated here once:

- a row is a line whose cells after the first hold a digit (a value row); the most common cell
  count ``n`` is the table's width; a row with ``n + 1`` cells starts with a group label ("ChatGPT"
  spanning the rows of its block), which applies to the nearest rows without one (ties: the label above, as a label centred on an
  even block of rows sits in its upper half);
- header lines are the other lines before the first row (one-cell lines, the stub's "Model",
  are skipped); a header line of ``k`` cells is spread
  over the ``n - 1`` value columns in proportion (a spanning "BLEU" over two columns), or aligned
  to the right when it has ``n - 1`` cells or more; a column's label joins its header cells, top
  to bottom. When the header line with the most cells (the leaf level: "N-CoT | P-CoT | ...")
  has fewer cells than there are value columns, the leftmost value columns it leaves are stub
  columns ("Size"): a header line of one more cell than there are stub columns that starts with
  the stub's own header names them ("Method | Size"), and the other header lines spread over the leaf
  columns only ("GSM8K | SVAMP" over their "N-CoT | P-CoT" pairs); otherwise a header line that
  starts with the stub's header ("Method | Bits/dim | Images/sec") labels the value columns from
  the left, and is never a value row, even when its labels are numbers ("Model | PS | 1024");
  so is a value-like first line followed by a header continuation ("Multi- | 256 | 512" over
  "state size | (full)");
- when a one-cell line heads the first value row and others occur among the rows, they are
  section labels ("Tiny", "Short", "Long"): each is the group of the rows below it, unless a group
  label spans the rows; short one-cell lines among the rows that none heads are centred labels,
  each the group of the rows nearest to it;
- a row shorter than ``n`` fills its columns from the left.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from graph.records import Chunk

_CAPTION = re.compile(r"^(Table|Tab\.)\s*\d+", re.I)
#: The header of the stub (row-key) column: "Method", "Model", "Approach" ...
_STUB_HEADER = re.compile(r"^(?:method|model|approach|system|name|setting|baseline|architecture)s?$", re.I)
#: A value cell: a number (with sign, parentheses, unit or a trailing mark), or a dash for "none".
_VALUE = re.compile(r"^(?:[-\u2013\u2014]|[-+\u00b1~<>\u2248(]*\d)")

#: Centred group labels: at least this many one-cell lines among the rows, each at most
#: ``_LABEL_CHARS`` characters.
CENTRED_LABELS = 2
_LABEL_CHARS = 40
#: An integer as a column label ("512", "1,024").
_INTEGER = re.compile(r"^\d{1,3}(?:,\d{3})*$|^\d+$")


@dataclass
class TableRow:
    """One value row: its ``key`` (first cell), the ``group`` label that spans it ("" when none)
    and its value ``cells`` (by value column)."""

    key: str
    group: str
    cells: list[str]


@dataclass
class ParsedTable:
    """``caption``, the ``columns`` labels of the value columns (one per value cell position) and
    the value ``rows``."""

    caption: str
    columns: list[str]
    rows: list[TableRow] = field(default_factory=list)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.split(" | ")]


def _is_row(cells: list[str]) -> bool:
    """At least half of the cells after the first are values (header cells like "pass@1" or
    "AIME 2024" start with a letter), and the first cell is not the stub's header: "Model | PS |
    1024 | 2048" is a header line whose column labels are numbers."""
    if _STUB_HEADER.match(cells[0]):
        return False
    values = sum(bool(_VALUE.match(c)) for c in cells[1:])
    return len(cells) >= 2 and values > 0 and 2 * values >= len(cells) - 1


def parse_table(text: str) -> ParsedTable:
    """Read a table chunk's text into a :class:`ParsedTable` (module docstring). A text without
    value rows gives no rows."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    caption = lines.pop(0) if lines and _CAPTION.match(lines[0]) else ""
    split = [_cells(ln) for ln in lines]
    first, numbered = _first_row(split)
    data = [c for c in split[first:] if _is_row(c)]
    if not data:
        return ParsedTable(caption, [])
    width = Counter(len(c) for c in data).most_common(1)[0][0]
    heads = [c if i <= numbered else [""] * (width - len(c)) + c[1:]  # a continuation: its first cell the stub's
             for i, c in enumerate(split[:first])]
    columns = _column_labels([c for c in heads if len(c) > 1], width - 1)
    labelled = [i for i, c in enumerate(data) if len(c) == width + 1 and not _VALUE.match(c[0])]
    sections = _sections(split, first)
    rows = []
    for i, c in enumerate(data):
        if i in labelled:
            group, c = c[0], c[1:]
        else:
            group = data[_nearest(labelled, i)][0] if labelled else sections[i]
        rows.append(TableRow(c[0], group, c[1:]))
    return ParsedTable(caption, columns, rows)


def _first_row(split: list[list[str]]) -> tuple[int, int]:
    """``(first value row, last header line that is not a continuation)`` (module docstring): in a
    table without header lines, a line of integers followed by header continuations (lines of fewer cells, several, that are no
    value rows: "state size | (full)") before the next value row is a header line whose labels are
    numbers ("Multi- | 256 | 512 | 1,024"); a continuation's first cell continues the stub's
    header, its other cells are aligned to the right."""
    rows = [i for i, c in enumerate(split) if _is_row(c)]
    if not rows:
        return len(split), len(split)
    first = rows[0]
    between = split[first + 1: rows[1]] if len(rows) > 1 else []
    headless = all(len(c) == 1 for c in split[:first])
    if between and headless and all(_INTEGER.match(c) for c in split[first][1:]) \
            and all(1 < len(c) < len(split[first]) for c in between):
        return rows[1], first
    return first, first


def _sections(split: list[list[str]], first: int) -> list[str]:
    """The section label of each value row (module docstring): when a one-cell line heads the first
    value row and others occur among the rows ("Tiny", "Short", "Long"), each heads the rows below
    it; "" for every row otherwise."""
    body = split[first:]
    heads = first > 0 and len(split[first - 1]) == 1 and any(len(c) == 1 for c in body)
    if not heads:  # labels among rows that no label heads are centred group labels
        return _centred(body)
    current = split[first - 1][0]
    out = []
    for c in body:
        if len(c) == 1:
            current = c[0]
        elif _is_row(c):
            out.append(current)
    return out


def _centred(body: list[list[str]]) -> list[str]:
    """The group label of each value row of ``body`` when short one-cell lines occur among the rows
    at least ``CENTRED_LABELS`` times, each centred on its block ("AQuA-RAT" between the 2nd and 3rd
    of its 4 rows): when the rows split into blocks of equal size, each with its label inside, the
    label of its block; else the nearest such line by line distance (ties: the one above); "" for
    every row otherwise."""
    at = [i for i, c in enumerate(body) if len(c) == 1 and len(c[0]) <= _LABEL_CHARS and not _VALUE.match(c[0])]
    rows = [i for i, c in enumerate(body) if _is_row(c)]
    if len(at) < CENTRED_LABELS or not rows or at[0] < rows[0] or at[-1] > rows[-1]:
        return ["" for _ in rows]
    size = len(rows) // len(at)
    if size * len(at) == len(rows) and all(rows[k * size] < j < rows[(k + 1) * size - 1] for k, j in enumerate(at)):
        return [body[at[n // size]][0] for n in range(len(rows))]  # blocks of equal size, each around its label
    return [body[min(at, key=lambda j: (abs(j - i), j > i))][0] for i in rows]


def _column_labels(headers: list[list[str]], n_values: int) -> list[str]:
    """One label per value column from the header lines (module docstring)."""
    labels: list[list[str]] = [[] for _ in range(max(n_values, 0))]
    if n_values <= 0:
        return []
    leaf = max((len(c) for c in headers), default=0)
    stub = n_values - leaf if len(headers) >= 2 and 1 < leaf < n_values else 0
    for cells in headers:
        for col, cell in _placed(cells, n_values, stub, leaf):
            labels[col].append(cell)
    return [" ".join(x for x in parts if x) for parts in labels]


def _placed(cells: list[str], n_values: int, stub: int, leaf: int) -> list[tuple[int, str]]:
    """``[(value column, cell)]`` of one header line (module docstring): ``stub`` stub columns,
    ``leaf`` cells in the leaf header line."""
    k = len(cells)
    if not stub and _STUB_HEADER.match(cells[0]) and k - 1 < n_values:
        return list(enumerate(cells[1:]))  # "Method | Bits/dim | Images/sec": the stub's header first
    if k >= n_values:
        return list(enumerate(cells[k - n_values:]))
    if stub and k == stub + 1 and k != leaf and _STUB_HEADER.match(cells[0]):
        return list(enumerate(cells[1:]))  # "Method | Size": the stub columns' names
    first, span = (stub, leaf) if stub else (0, n_values)
    out = []
    for j, cell in enumerate(cells):
        lo, hi = j * span // k, max((j + 1) * span // k, j * span // k + 1)
        out += [(col, cell) for col in range(first + lo, first + min(hi, span))]
    return out


def _nearest(labelled: list[int], i: int) -> int:
    """The labelled row nearest to row ``i`` (ties: the one above, module docstring)."""
    return min(labelled, key=lambda j: (abs(j - i), j > i))


#: A line that reads as a table row: a label with a letter, then two numbers or more and nothing else
#: ("30x stale MIPS 28.7 15.1").
_ROW_LINE = re.compile(r"^\s*[^\s|][^|]*?[A-Za-z][^|]*?(?:\s+[-+]?\d+(?:\.\d+)?%?){2,}\s*$")
#: The run of numbers that ends a row (after its label).
_TRAILING = re.compile(r"(?:\s+[-+]?\d+(?:\.\d+)?%?)+\s*$")


def _trailing(line: str) -> int:
    """How many numbers end ``line`` (cell bars read as spaces)."""
    m = _TRAILING.search(" " + line.replace("|", " "))
    return len(m.group(0).split()) if m else 0


def continued_table(line: str, chunk: Chunk, previous: Optional[Chunk]) -> Optional[Chunk]:
    """The table chunk ``previous`` when ``line`` is one of the row lines that open the text chunk
    ``chunk`` (a label, then two numbers or more), ``previous`` is the table chunk just before it on
    the same page, and ``line`` ends in as many numbers as that table's last row: the parser left
    the table's last rows in the next text block ("30x stale MIPS 28.7 15.1" after "Baseline (ORQA)
    | 31.3 | 13.9"). None otherwise."""
    if previous is None or previous.kind != "table" or previous.page != chunk.page or not _ROW_LINE.match(line):
        return None
    lead = []
    for text in chunk.text.splitlines():
        if not _ROW_LINE.match(text):
            break
        lead.append(text.strip())
    rows = [ln for ln in previous.text.splitlines() if ln.strip()]
    if line.strip() not in lead or not rows or _trailing(rows[-1]) != _trailing(line):
        return None
    return previous
