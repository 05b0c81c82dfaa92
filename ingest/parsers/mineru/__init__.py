"""The ``mineru`` parser: MinerU's output for a PDF -> :class:`ingest.document.ParsedDocument`.

- :mod:`.content_list`: :func:`parse_content_list` reads a MinerU ``content_list.json`` (front
  matter, blocks in reading order, objects, the reference list, warnings);
- :mod:`.reference_list`: the reference list split into entries, one text line at a time;
- :mod:`.parser`: :class:`MinerUParser` finds the content list beside the PDF (or runs the
  ``mineru`` command), reads venue and year from page 1 when MinerU has none, and brings the
  object crops into the corpus folder.
"""

from ingest.parsers.mineru.content_list import parse_content_list
from ingest.parsers.mineru.parser import MinerUParser, find_content_list, run_mineru

__all__ = ["MinerUParser", "find_content_list", "parse_content_list", "run_mineru"]
