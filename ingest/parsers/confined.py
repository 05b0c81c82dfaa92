"""Parser output is confined to its folder: a path that a parser's output names (MinerU's
``img_path``, the content list found beside a PDF) is used only when it resolves inside that
output's folder, symbolic links included (a link that points out of the folder is not followed).

Hostile or broken output (``../../../etc/passwd``, ``/etc/passwd``, a link to a system file) is
refused with :class:`ingest.document.BadInputError` naming the path, so that nothing outside the
parser's output is ever copied into the data folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from ingest.document import BadInputError


def confined(root: Path, rel: str, *, what: str, source: str) -> Path:
    """``root / rel`` when it resolves (links followed) inside the folder ``root``; raises
    BadInputError naming ``rel`` (``what``: the field that named it, e.g. ``img_path``;
    ``source``: the file it comes from) for an absolute path, a path that climbs out with
    ``..``, or a link out of ``root``."""
    if not isinstance(rel, str) or not rel or "\x00" in rel:
        raise BadInputError(f"{source}: {what} {str(rel)[:200]!r} is not a file path: refused (fix or regenerate the "
                            f"parser output)")
    shown = rel if len(rel) <= 200 else rel[:200] + "..."
    if os.path.isabs(rel) or Path(rel).is_absolute():
        raise BadInputError(f"{source}: {what} {shown!r} is an absolute path, outside the folder "
                            f"{root}: refused (fix or regenerate the parser output)")
    base = Path(root).resolve()
    try:
        target = (base / rel).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a link loop, a NUL byte
        raise BadInputError(f"{source}: {what} {shown!r} cannot be resolved ({exc}): refused (fix or regenerate "
                            f"the parser output)") from None
    if not target.is_relative_to(base):
        raise BadInputError(f"{source}: {what} {shown!r} points to {target}, outside the folder "
                            f"{root}: refused (fix or regenerate the parser output)")
    return base / rel


def inside(folder: Path, path: Path) -> bool:
    """Does ``path`` resolve (links followed) inside ``folder``?"""
    try:
        return Path(path).resolve().is_relative_to(Path(folder).resolve())
    except (OSError, RuntimeError):
        return False
