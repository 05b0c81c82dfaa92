"""Block classification and reading order for the PyMuPDF parser.

Steps 3 and 6 of the method in :mod:`ingest.parsers.pymupdf`, on the blocks of one page:

- :func:`is_prose`, :func:`heading_text` and :func:`display_math` classify a block (running
  text, a heading, an unnumbered display equation);
- :func:`split_heading` and :func:`split_captions` split blocks that PyMuPDF merged (a heading
  on top of its paragraph; a caption below its table);
- :func:`order` puts blocks in reading order: full-width blocks split the page into bands, and
  inside a band the left column is read before the right one (two-column layouts).

The shared patterns (captions, headings, the references heading, appendix headings, years)
live here too. Coordinates are PDF points.
"""

from __future__ import annotations

import re
from typing import Optional

from ingest.parsers.pymupdf.pages import PBlock

CAPTION = re.compile(
    r"^(?P<kind>Table|TABLE|Tab\.|Figure|FIGURE|Fig\.|Algorithm|ALGORITHM)\s*"
    r"(?P<num>\d{1,3}|[IVX]{1,5}|[A-Z]\.?\d{1,2})(?P<punct>\s*[:.|\u2014\u2013-])?"
)
HEADING_NUM = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[A-H](?:\.\d{1,2}){0,3}\.?|[IVX]{1,4}\.)\s+\S")
NAMED_HEADINGS = re.compile(
    r"^(?:abstract|introduction|related work|background|method(?:s|ology)?|experiments?|results|"
    r"discussion|conclusions?|limitations|acknowledge?ments?|references|bibliography|appendix|"
    r"appendices|ethics statement|broader impact)\b",
    re.I,
)
REFS_HEADING = re.compile(
    r"^(?:\d{1,2}\.?\s*|[A-Z]\.?\s+)?(?:references|bibliography|literature cited|references and notes)\s*$",
    re.I,
)
APPENDIX_HEADING = re.compile(
    r"^(?:appendix|appendices|supplementary|checklist|neurips paper checklist|"
    r"[A-H](?:\.\d{1,2})?\.?\s+[A-Z][A-Za-z])",
)
YEAR = re.compile(r"\b(?:19|20)\d\d[a-z]?\b")
_MATH = re.compile(r"[=\u2211\u220f\u222b\u221a\u2264\u2265\u2248\u00b7\u00d7\u2208\u2192]|[\u0391-\u03c9]")

#: A heading line is larger than the body font by at least this many points (or bold).
HEADING_SIZE_STEP = 0.9
#: Blocks within this many points of the page's vertical middle still belong to a column.
COLUMN_SLACK = 12
#: Prose: at least this many characters, this share of plain words, this many characters a line.
_PROSE_CHARS, _PROSE_WORDS, _PROSE_LINE_CHARS = 80, 0.55, 35
#: A heading: at most this many lines and this many characters.
_HEADING_LINES, _HEADING_CHARS = 3, 120
#: A caption line inside a block starts within this many points of the block's left edge.
_CAPTION_INDENT = 40
#: A table header row: at least this many pieces side by side on one line, apart by more than
#: this share of the font size (a heading is one piece, or a number and its title).
ROW_PIECES, _CELL_GAP_EM = 3, 0.8
#: An unnumbered display equation: 5..300 characters, at most 4 lines, narrower than this
#: fraction of the page width.
_MATH_WIDTH = 0.45


def is_prose(b: PBlock) -> bool:
    """Running text: long enough, mostly plain words, long lines on average."""
    text = b.text
    if len(text) < _PROSE_CHARS:
        return False
    words = text.split()
    alpha = sum(1 for w in words if re.fullmatch(r"[A-Za-z][a-z\-']+[,.;:]?", w))
    avg_line = len(text) / len(b.lines)
    return alpha >= _PROSE_WORDS * len(words) and avg_line >= _PROSE_LINE_CHARS


