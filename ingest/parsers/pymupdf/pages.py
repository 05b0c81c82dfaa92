"""Page text for the PyMuPDF parser: visual lines and text blocks, without running headers.

Steps 1 and 2 of the method in :mod:`ingest.parsers.pymupdf`:

- :func:`read_page` reads a page's text blocks as visual lines with fonts and boxes
  (``page.get_text("dict")``, ligatures expanded, vertical text dropped, lines at one height
  merged);
- :func:`body_font_size` is the font size that holds the most characters of the document;
- :func:`drop_margins` removes running headers, footers and page numbers: lines in the page
  margins that repeat on several pages or are bare page numbers, and margin lines outside the
  document's body box.

Coordinates are PDF points (1/72 inch), origin at the top left of the page.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

import pymupdf

from ingest.text import join_lines, repair_chars

#: Text extraction flags: whitespace kept, text clipped to the media box; ligatures expanded
#: (no ``TEXT_PRESERVE_LIGATURES``).
FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
#: The bold bit of a PyMuPDF span's ``flags``.
_BOLD = 16
#: The superscript bit of a PyMuPDF span's ``flags``.
_SUPERSCRIPT = 1
#: A horizontal gap wider than this fraction of the font size between two spans is a space.
_SPACE_GAP = 0.15
#: Share of a line's characters that must be bold for the line to count as bold.
_BOLD_SHARE = 0.9
#: A line whose direction has a vertical component above this is vertical text (margin stamps).
_VERTICAL = 0.1
#: Lines whose centres differ by less than this many points are one visual line ...
_SAME_LINE_DY = 2.5
#: ... when the second starts at most this many points right of the first's end.
_SAME_LINE_GAP = 40
#: Header and footer margins as fractions of the page height.
_TOP_MARGIN, _BOTTOM_MARGIN = 0.12, 0.9
#: The start of a table or figure caption ("Table 1:", "Figure 3."), never a running header.
_CAPTION_START = re.compile(r"^(?:Table|TABLE|Tab\.|Figure|FIGURE|Fig\.)\s*\d{1,3}\s*[:.]")
#: Body lines: font within this many points of the body size and longer than this many characters.
_BODY_SIZE_TOL, _BODY_LINE_CHARS = 0.6, 20
_PAGE_NUMBER = re.compile(r"(page\s*)?[\divxlc]{1,4}(\s*(of|/)\s*\d+)?")


@dataclass
class Line:
    """A visual line: box (points), text, dominant font size (points), all-bold flag, and the
    spans' ``(x0, x1, text)`` extents."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    bold: bool
    spans: list[tuple[float, float, str]] = field(default_factory=list)

    @property
    def yc(self) -> float:
        """Vertical centre (points)."""
        return (self.y0 + self.y1) / 2


@dataclass
class PBlock:
    """A PyMuPDF text block (after header/footer removal), with its lines; ``consumed`` marks a
    block already used by a caption, object, abstract or equation."""

    lines: list[Line]
    consumed: bool = False

    @property
    def x0(self) -> float:
        """Left edge (points)."""
        return min(ln.x0 for ln in self.lines)

    @property
    def x1(self) -> float:
        """Right edge (points)."""
        return max(ln.x1 for ln in self.lines)

    @property
    def y0(self) -> float:
        """Top (points)."""
        return min(ln.y0 for ln in self.lines)

    @property
    def y1(self) -> float:
        """Bottom (points)."""
        return max(ln.y1 for ln in self.lines)

    @property
    def text(self) -> str:
        """The lines joined into one string (hyphenated line breaks repaired)."""
        return join_lines([ln.text for ln in self.lines])


#: A page as PyMuPDF blocks of visual lines.
PageLines = list[list[Line]]


def _line_of(spans: list[dict]) -> Optional[Line]:
    """One PyMuPDF line's spans -> a Line (None when it holds no text). Spaces are inserted at
    visible gaps; a superscript number after a digit becomes ``^N`` ("10" + "20" -> "10^20")."""
    parts: list[str] = []
    prev_x1 = None
    sizes: Counter = Counter()
    bold_chars = 0
    n_chars = 0
    xs = []
    for s in spans:
        t = s["text"]
        if not t.strip():
            if t and parts and not parts[-1].endswith(" "):
                parts.append(" ")
            continue
        x0, x1 = s["bbox"][0], s["bbox"][2]
        if prev_x1 is not None and parts and not parts[-1].endswith(" ") and not t.startswith(" "):
            if x0 - prev_x1 > _SPACE_GAP * s["size"]:
                parts.append(" ")
        if (s["flags"] & _SUPERSCRIPT and parts and parts[-1][-1:].isdigit()
                and re.fullmatch(r"[\u2212\-]?\d{1,3}", t.strip())):
            t = "^" + t.strip()  # an exponent: "10" + superscript "20" -> "10^20", not "1020"
        parts.append(t)
        prev_x1 = x1
        n = len(t.strip())
        sizes[round(s["size"], 1)] += n
        n_chars += n
        if s["flags"] & _BOLD or "Bold" in s["font"] or "Medi" in s["font"]:
            bold_chars += n
        xs.append((x0, x1, t))
    text = re.sub(r"\s+", " ", repair_chars("".join(parts))).strip()
    if not text:
        return None
    x0 = min(x[0] for x in xs)
    x1 = max(x[1] for x in xs)
    y0 = min(s["bbox"][1] for s in spans if s["text"].strip())
    y1 = max(s["bbox"][3] for s in spans if s["text"].strip())
    return Line(x0, y0, x1, y1, text, sizes.most_common(1)[0][0], bold_chars >= _BOLD_SHARE * n_chars, xs)


