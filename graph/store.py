"""The GraphStore interface: the system of record for papers, chunks, citations and neighbours.

Two implementations answer through it: :class:`graph.embedded.EmbeddedGraphStore` (SQLite,
in-process, zero set-up, the default) and the Neo4j store (Cypher files in ``cypher/``). The Relate step of
the seed paper (section 2.2) uses :meth:`similar_papers` and :meth:`coupled_papers`; the
reader uses :meth:`chunk` / :meth:`chunks_of` to build evidence locators. One contract suite,
tests/contract/test_contract_graph.py, checks that both answer alike.
"""

from __future__ import annotations

from typing import ContextManager, Optional, Protocol, Sequence

from graph.records import Chunk, Paper


class GraphStore(Protocol):
    """What every graph backend answers (the reads; each backend has its own writer API, and
    ``load(papers, chunks, references, neighbours)`` for a whole small corpus). Unknown ids
    raise graph.errors.UnknownIdError (a KeyError)."""

    def snapshot(self) -> ContextManager[object]:
        """A block whose reads see one committed corpus (re-entrant)."""

    def close(self) -> None:
        """Release files, connections and drivers."""

    def paper(self, paper_id: str) -> Paper:
        """One paper."""

    def paper_ids(self) -> list[str]:
        """All paper ids, sorted."""

    def chunk(self, chunk_id: str) -> Chunk:
        """One chunk."""

    def chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks of ``chunk_ids`` in that order, read in batches (UnknownIdError for an unknown id)."""

    def has_papers(self, paper_ids: Sequence[str]) -> set[str]:
        """The subset of ``paper_ids`` the store holds."""

    def papers_of(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """``{chunk_id: paper_id}`` for the known ids among ``chunk_ids`` (batched)."""

    def chunks_of(self, paper_id: str) -> list[Chunk]:
        """The chunks of a paper in ``seq`` order."""

    def similar_papers(self, paper_id: str, limit: int = 10) -> list[tuple[str, float]]:
        """SIMILAR_TO neighbours ``(paper_id, cosine)``, best first (paper-embedding kNN)."""

    def coupled_papers(self, paper_id: str, min_shared: int = 2, limit: int = 50) -> list[tuple[str, float, int]]:
        """Bibliographic coupling ``(paper_id, jaccard, shared works)``: papers sharing at least
        ``min_shared`` cited works, by Jaccard of the cited-work sets, then shared count, then id."""

    def cites(self, paper_id: str) -> list[tuple[int, str, Optional[str]]]:
        """References of a paper: ``(number, work_id, cited corpus paper or None)``."""

    def cited_by(self, paper_id: str) -> list[str]:
        """Corpus papers whose reference lists resolve to this paper."""

    def find_papers(self, text: Optional[str] = None, limit: Optional[int] = None) -> list[Paper]:
        """Papers by id whose id, title or an author name contains ``text`` (case-insensitive,
        Python's ``str.lower`` = Cypher's ``toLower`` on these texts); every paper for None; at
        most ``limit``."""

    def work_titles(self, work_ids: Sequence[str]) -> dict[str, str]:
        """``{work_id: title}`` of cited works, the title a citing reference gives (works with
        none are left out)."""

    def citation_links(self, work_ids: Sequence[str]) -> set[tuple[str, str]]:
        """The CITES edges touching these works, as ``(citing work id, cited work id)``; a corpus
        paper is the work ``"paper:<paper_id>"`` (:mod:`graph.explore` walks them)."""
