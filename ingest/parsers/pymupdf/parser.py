"""The PyMuPDF parser: one PDF -> :class:`ingest.document.ParsedDocument` (the method is in
the :mod:`ingest.parsers.pymupdf` package doc).

:func:`open_pdf` checks a file before parsing (empty, not a PDF, unreadable, encrypted,
truncated, no pages); :class:`PyMuPDFParser` runs the steps of the other modules of this
package page by page.
"""

from __future__ import annotations

import mmap
import re
from pathlib import Path
from typing import Optional

import pymupdf

from ingest.document import BadInputError, ParsedDocument
from ingest.parsers.base import CROP_DPI
from ingest.parsers.pymupdf.crops import Crops
from ingest.parsers.pymupdf.flow import page_flow
from ingest.parsers.pymupdf.front import read_front_matter
from ingest.parsers.pymupdf.layout import is_two_column, order, split_captions, split_heading
from ingest.parsers.pymupdf.objects import PageObjects, find_objects
from ingest.parsers.pymupdf.pages import PageLines, PBlock, body_font_size, drop_margins, read_page, text_chars
from ingest.parsers.pymupdf.reference_list import ReferenceSection, split_references

#: Bytes read at the start of a file for the "%PDF-" header, and at its end for "%%EOF".
_HEAD_BYTES, _TAIL_BYTES = 1024, 2048
#: No text layer: fewer than this many characters a page and in all.
_MIN_CHARS_PER_PAGE, _MIN_CHARS = 50, 500


def open_pdf(path: Path) -> "pymupdf.Document":
    """Open ``path`` as a pymupdf.Document (the caller closes it), or raise
    :class:`BadInputError` with a one-line reason and fix: empty file, no "%PDF" header,
    unreadable, encrypted, truncated (repaired on opening and :func:`_cut_short`), no pages. Bytes after
    the last ``%%EOF`` (common in the wild) are no reason to refuse a file PyMuPDF opens; a file
    whose name is not UTF-8 is read from its bytes."""
    path = Path(path)
    size = path.stat().st_size
    if size == 0:
        raise BadInputError(f"{path.name}: empty file (0 bytes): re-download or remove it")
    with path.open("rb") as fh:
        head = fh.read(_HEAD_BYTES)
        fh.seek(max(0, size - _TAIL_BYTES))
        tail = fh.read()
        cut = b"%%EOF" not in tail and _cut_short(fh)
    if b"%PDF-" not in head:
        raise BadInputError(f"{path.name}: not a PDF (no %PDF header): convert it to PDF or remove it")
    try:
        doc = pymupdf.open(path) if _utf8_name(path) else pymupdf.open(stream=path.read_bytes(), filetype="pdf")
    except Exception as exc:  # PyMuPDF raises several types for broken files
        raise BadInputError(f"{path.name}: unreadable PDF ({exc}): re-download it") from None
    if doc.needs_pass:
        raise BadInputError(f"{path.name}: encrypted PDF: decrypt it first (e.g. qpdf --decrypt)")
    if cut and doc.is_repaired:
        raise BadInputError(f"{path.name}: truncated PDF (no end-of-file marker): re-download it")
    if doc.page_count == 0:
        raise BadInputError(f"{path.name}: PDF has no pages: re-download it")
    return doc


def _utf8_name(path: Path) -> bool:
    """Can PyMuPDF open ``path`` by name? A name that is not UTF-8 (its bytes kept as surrogates
    by Python) cannot be passed to MuPDF: such a file is opened from its bytes instead."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: PDF object syntax ("12 0 obj", "endobj", "xref", "trailer"): after the last %%EOF, a sign of an
#: incremental update cut short rather than of trailing bytes.
_OBJECT_SYNTAX = re.compile(rb"\d+\s+\d+\s+obj\b|\bendobj\b|\bstartxref\b|\btrailer\b")


def _cut_short(fh) -> bool:
    """Does the open PDF file ``fh`` look cut short: no ``%%EOF`` at all, or PDF object syntax
    after its last one (a download that stopped inside an update)? Trailing bytes that are not
    PDF syntax (padding, a signature, a web page's tail) are not a cut."""
    fh.seek(0)
    with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        last = data.rfind(b"%%EOF")
        return last < 0 or _OBJECT_SYNTAX.search(data, last + 5) is not None


def page_blocks(raw_blocks: PageLines, body_size: float) -> list[PBlock]:
    """A page's blocks of lines as PBlocks, with headings split off their paragraphs and
    captions split off the blocks they were merged into (not yet in reading order)."""
    blocks = [PBlock(b) for b in raw_blocks]
    blocks = [s for b in blocks for s in split_heading(b, body_size)]
    return [s for b in blocks for s in split_captions(b)]


class PyMuPDFParser:
    """Parse a PDF with PyMuPDF (see the :mod:`ingest.parsers.pymupdf` doc for the method);
    an :class:`ingest.parsers.base.Parser`.

    ``image_dir``: folder where PNG crops of table and figure regions are written (None: no
    crops); ``image_ref``: the prefix stored in ``Block.image`` (relative to the corpus folder);
    ``dpi``: crop resolution.
    """

    name = "pymupdf"

    def __init__(self, image_dir: Optional[Path] = None, image_ref: str = "", dpi: int = CROP_DPI) -> None:
        self.image_dir = image_dir
        self.image_ref = image_ref
        self.dpi = dpi

    open = staticmethod(open_pdf)

    def parse(self, path: Path, paper_id: str) -> ParsedDocument:
        """Parse one PDF.

        Returns a ParsedDocument with 1-based physical pages. Raises :class:`BadInputError` for
        files that cannot be ingested (see :func:`open_pdf`), and for PDFs with no text layer.
        """
        doc = open_pdf(path)
        try:
            return self._parse(doc, Path(path), paper_id)
        finally:
            doc.close()

    def _parse(self, doc, path: Path, paper_id: str) -> ParsedDocument:
        """The steps on an open pymupdf.Document: read pages, check the text layer, drop margins,
        read the front matter, then per page split and order blocks, find objects and run the
        text flow; last, split the reference section."""
        n_pages = doc.page_count
        pages = [read_page(doc[i]) for i in range(n_pages)]
        n_chars = text_chars(pages)
        if n_chars < _MIN_CHARS_PER_PAGE * n_pages and n_chars < _MIN_CHARS:
            raise BadInputError(
                f"{path.name}: no text layer (scanned or image-only): run OCR first (e.g. ocrmypdf) "
                "or use --parser mineru"
            )
        body_size = body_font_size(pages)
        pages = drop_margins(pages, body_size, doc[0].rect.height)
        out = ParsedDocument(n_pages=n_pages)
        front = read_front_matter(doc, pages[0], body_size)
        out.title, out.abstract, out.authors = front.title, front.abstract, front.authors
        out.venue, out.year = front.venue, front.year
        crops = Crops(self.image_dir, self.image_ref, self.dpi)
        seen: set[str] = set()
        refs = ReferenceSection()
        for pno, raw_blocks in enumerate(pages, start=1):
            page = doc[pno - 1]
            blocks = page_blocks(raw_blocks, body_size)
            width = page.rect.width
            ordered = order(blocks, width)
            pg = PageObjects(page, pno, ordered, body_size, is_two_column(blocks, width), paper_id, crops,
                             out.warnings)
            objects = find_objects(pg, seen)
            page_flow(pno, ordered, objects, body_size, width, front, refs, out)
        out.references = split_references(refs.lines)
        if not out.references:
            out.warnings.append(f"{paper_id}: no reference list found")
        return out
