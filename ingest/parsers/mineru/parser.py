"""The ``mineru`` parser of :mod:`ingest.parsers`: a PDF and the MinerU output beside it (or
a run of the ``mineru`` command) -> :class:`ingest.document.ParsedDocument`.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

from ingest.document import BadInputError, Block, ParsedDocument, RawReference
from ingest.metadata import venue_year_from_text
from ingest.parsers.base import CROP_DPI
from ingest.parsers.confined import confined
from ingest.parsers.mineru.content_list import parse_content_list
from ingest.parsers.pymupdf import Crops, open_pdf
from ingest.text import normalize_key

#: The key of an entry looked up in the PDF's text: its first characters (normalised) ...
_ENTRY_KEY_CHARS = 40
#: ... when it has at least this many.
_MIN_ENTRY_KEY = 12
_GAPS_TAIL = "entries printed there carry the page of the block that holds them"
_PLACED_TAIL = "entries printed there are placed on the page whose text holds them"


def place_references(refs: list[RawReference], page_texts: list[str]) -> int:
    """Set each entry's ``page`` to the physical page whose text holds the entry's start.

    MinerU moves the text of a list that runs onto the next pages into a block of the first
    page (the later pages keep empty blocks), so an entry's block page can be too early. Each
    entry is looked up (its first :data:`_ENTRY_KEY_CHARS` normalised characters) from the later
    of its block's page and the previous entry's page on; an entry not found (its start split by
    a hyphen or a page break) keeps its page. ``page_texts``: the PDF's text per page (PyMuPDF).
    Returns how many entries moved."""
    texts = [normalize_key(t) for t in page_texts]
    moved, start = 0, 0
    for r in refs:
        key = normalize_key(r.raw)[:_ENTRY_KEY_CHARS]
        if len(key) < _MIN_ENTRY_KEY:
            continue
        lo = max(r.page - 1, start)
        found = next((i for i in range(lo, len(texts)) if key in texts[i]), None)
        if found is None:
            continue
        moved += found + 1 != r.page
        r.page, start = found + 1, found
    return moved


def find_content_list(pdf: Path) -> Optional[Path]:
    """MinerU output beside ``pdf``: ``<stem>_content_list.json``, ``<stem>/auto/<stem>_content_list.json``
    (the MinerU CLI's layout), ``<stem>/content_list.json`` or ``content_list.json`` in the
    PDF's folder (the first that exists), or None."""
    stem = pdf.stem
    for cand in (
        pdf.with_name(f"{stem}_content_list.json"),
        pdf.parent / stem / "auto" / f"{stem}_content_list.json",
        pdf.parent / stem / "content_list.json",
        pdf.parent / "content_list.json",
    ):
        if cand.is_file():
            return cand
    return None


def run_mineru(pdf: Path, work: Path) -> Path:
    """Run the MinerU CLI (``mineru -p PDF -o WORK``) on one PDF; returns its content_list.json
    under ``work``. Raises BadInputError when the command is not installed or fails."""
    exe = shutil.which("mineru")
    if exe is None:
        raise BadInputError(
            f"{pdf.name}: no MinerU output beside it (<stem>_content_list.json or content_list.json) and "
            "the mineru command is not installed: install MinerU with its models, or use --parser pymupdf"
        )
    proc = subprocess.run([exe, "-p", str(pdf), "-o", str(work)], capture_output=True, text=True)
    found = sorted(work.rglob("*content_list.json"))
    if proc.returncode != 0 or not found:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise BadInputError(f"{pdf.name}: mineru failed ({tail[0][:200]}): check its models or use --parser pymupdf")
    return found[0]


class MinerUParser:
    """Parse a PDF from MinerU's output; an :class:`ingest.parsers.base.Parser`.

    The content list is :func:`find_content_list` beside the PDF, else the output of
    :func:`run_mineru` in a new temporary folder. The PDF gives the page count, the venue and
    year when MinerU's output has neither (page-1 text, :func:`ingest.metadata.venue_year_from_text`),
    and the crops of objects whose image MinerU did not leave: ``image_dir``, ``image_ref`` and
    ``dpi`` as for :class:`ingest.parsers.pymupdf.PyMuPDFParser` (MinerU's own crops are copied
    into ``image_dir``). Raises BadInputError for a PDF that does not open
    (:func:`ingest.parsers.pymupdf.open_pdf`), unusable MinerU output, an ``img_path`` that leads
    out of the content list's folder (:mod:`ingest.parsers.confined`), or no output and no MinerU.
    """

    name = "mineru"

    def __init__(self, image_dir: Optional[Path] = None, image_ref: str = "", dpi: int = CROP_DPI) -> None:
        self.crops = Crops(image_dir, image_ref, dpi)

    def parse(self, path: Path, paper_id: str) -> ParsedDocument:
        """Parse the PDF at ``path`` (``paper_id`` is not used: MinerU warnings carry no id)."""
        pdf = Path(path)
        doc = open_pdf(pdf)
        try:
            content = find_content_list(pdf)
            if content is not None:  # beside the PDF, and no link out of its folder
                confined(pdf.parent, content.relative_to(pdf.parent).as_posix(), what="MinerU output",
                         source=pdf.name)
            if content is None:
                content = run_mineru(pdf, Path(tempfile.mkdtemp(prefix="lit3r-mineru-")))
            parsed = parse_content_list(content, n_pages=doc.page_count)
            if parsed.venue is None and parsed.year is None:  # MinerU output has no venue: read page 1
                parsed.venue, parsed.year = venue_year_from_text(doc[0].get_text())
            if place_references(parsed.references, [doc[i].get_text() for i in range(doc.page_count)]):
                parsed.warnings = [w.replace(_GAPS_TAIL, _PLACED_TAIL) for w in parsed.warnings]
            for b in parsed.blocks:
                self._image(b, doc, content.parent, f"{pdf.name}: {content}")
        finally:
            doc.close()
        return parsed

    def _image(self, b: Block, doc, content_dir: Path, source: str = "content_list.json") -> None:
        """Bring MinerU's crop of ``b`` (its ``image``, relative to ``content_dir``) into the
        corpus folder, or crop the block's ``region`` from the PDF; ``b.image`` is None without
        an image folder or when neither exists. Raises BadInputError naming the path when the
        image path leads out of ``content_dir`` (absolute, ``..``, a link out:
        :func:`ingest.parsers.confined.confined`); ``source`` names the content list."""
        src = confined(content_dir, b.image, what="img_path", source=source) if b.image else None
        b.image = None
        img_dir = self.crops.image_dir
        if img_dir is None:
            return
        if src is not None and src.is_file():
            img_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, img_dir / src.name)
            b.image = self.crops.image_ref + src.name
        elif b.region and b.object_id:
            page = doc[b.page - 1]
            w, h = page.rect.width, page.rect.height
            x0, y0, x1, y1 = b.region
            b.image = self.crops.object_crop(page, (x0 * w, y0 * h, x1 * w, y1 * h), b.page, b.object_id)
