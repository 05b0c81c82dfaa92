"""The embedded graph store: in-process, persisted as JSONL plus a sparse citation matrix.

Papers, chunks (HAS_CHUNK), references (CITES to works) and SIMILAR_TO neighbours are kept in
memory; bibliographic coupling is one sparse matrix-vector product over the paper x work
incidence matrix (scipy.sparse CSR), so it stays fast for tens of thousands of papers. Same
answers as the Neo4j store (the shared backend tests check it).

Folder layout: ``papers.jsonl``, ``chunks.jsonl``, ``references.jsonl``, ``neighbours.jsonl``.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
from scipy import sparse

from graph.records import Chunk, Neighbour, Paper, Reference
from graph.store import RecordCache

_FILES = {"papers": Paper, "chunks": Chunk, "references": Reference, "neighbours": Neighbour}


class EmbeddedGraphStore(RecordCache):
    """GraphStore (see :mod:`graph.store`) kept in memory and persisted under ``folder``.

    Raises FileNotFoundError from :meth:`open` when the folder holds no store.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._cache([], [])
        self._refs: dict[str, list[Reference]] = {}
        self._similar: dict[str, list[tuple[str, float]]] = {}
        self._cited_by: dict[str, list[str]] = {}
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._m: sparse.csr_matrix = sparse.csr_matrix((0, 0))
        self._sizes = np.zeros(0)

    # -- writing ---------------------------------------------------------------------------
    def load(self, papers: Sequence[Paper], chunks: Sequence[Chunk], references: Sequence[Reference],
             neighbours: Sequence[Neighbour]) -> None:
        """Replace the store's content with these records and persist it (atomic per file)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, rows in (("papers", papers), ("chunks", chunks), ("references", references),
                           ("neighbours", neighbours)):
            tmp = self.folder / f"{name}.jsonl.tmp"
            with tmp.open("w", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(r.model_dump_json())
                    fh.write("\n")
            os.replace(tmp, self.folder / f"{name}.jsonl")
        self._index(papers, chunks, references, neighbours)

    # -- reading ---------------------------------------------------------------------------
    @classmethod
    def open(cls, folder: Path) -> "EmbeddedGraphStore":
        """Load a persisted store. Records are trusted (they were validated when written)."""
        store = cls(folder)
        if not (store.folder / "papers.jsonl").is_file():
            raise FileNotFoundError(f"no graph store in {store.folder}: run `lit3r ingest PDF_DIR` first")
        rows = {}
        for name, model in _FILES.items():
            with (store.folder / f"{name}.jsonl").open(encoding="utf-8") as fh:
                rows[name] = [model.model_construct(**json.loads(line)) for line in fh if line.strip()]
        store._index(rows["papers"], rows["chunks"], rows["references"], rows["neighbours"])
        return store

    def _index(self, papers, chunks, references, neighbours) -> None:
        self._cache(papers, chunks)
        self._ids = sorted(self._papers)
        self._row = {pid: i for i, pid in enumerate(self._ids)}
        refs: dict[str, list[Reference]] = defaultdict(list)
        cited_by: dict[str, set[str]] = defaultdict(set)
        for r in references:
            refs[r.paper_id].append(r)
            if r.cited_paper_id:
                cited_by[r.cited_paper_id].add(r.paper_id)
        self._refs = {pid: sorted(rs, key=lambda r: r.number) for pid, rs in refs.items()}
        self._cited_by = {pid: sorted(s) for pid, s in cited_by.items()}
        sim: dict[str, list[Neighbour]] = defaultdict(list)
        for n in neighbours:
            sim[n.paper_id].append(n)
        self._similar = {pid: [(n.neighbour_id, n.score) for n in sorted(ns, key=lambda n: n.rank)]
                         for pid, ns in sim.items()}
        works = sorted({r.work_id for r in references if r.paper_id in self._row})
        col = {w: j for j, w in enumerate(works)}
        pairs = {(self._row[r.paper_id], col[r.work_id]) for r in references if r.paper_id in self._row}
        rows_, cols_ = (zip(*pairs) if pairs else ((), ()))
        self._m = sparse.csr_matrix((np.ones(len(pairs), dtype=np.float32), (rows_, cols_)),
                                    shape=(len(self._ids), len(works)))
        self._sizes = np.asarray(self._m.sum(axis=1)).ravel()

    # -- GraphStore ------------------------------------------------------------------------
    def similar_papers(self, paper_id: str, limit: int = 10) -> list[tuple[str, float]]:
        self._known(paper_id)
        return self._similar.get(paper_id, [])[:limit]

    def coupled_papers(self, paper_id: str, min_shared: int = 2, limit: int = 50) -> list[tuple[str, float, int]]:
        i = self._row[paper_id]
        shared = np.asarray((self._m @ self._m[i].T).todense()).ravel()
        out = []
        for j in np.flatnonzero(shared >= min_shared):
            if j == i:
                continue
            n = int(shared[j])
            out.append((self._ids[j], n / (self._sizes[i] + self._sizes[j] - n), n))
        out.sort(key=lambda t: (-t[1], -t[2], t[0]))
        return out[:limit]

    def cites(self, paper_id: str) -> list[tuple[int, str, Optional[str]]]:
        self._known(paper_id)
        return [(r.number, r.work_id, r.cited_paper_id) for r in self._refs.get(paper_id, [])]

    def cited_by(self, paper_id: str) -> list[str]:
        self._known(paper_id)
        return list(self._cited_by.get(paper_id, []))
