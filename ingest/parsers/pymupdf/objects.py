"""Tables, figures, algorithms and numbered equations of one page, for the PyMuPDF parser.

Steps 4 and 5 of the method in :mod:`ingest.parsers.pymupdf`:

- a caption ("Table N:", "Figure N.", "Algorithm N"; a bold line, punctuation after the number,
  or the label set as a span of its own) starts an object; the caption absorbs the blocks
  PyMuPDF split off it;
- the object region grows from the caption over the non-prose blocks next to it, in the
  caption's column: above for figures, below for algorithms, the closer side for tables;
- table rows are rebuilt from the words inside the region (rows by height, cells by gaps:
  numbers stay whole tokens, "84.2" never splits); algorithms keep their lines; figures keep
  the labels read inside them; the region is saved as a PNG crop;
- numbered display equations: a right-aligned "(N)" plus the non-prose fragments on its band.

Coordinates are PDF points.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Iterator, Optional

import pymupdf

from ingest.document import Block
from ingest.parsers.pymupdf.crops import Crops
from ingest.parsers.pymupdf.layout import (
    CAPTION,
    COLUMN_SLACK,
    HEADING_NUM,
    NAMED_HEADINGS,
    ROW_PIECES,
    heading_text,
    is_prose,
    side_by_side,
)
from ingest.parsers.pymupdf.pages import FLAGS, Line, PBlock, mark_exponents
from ingest.text import clean, repair_chars

_EQNUM = re.compile(r"^\((\d{1,3}[a-z]?)\)$")
_ROMAN = {"I": 1, "V": 5, "X": 10}
#: An object region grows over blocks at most this many points apart.
_MAX_GAP = 36.0
#: A bold header row on top of a table captioned below sits at most this many points above it.
_HEADER_ROW_GAP = 12
#: A caption in running text longer than this many characters is a paragraph (not figures).
_PROSE_CAPTION_CHARS = 900
#: Text kept of a figure's labels, or of the text near a table without a grid (characters).
_NEARBY_CHARS = 600
#: Without blocks above it, a figure starts this many points below the page top.
_FIGURE_TOP = 36
#: An equation number "(N)" set as its own span stands this many points right of the formula.
_EQNUM_GAP = 12
#: An equation band reaches this many points above and below the number, and takes blocks
#: lower than this many points.
_EQ_BAND, _EQ_MAX_HEIGHT = 14, 80
#: Characters kept of an equation's text.
_EQ_CHARS = 1500
#: Words closer than this fraction of the median word height are on one table row ...
_ROW_DY = 0.45
#: ... and words further apart than this fraction of it are in different cells.
_CELL_GAP = 0.6


def _roman(s: str) -> int:
    """The value of a Roman numeral of I, V and X ("IV" -> 4)."""
    total = 0
    for a, b in zip(s, s[1:] + " "):
        v = _ROMAN[a]
        total += -v if b != " " and _ROMAN.get(b, 0) > v else v
    return total


def object_id(kind: str, num: str) -> str:
    """``"Table 4"``, ``"Figure 2"``, ``"Algorithm 1"`` from a caption's kind ("Tab", "fig", ...)
    and number (Roman numerals converted, "A.1" -> "A1")."""
    label = {"tab": "Table", "fig": "Figure", "alg": "Algorithm"}[kind[:3].lower()]
    if re.fullmatch(r"[IVX]+", num):
        num = str(_roman(num))
    return f"{label} {num.replace('.', '')}"


def cap_rect(b: PBlock) -> "pymupdf.Rect":
    """A block's box grown by one point on each side."""
    return pymupdf.Rect(b.x0 - 1, b.y0 - 1, b.x1 + 1, b.y1 + 1)


def _xrange(cap: PBlock, width: float, two_col: bool) -> tuple[float, float]:
    """The horizontal extent (points) of the caption's column: the page, or one half of it."""
    mid = width / 2
    if not two_col or (cap.x0 < mid - COLUMN_SLACK and cap.x1 > mid + COLUMN_SLACK):
        return 0.0, width
    return (0.0, mid + 6) if cap.x1 <= mid + COLUMN_SLACK else (mid - 6, width)


def _overlaps(b: PBlock, xr: tuple[float, float]) -> bool:
    """At least 30% of the block's width lies inside ``xr``."""
    return min(b.x1, xr[1]) - max(b.x0, xr[0]) > 0.3 * (b.x1 - b.x0)


def _label_span(ln: Line, m: "re.Match") -> bool:
    """The caption label is alone on its line, or a span of its own followed by a capitalised
    word ("Table 1" + "Evaluation results ...")."""
    rest = ln.text[m.end():].lstrip()
    if not rest:
        return True
    return bool(ln.spans) and ln.spans[0][2].strip() == m.group(0).strip() and rest[:1].isupper()


