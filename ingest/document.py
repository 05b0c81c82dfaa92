"""The parser-neutral intermediate form: what every parser produces and the chunker consumes.

A parser (PyMuPDF, MinerU adapter) turns one file into a :class:`ParsedDocument`: page-1
metadata, a flat list of :class:`Block` in reading order, and the raw reference-list entries.
Everything after that (chunking, reference parsing, resolution) is shared, so the two parsers
differ only in how they read their input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

from graph.errors import Lit3rError

BlockKind = Literal["heading", "paragraph", "table", "figure", "equation", "algorithm"]


class BadInputError(Lit3rError, ValueError):
    """A file that cannot be ingested (encrypted, truncated, empty, not a PDF, no text layer).

    The message is one line that says what is wrong and what to do; the corpus runner reports
    it and goes on with the other files.
    """


@dataclass
class Block:
    """One unit of content in reading order.

    - ``kind``: heading, paragraph, table, figure, equation or algorithm.
    - ``page``: 1-based physical page.
    - ``text``: for tables, rows as lines with cells separated by `` | ``; for figures, caption
      plus labels read inside the figure; for equations, the equation text.
    - ``object_id``: "Table 4", "Figure 2", "Equation 6", "Algorithm 1" or None.
    - ``caption``: caption text of a table/figure/algorithm (may be empty).
    - ``image``: path of a PNG crop relative to the corpus folder, or None.
    - ``level``: heading level (1 = top) for headings, else 0.
    - ``region``: the object's box as page fractions ``(x0, y0, x1, y1)`` in 0..1, when the
      parser knows it but wrote no image (MinerU output without its images folder); the corpus
      builder then crops the region from the PDF.
    """

    kind: BlockKind
    page: int
    text: str
    object_id: Optional[str] = None
    caption: str = ""
    image: Optional[str] = None
    level: int = 0
    region: Optional[tuple[float, float, float, float]] = None


@dataclass
class RawReference:
    """A reference-list entry before parsing: 1-based physical ``page`` where it starts, the
    ``raw`` text (normalised whitespace), and the printed ``number`` when the list is numbered."""

    page: int
    raw: str
    number: Optional[int] = None


@dataclass
class ParsedDocument:
    """A parsed paper: metadata read from the document, blocks in reading order (title and
    abstract excluded: they form the title-and-abstract chunk), raw references, and warnings
    (one line each) that the corpus report shows."""

    n_pages: int
    title: str = ""
    authors: list[str] = field(default_factory=list)
    abstract: str = ""
    venue: Optional[str] = None
    year: Optional[int] = None
    blocks: list[Block] = field(default_factory=list)
    references: list[RawReference] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
