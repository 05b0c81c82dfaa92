"""The default PDF parser, on PyMuPDF: one PDF -> :class:`ingest.document.ParsedDocument`.

Fully offline and fast (no table-grid detection by default). What it does, per page:

1. reads text lines with fonts and boxes (``page.get_text("dict")``, ligatures expanded);
2. drops running headers, footers and page numbers: lines outside the document's body box, lines
   in the page margins that repeat on several pages, bare page numbers, vertical margin stamps;
3. orders blocks for reading: full-width blocks split the page into bands, and inside a band the
   left column is read before the right one (two-column layouts);
4. finds captions ("Table N:", "Figure N.", "Algorithm N") and grows the object region from the
   caption over the non-prose blocks next to it; table rows are rebuilt from the words inside the
   region (numbers stay whole tokens: "84.2" never splits); the region is saved as a PNG crop;
5. numbered display equations: a right-aligned "(N)" plus the non-prose fragments on its band;
6. headings (bold or larger than the body font, short, no final period) -> sections;
7. the reference list: entries split by printed numbers, else by hanging indent, else by block;
   the list ends at an appendix heading or where entries stop looking like references.

Title, authors and abstract come from page 1 (largest font near the top; the "Abstract" block).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pymupdf

from ingest.document import BadInputError, Block, ParsedDocument, RawReference
from ingest.metadata import venue_year_from_text
from ingest.text import clean, join_lines, repair_chars

_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP  # no PRESERVE_LIGATURES
_BOLD = 16

_CAPTION = re.compile(
    r"^(?P<kind>Table|TABLE|Tab\.|Figure|FIGURE|Fig\.|Algorithm|ALGORITHM)\s*"
    r"(?P<num>\d{1,3}|[IVX]{1,5}|[A-Z]\.?\d{1,2})(?P<punct>\s*[:.|\u2014\u2013-])?"
)
_EQNUM = re.compile(r"^\((\d{1,3}[a-z]?)\)$")
_HEADING_NUM = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[A-H](?:\.\d{1,2}){0,3}\.?|[IVX]{1,4}\.)\s+\S")
_NAMED_HEADINGS = re.compile(
    r"^(?:abstract|introduction|related work|background|method(?:s|ology)?|experiments?|results|"
    r"discussion|conclusions?|limitations|acknowledge?ments?|references|bibliography|appendix|"
    r"appendices|ethics statement|broader impact)\b",
    re.I,
)
_REFS_HEADING = re.compile(
    r"^(?:\d{1,2}\.?\s*|[A-Z]\.?\s+)?(?:references|bibliography|literature cited|references and notes)\s*$",
    re.I,
)
_APPENDIX_HEADING = re.compile(
    r"^(?:appendix|appendices|supplementary|checklist|neurips paper checklist|"
    r"[A-H](?:\.\d{1,2})?\.?\s+[A-Z][A-Za-z])",
)
_REF_NUM = re.compile(r"^\[(\d{1,4})\]\s*")
_REF_DOTNUM = re.compile(r"^(\d{1,3})\.\s+(?=[A-Z])")
_YEAR = re.compile(r"\b(?:19|20)\d\d[a-z]?\b")
_ROMAN = {"I": 1, "V": 5, "X": 10}


def _roman(s: str) -> int:
    total = 0
    for a, b in zip(s, s[1:] + " "):
        v = _ROMAN[a]
        total += -v if b != " " and _ROMAN.get(b, 0) > v else v
    return total


@dataclass
class Line:
    """A visual line: box, text, dominant font size, all-bold flag, spans' x-extents."""

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
        return (self.y0 + self.y1) / 2


@dataclass
class PBlock:
    """A PyMuPDF text block (after header/footer removal), with its lines."""

    lines: list[Line]
    consumed: bool = False

    @property
    def x0(self) -> float:
        return min(ln.x0 for ln in self.lines)

    @property
    def x1(self) -> float:
        return max(ln.x1 for ln in self.lines)

    @property
    def y0(self) -> float:
        return min(ln.y0 for ln in self.lines)

    @property
    def y1(self) -> float:
        return max(ln.y1 for ln in self.lines)

    @property
    def text(self) -> str:
        return join_lines([ln.text for ln in self.lines])


# ----------------------------------------------------------------------------- reading pages


def _line_of(spans: list[dict]) -> Optional[Line]:
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
            if x0 - prev_x1 > 0.15 * s["size"]:
                parts.append(" ")
        if s["flags"] & 1 and parts and parts[-1][-1:].isdigit() and re.fullmatch(r"[\u2212\-]?\d{1,3}", t.strip()):
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
    return Line(x0, y0, x1, y1, text, sizes.most_common(1)[0][0], bold_chars >= 0.9 * n_chars, xs)