def _styled(b: PBlock, text: str, body_size: float) -> bool:
    """Every line bold or larger than the body font; or a short numbered subsection heading
    without a final period ("3.1.2 e-MERLIN detection ..." set in italics)."""
    styled = all(ln.bold or ln.size >= body_size + HEADING_SIZE_STEP for ln in b.lines)
    if not styled and len(b.lines) <= 2 and re.match(r"^\d{1,2}(?:\.\d{1,2}){1,3}\s+[A-Z]", text) and len(text) < 90:
        styled = not text.endswith(".")
    return styled


def _smaller_than_body(b: PBlock, body_size: float) -> bool:
    """Every line of the block is set smaller than the body font by ``HEADING_SIZE_STEP`` points or
    more: figure labels ("Learning to encode", "Device 0") and table header rows, never a heading."""
    return max(ln.size for ln in b.lines) <= body_size - HEADING_SIZE_STEP


def side_by_side(b: PBlock) -> int:
    """The most pieces of text set side by side on one visual line of the block: spans (of all
    the block's lines on that band) apart by more than ``_CELL_GAP_EM`` of the font size. A
    table's bold header row ("Method | Recall | Precision") has several; a heading one or two."""
    bands: list[tuple[float, float, list[tuple[float, float, str]]]] = []
    for ln in b.lines:
        band = next((bd for bd in bands if abs(bd[0] - ln.yc) <= 0.5 * max(ln.size, 1.0)), None)
        spans = ln.spans or [(ln.x0, ln.x1, ln.text)]
        if band is None:
            bands.append((ln.yc, ln.size, list(spans)))
        else:
            band[2].extend(spans)
    most = 0
    for _, size, spans in bands:
        spans = sorted((s for s in spans if s[2].strip()), key=lambda s: s[0])
        gaps = sum(1 for a, c in zip(spans, spans[1:]) if c[0] - a[1] > _CELL_GAP_EM * max(size, 1.0))
        most = max(most, gaps + 1 if spans else 0)
    return most


def heading_text(b: PBlock, body_size: float) -> Optional[str]:
    """Text of a heading block, or None. Headings: <= 3 short lines, bold or larger font, or
    all capitals with a section number or a known section name; not a caption, not mostly
    digits, not a table-of-contents line, not a table's header row (:func:`side_by_side`), not
    set smaller than the body (figure labels), words that can name a section (:func:`heading_words`).
    "References" alone on its line is always a heading. ``body_size``: the body font size
    (points)."""
    if len(b.lines) > _HEADING_LINES or side_by_side(b) >= ROW_PIECES:
        return None
    text = " ".join(ln.text for ln in b.lines).strip()
    if not (2 <= len(text) <= _HEADING_CHARS) or text.endswith((".", ",", ";", ":")) and not HEADING_NUM.match(text):
        return None
    if CAPTION.match(text):
        return None
    if len(b.lines) == 1 and REFS_HEADING.match(text):
        return text  # "References" alone on its line is the heading, whatever its font
    if _smaller_than_body(b, body_size):
        return None  # a bold label inside a figure or a table's header row, set below the body size
    styled = _styled(b, text, body_size)
    caps = text.isupper() and len(text) > 4 and sum(c.isalpha() for c in text) > 4
    if (styled or caps) and (HEADING_NUM.match(text) or NAMED_HEADINGS.match(text) or styled):
        if sum(c.isdigit() for c in text) > 0.4 * len(text):
            return None
        if HEADING_NUM.match(text) and re.search(r"[A-Za-z)][\s.]+\d{1,3}$", text):
            return None  # a table-of-contents line: "2 Tokenizer & Model 3"
        if not heading_words(text):
            return None
        return text
    return None


#: Markup and symbols that a section name never holds: LaTeX (``\[``, ``\frac``), an equation or
#: a comparison, assignment arrows and set symbols of pseudo-code, private-use glyphs.
_NOT_A_NAME = re.compile(r"\\(?:[\[\]()]|[A-Za-z]{2,})|[=\u2190\u222a\u2229\u2208\u2209\u2200\u2203\u25b7]|[\ue000-\uf8ff]"
                         r"|\.\s\.\s\.|<\||https?:|^\s*[+\-\u2212*/^_\u201c\"]"
                         r"|,\s*\u201c|,\u201d|\u201d,|arXiv:\s?\d")  # a reference entry's quoted title or arXiv id