def _grow(cap: PBlock, blocks: list[PBlock], xr, body_size: float, down: bool, max_gap: float = _MAX_GAP) -> list[PBlock]:
    """Non-prose blocks next to a caption, below (``down``) or above it, within ``xr``: the
    region stops at a gap over ``max_gap`` points, prose, another caption or a section heading."""
    cands = [b for b in blocks if b is not cap and not b.consumed and _overlaps(b, xr)]
    if down:
        cands = sorted((b for b in cands if b.y0 >= cap.y1 - 2), key=lambda b: b.y0)
        edge = cap.y1
    else:
        cands = sorted((b for b in cands if b.y1 <= cap.y0 + 2), key=lambda b: -b.y1)
        edge = cap.y0
    region: list[PBlock] = []
    for k, b in enumerate(cands):
        gap = (b.y0 - edge) if down else (edge - b.y1)
        if gap > max_gap:
            break
        first = b.lines[0].text
        if is_prose(b) or CAPTION.match(first):
            break
        head = heading_text(b, body_size)
        if head:
            # a bold group label inside a table ("English", "Coding") is followed by more rows
            nxt = cands[k + 1] if k + 1 < len(cands) else None
            inner = nxt is not None and not is_prose(nxt) and not CAPTION.match(nxt.lines[0].text)
            # the bold header row on top of a table captioned below
            on_top = not down and bool(region) and gap <= _HEADER_ROW_GAP
            if (HEADING_NUM.match(head) or NAMED_HEADINGS.match(head)) and not _over_rows(b, nxt, region, down, on_top):
                break
            if not inner:
                if on_top:
                    region.append(b)
                break
        region.append(b)
        edge = max(edge, b.y1) if down else min(edge, b.y0)
    return region


def _absorb_caption_tail(cap: PBlock, blocks: list[PBlock], xr) -> PBlock:
    """A caption that PyMuPDF split into several blocks: merge the blocks that follow it with
    less than half a line of gap (a paragraph after a caption sits further away), up to the
    first block of table cells."""
    lines = list(cap.lines)
    h = (cap.lines[-1].y1 - cap.lines[-1].y0) or 8.0
    while True:
        bottom = max(ln.y1 for ln in lines)
        nxt = [b for b in blocks if not b.consumed and _overlaps(b, xr) and 0 <= b.y0 - bottom < 0.5 * h]
        if len(nxt) != 1 or CAPTION.match(nxt[0].lines[0].text) or side_by_side(nxt[0]) >= ROW_PIECES:
            break  # a caption line is one piece; table cells sit side by side
        nxt[0].consumed = True
        lines.extend(nxt[0].lines)
    return PBlock(lines, consumed=True) if len(lines) > len(cap.lines) else cap


def _rows(words: list[tuple], rect: "pymupdf.Rect") -> list[str]:
    """Rebuild table rows from the words inside ``rect``: rows by height, cells by gaps
    (``page.get_text("words")`` tuples; cells joined by " | ")."""
    inside = [w for w in words if rect.contains(pymupdf.Point((w[0] + w[2]) / 2, (w[1] + w[3]) / 2))]
    if not inside:
        return []
    heights = [w[3] - w[1] for w in inside]
    h = statistics.median(heights) or 8.0
    inside.sort(key=lambda w: ((w[1] + w[3]) / 2, w[0]))
    rows: list[list[tuple]] = []
    for w in inside:
        yc = (w[1] + w[3]) / 2
        if rows and abs(yc - statistics.fmean((r[1] + r[3]) / 2 for r in rows[-1])) <= _ROW_DY * h:
            rows[-1].append(w)
        else:
            rows.append([w])
    out = []
    for row in rows:
        row.sort(key=lambda w: w[0])
        parts = [row[0][4]]
        for prev, w in zip(row, row[1:]):
            parts.append((" | " if w[0] - prev[2] > _CELL_GAP * h else " ") + w[4])
        out.append(repair_chars("".join(parts)))
    return out


@dataclass
class PageObjects:
    """One page as object finding needs it: the pymupdf ``page``, its 1-based number ``pno``,
    its blocks in reading order, the body font (points), whether it has two columns, the paper
    id (for warnings), where crops go, and the document's warning list (appended to)."""

    page: "pymupdf.Page"
    pno: int
    ordered: list[PBlock]
    body_size: float
    two_col: bool
    paper_id: str
    crops: Crops
    warnings: list[str]
    _words: Optional[list] = field(default=None, repr=False)

    @property
    def width(self) -> float:
        """Page width (points)."""
        return self.page.rect.width

    @property
    def words(self) -> list[tuple]:
        """The page's words (``page.get_text("words")``), read once."""
        if self._words is None:  # exponents marked as in the page's lines ("10^20", pages.mark_exponents)
            self._words = mark_exponents(self.page.get_text("words", flags=FLAGS), self.ordered)
        return self._words