def _read_page(page: "pymupdf.Page") -> list[list[Line]]:
    """Text blocks of a page as lists of visual lines (lines at the same height merged)."""
    out = []
    for b in page.get_text("dict", flags=_FLAGS)["blocks"]:
        if b.get("type") != 0:
            continue
        lines = []
        for ln in b["lines"]:
            if abs(ln["dir"][1]) > 0.1:  # vertical text: arXiv stamps, rotated labels
                continue
            line = _line_of(ln["spans"])
            if not line:
                continue
            prev = lines[-1] if lines else None
            if prev and abs(prev.yc - line.yc) < 2.5 and line.x0 >= prev.x1 - 1 and line.x0 - prev.x1 < 40:
                lines[-1] = Line(prev.x0, min(prev.y0, line.y0), line.x1, max(prev.y1, line.y1),
                                 f"{prev.text} {line.text}", prev.size, prev.bold and line.bold,
                                 prev.spans + line.spans)
            else:
                lines.append(line)
        if lines:
            out.append(lines)
    return out


def _margin_key(text: str) -> str:
    return re.sub(r"\d+", "#", text.lower()).strip()


# ----------------------------------------------------------------------------- classification


def _is_prose(b: PBlock) -> bool:
    text = b.text
    if len(text) < 80:
        return False
    words = text.split()
    alpha = sum(1 for w in words if re.fullmatch(r"[A-Za-z][a-z\-']+[,.;:]?", w))
    avg_line = len(text) / len(b.lines)
    return alpha >= 0.55 * len(words) and avg_line >= 35


def _heading_text(b: PBlock, body_size: float) -> Optional[str]:
    """Text of a heading block, or None. Headings: <= 3 short lines, bold or larger font."""
    if len(b.lines) > 3:
        return None
    text = " ".join(ln.text for ln in b.lines).strip()
    if not (2 <= len(text) <= 120) or text.endswith((".", ",", ";", ":")) and not _HEADING_NUM.match(text):
        return None
    if _CAPTION.match(text):
        return None
    if len(b.lines) == 1 and _REFS_HEADING.match(text):
        return text  # "References" alone on its line is the heading, whatever its font
    styled = all(ln.bold or ln.size >= body_size + 0.9 for ln in b.lines)
    if not styled and len(b.lines) <= 2 and re.match(r"^\d{1,2}(?:\.\d{1,2}){1,3}\s+[A-Z]", text) and len(text) < 90:
        styled = not text.endswith(".")  # "3.1.2 e-MERLIN detection ..." set in italics
    caps = text.isupper() and len(text) > 4 and sum(c.isalpha() for c in text) > 4
    if (styled or caps) and (_HEADING_NUM.match(text) or _NAMED_HEADINGS.match(text) or styled):
        if sum(c.isdigit() for c in text) > 0.4 * len(text):
            return None
        if _HEADING_NUM.match(text) and re.search(r"[A-Za-z)][\s.]+\d{1,3}$", text):
            return None  # a table-of-contents line: "2 Tokenizer & Model 3"
        return text
    return None


def _split_heading(b: PBlock, body_size: float) -> list[PBlock]:
    """Split a block whose first line(s) form a heading and the rest a paragraph."""
    n = 0
    for ln in b.lines[:3]:
        if ln.bold or ln.size >= body_size + 0.9:
            n += 1
        else:
            break
    if 0 < n < len(b.lines):
        head = PBlock(b.lines[:n])
        if _heading_text(head, body_size):
            return [head, PBlock(b.lines[n:])]
    return [b]


def _label_span(ln: Line, m: "re.Match") -> bool:
    """The caption label is alone on its line, or a span of its own followed by a capitalised
    word ("Table 1" + "Evaluation results ...")."""
    rest = ln.text[m.end():].lstrip()
    if not rest:
        return True
    return bool(ln.spans) and ln.spans[0][2].strip() == m.group(0).strip() and rest[:1].isupper()


def _split_captions(b: PBlock) -> list[PBlock]:
    """Split a block at a caption line inside it ("...table rows" + "Table 4: ..."): PyMuPDF
    often files a caption set below a table into the table's own block."""
    for k in range(1, len(b.lines)):
        m = _CAPTION.match(b.lines[k].text)
        if m and m.group("punct") and b.lines[k].x0 <= b.x0 + 40:
            return [PBlock(b.lines[:k])] + _split_captions(PBlock(b.lines[k:]))
    return [b]


