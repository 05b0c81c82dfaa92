"""The embedded search index: chunk BM25, paper BM25 (bm25s) and exact dense chunk search (numpy).

BM25 uses Lucene's scoring (``method="lucene"``, k1=1.5, b=0.75 by default: seed paper 2.1) over
:func:`lit3r.tokenize.tokenize` tokens, so it can match OpenSearch. The paper index holds each
paper's concatenated chunk text. Chunk vectors are L2-normalised float32, saved as ``.npy`` and
memory-mapped on open; search is an exact inner product (cosine).

Folder layout: ``chunk_bm25/``, ``paper_bm25/`` (bm25s), ``chunk_vectors.npy``, ``ids.json``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Sequence

import bm25s
import numpy as np

from lit3r.tokenize import tokenize

from lit3r.search import Hit


class EmbeddedSearchIndex:
    """SearchIndex over one corpus. Construct with :meth:`build` or :meth:`open`."""

    def __init__(self, folder: Path, chunk_ids: list[str], paper_ids: list[str], paper_heads: dict[str, str],
                 chunk_bm25: bm25s.BM25, paper_bm25: bm25s.BM25, vectors: np.ndarray) -> None:
        self.folder = Path(folder)
        self.chunk_ids = chunk_ids
        self.paper_ids = paper_ids
        self._heads = paper_heads
        self._chunk_bm25 = chunk_bm25
        self._paper_bm25 = paper_bm25
        self.vectors = vectors

    # -- build / open ----------------------------------------------------------------------
    @classmethod
    def build(cls, folder: Path, chunk_ids: Sequence[str], chunk_texts: Sequence[str], paper_ids: Sequence[str],
              paper_texts: Sequence[str], vectors: np.ndarray, k1: float = 1.5, b: float = 0.75,
              head_chars: int = 4000) -> "EmbeddedSearchIndex":
        """Index and persist. ``vectors``: (len(chunk_ids), dim) float32, L2-normalised.

        Raises ValueError when the lengths disagree. Writes into a temporary folder and swaps it
        in, so an interrupted build leaves the previous index intact.
        """
        if len(chunk_ids) != len(chunk_texts) or len(chunk_ids) != len(vectors) or len(paper_ids) != len(paper_texts):
            raise ValueError("ids, texts and vectors must have the same lengths")
        folder = Path(folder)
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        chunk_bm25 = _bm25([tokenize(t) for t in chunk_texts], k1, b)
        paper_bm25 = _bm25([tokenize(t) for t in paper_texts], k1, b)
        chunk_bm25.save(str(tmp / "chunk_bm25"), show_progress=False)
        paper_bm25.save(str(tmp / "paper_bm25"), show_progress=False)
        np.save(tmp / "chunk_vectors.npy", np.ascontiguousarray(vectors, dtype=np.float32))
        heads = {pid: t[:head_chars] for pid, t in zip(paper_ids, paper_texts)}
        (tmp / "ids.json").write_text(json.dumps({"chunk_ids": list(chunk_ids), "paper_ids": list(paper_ids),
                                                  "paper_heads": heads, "k1": k1, "b": b}), encoding="utf-8")
        old = folder.with_name(folder.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if folder.exists():
            os.replace(folder, old)
        os.replace(tmp, folder)
        shutil.rmtree(old, ignore_errors=True)
        return cls.open(folder)

    @classmethod
    def open(cls, folder: Path) -> "EmbeddedSearchIndex":
        """Load a persisted index (vectors memory-mapped). Raises FileNotFoundError."""
        folder = Path(folder)
        if not (folder / "ids.json").is_file():
            raise FileNotFoundError(f"no search index in {folder}: run `lit3r ingest PDF_DIR` first")
        meta = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
        chunk_bm25 = bm25s.BM25.load(str(folder / "chunk_bm25"), mmap=True, show_progress=False)
        paper_bm25 = bm25s.BM25.load(str(folder / "paper_bm25"), mmap=True, show_progress=False)
        vectors = np.load(folder / "chunk_vectors.npy", mmap_mode="r")
        return cls(folder, meta["chunk_ids"], meta["paper_ids"], meta["paper_heads"], chunk_bm25, paper_bm25, vectors)

    # -- search ----------------------------------------------------------------------------
    def chunk_bm25(self, query: str, k: int) -> list[Hit]:
        """Top-k chunks by BM25: ``[(chunk_id, score)]``, best first; [] for an empty query."""
        return _search(self._chunk_bm25, query, k, self.chunk_ids)

    def paper_bm25(self, query: str, k: int) -> list[Hit]:
        """Top-k papers by BM25 over their concatenated chunk text."""
        return _search(self._paper_bm25, query, k, self.paper_ids)

    def chunk_dense(self, query_vector: np.ndarray, k: int) -> list[Hit]:
        """Top-k chunks by cosine with a normalised (dim,) query vector (exact search)."""
        if len(self.chunk_ids) == 0:
            return []
        scores = np.asarray(self.vectors @ np.asarray(query_vector, dtype=np.float32))
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self.chunk_ids[i], float(scores[i])) for i in top]

    def paper_head(self, paper_id: str, chars: int) -> str:
        """The first ``chars`` indexed characters of a paper (the Relate BM25 seed query)."""
        return self._heads[paper_id][:chars]


def _bm25(corpus_tokens: list[list[str]], k1: float, b: float) -> bm25s.BM25:
    model = bm25s.BM25(k1=k1, b=b, method="lucene")
    model.index([toks or [""] for toks in corpus_tokens], show_progress=False)
    return model


def _search(model: bm25s.BM25, query: str, k: int, ids: list[str]) -> list[Hit]:
    toks = [t for t in tokenize(query) if t in model.vocab_dict]
    if not toks or not ids:
        return []
    scores = model.get_scores(toks)
    k = min(k, len(ids))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.lexsort((top, -scores[top]))]
    return [(ids[i], float(scores[i])) for i in top if scores[i] > 0]
