"""The model seams of the application (what the pipeline needs from an encoder and a reranker)
and the write seam of the servers load (:class:`GraphLoadTarget`, :class:`SearchLoadTarget`: what
:mod:`lit3r.index.load` writes to, opened by the backend, :mod:`lit3r.backends`).

The storage seams are :class:`graph.store.GraphStore` and :class:`graph.search.protocol.SearchIndex`,
the parser seam is :class:`ingest.parsers.base.Parser`, the reader seam is
:class:`lit3r.read.base.Reader` and the LLM seam is :class:`lit3r.llm.client.Chat`. Every
implementation is built by :mod:`lit3r.factory` or :mod:`lit3r.backends` from the settings.
"""

from __future__ import annotations

import contextlib
from typing import Any, Optional, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class Encoder(Protocol):
    """A bi-encoder producing unit vectors (``name``: its model spec, ``dim``: the dimension)."""

    name: str
    dim: int

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """float32 ``(len(texts), dim)`` unit rows for passages (chunks, paper heads)."""
        ...

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """float32 ``(len(texts), dim)`` unit rows for queries (the model's query prompt applied)."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Scores candidate texts against a query (a cross-encoder)."""

    name: str

    def scores(self, query: str, texts: list[str]) -> np.ndarray:
        """float32 ``(len(texts),)``, higher = more relevant; scales differ between rerankers, so
        only the order (or ranks) is comparable across implementations."""
        ...


class GraphLoadTarget(Protocol):
    """The graph side of a load from the local build into a backend's servers (the writer seam of
    :func:`lit3r.index.load.sync_servers`; :class:`graph.neo4j_store.Neo4jGraphStore` implements it).
    Hashes: ``{paper_id: (server hash, SIMILAR_TO hash)}``, each None when not written yet."""

    def ensure_schema(self) -> None: ...

    def corpus_prefix(self) -> Optional[str]: ...

    def set_corpus_prefix(self, prefix: str) -> None: ...

    def stored_hashes(self) -> dict[str, tuple[Optional[str], Optional[str]]]: ...

    def clear_hashes(self) -> int: ...

    def chunks_per_paper(self) -> dict[str, int]: ...

    def delete_papers(self, paper_ids: Sequence[str]) -> None: ...

    def write_papers(self, papers: Sequence[dict], chunks: Sequence[dict], refs: Sequence[dict]) -> int: ...

    def mark_loaded(self, hashes: dict[str, str]) -> None: ...

    def write_neighbours(self, lists: dict[str, Sequence[tuple[str, float]]]) -> None: ...

    def prune_orphans(self) -> int: ...

    def close(self) -> None: ...


class SearchLoadTarget(Protocol):
    """The search side of a load (:class:`graph.search.opensearch.OpenSearchIndex` implements it):
    documents are keyed by chunk or paper id; ``vectors`` float32 ``(len(chunks), dim)``."""

    chunk_index: str
    paper_index: str

    def stored_meta(self) -> Optional[dict]: ...

    def refresh(self, timeout_s: float = 600) -> None: ...

    def ensure_indices(self, dim: int, k1: float, b: float, *, shards: int = 1, replicas: int = 0,
                       encoder: Optional[str] = None, hnsw_m: int = 16, hnsw_ef_construction: int = 64) -> bool: ...

    def documents_per_paper(self, index: Optional[str] = None) -> dict[str, int]: ...

    def bulk_mode(self) -> contextlib.AbstractContextManager[Any]: ...

    def delete_papers(self, paper_ids: Sequence[str], batch: int = 1000) -> int: ...

    def write_chunks(self, chunks: Sequence[dict], vectors: np.ndarray,
                     tokens: Optional[Sequence[str]] = None) -> int: ...

    def write_papers(self, paper_ids: Sequence[str], texts: Sequence[str],
                     tokens: Optional[Sequence[str]] = None) -> int: ...

    def close(self) -> None: ...