def _order(blocks: list[PBlock], width: float) -> list[PBlock]:
    """Reading order: full-width blocks cut bands; in each band, left column then right."""
    mid = width / 2
    left = [b for b in blocks if b.x1 <= mid + 12]
    right = [b for b in blocks if b.x0 >= mid - 12 and b not in left]
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


# ----------------------------------------------------------------------------- objects


def _xrange(cap: PBlock, width: float, two_col: bool) -> tuple[float, float]:
    mid = width / 2
    if not two_col or (cap.x0 < mid - 12 and cap.x1 > mid + 12):
        return 0.0, width
    return (0.0, mid + 6) if cap.x1 <= mid + 12 else (mid - 6, width)


def _overlaps(b: PBlock, xr: tuple[float, float]) -> bool:
    return min(b.x1, xr[1]) - max(b.x0, xr[0]) > 0.3 * (b.x1 - b.x0)


def _grow(cap: PBlock, blocks: list[PBlock], xr, body_size: float, down: bool, max_gap: float = 36.0) -> list[PBlock]:
    """Non-prose blocks next to a caption, below (``down``) or above it, within ``xr``."""
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
        if _is_prose(b) or _CAPTION.match(first):
            break
        head = _heading_text(b, body_size)
        if head:
            # a bold group label inside a table ("English", "Coding") is followed by more rows
            nxt = cands[k + 1] if k + 1 < len(cands) else None
            inner = nxt is not None and not _is_prose(nxt) and not _CAPTION.match(nxt.lines[0].text)
            if _HEADING_NUM.match(head) or _NAMED_HEADINGS.match(head):
                break
            if not inner:
                if not down and region and gap <= 12:
                    region.append(b)  # the bold header row on top of a table captioned below
                break
        region.append(b)
        edge = max(edge, b.y1) if down else min(edge, b.y0)
    return region


def _absorb_caption_tail(cap: PBlock, blocks: list[PBlock], xr) -> PBlock:
    """A caption that PyMuPDF split into several blocks: merge the blocks that follow it with
    less than half a line of gap (a paragraph after a caption sits further away)."""
    lines = list(cap.lines)
    h = (cap.lines[-1].y1 - cap.lines[-1].y0) or 8.0
    while True:
        bottom = max(ln.y1 for ln in lines)
        nxt = [b for b in blocks if not b.consumed and _overlaps(b, xr) and 0 <= b.y0 - bottom < 0.5 * h]
        if len(nxt) != 1 or _CAPTION.match(nxt[0].lines[0].text):
            break
        nxt[0].consumed = True
        lines.extend(nxt[0].lines)
    return PBlock(lines, consumed=True) if len(lines) > len(cap.lines) else cap


def _rows(words: list[tuple], rect: "pymupdf.Rect") -> list[str]:
    """Rebuild table rows from the words inside ``rect``: rows by height, cells by gaps."""
    inside = [w for w in words if rect.contains(pymupdf.Point((w[0] + w[2]) / 2, (w[1] + w[3]) / 2))]
    if not inside:
        return []
    heights = [w[3] - w[1] for w in inside]
    h = statistics.median(heights) or 8.0
    inside.sort(key=lambda w: ((w[1] + w[3]) / 2, w[0]))
    rows: list[list[tuple]] = []
    for w in inside:
        yc = (w[1] + w[3]) / 2
        if rows and abs(yc - statistics.fmean((r[1] + r[3]) / 2 for r in rows[-1])) <= 0.45 * h:
            rows[-1].append(w)
        else:
            rows.append([w])
    out = []
    for row in rows:
        row.sort(key=lambda w: w[0])
        parts = [row[0][4]]
        for prev, w in zip(row, row[1:]):
            parts.append((" | " if w[0] - prev[2] > 0.6 * h else " ") + w[4])
        out.append(repair_chars("".join(parts)))
    return out


def _object_id(kind: str, num: str) -> str:
    label = {"tab": "Table", "fig": "Figure", "alg": "Algorithm"}[kind[:3].lower()]
    if re.fullmatch(r"[IVX]+", num):
        num = str(_roman(num))
    return f"{label} {num.replace('.', '')}"


# ----------------------------------------------------------------------------- the parser


