"""The model seams of the application: what the pipeline needs from an encoder and a reranker.

The storage seams are :class:`graph.store.GraphStore` and :class:`graph.search.protocol.SearchIndex`,
the parser seam is :class:`ingest.parsers.base.Parser`, the reader seam is
:class:`lit3r.read.base.Reader` and the LLM seam is :class:`lit3r.llm.client.Chat`. Every
implementation is built by :mod:`lit3r.factory` from the settings.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

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
