"""A full disk, said as one line: the path that could not be written, the space free there and
about how much is needed (a write that fails with ENOSPC or EDQUOT); what was stored before is
kept (every store writes through a temporary file and a rename, or appends whole lines)."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path
from typing import Iterable, Optional

from graph.errors import shown_text

#: The errno values of a full disk or an exhausted quota.
FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG)


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def free_bytes(path: Path) -> Optional[int]:
    """Bytes free on the file system of ``path`` (its nearest existing folder), or None."""
    p = Path(path)
    for folder in (p, *p.parents):
        try:
            if folder.is_dir():
                return shutil.disk_usage(folder).free
        except OSError:
            continue
    return None


def rewrite_bytes(paths: Iterable[Path]) -> int:
    """The bytes of the files ``paths`` that exist: what rewriting them through a temporary
    copy needs beside them."""
    total = 0
    for p in paths:
        try:
            total += Path(p).stat().st_size
        except OSError:
            pass
    return total


def full_disk_message(exc: OSError, where: Path, need: int, what: str) -> Optional[str]:
    """The one line for ``exc`` when it says the disk is full (:data:`FULL`), else None.
    ``where``: the path written (``exc.filename`` when it has one); ``need``: about how many bytes
    the command needs there; ``what``: what is kept (e.g. "the answered questions are kept")."""
    if exc.errno not in FULL:
        return None
    path = Path(exc.filename) if exc.filename else Path(where)
    free = free_bytes(path)
    free_text = f"{_mb(free)} free, " if free is not None else ""
    return (f"{shown_text(path, 200)}: the disk is full ({exc.strerror or 'no space left on device'}; {free_text}about "
            f"{_mb(max(need, 1_000_000))} needed): free space there or choose another folder, then run the same "
            f"command again ({what})")


def full_disk_line(exc: OSError, where: Path, kept: str) -> Optional[str]:
    """The one line of a full disk while writing under ``where`` (a data folder, its index or a
    submission file), else None: the space needed is the size of the files a rewrite copies
    there (the corpus files, the index database), at least 1 MB."""
    folder = Path(where)
    need = rewrite_bytes([folder / n for n in ("papers.jsonl", "chunks.jsonl", "references.jsonl",
                                                "lit3r.sqlite", "index/lit3r.sqlite")])
    return full_disk_message(exc, where, need, kept)
