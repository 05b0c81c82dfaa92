"""The SearchIndex interface: the three Retrieve lanes plus what the reranker and reader read.

Implemented by :class:`graph.search.embedded.EmbeddedSearchIndex` (BM25 postings segments on disk,
:mod:`graph.search.bm25`, and a memory-mapped float32 vector file searched with numpy) and
:class:`graph.search.opensearch.OpenSearchIndex` (OpenSearch); one contract suite,
tests/contract/test_contract_search.py, checks that both answer alike.
"""

from __future__ import annotations

from typing import ContextManager, Optional, Protocol, Sequence

import numpy as np

Hit = tuple[str, float]


class SearchIndex(Protocol):
    """The Retrieve lanes and the chunk vectors (L2-normalised float32) read by id.

    ``encoder``: the chunk encoder's model spec the index was built with (None when unknown);
    ``dim``: the vector dimension; ``location``: where it lives, for messages."""

    @property
    def encoder(self) -> Optional[str]: ...

    @property
    def dim(self) -> Optional[int]: ...

    @property
    def location(self) -> str: ...

    def snapshot(self) -> ContextManager[object]:
        """A block whose reads see one committed corpus (re-entrant)."""

    def close(self) -> None:
        """Release files, connections and clients."""

    def chunk_bm25(self, query: str, k: int) -> list[Hit]:
        """Top-k chunks by BM25 (k1, b from config), best first; [] for an empty query."""

    def paper_bm25(self, query: str, k: int) -> list[Hit]:
        """Top-k papers by BM25 over their concatenated chunk text."""

    def chunk_dense(self, query_vector: np.ndarray, k: int) -> list[Hit]:
        """Top-k chunks by cosine with a normalised query vector."""

    def chunk_dense_many(self, query_vectors: np.ndarray, k: int) -> list[list[Hit]]:
        """Top-k chunks for each row of ``(q, dim)`` query vectors (one scan where the backend can)."""

    def vectors_of(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """``(len(chunk_ids), dim)`` vectors in that order (UnknownIdError for an unknown id)."""

    def paper_head(self, paper_id: str, chars: int) -> str:
        """The first ``chars`` indexed characters of a paper."""
