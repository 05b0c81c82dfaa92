"""Paper metadata from a JSONL file, overriding what is read from page 1.

One JSON object per line with ``paper_id``, ``title``, ``authors``, ``venue``, ``year``,
``abstract``, ``pdf`` (file name or path of the PDF, relative to the PDF folder). The field names
of LitTraceQA-style manifests are accepted too (``id`` for ``paper_id``, ``venue_or_arxiv`` for
``venue``). A line that does not validate raises :class:`MetadataError` naming the line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator


class MetadataError(ValueError):
    """A metadata file that cannot be read; the message names the file and line."""


class PaperMeta(BaseModel):
    """One metadata line. Unknown fields are ignored; every field but ``paper_id`` is optional."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    paper_id: str = Field(validation_alias=AliasChoices("paper_id", "id"), min_length=1)
    title: Optional[str] = None
    authors: Optional[list[str]] = None
    venue: Optional[str] = Field(default=None, validation_alias=AliasChoices("venue", "venue_or_arxiv"))
    year: Optional[int] = None
    abstract: Optional[str] = None
    pdf: Optional[str] = None

    @field_validator("authors", mode="before")
    @classmethod
    def _split_authors(cls, v):
        if isinstance(v, str):
            return [a.strip() for a in re.split(r";|,| and ", v) if a.strip()]
        return v

    @field_validator("venue")
    @classmethod
    def _short_venue(cls, v: Optional[str]) -> Optional[str]:
        """"NIPS 2017 / arXiv:1706.03762v7 [cs.CL]" -> "NIPS"; "arXiv:2002.09402v3" -> "arXiv"."""
        if not v:
            return None
        v = v.split("/")[0].strip()
        if v.lower().startswith("arxiv"):
            return "arXiv"
        return re.sub(r"\s*\b(19|20)\d\d\b.*$", "", v).strip() or None


def load_metadata(path: Path) -> dict[str, PaperMeta]:
    """Read a metadata JSONL file; returns ``{key: PaperMeta}`` keyed by both ``paper_id`` and
    the PDF file stem (when ``pdf`` is given), so either can be matched to a file.

    Raises MetadataError for a missing file, bad JSON or an invalid line.
    """
    path = Path(path)
    if not path.is_file():
        raise MetadataError(f"metadata file not found: {path}: pass an existing JSONL file to --metadata")
    out: dict[str, PaperMeta] = {}
    with path.open(encoding="utf-8") as fh:
        for no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                meta = PaperMeta.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as exc:
                first = str(exc).splitlines()[0]
                raise MetadataError(f"{path}:{no}: invalid metadata line ({first}): fix or remove it") from None
            out[meta.paper_id] = meta
            if meta.pdf:
                out.setdefault(Path(meta.pdf).stem, meta)
    return out
