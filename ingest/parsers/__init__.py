"""PDF parsers and their registry: a parser name -> the factory that builds it.

- ``pymupdf`` (:mod:`ingest.parsers.pymupdf`): the default, offline parser on PyMuPDF.
- ``mineru`` (:mod:`ingest.parsers.mineru`): reads MinerU's ``content_list.json`` beside each
  PDF (or runs the ``mineru`` command when it is installed).

Every parser follows :class:`ingest.parsers.base.Parser`; callers look one up by name with
:func:`get_parser` and never branch on the name. The factories import their parser on first
use, so that importing the registry does not load PyMuPDF.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from graph.errors import Lit3rError
from ingest.parsers.base import CROP_DPI, Parser, ParserFactory


def _pymupdf(image_dir: Optional[Path] = None, image_ref: str = "", dpi: int = CROP_DPI) -> Parser:
    """The PyMuPDF parser (:class:`ingest.parsers.pymupdf.PyMuPDFParser`)."""
    from ingest.parsers.pymupdf import PyMuPDFParser

    return PyMuPDFParser(image_dir, image_ref, dpi)


def _mineru(image_dir: Optional[Path] = None, image_ref: str = "", dpi: int = CROP_DPI) -> Parser:
    """The MinerU parser (:class:`ingest.parsers.mineru.MinerUParser`)."""
    from ingest.parsers.mineru import MinerUParser

    return MinerUParser(image_dir, image_ref, dpi)


#: Parser name -> factory, in the order the command line lists them (the first is the default).
REGISTRY: dict[str, ParserFactory] = {"pymupdf": _pymupdf, "mineru": _mineru}


class UnknownParserError(Lit3rError, ValueError):
    """A parser name that is not in :data:`REGISTRY`; the message lists the valid names."""


def parser_names() -> tuple[str, ...]:
    """The registered parser names, default first."""
    return tuple(REGISTRY)


def get_parser(name: str) -> ParserFactory:
    """The factory of parser ``name``: call it with the crop options (see
    :class:`ingest.parsers.base.ParserFactory`) to get a :class:`Parser`. Raises
    :class:`UnknownParserError` (a ValueError) naming the valid parsers for an unknown name."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownParserError(f"unknown parser {name!r}: use one of {', '.join(REGISTRY)}") from None


__all__ = ["CROP_DPI", "REGISTRY", "Parser", "ParserFactory", "UnknownParserError", "get_parser", "parser_names"]
