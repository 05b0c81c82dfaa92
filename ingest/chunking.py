"""Chunking rules of the seed paper (section 2.1.1): blocks -> Chunk records.

- One ``title_abstract`` chunk per paper (page 1), starting with ``[VENUE YEAR]`` when both are
  known.
- ``text`` chunks pack consecutive paragraphs of one section on one page; a chunk never crosses a
  page or heading boundary and stops at :data:`graph.records.MAX_CHUNK_CHARS` characters; a
  paragraph longer than that is split at sentence boundaries (at word boundaries if a sentence is
  itself too long).
- Each table, figure, equation and algorithm block becomes its own chunk with its object id
  (split into parts with the same object id if it is longer than the limit).
- Each reference-list entry becomes a ``text`` chunk in section "References" with object id
  ``Citation N``, the target of ``citation_context`` evidence.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional

from graph.records import MAX_CHUNK_CHARS, Chunk, Reference, chunk_id_for
from ingest.document import Block, ParsedDocument

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")

_KIND_OF_BLOCK = {"table": "table", "figure": "figure", "equation": "equation", "algorithm": "equation"}


def venue_year_tag(venue: Optional[str], year: Optional[int]) -> str:
    """``"[ACL 2020]"`` when both venue and year are known, else ``""``."""
    if venue and year:
        return f"[{venue} {year}]"
    return ""


def split_text(text: str, limit: int = MAX_CHUNK_CHARS) -> list[str]:
    """Split ``text`` into pieces of at most ``limit`` chars at sentence, then word, boundaries.

    Pieces are stripped and non-empty; their concatenation keeps every word in order.
    """
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    pieces: list[str] = []
    buf = ""
    for sent in _SENTENCE_END.split(text):
        while len(sent) > limit:  # one sentence longer than the limit: cut at a word boundary
            cut = sent.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            head, sent = sent[:cut].strip(), sent[cut:].strip()
            if buf:
                pieces.append(buf)
                buf = ""
            pieces.append(head)
        if not buf:
            buf = sent
        elif len(buf) + 1 + len(sent) <= limit:
            buf = f"{buf} {sent}"
        else:
            pieces.append(buf)
            buf = sent
    if buf:
        pieces.append(buf)
    return [p for p in pieces if p]


def title_abstract_text(title: str, abstract: str, venue: Optional[str], year: Optional[int]) -> str:
    """The title-and-abstract chunk text: ``"[VENUE YEAR] Title\\n\\nAbstract"``, cut to the limit."""
    tag = venue_year_tag(venue, year)
    head = f"{tag} {title}".strip() if tag else title.strip()
    text = f"{head}\n\n{abstract.strip()}".strip() if abstract.strip() else head
    return text[:MAX_CHUNK_CHARS].strip()


def build_chunks(
    paper_id: str,
    doc: ParsedDocument,
    *,
    title: str,
    abstract: str,
    venue: Optional[str],
    year: Optional[int],
    references: Iterable[Reference] = (),
) -> list[Chunk]:
    """Turn a parsed document into ordered, validated chunks.

    ``title``/``abstract``/``venue``/``year`` are the final paper metadata (after metadata-file
    overrides). ``references`` are the parsed entries (with pages). Returns chunks with ``seq``
    0..n-1 and stable ids :func:`graph.records.chunk_id_for`.
    """
    chunks: list[Chunk] = []

    def add(kind: str, page: int, section: Optional[str], text: str, object_id=None, image=None) -> None:
        for piece in split_text(text):
            seq = len(chunks)
            chunks.append(
                Chunk(
                    chunk_id=chunk_id_for(paper_id, seq),
                    paper_id=paper_id,
                    kind=kind,
                    page=page,
                    section=section,
                    object_id=object_id,
                    text=piece,
                    seq=seq,
                    image=image,
                )
            )

    ta = title_abstract_text(title or paper_id, abstract, venue, year)
    add("title_abstract", 1, "Abstract" if abstract else "Title", ta)

    section: Optional[str] = None
    buf: list[str] = []
    buf_page = 0
    buf_section: Optional[str] = None

    def flush() -> None:
        nonlocal buf
        if buf:
            add("text", buf_page, buf_section, "\n".join(buf))
        buf = []

    for block in doc.blocks:
        if block.kind == "heading":
            flush()
            section = block.text.strip()[:200] or section
            continue
        if block.kind == "paragraph":
            text = block.text.strip()
            if not text:
                continue
            if buf and (block.page != buf_page or buf_section != section):
                flush()
            if buf and sum(len(t) + 1 for t in buf) + len(text) > MAX_CHUNK_CHARS:
                flush()
            if not buf:
                buf_page, buf_section = block.page, section
            buf.append(text)
            continue
        flush()
        add(_KIND_OF_BLOCK[block.kind], block.page, section, _object_text(block), block.object_id, block.image)
    flush()

    for ref in references:
        add("text", ref.page or doc.n_pages, "References", f"[{ref.number}] {ref.raw}", f"Citation {ref.number}")
    return chunks


def _object_text(block: Block) -> str:
    """Chunk text of an object block: caption first, then the body (rows, labels, equation)."""
    parts = [p.strip() for p in (block.caption, block.text) if p and p.strip()]
    if not parts and block.object_id:
        parts = [block.object_id]
    return "\n".join(parts)