def _caption(cap: PBlock, seen: set[str]) -> Optional[tuple[str, str]]:
    """``(kind, object id)`` when block ``cap`` starts an object ("tab", "fig" or "alg"), else None.

    "Table 1 shows ..." is a sentence, not a caption: a caption has punctuation after the number,
    a bold first line, or the label as a span of its own. A prose block repeating an id already
    seen on an earlier caption ("Table 4. On average, ...") is body text; so is a long prose
    block starting with a table or algorithm label. ``seen`` (ids of the document so far) is
    updated."""
    m = CAPTION.match(cap.lines[0].text)
    if not m or cap.consumed:
        return None
    kind = m.group("kind")[:3].lower()
    if not m.group("punct") and not cap.lines[0].bold and not _label_span(cap.lines[0], m):
        return None
    oid = object_id(kind, m.group("num"))
    if oid in seen and is_prose(cap):
        return None
    seen.add(oid)
    if is_prose(cap) and len(cap.text) > _PROSE_CAPTION_CHARS and kind != "fig":
        return None
    return kind, oid


def _figure(pg: PageObjects, cap: PBlock, xr: tuple[float, float], oid: str) -> Block:
    """A figure: the region above its caption (or up to the block above), labels read in it."""
    caption = clean(cap.text)
    region = _grow(cap, pg.ordered, xr, pg.body_size, down=False)
    top = min([b.y0 for b in region], default=None)
    if top is None:
        above = [b.y1 for b in pg.ordered if _overlaps(b, xr) and b.y1 <= cap.y0 + 1 and b is not cap]
        top = max(above, default=pg.page.rect.y0 + _FIGURE_TOP)
    rect = pymupdf.Rect(xr[0], top, xr[1], cap.y1)
    labels = [ln.text for b in region for ln in b.lines]
    for b in region:
        b.consumed = True
    body = " ".join(labels)[:_NEARBY_CHARS]
    return Block("figure", pg.pno, body, oid, caption, pg.crops.object_crop(pg.page, rect, pg.pno, oid))


def _over_rows(b: PBlock, nxt: Optional[PBlock], region: list[PBlock], down: bool, on_top: bool) -> bool:
    """A heading-like block ("Method  AutoScholarQuery  RealScholarQuery") is a table's top
    header row when table cells sit right under it: the next block down, or the region's last
    block when growing up, has several pieces side by side (:func:`layout.side_by_side`)."""
    below = nxt if down else (region[-1] if on_top else None)
    if below is None or side_by_side(below) < ROW_PIECES:
        return False
    return (below.y0 - b.y1) <= _HEADER_ROW_GAP


def _table_region(pg: PageObjects, cap: PBlock, xr: tuple[float, float], kind: str) -> list[PBlock]:
    """The blocks of a table or algorithm: below the caption, or for a table above it when
    that side is closer (a caption may sit below its table)."""
    region = _grow(cap, pg.ordered, xr, pg.body_size, down=True)
    if kind == "tab":
        above = _grow(cap, pg.ordered, xr, pg.body_size, down=False)
        if above and (not region or cap.y0 - above[0].y1 < region[0].y0 - cap.y1
                      or _caption_below(region, pg.ordered, xr)):
            region = above
    return region


def _caption_below(region: list[PBlock], blocks: list[PBlock], xr) -> bool:
    """Another caption sits right under the region grown down from a caption: those rows belong
    to that caption (tables captioned below), not to this one."""
    bottom = max(b.y1 for b in region)
    under = [b for b in blocks if _overlaps(b, xr) and b.y0 >= bottom - 2 and b not in region]
    nearest = min(under, key=lambda b: b.y0, default=None)
    return (nearest is not None and nearest.y0 - bottom <= _MAX_GAP
            and bool(CAPTION.match(nearest.lines[0].text)))


