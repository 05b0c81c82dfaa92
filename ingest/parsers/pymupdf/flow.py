"""The text flow of one page for the PyMuPDF parser: blocks in reading order -> headings,
paragraphs, unnumbered display equations, the objects found on the page, and the lines of the
reference section (step 6 of the method in :mod:`ingest.parsers.pymupdf`).

On page 1 the front matter (title, authors and affiliations above the abstract, the abstract)
is left out: it forms the title-and-abstract chunk. The reference section starts at a
"References" heading and ends at an appendix heading or another short heading without a year.
"""

from __future__ import annotations

from typing import Optional

from ingest.document import Block, ParsedDocument
from ingest.parsers.pymupdf.front import FrontMatter
from ingest.parsers.pymupdf.layout import (
    APPENDIX_HEADING,
    COLUMN_SLACK,
    REFS_HEADING,
    YEAR,
    display_math,
    heading_text,
    is_prose,
)
from ingest.parsers.pymupdf.pages import PBlock
from ingest.parsers.pymupdf.reference_list import ReferenceSection
from ingest.text import clean

#: A heading shorter than this many characters and without a year ends the reference section.
_REFS_END_HEADING = 80
#: Page-1 blocks under the title shorter than this many characters are author lines.
_AUTHOR_BLOCK_CHARS = 300


def _front_matter_block(b: PBlock, front: FrontMatter, title: str) -> bool:
    """A page-1 block of the front matter: the abstract's blocks, the title again, or a
    non-prose block above the abstract (title, authors, affiliations)."""
    text = b.text
    if text in front.abstract_blocks or (title and clean(text) == title):
        return True
    return b.y1 <= front.bottom and not is_prose(b)


def _in_references(b: PBlock, head: Optional[str], pno: int, width: float, refs: ReferenceSection) -> bool:
    """Inside the reference section: take the block's lines (column by the block's left edge),
    or end the section at an appendix heading or a short heading without a year (then the block
    flows on as text: returns False). A repeated "References" heading is dropped. Returns
    whether the block was used."""
    if head and not REFS_HEADING.match(head) and (
        APPENDIX_HEADING.match(head) or (not YEAR.search(head) and len(head) < _REFS_END_HEADING)
    ):
        refs.active, refs.done = False, True
        return False
    if head and REFS_HEADING.match(head):
        return True  # a repeated "References" header
    col = int(b.x0 >= width / 2 - COLUMN_SLACK)
    refs.lines.extend((pno, col, ln) for ln in b.lines)
    return True


def _text_block(b: PBlock, pno: int, width: float, out: ParsedDocument) -> None:
    """A block of running text: an unnumbered display equation or a paragraph; on page 1,
    author or affiliation lines under the title (before any block) are left out."""
    text = b.text
    if pno == 1 and out.title and not is_prose(b) and len(text) < _AUTHOR_BLOCK_CHARS and not out.blocks:
        return  # author / affiliation lines under the title
    if display_math(b, width):
        out.blocks.append(Block("equation", pno, clean(text)))  # unnumbered display equation
        return
    out.blocks.append(Block("paragraph", pno, clean(text)))


def page_flow(pno: int, ordered: list[PBlock], objects: dict[int, Block], body_size: float, width: float,
              front: FrontMatter, refs: ReferenceSection, out: ParsedDocument) -> None:
    """Append the blocks of page ``pno`` (1-based, ``width`` points wide) to ``out.blocks`` in
    reading order: each object before the block at its index in ``objects``, then headings
    (level 1), paragraphs and display equations of the blocks not consumed; the reference
    section's lines go to ``refs.lines``. ``body_size``: the body font (points)."""
    for i, b in enumerate(ordered):
        if i in objects:
            out.blocks.append(objects[i])
        if b.consumed:
            continue
        if pno == 1 and _front_matter_block(b, front, out.title):
            continue
        head = heading_text(b, body_size)
        if refs.active and _in_references(b, head, pno, width, refs):
            continue
        if head and REFS_HEADING.match(head) and not refs.done:
            refs.active = True
            out.blocks.append(Block("heading", pno, "References", level=1))
            continue
        if head:
            out.blocks.append(Block("heading", pno, clean(head), level=1))
            continue
        _text_block(b, pno, width, out)
