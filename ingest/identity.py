"""Paper identity: one paper id names one paper. A file whose paper id (from ``--metadata`` or its
file name) is already held in the corpus folder by another file with other bytes would silently
replace that paper's title, authors, year, chunks and references; it is refused instead, unless
the user says ``--replace``.

What counts as the same paper: the same bytes (sha256), or the same file path (a PDF updated in
place, e.g. a new arXiv version saved over the old one). A paper added from metadata alone
(``parser = "metadata"``) is completed by its PDF, never refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional


def taken_by(journal: Path, pdf: Path, digest: str) -> Optional[str]:
    """The file of the paper stored in the journal entry ``journal`` when that is another paper
    than the PDF ``pdf`` with sha256 ``digest`` (other bytes and another path), else None (no
    entry, a torn one, a metadata-only paper, the same bytes or the same file)."""
    if not journal.is_file():
        return None
    try:
        paper = json.loads(journal.read_text(encoding="utf-8")).get("paper") or {}
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        return None  # a torn entry re-parses anyway
    src = paper.get("source") or {}
    if paper.get("parser") == "metadata" or not src.get("sha256") or src["sha256"] == digest:
        return None
    old = str(src.get("file") or "")
    return None if old == recorded_file(pdf) else old or "an earlier file"


def recorded_file(pdf: object) -> str:
    """The path of ``pdf`` as the corpus records it (``source.file``, the journal's ``file``): a
    byte of the name that is not UTF-8 (a lone surrogate U+DC80-U+DCFF, ``surrogateescape``) is
    written ``\\xNN``, the way ``ls -b`` shows it, so that the record is valid UTF-8 JSON."""
    return "".join(f"\\x{ord(ch) - 0xDC00:02x}" if "\udc80" <= ch <= "\udcff" else ch for ch in str(pdf))


def refusal(pdf: Path, paper_id: str, old_file: str) -> str:
    """The one-line refusal of ``pdf`` whose ``paper_id`` ``old_file`` holds."""
    return (f"{pdf}: paper id {paper_id!r} is already taken by another paper, {old_file} (other content): not "
            f"ingested, the stored paper is kept; give this file its own paper_id in --metadata, or pass --replace "
            f"to replace the stored paper with it")
