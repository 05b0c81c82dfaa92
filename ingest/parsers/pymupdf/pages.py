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


#: A span smaller than this fraction of the last full-size span's size whose baseline is above
#: that span's by more than ``_RAISED`` of its size is raised (an exponent); PyMuPDF's superscript
#: flag alone is set on subscripts too.
_SMALLER, _RAISED = 0.9, 0.15
#: Fonts that set only mathematics (TeX math italic and symbols, OpenType math fonts): a
#: superscript after them is an exponent, after a text font it is a footnote or affiliation mark.
_MATH_FONT = re.compile(r"CMMI|CMSY|CMEX|MSBM|MSAM|Math|MTMI|TXMI|TXSY|STIX|Symbol", re.I)
#: What an exponent span holds: a number, a sign and a number, or one letter (``T``, ``n``, ``\u22a4``).
#: A footnote mark's text: a note number, or several with commas ("1,2").
_NOTE = re.compile(r"\d{1,2}(?:,\d{1,2})*")
#: What a footnote mark may be glued to besides a letter: the end of a sentence, clause or quote.
_BEFORE_MARK = ".,;:)\u2019\u201d\"'"
#: Digits -> superscript digits (a footnote mark as the page shows it).
_SUPERSCRIPT_DIGITS = str.maketrans("0123456789", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")
_EXPONENT = re.compile(r"[\u2212\-+]?\d{1,3}|[\u2212\-]?[A-Za-z]|[\u22a4\u2032*]")


def _is_exponent(text: str, before: str, font_before: str) -> bool:
    """Whether a superscript span (PyMuPDF flags bit 0) holding ``text`` raises what comes before
    it to a power: a number right after a digit ("10" "20"), or a short exponent right after a
    math-font symbol or its closing bracket ("n" "2", "K" "T"). ``before``: the text so far of the
    line's last part; ``font_before``: the font of the span before."""
    tt, last = text.strip(), before[-1:]
    if not tt or not last or last.isspace() or text[:1].isspace() or not _EXPONENT.fullmatch(tt):
        return False
    if last.isdigit() and re.fullmatch(r"[\u2212\-]?\d{1,3}", tt):
        return True
    return bool(_MATH_FONT.search(font_before)) and (last.isalnum() or last in ")]}|")


def _note_mark(spans: list[dict], i: int, before: str, raised: bool, font_before: str) -> Optional[str]:
    """The footnote mark that span ``i`` is, as superscript digits apart from the words, or None.

    A note number (1-2 digits, or several with commas) in a text font is a mark when it is
    *raised* after a word (``raised``: smaller and above the baseline of the line's last
    full-size span, :data:`_SMALLER`, :data:`_RAISED`; PyMuPDF's superscript flag is often not
    set on these) and glued to it (``before``: the line so far ends in a letter or ``. , ; : )``
    and a quote), giving ``"model.⁷"``; or when it starts the line or follows a space, smaller
    than the next span and above its baseline, before a word (a footnote's or an affiliation's
    number: ``"⁷ For example"``, ``"Switzerland ² EPFL"``).
    Not a mark: a raised run after a digit, a sign or a math-font symbol (exponents, ``10−3``),
    a number before a fraction bar (a numerator), a number in a math font, a line number of code
    (set on the baseline)."""
    s = spans[i]
    t = s["text"].strip()
    if not _NOTE.fullmatch(t) or _MATH_FONT.search(s["font"]):
        return None
    nxt = next((x for x in spans[i + 1:] if x["text"].strip()), None)
    if nxt is not None and nxt["text"].lstrip()[:1] in "/\u2044\u2215":
        return None  # a fraction's numerator
    glued = before[-1:] if not before[-1:].isspace() else ""
    if glued:
        if raised and (glued.isalpha() or glued in _BEFORE_MARK) and not _MATH_FONT.search(font_before):
            return t.translate(_SUPERSCRIPT_DIGITS)
        return None
    if nxt is None or not nxt["text"].lstrip()[:1].isalpha():
        return None
    if s["size"] < _SMALLER * nxt["size"] and s["origin"][1] < nxt["origin"][1] - _RAISED * nxt["size"]:
        return t.translate(_SUPERSCRIPT_DIGITS) + " "
    return None


def _line_of(spans: list[dict]) -> Optional[Line]:
    """One PyMuPDF line's spans -> a Line (None when it holds no text). Spaces are inserted at
    visible gaps; an exponent becomes ``^N`` (:func:`_is_exponent`: "10" + "20" -> "10^20",
    "O(n" + "2" -> "O(n^2"); a footnote mark becomes superscript digits apart from the words
    (:func:`_note_mark`: "model.7 We" -> "model.\u2077 We", "7For example" -> "\u2077 For example")."""
    parts: list[str] = []
    prev_x1 = None
    prev_font, base = "", None  # the font of the span before; (baseline y, size) of the last full-size span
    prev_raised = False
    sizes: Counter = Counter()
    bold_chars = 0
    n_chars = 0
    xs = []
    after_mark = False
    for i, s in enumerate(spans):
        t = s["text"]
        if not t.strip():
            if t and parts and not parts[-1].endswith(" "):
                parts.append(" ")
            continue
        x0, x1 = s["bbox"][0], s["bbox"][2]
        raised = base is not None and s["size"] < _SMALLER * base[1] and s["origin"][1] < base[0] - _RAISED * base[1]
        exponent = (bool(s["flags"] & _SUPERSCRIPT) and raised and not prev_raised  # one "^" per exponent
                    and _is_exponent(t, "".join(parts[-1:]), prev_font))
        mark = None if exponent else _note_mark(spans, i, "".join(parts), raised and not prev_raised, prev_font)
        prev_raised = raised
        if prev_x1 is not None and parts and not parts[-1].endswith(" ") and not t.startswith(" ") and not exponent \
                and mark is None and (after_mark and t[:1].isalnum() or x0 - prev_x1 > _SPACE_GAP * s["size"]):
            parts.append(" ")
        if exponent:
            t = "^" + t.strip()  # "10" + superscript "20" -> "10^20", "O(n" + superscript "2" -> "O(n^2"
        after_mark = mark is not None
        if mark is not None:
            t = mark
        parts.append(t)
        prev_x1 = x1
        prev_font = s["font"]
        if base is None or s["size"] >= _SMALLER * base[1]:
            base = (s["origin"][1], s["size"])
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


def mark_exponents(words: list[tuple], blocks: list[PBlock]) -> list[tuple]:
    """``page.get_text("words")`` tuples with the exponents that :func:`read_page` found in
    ``blocks`` (the page's blocks; spans whose text starts with ``^``) marked in the words that
    hold them: "1020" -> "10^20", "O(n2)" -> "O(n^2)" (table rows are rebuilt from words, which
    carry no span flags). An exponent is placed in its word at the occurrence of its text
    nearest to where its box starts; words without one are returned as they are."""
    marks = [((x0 + x1) / 2, x0, ln.y0, ln.y1, t[1:]) for b in blocks for ln in b.lines
             for x0, x1, t in ln.spans if t.startswith("^") and len(t) > 1]
    if not marks:
        return words
    out = []
    for w in words:
        text = w[4]
        for xc, x0, y0, y1, exp in marks:
            if not (w[0] <= xc <= w[2] and w[1] < y1 and y0 < w[3]) or "^" + exp in text:
                continue
            at = [i for i in range(1, len(text)) if text.startswith(exp, i)]
            if at:
                guess = (x0 - w[0]) / max(w[2] - w[0], 1e-6) * len(text)
                i = min(at, key=lambda k: abs(k - guess))
                text = text[:i] + "^" + text[i:]
        out.append(w if text == w[4] else (*w[:4], text, *w[5:]))
    return out


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
