"""The system of record: Paper, Chunk and Reference records (pydantic v2).

These are the contracts between layers (see docs/ARCHITECTURE.md): ``ingest`` produces them,
the stores in ``graph``/``lit3r`` load them, the reader cites them. All records are
JSON-serialisable (``model_dump(mode="json")``) and validated on construction; a violation
raises ``pydantic.ValidationError``.

Ids are deterministic functions of the input (paper id + position), so the same PDF gives the
same ids on every run (seed paper section 2.1: chunks are the unit of evidence).
"""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: The five chunk kinds of the seed paper (section 2.1.1).
ChunkKind = Literal["title_abstract", "text", "table", "figure", "equation"]
CHUNK_KINDS: tuple[str, ...] = ("title_abstract", "text", "table", "figure", "equation")

#: Hard upper bound on chunk text, in characters (seed paper: chunks stop at 2,000 chars).
MAX_CHUNK_CHARS = 2000

_OBJECT_ID = re.compile(r"^(Table|Figure|Equation|Algorithm|Citation) [0-9A-Za-z.\-]+$")


def chunk_id_for(paper_id: str, seq: int) -> str:
    """Stable chunk id: ``"<paper_id>::c<seq, 4 digits>"`` (seq is the 0-based chunk order)."""
    return f"{paper_id}::c{seq:04d}"


class Source(BaseModel):
    """Where a paper came from: the file path as given and its sha256 (hex, 64 chars)."""

    model_config = ConfigDict(extra="forbid")
    file: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class Paper(BaseModel):
    """One research paper.

    ``n_pages`` counts physical PDF pages (0: a paper known only by its metadata, no PDF); ``year`` is an int or None; ``authors`` is a list of
    display names in paper order.
    """

    model_config = ConfigDict(extra="forbid")
    paper_id: str = Field(min_length=1)
    title: str = ""
    authors: list[str] = Field(default_factory=list)
    venue: Optional[str] = None
    year: Optional[int] = Field(default=None, ge=1800, le=2100)
    abstract: str = ""
    source: Source
    n_pages: int = Field(ge=0)
    parser: str = "pymupdf"


class Chunk(BaseModel):
    """One retrievable unit of a paper (seed paper section 2.1.1).

    - ``kind``: one of :data:`CHUNK_KINDS`.
    - ``page``: 1-based physical PDF page (never the printed page number).
    - ``object_id``: ``"Table N"``, ``"Figure N"``, ``"Equation N"``, ``"Algorithm N"``, or
      ``"Citation N"`` for a reference-list entry (a ``text`` chunk in section "References",
      the target of ``citation_context`` evidence); None for plain text.
    - ``text``: at most :data:`MAX_CHUNK_CHARS` characters.
    - ``image``: path of a PNG crop of the table/figure region, relative to the corpus folder.
    - ``seq``: 0-based order of the chunk in its paper.
    """

    model_config = ConfigDict(extra="forbid")
    chunk_id: str
    paper_id: str = Field(min_length=1)
    kind: ChunkKind
    page: int = Field(ge=1)
    section: Optional[str] = None
    object_id: Optional[str] = None
    text: str = Field(min_length=1, max_length=MAX_CHUNK_CHARS)
    seq: int = Field(ge=0)
    image: Optional[str] = None

    @field_validator("object_id")
    @classmethod
    def _object_id_form(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not _OBJECT_ID.match(v):
            raise ValueError(f"object_id must look like 'Table 4' or 'Algorithm 1', got {v!r}")
        return v


class Reference(BaseModel):
    """One entry of a paper's reference list.

    - ``number``: 1-based order in the list (also for author-year styles, where it is the
      position; for numbered styles it is the printed number).
    - ``page``: 1-based physical page where the entry starts.
    - ``work_id``: normalised key shared by every paper citing the same work
      (``"paper:<id>"`` for corpus papers, ``"arxiv:<id>"``, ``"doi:<doi>"`` or ``"title:<key>"``).
    - ``cited_paper_id``: the corpus paper this entry resolves to, or None.
    """

    model_config = ConfigDict(extra="forbid")
    paper_id: str
    number: int = Field(ge=1)
    page: Optional[int] = Field(default=None, ge=1)
    raw: str = Field(min_length=1)
    title: Optional[str] = None
    work_id: str = Field(min_length=1)
    cited_paper_id: Optional[str] = None


class Neighbour(BaseModel):
    """A SIMILAR_TO edge: ``neighbour_id`` is the ``rank``-th (1-based) most similar paper to
    ``paper_id`` by paper-embedding cosine ``score`` (SPECTER2 in the seed system)."""

    model_config = ConfigDict(extra="forbid")
    paper_id: str
    neighbour_id: str
    score: float
    rank: int = Field(ge=1)
