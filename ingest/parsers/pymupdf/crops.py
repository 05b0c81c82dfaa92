"""PNG crops of object regions (tables, figures, algorithms) for ``Block.image``.

A crop is the region rendered from the PDF page at a fixed resolution and written once as
``<image_dir>/p<page, 3 digits>-<object id, lower-case, dashes>.png``; ``Block.image`` holds the
path relative to the corpus folder (``image_ref`` + file name). Used by the PyMuPDF parser and,
for MinerU output without its own images, by the MinerU parser.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pymupdf

from ingest.parsers.base import CROP_DPI

#: Regions narrower or lower than this many points are not cropped.
_MIN_SIDE = 8


def save_crop(page, rect, image_dir: Path, image_ref: str, name: str, dpi: int = CROP_DPI) -> Optional[str]:
    """Render ``rect`` (PDF points) of ``page`` to ``image_dir/<name>.png`` (name lower-cased,
    spaces to dashes) at ``dpi``; returns ``image_ref + file name``, or None for an empty or tiny
    region. An existing file is kept (re-runs do not re-render)."""
    rect = pymupdf.Rect(rect) & page.rect
    if rect.is_empty or rect.width < _MIN_SIDE or rect.height < _MIN_SIDE:
        return None
    fname = name.lower().replace(" ", "-") + ".png"
    target = Path(image_dir) / fname
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        page.get_pixmap(clip=rect, dpi=dpi).save(target)
    return f"{image_ref}{fname}"


@dataclass
class Crops:
    """Where a parser writes its crops: ``image_dir`` (None: no crops), ``image_ref`` (the
    prefix stored in ``Block.image``, relative to the corpus folder) and ``dpi``."""

    image_dir: Optional[Path] = None
    image_ref: str = ""
    dpi: int = CROP_DPI

    def object_crop(self, page, rect, pno: int, oid: str) -> Optional[str]:
        """The crop of object ``oid`` on page ``pno`` (1-based) inside ``rect`` (points), or
        None when crops are off or the region is tiny."""
        if self.image_dir is None:
            return None
        return save_crop(page, rect, self.image_dir, self.image_ref, f"p{pno:03d}-{oid}", self.dpi)