#: An author list ("D. Hendrycks, C. Burns, S. Kadavath,"): two initials-and-surname items.
_AUTHOR_ITEMS = re.compile(r"(?:\b[A-Z]\.(?:\s?-?[A-Z]\.)*\s+[A-Z][^\s,]+,\s*){2}")


def heading_words(text: str) -> bool:
    """Whether ``text`` can name a section: a word of three or more letters, no LaTeX markup, no
    equation (``=``, ``\u2190``, set symbols, an ellipsis, a leading operator or quote), at most
    one other math symbol (:data:`_MATH`), no URL, not an author list of a reference entry.
    ``\\[ \\frac{5}{8}x = 15 \\]``, ``2 \u221a`` and ``i=1 \u222aD+`` are bold lines of
    equations, not headings."""
    if _NOT_A_NAME.search(text) or len(_MATH.findall(text)) >= 2 or _AUTHOR_ITEMS.search(text):
        return False
    return re.search(r"[^\W\d_]{3,}", text) is not None


def split_heading(b: PBlock, body_size: float) -> list[PBlock]:
    """Split a block whose first line(s) form a heading and the rest a paragraph."""
    n = 0
    for ln in b.lines[:_HEADING_LINES]:
        if ln.bold or ln.size >= body_size + HEADING_SIZE_STEP:
            n += 1
        else:
            break
    if 0 < n < len(b.lines):
        head = PBlock(b.lines[:n])
        if heading_text(head, body_size):
            return [head, PBlock(b.lines[n:])]
    return [b]


def split_captions(b: PBlock) -> list[PBlock]:
    """Split a block at a caption line inside it ("...table rows" + "Table 4: ..."): PyMuPDF
    often files a caption set below a table into the table's own block."""
    for k in range(1, len(b.lines)):
        m = CAPTION.match(b.lines[k].text)
        if m and m.group("punct") and b.lines[k].x0 <= b.x0 + _CAPTION_INDENT:
            return [PBlock(b.lines[:k])] + split_captions(PBlock(b.lines[k:]))
    return [b]


def is_two_column(blocks: list[PBlock], width: float) -> bool:
    """At least two blocks in each half of a page ``width`` points wide."""
    mid = width / 2
    return (len([b for b in blocks if b.x1 <= mid + COLUMN_SLACK]) >= 2
            and len([b for b in blocks if b.x0 >= mid - COLUMN_SLACK]) >= 2)


def order(blocks: list[PBlock], width: float) -> list[PBlock]:
    """Reading order: full-width blocks cut bands; in each band, left column then right.
    Pages without two blocks in each column are read top to bottom, left to right."""
    mid = width / 2
    left = [b for b in blocks if b.x1 <= mid + COLUMN_SLACK]
    right = [b for b in blocks if b.x0 >= mid - COLUMN_SLACK and b not in left]
    span = [b for b in blocks if b not in left and b not in right]
    if len(right) < 2 or len(left) < 2:
        return sorted(blocks, key=lambda b: (round(b.y0), b.x0))
    out: list[PBlock] = []
    top = -1.0
    for s in sorted(span, key=lambda b: b.y0) + [None]:
        bottom = s.y0 if s is not None else float("inf")
        for col in (left, right):
            band = [b for b in col if top <= (b.y0 + b.y1) / 2 < bottom]
            out.extend(sorted(band, key=lambda b: b.y0))
        if s is not None:
            out.append(s)
            top = (s.y0 + s.y1) / 2
    return out


def display_math(b: PBlock, width: float) -> bool:
    """An unnumbered display equation: a short, narrow, non-prose block with math symbols
    (two or more, one of them "=")."""
    text = b.text
    if is_prose(b) or len(text) > 300 or len(text) < 5 or len(b.lines) > 4:
        return False
    return len(_MATH.findall(text)) >= 2 and "=" in text and (b.x1 - b.x0) < _MATH_WIDTH * width