def read_page(page: "pymupdf.Page") -> PageLines:
    """Text blocks of a page as lists of visual lines (lines at the same height merged)."""
    out = []
    for b in page.get_text("dict", flags=FLAGS)["blocks"]:
        if b.get("type") != 0:
            continue
        lines: list = []
        for ln in b["lines"]:
            if abs(ln["dir"][1]) > _VERTICAL:  # vertical text: arXiv stamps, rotated labels
                continue
            line = _line_of(ln["spans"])
            if not line:
                continue
            prev = lines[-1] if lines else None
            if (prev and abs(prev.yc - line.yc) < _SAME_LINE_DY and line.x0 >= prev.x1 - 1
                    and line.x0 - prev.x1 < _SAME_LINE_GAP):
                lines[-1] = Line(prev.x0, min(prev.y0, line.y0), line.x1, max(prev.y1, line.y1),
                                 f"{prev.text} {line.text}", prev.size, prev.bold and line.bold,
                                 prev.spans + line.spans)
            else:
                lines.append(line)
        if lines:
            out.append(lines)
    return out


def text_chars(pages: list[PageLines]) -> int:
    """Characters of text on all pages (the text-layer test of the parser)."""
    return sum(len(ln.text) for p in pages for b in p for ln in b)


def body_font_size(pages: list[PageLines]) -> float:
    """The font size (points) that holds the most characters of the document (the body text).
    The pages must hold text (IndexError otherwise; the parser checks the text layer first)."""
    sizes: Counter = Counter()
    for p in pages:
        for b in p:
            for ln in b:
                sizes[ln.size] += len(ln.text)
    return sizes.most_common(1)[0][0]


def _margin_key(text: str) -> str:
    """A margin line's text with digits masked: a running header with page numbers repeats."""
    return re.sub(r"\d+", "#", text.lower()).strip()


def _body_box(pages: list[PageLines], body_size: float) -> tuple[float, float]:
    """``(top, bottom)`` of the body text over the pages (points): the 10th percentile of the
    pages' first body-line tops and the 90th percentile of their last body-line bottoms."""
    tops, bottoms = [], []
    for p in pages:
        body = [ln for b in p for ln in b
                if abs(ln.size - body_size) < _BODY_SIZE_TOL and len(ln.text) > _BODY_LINE_CHARS]
        if body:
            tops.append(min(ln.y0 for ln in body))
            bottoms.append(max(ln.y1 for ln in body))
    top = sorted(tops)[max(0, len(tops) // 10)] if tops else 0
    bottom = sorted(bottoms)[min(len(bottoms) - 1, len(bottoms) * 9 // 10)] if bottoms else 1e9
    return top, bottom


def drop_margins(pages: list[PageLines], body_size: float, height: float) -> list[PageLines]:
    """The pages without running headers, footers and page numbers.

    A line in the top or bottom margin (``height``: page height, points) is dropped when its
    text (digits masked) repeats on several pages (3 or 30% of them; 2 for documents under 4
    pages), when it is a bare page number ("12", "iv", "Page 3 of 9"), or when it lies outside
    the body box (:func:`_body_box`) on a page after the first (or on a one-page document), unless
    it starts a table or figure caption (a table at the top of a page). Blocks left without lines
    are dropped.
    """
    n = len(pages)
    top, bottom = _body_box(pages, body_size)

    def in_margin(ln: Line) -> bool:
        """In the top or bottom margin of the page."""
        return ln.y1 < _TOP_MARGIN * height or ln.y0 > _BOTTOM_MARGIN * height

    counts: Counter = Counter()
    for p in pages:
        counts.update({_margin_key(ln.text) for b in p for ln in b if in_margin(ln)})
    repeat = max(3, int(0.3 * n)) if n >= 4 else 2
    cleaned = []
    for pi, p in enumerate(pages):
        page_blocks = []
        for b in p:
            keep = []
            for ln in b:
                margin = in_margin(ln)
                outside = (ln.y1 < top - 1 or ln.y0 > bottom + 1) and pi > 0 or (
                    n == 1 and (ln.y1 < top - 1 or ln.y0 > bottom + 1)
                )
                if margin and (counts[_margin_key(ln.text)] >= repeat or _PAGE_NUMBER.fullmatch(ln.text.lower())):
                    continue
                if outside and margin and not _CAPTION_START.match(ln.text):
                    continue  # (a caption at the top of a page is the page's first object, not a header)
                keep.append(ln)
            if keep:
                page_blocks.append(keep)
        cleaned.append(page_blocks)
    return cleaned