def _table(pg: PageObjects, i: int, cap: PBlock, xr: tuple[float, float], kind: str, oid: str) -> Block:
    """A table (rows rebuilt from the words in its region) or an algorithm (its lines); without
    a region, the caption and the text of the next two blocks, with a warning."""
    caption = clean(cap.text)
    region = _table_region(pg, cap, xr, kind)
    for b in region:
        b.consumed = True
    if region:
        rect = pymupdf.Rect(min(b.x0 for b in region) - 1, min(b.y0 for b in region) - 1,
                            max(b.x1 for b in region) + 1, max(b.y1 for b in region) + 1)
        if kind == "alg":
            body = "\n".join(ln.text for b in region for ln in b.lines)
        else:
            body = "\n".join(_rows(pg.words, rect))
        crop = rect | cap_rect(cap)
    else:  # no grid found: caption + nearby text
        nxt = [b.text for b in pg.ordered[i + 1 : i + 3] if not b.consumed]
        body = " ".join(nxt)[:_NEARBY_CHARS]
        crop = cap_rect(cap)
        what = "algorithm body" if kind == "alg" else "table grid"
        pg.warnings.append(f"{pg.paper_id} p{pg.pno}: {oid}: no {what} found, kept caption + nearby text")
    return Block("algorithm" if kind == "alg" else "table", pg.pno, body, oid, caption,
                 pg.crops.object_crop(pg.page, crop, pg.pno, oid))


def find_objects(pg: PageObjects, seen: set[str]) -> dict[int, Block]:
    """Tables, figures, algorithms and equations of one page, keyed by the index (in
    ``pg.ordered``) of the block where they appear in reading order; used blocks are marked
    consumed. ``seen``: object ids found so far in the document (updated)."""
    found: dict[int, Block] = {}
    for i, cap in enumerate(pg.ordered):
        hit = _caption(cap, seen)
        if hit is None:
            continue
        kind, oid = hit
        xr = _xrange(cap, pg.width, pg.two_col)
        cap.consumed = True
        cap = _absorb_caption_tail(cap, pg.ordered, xr)
        found[i] = _figure(pg, cap, xr, oid) if kind == "fig" else _table(pg, i, cap, xr, kind, oid)
    for i, eq in find_equations(pg.ordered, pg.width, pg.two_col):
        found.setdefault(i, eq)
        found[i].page = pg.pno
    return found


def _equation_number(ln: Line) -> tuple[Optional["re.Match"], Optional[str]]:
    """``(match of "(N)", formula text before it)`` for a line that is an equation number, or
    ends with one set as a span of its own well right of the formula; ``(None, None)`` else.
    The formula text is None when the line is the number alone."""
    m = _EQNUM.match(ln.text.strip())
    if m or not ln.spans:
        return m, None
    last = ln.spans[-1]
    mm = _EQNUM.match(last[2].strip())
    if mm and len(ln.spans) > 1 and last[0] - ln.spans[-2][1] > _EQNUM_GAP:
        return mm, ln.text[: ln.text.rfind("(")].strip()
    return None, None


def _equation_band(ordered: list[PBlock], ln: Line, xr: tuple[float, float]) -> set[int]:
    """Indices of the non-prose, low blocks in ``xr`` on the band around equation number
    ``ln``; the band grows with each block taken (a multi-line display)."""
    band0, band1 = ln.y0 - _EQ_BAND, ln.y1 + _EQ_BAND
    changed = True
    members: set[int] = set()
    while changed:
        changed = False
        for bj, b in enumerate(ordered):
            if bj in members or is_prose(b) or not _overlaps(b, xr):
                continue
            if b.y1 >= band0 and b.y0 <= band1 and b.y1 - b.y0 < _EQ_MAX_HEIGHT:
                members.add(bj)
                band0, band1 = min(band0, b.y0 - 4), max(band1, b.y1 + 4)
                changed = True
    return members


def find_equations(ordered: list[PBlock], width: float, two_col: bool) -> Iterator[tuple[int, Block]]:
    """Numbered display equations: a right-aligned "(N)" line and its non-prose band; yields
    ``(index of the first block, Block)`` with page 0 (the caller sets it); the blocks of the
    band are marked consumed."""
    lines = [(bi, ln) for bi, b in enumerate(ordered) for ln in b.lines]
    mid = width / 2
    for bi, ln in lines:
        m, inline = _equation_number(ln)
        if not m:
            continue
        if is_prose(ordered[bi]) and inline is None:
            continue
        xr = (0.0, width) if not two_col else ((0.0, mid + 6) if ln.x1 <= mid + COLUMN_SLACK else (mid - 6, width))
        members = _equation_band(ordered, ln, xr)
        frag = [l2 for bj in sorted(members) for l2 in ordered[bj].lines if l2 is not ln]
        frag.sort(key=lambda l2: (round(l2.yc / 4), l2.x0))
        parts = [l2.text for l2 in frag if not _EQNUM.match(l2.text.strip())]
        if inline:
            parts.insert(0, inline)
        for bj in members:
            ordered[bj].consumed = True
        text = " ".join(parts).strip() or ln.text
        yield min(members | {bi}), Block("equation", 0, text[:_EQ_CHARS], f"Equation {m.group(1)}")