class PyMuPDFParser:
    """Parse a PDF with PyMuPDF (see the module docstring for the method).

    ``image_dir``: folder where PNG crops of table and figure regions are written (None: no
    crops); ``image_ref``: the prefix stored in ``Block.image`` (relative to the corpus folder);
    ``dpi``: crop resolution.
    """

    name = "pymupdf"

    def __init__(self, image_dir: Optional[Path] = None, image_ref: str = "", dpi: int = 110) -> None:
        self.image_dir = image_dir
        self.image_ref = image_ref
        self.dpi = dpi

    # -- opening ---------------------------------------------------------------------------
    @staticmethod
    def open(path: Path) -> "pymupdf.Document":
        """Open ``path`` or raise :class:`BadInputError` with a one-line reason and fix."""
        path = Path(path)
        size = path.stat().st_size
        if size == 0:
            raise BadInputError(f"{path.name}: empty file (0 bytes): re-download or remove it")
        with path.open("rb") as fh:
            head = fh.read(1024)
            fh.seek(max(0, size - 2048))
            tail = fh.read()
        if b"%PDF-" not in head:
            raise BadInputError(f"{path.name}: not a PDF (no %PDF header): convert it to PDF or remove it")
        try:
            doc = pymupdf.open(path)
        except Exception as exc:  # PyMuPDF raises several types for broken files
            raise BadInputError(f"{path.name}: unreadable PDF ({exc}): re-download it") from None
        if doc.needs_pass:
            raise BadInputError(f"{path.name}: encrypted PDF: decrypt it first (e.g. qpdf --decrypt)")
        if b"%%EOF" not in tail and doc.is_repaired:
            raise BadInputError(f"{path.name}: truncated PDF (no end-of-file marker): re-download it")
        if doc.page_count == 0:
            raise BadInputError(f"{path.name}: PDF has no pages: re-download it")
        return doc

    # -- main ------------------------------------------------------------------------------
    def parse(self, path: Path, paper_id: str) -> ParsedDocument:
        """Parse one PDF.

        Returns a ParsedDocument with 1-based physical pages. Raises :class:`BadInputError` for
        files that cannot be ingested (see :meth:`open`), and for PDFs with no text layer.
        """
        doc = self.open(path)
        try:
            return self._parse(doc, Path(path), paper_id)
        finally:
            doc.close()

    def _parse(self, doc, path: Path, paper_id: str) -> ParsedDocument:
        n_pages = doc.page_count
        pages = [_read_page(doc[i]) for i in range(n_pages)]
        n_chars = sum(len(ln.text) for p in pages for b in p for ln in b)
        if n_chars < 50 * n_pages and n_chars < 500:
            raise BadInputError(
                f"{path.name}: no text layer (scanned or image-only): run OCR first (e.g. ocrmypdf) "
                "or use --parser mineru"
            )
        sizes: Counter = Counter()
        for p in pages:
            for b in p:
                for ln in b:
                    sizes[ln.size] += len(ln.text)
        body_size = sizes.most_common(1)[0][0]
        pages = self._drop_margins(doc, pages, body_size)
        out = ParsedDocument(n_pages=n_pages)
        self._seen_objects: set[str] = set()
        self._front_matter(doc, pages[0], body_size, out)
        section_state = {"in_refs": False, "done_refs": False, "ref_lines": []}
        for pno, raw_blocks in enumerate(pages, start=1):
            page = doc[pno - 1]
            blocks = [PBlock(b) for b in raw_blocks]
            blocks = [s for b in blocks for s in _split_heading(b, body_size)]
            blocks = [s for b in blocks for s in _split_captions(b)]
            width = page.rect.width
            ordered = _order(blocks, width)
            two_col = len([b for b in blocks if b.x1 <= width / 2 + 12]) >= 2 and len(
                [b for b in blocks if b.x0 >= width / 2 - 12]
            ) >= 2
            section_state["width"] = width
            objects = self._objects(page, pno, ordered, body_size, two_col, paper_id, out)
            self._flow(pno, ordered, objects, body_size, section_state, out)
        out.references = _split_references(section_state["ref_lines"])
        if not out.references:
            out.warnings.append(f"{paper_id}: no reference list found")
        return out

    # -- headers and footers ---------------------------------------------------------------
    def _drop_margins(self, doc, pages: list[list[list[Line]]], body_size: float) -> list[list[list[Line]]]:
        n = len(pages)
        tops, bottoms = [], []
        for p in pages:
            body = [ln for b in p for ln in b if abs(ln.size - body_size) < 0.6 and len(ln.text) > 20]
            if body:
                tops.append(min(ln.y0 for ln in body))
                bottoms.append(max(ln.y1 for ln in body))
        top = sorted(tops)[max(0, len(tops) // 10)] if tops else 0
        bottom = sorted(bottoms)[min(len(bottoms) - 1, len(bottoms) * 9 // 10)] if bottoms else 1e9
        height = doc[0].rect.height
        counts: Counter = Counter()
        for p in pages:
            keys = {
                _margin_key(ln.text)
                for b in p
                for ln in b
                if ln.y1 < 0.12 * height or ln.y0 > 0.9 * height
            }
            counts.update(keys)
        repeat = max(3, int(0.3 * n)) if n >= 4 else 2
        cleaned = []
        for pi, p in enumerate(pages):
            page_blocks = []
            for b in p:
                keep = []
                for ln in b:
                    margin = ln.y1 < 0.12 * height or ln.y0 > 0.9 * height
                    outside = (ln.y1 < top - 1 or ln.y0 > bottom + 1) and pi > 0 or (
                        n == 1 and (ln.y1 < top - 1 or ln.y0 > bottom + 1)
                    )
                    if margin and (
                        counts[_margin_key(ln.text)] >= repeat
                        or re.fullmatch(r"(page\s*)?[\divxlc]{1,4}(\s*(of|/)\s*\d+)?", ln.text.lower())
                    ):
                        continue
                    if outside and margin:
                        continue
                    keep.append(ln)
                if keep:
                    page_blocks.append(keep)
            cleaned.append(page_blocks)
        return cleaned

    # -- page 1 ----------------------------------------------------------------------------
    def _front_matter(self, doc, first: list[list[Line]], body_size: float, out: ParsedDocument) -> None:
        meta = doc.metadata or {}
        height = doc[0].rect.height
        lines = [ln for b in first for ln in b if ln.y0 < 0.45 * height]
        if lines:
            big = max(ln.size for ln in lines)
            title_lines = [ln for ln in lines if ln.size >= big - 0.5 and len(ln.text) > 1]
            title_lines.sort(key=lambda ln: (ln.y0, ln.x0))
            # keep the first group of adjacent big lines
            group = [title_lines[0]]
            for ln in title_lines[1:]:
                if ln.y0 - group[-1].y1 < 1.2 * ln.size:
                    group.append(ln)
            title = join_lines([ln.text for ln in group])
            if big >= body_size + 1.5 and 5 <= len(title) <= 300:
                out.title = title
        if not out.title and (meta.get("title") or "").strip():
            out.title = clean(meta["title"])
        # abstract: block(s) after an "Abstract" label up to the next heading
        blocks = [PBlock(b) for b in first]
        ordered = _order(blocks, doc[0].rect.width)
        abstract: list[str] = []
        abs_size = body_size
        state = 0
        for b in ordered:
            text = b.text
            if state == 0:
                m = re.match(r"^\s*a\s?b\s?s\s?t\s?r\s?a\s?c\s?t\s*[.:\u2014\u2013-]?\s*", text, re.I)
                if m:
                    b.consumed = True
                    rest = text[m.end():].strip()
                    if rest:
                        abstract.append(rest)
                    state = 1
            elif state == 1:
                if _heading_text(b, body_size) or _CAPTION.match(text) or re.match(r"^(1\.?|I\.)\s+[A-Z]", text):
                    break
                if len(text) < 30 and not abstract:
                    continue
                size = statistics.median(ln.size for ln in b.lines)
                if abstract and (size < abs_size - 0.9 or re.match(r"^[*\u2217\u2020\u2021\d]\s*\S", text)):
                    continue  # a footnote ("*Equal contribution", "31st Conference ...")
                if not abstract:
                    abs_size = size
                abstract.append(text)
                b.consumed = True
                if sum(len(a) for a in abstract) > 2500:
                    break
        out.abstract = " ".join(abstract).strip()
        labels = [b.y0 for b in ordered if b.consumed]
        self._front_bottom = min(labels) if labels else 0.0
        if out.abstract:
            self._abstract_keys = {b.text for b in ordered if b.consumed}
        else:
            self._abstract_keys = set()
        page1 = " ".join(ln.text for b in first for ln in b)
        out.venue, out.year = venue_year_from_text(doc[0].get_text())
        out.authors = _authors_after_title(first, out.title, page1)

    # -- objects ---------------------------------------------------------------------------
    def _objects(self, page, pno: int, ordered: list[PBlock], body_size: float, two_col: bool,
                 paper_id: str, out: ParsedDocument) -> dict[int, Block]:
        """Tables, figures, algorithms and equations of one page, keyed by the index of the
        block where they appear in reading order; consumed blocks are marked."""
        found: dict[int, Block] = {}
        seen = self._seen_objects
        words = None
        width = page.rect.width
        for i, cap in enumerate(ordered):
            first = cap.lines[0].text
            m = _CAPTION.match(first)
            if not m or cap.consumed:
                continue
            kind = m.group("kind")[:3].lower()
            # "Table 1 shows ..." is a sentence, not a caption: require punctuation, a bold line,
            # or the label set as a span of its own ("Table 1" + "Evaluation results ...")
            if not m.group("punct") and not cap.lines[0].bold and not _label_span(cap.lines[0], m):
                continue
            oid = _object_id(kind, m.group("num"))
            if oid in seen and _is_prose(cap):
                continue  # "Table 4. On average, ..." in body text after the real Table 4
            seen.add(oid)
            if _is_prose(cap) and len(cap.text) > 900 and kind != "fig":
                continue
            if words is None:
                words = page.get_text("words", flags=_FLAGS)
            xr = _xrange(cap, width, two_col)
            cap.consumed = True
            cap = _absorb_caption_tail(cap, ordered, xr)
            caption = clean(cap.text)
            if kind == "fig":
                region = _grow(cap, ordered, xr, body_size, down=False)
                top = min([b.y0 for b in region], default=None)
                if top is None:
                    above = [b.y1 for b in ordered if _overlaps(b, xr) and b.y1 <= cap.y0 + 1 and b is not cap]
                    top = max(above, default=page.rect.y0 + 36)
                rect = pymupdf.Rect(xr[0], top, xr[1], cap.y1)
                labels = [ln.text for b in region for ln in b.lines]
                for b in region:
                    b.consumed = True
                body = " ".join(labels)[:600]
                found[i] = Block("figure", pno, body, oid, caption, self._crop(page, rect, paper_id, pno, oid))
            else:
                region = _grow(cap, ordered, xr, body_size, down=True)
                if kind == "tab":  # the caption may sit below its table: take the closer side
                    above = _grow(cap, ordered, xr, body_size, down=False)
                    if above and (not region or cap.y0 - above[0].y1 < region[0].y0 - cap.y1):
                        region = above
                for b in region:
                    b.consumed = True
                if region:
                    rect = pymupdf.Rect(min(b.x0 for b in region) - 1, min(b.y0 for b in region) - 1,
                                        max(b.x1 for b in region) + 1, max(b.y1 for b in region) + 1)
                    if kind == "alg":
                        body = "\n".join(ln.text for b in region for ln in b.lines)
                    else:
                        body = "\n".join(_rows(words, rect))
                    crop = rect | cap_rect(cap)
                else:  # no grid found: caption + nearby text
                    nxt = [b.text for b in ordered[i + 1 : i + 3] if not b.consumed]
                    body = " ".join(nxt)[:600]
                    crop = cap_rect(cap)
                    what = "algorithm body" if kind == "alg" else "table grid"
                    out.warnings.append(f"{paper_id} p{pno}: {oid}: no {what} found, kept caption + nearby text")
                found[i] = Block("algorithm" if kind == "alg" else "table", pno, body, oid, caption,
                                 self._crop(page, crop, paper_id, pno, oid))
        for i, eq in self._equations(ordered, width, two_col):
            found.setdefault(i, eq)
            found[i].page = pno
        return found

    def _equations(self, ordered: list[PBlock], width: float, two_col: bool):
        """Numbered display equations: a right-aligned "(N)" line and its non-prose band."""
        lines = [(bi, ln) for bi, b in enumerate(ordered) for ln in b.lines]
        for bi, ln in lines:
            m = _EQNUM.match(ln.text.strip())
            inline = None
            if not m and ln.spans:
                last = ln.spans[-1]
                mm = _EQNUM.match(last[2].strip())
                if mm and len(ln.spans) > 1 and last[0] - ln.spans[-2][1] > 12:
                    m, inline = mm, ln.text[: ln.text.rfind("(")].strip()
            if not m:
                continue
            block = ordered[bi]
            if _is_prose(block) and inline is None:
                continue
            xr = (0.0, width) if not two_col else ((0.0, width / 2 + 6) if ln.x1 <= width / 2 + 12 else (width / 2 - 6, width))
            band0, band1 = ln.y0 - 14, ln.y1 + 14
            parts = []
            changed = True
            members: set[int] = set()
            while changed:
                changed = False
                for bj, b in enumerate(ordered):
                    if bj in members or _is_prose(b) or not _overlaps(b, xr):
                        continue
                    if b.y1 >= band0 and b.y0 <= band1 and b.y1 - b.y0 < 80:
                        members.add(bj)
                        band0, band1 = min(band0, b.y0 - 4), max(band1, b.y1 + 4)
                        changed = True
            frag = [l2 for bj in sorted(members) for l2 in ordered[bj].lines if l2 is not ln]
            frag.sort(key=lambda l2: (round(l2.yc / 4), l2.x0))
            parts = [l2.text for l2 in frag if not _EQNUM.match(l2.text.strip())]
            if inline:
                parts.insert(0, inline)
            for bj in members:
                ordered[bj].consumed = True
            text = " ".join(parts).strip() or ln.text
            yield min(members | {bi}), Block("equation", 0, text[:1500], f"Equation {m.group(1)}")

    def _crop(self, page, rect, paper_id: str, pno: int, oid: str) -> Optional[str]:
        if self.image_dir is None:
            return None
        return save_crop(page, rect, self.image_dir, self.image_ref, f"p{pno:03d}-{oid}", self.dpi)

    # -- text flow -------------------------------------------------------------------------
    def _flow(self, pno: int, ordered: list[PBlock], objects: dict[int, Block], body_size: float,
              st: dict, out: ParsedDocument) -> None:
        for i, b in enumerate(ordered):
            if i in objects:
                out.blocks.append(objects[i])
            if b.consumed:
                continue
            text = b.text
            if pno == 1 and (text in self._abstract_keys or (out.title and clean(text) == out.title)):
                continue
            if pno == 1 and b.y1 <= self._front_bottom and not _is_prose(b):
                continue  # title, authors, affiliations above the abstract
            head = _heading_text(b, body_size)
            if st["in_refs"]:
                if head and not _REFS_HEADING.match(head) and (
                    _APPENDIX_HEADING.match(head) or (not _YEAR.search(head) and len(head) < 80)
                ):
                    st["in_refs"], st["done_refs"] = False, True
                elif head and _REFS_HEADING.match(head):
                    continue  # a repeated "References" header
                else:
                    col = int(b.x0 >= st["width"] / 2 - 12)
                    st["ref_lines"].extend((pno, col, ln) for ln in b.lines)
                    continue
            if head and _REFS_HEADING.match(head) and not st["done_refs"]:
                st["in_refs"] = True
                out.blocks.append(Block("heading", pno, "References", level=1))
                continue
            if head:
                out.blocks.append(Block("heading", pno, clean(head), level=1))
                continue
            if pno == 1 and out.title and not _is_prose(b) and len(text) < 300 and not out.blocks:
                continue  # author / affiliation lines under the title
            if _display_math(b, st["width"]):
                out.blocks.append(Block("equation", pno, clean(text)))  # unnumbered display equation
                continue
            out.blocks.append(Block("paragraph", pno, clean(text)))


_MATH = re.compile(r"[=\u2211\u220f\u222b\u221a\u2264\u2265\u2248\u00b7\u00d7\u2208\u2192]|[\u0391-\u03c9]")


def _display_math(b: PBlock, width: float) -> bool:
    """An unnumbered display equation: a short, indented, non-prose block with math symbols."""
    text = b.text
    if _is_prose(b) or len(text) > 300 or len(text) < 5 or len(b.lines) > 4:
        return False
    return len(_MATH.findall(text)) >= 2 and "=" in text and (b.x1 - b.x0) < 0.45 * width


def save_crop(page, rect, image_dir: Path, image_ref: str, name: str, dpi: int = 110) -> Optional[str]:
    """Render ``rect`` (PDF points) of ``page`` to ``image_dir/<name>.png`` (name lower-cased,
    spaces to dashes); returns ``image_ref + file name``, or None for an empty or tiny region.
    An existing file is kept (re-runs do not re-render)."""
    rect = pymupdf.Rect(rect) & page.rect
    if rect.is_empty or rect.width < 8 or rect.height < 8:
        return None
    fname = name.lower().replace(" ", "-") + ".png"
    target = Path(image_dir) / fname
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        page.get_pixmap(clip=rect, dpi=dpi).save(target)
    return f"{image_ref}{fname}"


def cap_rect(b: PBlock) -> "pymupdf.Rect":
    return pymupdf.Rect(b.x0 - 1, b.y0 - 1, b.x1 + 1, b.y1 + 1)


def _authors_after_title(first: list[list[Line]], title: str, page1: str) -> list[str]:
    """Best-effort author names from the lines right under the title on page 1."""
    if not title:
        return []
    lines = sorted((ln for b in first for ln in b), key=lambda ln: (ln.y0, ln.x0))
    names: list[str] = []
    after = False
    for ln in lines:
        if ln.text and (ln.text in title or title.endswith(ln.text[-20:])) and len(ln.text) > 3:
            after = True  # still inside the title
            continue
        if not after:
            continue
        if re.match(r"^\s*(abstract|\d\s+introduction)", ln.text, re.I) or len(names) >= 30:
            break
        for part in re.split(r",|\band\b|\u00b7|;|[\d*\u2020\u2021\u00a7\u00b6\u2217#\u2022]+|\s{2,}", ln.text):
            part = part.strip()
            if re.fullmatch(r"[A-Z][\w'\-.]+(?:\s+[A-Z][\w'\-.]*){1,3}", part) and "@" not in part:
                if not re.search(r"universit|institut|research|lab|school|college|department|google|microsoft|"
                                 r"inc\b|ai\b|language|model|learning|network", part, re.I):
                    names.append(part)
        if len(ln.text) > 200:
            break
    return names[:30]


# ----------------------------------------------------------------------------- references


def _split_references(ref_lines: list[tuple[int, int, Line]]) -> list[RawReference]:
    """Split the lines of a reference section into entries.

    Numbered lists ("[12]" or "12.") split at the numbers and stop when numbering breaks
    (author or affiliation lists after the references are not references); other lists split at
    hanging indents, else at lines that start a new "Surname, ..." entry after a line that ends
    an entry.
    """
    if not ref_lines:
        return []
    texts = [ln.text for _, _, ln in ref_lines]
    bracket = sum(1 for t in texts if _REF_NUM.match(t))
    dotnum = sum(1 for t in texts if _REF_DOTNUM.match(t))
    entries: list[RawReference] = []
    head = texts[:3]
    numbered = (bracket >= 3 and any(_REF_NUM.match(t) for t in head)) or (
        dotnum >= 5 and any(_REF_DOTNUM.match(t) for t in head)
    )
    if numbered:
        pat = _REF_NUM if bracket >= dotnum else _REF_DOTNUM
        expected = None
        for pno, _, ln in ref_lines:
            m = pat.match(ln.text)
            if m:
                num = int(m.group(1))
                if expected is not None and num != expected and entries:
                    if num < expected or num > expected + 3:
                        break  # numbering broke: the list is over
                entries.append(RawReference(pno, ln.text[m.end():], num))
                expected = num + 1
            elif entries:
                entries[-1].raw = join_lines([entries[-1].raw, ln.text])
        if entries and len(entries[-1].raw) > 1200:
            entries[-1].raw = _trim_last(entries[-1].raw)  # text after the list ran into it
        return [e for e in entries if _looks_like_reference(e.raw, max_len=20000)]
    # author-year: hanging indent per column (the entry start is the column's most common
    # left edge; continuation lines sit a few points to the right of it)
    by_col: dict[tuple[int, int], Counter] = {}
    for pno, col, ln in ref_lines:
        by_col.setdefault((pno, col), Counter())[round(ln.x0)] += 1
    lefts: dict[tuple[int, int], Optional[float]] = {}
    for k, xs in by_col.items():
        frequent = sorted(x for x, n in xs.items() if n >= 2) or sorted(xs)
        left = frequent[0]
        indented = sum(n for x, n in xs.items() if left + 3 <= x <= left + 30) >= 2
        lefts[k] = left if indented else None
    prev_end = True
    for pno, col, ln in ref_lines:
        if len(ln.text) < 60 and _APPENDIX_HEADING.match(ln.text) and ln.bold:
            break  # an appendix or checklist heading the block classifier missed
        left = lefts[(pno, col)]
        if left is not None:
            starts = ln.x0 <= left + 1.5
        else:
            starts = prev_end and re.match(r"^[A-Z][\w'\-]+,?\s", ln.text) is not None
        if starts or not entries:
            entries.append(RawReference(pno, ln.text, None))
        else:
            entries[-1].raw = join_lines([entries[-1].raw, ln.text])
        prev_end = ln.text.rstrip().endswith(".")
    out: list[RawReference] = []
    misses = 0
    for e in entries:
        if _looks_like_reference(e.raw):
            out.append(e)
            misses = 0
        elif out:
            misses += 1
            if misses >= 3:  # several non-references in a row: the list is over
                break
    return out


def _looks_like_reference(raw: str, max_len: int = 1500) -> bool:
    return 20 <= len(raw) <= max_len and (_YEAR.search(raw) is not None or "arxiv" in raw.lower())


def _trim_last(raw: str) -> str:
    """The last entry of a numbered list absorbs whatever follows the list (author or
    affiliation lists, appendix text): keep it up to the first sentence end after a year."""
    m = _YEAR.search(raw)
    if m:
        end = re.search(r"\.(\s|$)", raw[m.end():])
        if end:
            return raw[: m.end() + end.start() + 1]
    return raw[:600]
