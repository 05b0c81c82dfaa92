"""The corpus version: one content hash of a corpus folder's three record files, in ``corpus.json``.

An ingest writes ``OUT/corpus.json`` = ``{"version": "<sha256 hex>"}`` after it rewrote
``papers.jsonl``, ``chunks.jsonl`` and ``references.jsonl`` (and removes it before: a run killed
while writing them leaves no version, never a stale one). The hash is of the lines themselves, so
an ingest that changes nothing keeps the version. A build records the version it was built from
in its index manifest (:mod:`lit3r.index.build`); the readers compare the two
(:func:`lit3r.index.state.stale_index_message`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterable, Optional

from graph.atomic import write_text_atomic

STAMP_NAME = "corpus.json"


def corpus_version(papers: Iterable[str], chunks: Iterable[str], references: Iterable[str]) -> str:
    """sha256 (hex) of the three files' lines (each line, then a newline; a separator between
    the files), as :func:`graph.atomic.write_lines_atomic` writes them."""
    h = hashlib.sha256()
    for lines in (papers, chunks, references):
        for line in lines:
            h.update(line.encode("utf-8"))
            h.update(b"\n")
        h.update(b"\0")
    return h.hexdigest()


def clear_stamp(out_dir: Path) -> None:
    """Remove ``OUT/corpus.json`` (before the record files are rewritten)."""
    (Path(out_dir) / STAMP_NAME).unlink(missing_ok=True)


def write_stamp(out_dir: Path, version: str) -> None:
    """Write ``OUT/corpus.json`` (atomic rename)."""
    write_text_atomic(Path(out_dir) / STAMP_NAME, json.dumps({"version": version}))


def read_version(out_dir: Path) -> Optional[str]:
    """The corpus version of ``out_dir``; None when there is no readable ``corpus.json`` (a corpus
    written by an older version, or an ingest killed while rewriting the record files)."""
    try:
        version = json.loads((Path(out_dir) / STAMP_NAME).read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) else None
