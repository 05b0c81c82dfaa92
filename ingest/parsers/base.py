"""The parser interface: what every PDF parser of :mod:`ingest.parsers` takes and returns.

A parser is built by a :class:`ParserFactory` with the crop options, then parses one PDF at a
time into the parser-neutral :class:`ingest.document.ParsedDocument` that chunking and
reference parsing consume (so that parsers differ only in how they read their input).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Protocol

from ingest.document import ParsedDocument

#: Resolution (dots per inch) of the PNG crops of tables, figures and algorithms.
CROP_DPI = 110


class Parser(Protocol):
    """One PDF -> :class:`ingest.document.ParsedDocument`.

    ``name``: the registry name (also ``Paper.parser``). :meth:`parse` reads the PDF at ``path``
    for the paper ``paper_id`` (used in warnings) and returns a ParsedDocument with 1-based
    physical pages in ``Block.page`` and ``RawReference.page``, ``n_pages`` = the PDF's page
    count, page-1 metadata (title, authors, abstract, venue, year; empty or None when not
    found), blocks in reading order without the title and abstract, the raw reference-list
    entries, and one-line warnings. ``Block.image`` paths are ``image_ref + file name`` of PNG
    crops written under ``image_dir`` (None everywhere when built without ``image_dir``).

    Raises :class:`ingest.document.BadInputError` (a one-line reason and what to do) for a file
    that cannot be ingested: empty, not a PDF, unreadable, encrypted, truncated, no pages, no
    text layer, or missing parser input (MinerU output). Any other exception is a parser bug.
    """

    name: str

    def parse(self, path: Path, paper_id: str) -> ParsedDocument: ...


class ParserFactory(Protocol):
    """Builds a :class:`Parser` from the crop options: ``image_dir`` (folder for PNG crops;
    None: no crops), ``image_ref`` (the prefix stored in ``Block.image``, relative to the
    corpus folder) and ``dpi`` (crop resolution, default :data:`CROP_DPI`)."""

    def __call__(self, image_dir: Optional[Path] = None, image_ref: str = "", dpi: int = CROP_DPI) -> Parser: ...
