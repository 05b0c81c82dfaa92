"""The row and cells of a table answer on the PDF page (``lit3r ask --show``, :mod:`lit3r.present.show`).

A table chunk stores its text, not the boxes of its cells, so they are found again with
PyMuPDF's words (``Page.get_text("words")``) inside the table's region on the page:

- the *row* an answer names: its row key (the first column of the answer's row whose value is
  not a number; the table schema puts the row key first) found as a run of consecutive words;
  the row is every word of the table whose vertical centre lies in the key's band. Where the
  key occurs more than once, the occurrence whose band holds most of the row's other values wins;
- the *cells* it states: each other value of the row found as a run of words in that band;
- a free-text answer (no rows): each number it states that occurs exactly once in the table is
  a cell, and the line it is on the row.

Words are compared after NFKC, lower case, and keeping letters, digits and ``.`` (so ``28.4``
matches ``28.4`` and not ``284``). All boxes are page points (unrotated, as PyMuPDF's words).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Mapping, Optional, Sequence

import pymupdf

#: Words of a value compared at most (a long key or value is found by its start).
MAX_VALUE_WORDS = 6
#: A word lies in a row's band when its vertical centre is within the band widened by this many points.
BAND_SLACK_PT = 1.5
_NUMBER = re.compile(r"[-+−]?\d+(?:[.,]\d+)*%?")


def _norm(word: str) -> str:
    text = "".join(ch for ch in unicodedata.normalize("NFKC", word).lower() if ch.isalnum() or ch == ".")
    return text.strip(".")


def _tokens(value: Any) -> list[list[str]]:
    """The word sequences a value may be printed as: ``41.0`` also as ``41``."""
    forms = [str(value)]
    if isinstance(value, float) and value.is_integer():
        forms.append(str(int(value)))
    out = []
    for form in forms:
        toks = [t for t in (_norm(w) for w in form.split()) if t][:MAX_VALUE_WORDS]
        if toks and toks not in out:
            out.append(toks)
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) or bool(_NUMBER.fullmatch(str(value).strip()))


class TableWords:
    """The words of a page inside ``region`` (page points), in reading order."""

    def __init__(self, page: pymupdf.Page, region: pymupdf.Rect) -> None:
        words = page.get_text("words", clip=region)
        self.rects = [pymupdf.Rect(w[:4]) for w in words]
        self.norm = [_norm(w[4]) for w in words]

    def runs(self, value: Any, band: Optional[tuple[float, float]] = None) -> list[list[int]]:
        """Each occurrence of ``value`` as word indices (consecutive words, in ``band`` when given)."""
        found = []
        for toks in _tokens(value):
            n = len(toks)
            for i in range(len(self.norm) - n + 1):
                if self.norm[i:i + n] == toks and (band is None or all(self.in_band(k, band) for k in range(i, i + n))):
                    found.append(list(range(i, i + n)))
            if found:
                break
        return found

    def in_band(self, k: int, band: tuple[float, float]) -> bool:
        mid = (self.rects[k].y0 + self.rects[k].y1) / 2
        return band[0] - BAND_SLACK_PT <= mid <= band[1] + BAND_SLACK_PT

    def box(self, idx: Sequence[int]) -> pymupdf.Rect:
        r = pymupdf.Rect(self.rects[idx[0]])
        for k in idx[1:]:
            r |= self.rects[k]
        return r

    def row(self, band: tuple[float, float]) -> pymupdf.Rect:
        """The box of every word in ``band``."""
        return self.box([k for k in range(len(self.rects)) if self.in_band(k, band)])


def _band(words: TableWords, idx: Sequence[int]) -> tuple[float, float]:
    r = words.box(idx)
    return r.y0, r.y1


def _row_cells(words: TableWords, row: Mapping[str, Any]) -> tuple[list[pymupdf.Rect], list[pymupdf.Rect]]:
    """``([row box], [cell boxes])`` of one answer row, ``([], [])`` when its key is not in the table."""
    values = [v for v in row.values() if v not in (None, "")]
    key = next((v for v in values if not _is_number(v)), None)
    if key is None:
        return [], []
    others = [v for v in values if v is not key]
    best: Optional[tuple[int, tuple[float, float], list[list[int]]]] = None
    for occ in words.runs(key):
        band = _band(words, occ)
        cells = [run[0] for run in (words.runs(v, band) for v in others) if run]
        if best is None or len(cells) > best[0]:
            best = (len(cells), band, cells)
    if best is None:
        return [], []
    _, band, cells = best
    return [words.row(band)], [words.box(c) for c in cells]


def find_cells(page: pymupdf.Page, region: pymupdf.Rect, rows: Optional[Sequence[Mapping[str, Any]]],
               text: Optional[str]) -> tuple[list[pymupdf.Rect], list[pymupdf.Rect]]:
    """``(row boxes, cell boxes)`` in page points of the answer's ``rows`` (column -> value) or,
    without rows, of the numbers its free ``text`` states, inside the table ``region`` of
    ``page`` (module docstring); ``([], [])`` when none is found there."""
    words = TableWords(page, region)
    if not words.norm:
        return [], []
    row_boxes: list[pymupdf.Rect] = []
    cell_boxes: list[pymupdf.Rect] = []
    for row in rows or []:
        r, c = _row_cells(words, row)
        row_boxes += r
        cell_boxes += c
    if not rows and text:
        for number in dict.fromkeys(m.group(0) for m in _NUMBER.finditer(text)):
            if len(number.strip("-+−%")) < 2:
                continue  # a lone digit names too much
            occ = words.runs(number)
            if len(occ) == 1:
                cell_boxes.append(words.box(occ[0]))
                row_boxes.append(words.row(_band(words, occ[0])))
    return _unique(row_boxes), _unique(cell_boxes)


def _unique(rects: list[pymupdf.Rect]) -> list[pymupdf.Rect]:
    out: list[pymupdf.Rect] = []
    for r in rects:
        if not any(abs(r.x0 - o.x0) + abs(r.y0 - o.y0) + abs(r.x1 - o.x1) + abs(r.y1 - o.y1) < 0.5 for o in out):
            out.append(r)
    return out
