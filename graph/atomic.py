"""Atomic file writes: a temporary file beside the target, then one rename (readers see the
old file or the new one, never a torn one; a killed writer leaves at most the temporary file)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable


def write_lines_atomic(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` (one per line, UTF-8) to ``path`` through ``<path>.tmp`` and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line)
            fh.write("\n")
    os.replace(tmp, path)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through ``<path>.tmp`` and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through ``<path>.tmp`` and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
