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
like one built from scratch. Writing is :class:`IndexWriter`'s job (driven by
:mod:`lit3r.build`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from graph.sqlite import Database, batched_in
from graph.search.bm25 import BM25Field, Segment, load_part, postings_of, save_part, sum_postings, write_segment
from graph.search.protocol import Hit
from graph.search.tokenize import tokenize

DB_NAME = "lit3r.sqlite"
LIVE, DEAD, STAGED = 1, 0, 2
FIELDS = ("chunks", "papers")
TF_DTYPE = {"chunks": np.uint16, "papers": np.uint32}
#: Rows per block of the exact dense scan (float32 scores of one block stay small).
DENSE_BLOCK = 1 << 18
#: Live segments per field before a build merges them into one.
MAX_SEGMENTS = 8

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vocab (term TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rows (row INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL, paper_id TEXT NOT NULL,
                                 state INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rows_by_chunk ON rows(chunk_id);
CREATE INDEX IF NOT EXISTS rows_dead ON rows(row) WHERE state = 0;
CREATE INDEX IF NOT EXISTS rows_staged ON rows(row) WHERE state = 2;
CREATE TABLE IF NOT EXISTS pdocs (ord INTEGER PRIMARY KEY, paper_id TEXT NOT NULL, state INTEGER NOT NULL,
                                  head TEXT NOT NULL, chunk_hash TEXT NOT NULL, paper_hash TEXT NOT NULL,
                                  first_row INTEGER NOT NULL, n_rows INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS pdocs_by_paper ON pdocs(paper_id, state);
CREATE INDEX IF NOT EXISTS pdocs_by_hash ON pdocs(chunk_hash);
CREATE TABLE IF NOT EXISTS segments (field TEXT NOT NULL, seg INTEGER NOT NULL, n_terms INTEGER NOT NULL,
                                     n_postings INTEGER NOT NULL, PRIMARY KEY (field, seg));
CREATE TABLE IF NOT EXISTS parts (field TEXT NOT NULL, part INTEGER NOT NULL, PRIMARY KEY (field, part));
"""


def _meta(db_or_con, key: str, default=None):
    row = db_or_con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return json.loads(row[0]) if row else default


class IndexDamaged(RuntimeError):
    """An index file is missing, short or unreadable; the message says how to rebuild."""


def stored_dim(folder: Path) -> Optional[int]:
    """The vector dimension of the index in ``folder``, or None when there is none (or it is unreadable)."""
    path = Path(folder) / DB_NAME
    if not path.is_file():
        return None
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return _meta(con, "dim")
    except sqlite3.DatabaseError:
        return None
    finally:
        con.close()


def _top(scores: np.ndarray, k: int) -> np.ndarray:
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
            raise FileNotFoundError(f"the index in {folder} was built by an older Lit3R: run `lit3r ingest PDF_DIR` "
                                    f"again to rebuild it (parsed papers are kept)")
        if not path.is_file() and (folder.with_name(folder.name + ".old") / DB_NAME).is_file():
            raise FileNotFoundError(f"a rebuild of the index in {folder} was interrupted while it swapped the new "
                                    f"index in: run `lit3r ingest PDF_DIR` again to finish it")
        if not path.is_file() and (folder.with_name(folder.name + ".new") / DB_NAME).is_file():
            raise FileNotFoundError(f"the first build of the index in {folder} was interrupted before it finished: "
                                    f"run `lit3r ingest PDF_DIR` again to resume it")
        if not path.is_file():
            raise FileNotFoundError(f"no corpus index in {folder}: run `lit3r ingest PDF_DIR` first (or pass --home)")
        try:
            built = _meta(Database(path).connect(), "limit_rows")
        except sqlite3.DatabaseError as exc:
            raise FileNotFoundError(f"the index in {folder} is unreadable ({exc}): run `lit3r ingest PDF_DIR "
                                    f"--rebuild` to rebuild it") from None
        if built is None:
            raise FileNotFoundError(f"no corpus index in {folder}: run `lit3r ingest PDF_DIR` first (or pass --home)")
        try:
            return cls(folder, k1, b, db)
        except (OSError, ValueError, sqlite3.DatabaseError) as exc:
            raise FileNotFoundError(f"the index in {folder} is damaged ({exc}): run `lit3r ingest PDF_DIR "
                                    f"--rebuild` to rebuild it") from None

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
        gen = _meta(self.db, "generation", 0)
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
            dim = _meta(db, "dim", 0) or 0
            limit_rows, limit_ords = _meta(db, "limit_rows", 0) or 0, _meta(db, "limit_ords", 0) or 0
            k1 = self._k1 if self._k1 is not None else _meta(db, "k1", 1.5)
            b = self._b if self._b is not None else _meta(db, "b", 0.75)
            dead_rows = self._dead("rows", "row", limit_rows)
            dead_ords = self._dead("pdocs", "ord", limit_ords)
            vec = self.folder / "chunk_vectors.f32"
            self._check_size(vec, limit_rows * dim * 4)
            vectors = (np.memmap(vec, dtype=np.float32, mode="r", shape=(limit_rows, dim)).view(np.ndarray)
                       if limit_rows and dim else np.zeros((0, dim), np.float32))
            fields = {f: self._field(f, limit_rows if f == "chunks" else limit_ords,
                                     dead_rows if f == "chunks" else dead_ords, k1, b) for f in FIELDS}
            return _View(gen, dim, limit_rows, limit_ords, _meta(db, "live_chunks", 0) or 0, vectors, dead_rows, fields)

    @staticmethod
    def _check_size(path: Path, need: int) -> None:
        have = path.stat().st_size if path.is_file() else -1
        if need and have < need:
            raise ValueError(f"{path.name} holds {max(have, 0):,} bytes, the index needs {need:,}")

    # the current generation's figures
    dim = property(lambda self: self._v().dim)

    @property
    def encoder(self) -> Optional[str]:
        """The chunk encoder the index was built with (``manifest.json``), None when unknown."""
        try:
            m = json.loads((self.folder / "manifest.json").read_text(encoding="utf-8"))
            return m.get("models", {}).get("chunk_encoder")
        except (OSError, ValueError, AttributeError):
            return None
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
        return BM25Field(segs, dl, limit, dead, _meta(self.db, f"n_live_{field}", 0),
                         _meta(self.db, f"sum_dl_{field}", 0), k1, b)

    # -- small-corpus convenience ----------------------------------------------------------
    @classmethod
    def build(cls, folder: Path, chunk_ids: Sequence[str], chunk_texts: Sequence[str], chunk_papers: Sequence[str],
              vectors: np.ndarray, k1: float = 1.5, b: float = 0.75, head_chars: int = 4000) -> "EmbeddedSearchIndex":
        """Index a small corpus given as lists (tests): chunk ``i`` has text ``chunk_texts[i]``,
        belongs to paper ``chunk_papers[i]`` (a paper's text is its chunks' texts joined by
        newlines) and has the L2-normalised float32 vector ``vectors[i]``. Raises ValueError when
        the lengths disagree."""
        vectors = np.asarray(vectors, np.float32)
        if not (len(chunk_ids) == len(chunk_texts) == len(chunk_papers) == len(vectors)):
            raise ValueError("ids, texts, papers and vectors must have the same lengths")
        w = IndexWriter(Path(folder), dim=vectors.shape[1], k1=k1, b=b, head_chars=head_chars)
        w.begin()
        for pid in dict.fromkeys(chunk_papers):
            sel = [i for i, p in enumerate(chunk_papers) if p == pid]
            texts = [chunk_texts[i] for i in sel]
            w.add_paper(pid, [chunk_ids[i] for i in sel], texts, vectors[sel], chunk_hash=f"{pid}:{len(sel)}",
                        paper_hash=pid, head="\n".join(texts))
        w.flush_batch()
        w.publish(removed=[])
        w.commit()
        w.cleanup()
        w.close()
        return cls.open(folder, k1=k1, b=b)

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
        KeyError for an unknown chunk id."""
        rows = self.rows_of(chunk_ids)
        missing = [c for c in chunk_ids if c not in rows]
        if missing:
            raise KeyError(missing[0])
        view = self._v()
        idx = np.fromiter((rows[c] for c in chunk_ids), np.int64, len(chunk_ids))
        return np.asarray(view.vectors[idx]) if len(idx) else np.zeros((0, view.dim), np.float32)

    def paper_head(self, paper_id: str, chars: int) -> str:
        """The first ``chars`` indexed characters of a paper (the Relate BM25 seed query);
        KeyError when unknown."""
        row = self.db.execute("SELECT head FROM pdocs WHERE paper_id = ? AND state = 1", (paper_id,)).fetchone()
        if row is None:
            raise KeyError(paper_id)
        return row[0][:chars]

    # -- search ----------------------------------------------------------------------------
    def _term_ids(self, query: str) -> list[int]:
        toks = tokenize(query)
        with self._lock:
            todo = [t for t in dict.fromkeys(toks) if t not in self._vocab]
            if todo:
                found = dict(batched_in(self.db, "SELECT term, id FROM vocab WHERE term IN ({in_})", todo))
                if len(self._vocab) > 100_000:
                    self._vocab.clear()
                for t in todo:
                    self._vocab[t] = found.get(t, -1)
            return [self._vocab[t] for t in toks if self._vocab.get(t, -1) >= 0]

    def _bm25(self, field: str, query: str, k: int, ids_of) -> list[Hit]:
        terms = self._term_ids(query)
        if not terms or k <= 0:
            return []
        scores = self._v().fields[field].scores(terms)
        top = _top(scores, k)
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
                top = _top(s[j], k)
                cand_s[j].append(s[j, top])
                cand_i[j].append(top + start)
        picks, need = [], set()
        for j in range(len(q)):
            scores, rows = np.concatenate(cand_s[j]), np.concatenate(cand_i[j])
            top = _top(scores, k)
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


class IndexWriter:
    """Stages papers into the index and publishes them (module docstring); used by the build.

    Per batch: :meth:`add_paper` for each new or changed paper (vectors appended, tokens turned
    into postings), then :meth:`flush_batch` writes the batch's postings as part files. The
    caller commits; an interrupted build keeps its committed batches (:meth:`staged`) and
    resumes. :meth:`publish` makes the staged papers live, deletes ``removed`` and replaced
    papers and turns the parts into one new segment per field, in the caller's transaction.
    """

    def __init__(self, folder: Path, dim: int, k1: float = 1.5, b: float = 0.75, head_chars: int = 4000) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.db = Database(self.folder / DB_NAME, readonly=False)
        self.con = self.db.connect()
        self.con.executescript(SCHEMA)
        old_dim = _meta(self.con, "dim")
        if old_dim not in (None, dim):
            raise ValueError(f"the index in {folder} holds {old_dim}-d vectors, the encoder gives {dim}-d: rebuild it")
        self.dim, self.head_chars = dim, head_chars
        self._set("dim", dim)
        self._set("k1", k1)
        self._set("b", b)
        self.vocab: dict[str, int] = dict(self.con.execute("SELECT term, id FROM vocab"))
        self._vocab_saved = len(self.vocab)
        self.next_row = _meta(self.con, "next_row", 0)
        self.next_ord = _meta(self.con, "next_ord", 0)
        # a crash after appending but before the commit leaves a tail that nothing refers to; a
        # file shorter than what was committed is damage, never padded
        for name, n, width in (("chunk_vectors.f32", self.next_row, 4 * dim), ("paper_vectors.f32", self.next_ord, 4 * dim),
                               ("chunks.dl", self.next_row, 4), ("papers.dl", self.next_ord, 4)):
            path = self.folder / name
            have = path.stat().st_size if path.is_file() else 0
            if have < n * width:
                self.db.close()
                raise IndexDamaged(f"the index in {folder} is damaged ({name} holds {have:,} bytes, it needs "
                                   f"{n * width:,}): run `lit3r ingest PDF_DIR --rebuild` to rebuild it")
            with open(path, "ab") as fh:
                fh.truncate(n * width)
        self._files = {name: open(self.folder / name, "ab") for name in
                       ("chunk_vectors.f32", "paper_vectors.f32", "chunks.dl", "papers.dl")}
        self._batch: list[tuple] = []  # (row0, ord, token lists)

    def _set(self, key: str, value) -> None:
        self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def begin(self) -> None:
        self.con.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        for fh in self._files.values():
            fh.flush()
            os.fsync(fh.fileno())
        self._set("next_row", self.next_row)
        self._set("next_ord", self.next_ord)
        self.con.execute("COMMIT")

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        self.db.close()

    # -- staging ---------------------------------------------------------------------------
    def staged(self) -> dict[str, tuple[str, str]]:
        """``{paper_id: (chunk_hash, paper_hash)}`` of papers staged and not yet published."""
        return {p: (c, h) for p, c, h in self.con.execute(
            "SELECT paper_id, chunk_hash, paper_hash FROM pdocs WHERE state = 2")}

    def live(self) -> dict[str, tuple[str, str]]:
        """``{paper_id: (chunk_hash, paper_hash)}`` of the published papers."""
        return {p: (c, h) for p, c, h in self.con.execute(
            "SELECT paper_id, chunk_hash, paper_hash FROM pdocs WHERE state = 1")}

    def unstage(self, paper_ids: Sequence[str]) -> None:
        """Drop staged versions of these papers: their rows become deleted documents (they stay
        in the files, masked like any deleted row, and their vectors can still be reused)."""
        for pid in paper_ids:
            self.con.execute("UPDATE rows SET state = 0 WHERE paper_id = ? AND state = 2", (pid,))
            self.con.execute("UPDATE pdocs SET state = 0 WHERE paper_id = ? AND state = 2", (pid,))

    def cached_vectors(self, chunk_hash: str, n: int) -> Optional[np.ndarray]:
        """Chunk vectors already in the file for a paper with this chunk-text hash, or None."""
        row = self.con.execute("SELECT first_row, n_rows FROM pdocs WHERE chunk_hash = ? AND n_rows = ? "
                               "ORDER BY state DESC LIMIT 1", (chunk_hash, n)).fetchone()
        if row is None or n == 0:
            return None
        self._files["chunk_vectors.f32"].flush()
        mm = np.memmap(self.folder / "chunk_vectors.f32", dtype=np.float32, mode="r",
                       offset=row[0] * 4 * self.dim, shape=(n, self.dim))
        return np.array(mm)

    def cached_paper_vector(self, paper_hash: str) -> Optional[np.ndarray]:
        """The paper-encoder vector already stored for this paper text, or None."""
        row = self.con.execute("SELECT ord FROM pdocs WHERE paper_hash = ? ORDER BY state DESC LIMIT 1",
                               (paper_hash,)).fetchone()
        if row is None:
            return None
        self._files["paper_vectors.f32"].flush()
        mm = np.memmap(self.folder / "paper_vectors.f32", dtype=np.float32, mode="r",
                       offset=row[0] * 4 * self.dim, shape=(self.dim,))
        return np.array(mm)

    def add_paper(self, paper_id: str, chunk_ids: Sequence[str], texts: Sequence[str], vectors: np.ndarray,
                  *, chunk_hash: str, paper_hash: str, head: str, paper_vector: Optional[np.ndarray] = None) -> None:
        """Stage one paper: ``vectors`` (len(chunk_ids), dim) float32 L2-normalised chunk vectors,
        ``paper_vector`` (dim,) its paper-encoder vector (zeros when None)."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(chunk_ids), self.dim)
        row0, ord_ = self.next_row, self.next_ord
        self._files["chunk_vectors.f32"].write(vectors.tobytes())
        pv = np.zeros(self.dim, np.float32) if paper_vector is None else np.asarray(paper_vector, np.float32)
        self._files["paper_vectors.f32"].write(pv.tobytes())
        toks = [tokenize(t) for t in texts]
        dl = np.array([len(t) or 1 for t in toks], np.uint32)
        self._files["chunks.dl"].write(dl.tobytes())
        self._files["papers.dl"].write(np.uint32(sum(len(t) for t in toks) or 1).tobytes())
        self.con.executemany("INSERT INTO rows VALUES (?, ?, ?, 2)",
                             [(row0 + i, c, paper_id) for i, c in enumerate(chunk_ids)])
        self.con.execute("INSERT INTO pdocs VALUES (?, ?, 2, ?, ?, ?, ?, ?)",
                         (ord_, paper_id, head[: self.head_chars], chunk_hash, paper_hash, row0, len(chunk_ids)))
        self._batch.append((row0, ord_, toks))
        self.next_row += len(chunk_ids)
        self.next_ord += 1

    def flush_batch(self) -> None:
        """Turn the batch's tokens into postings part files (chunk and paper fields) and register
        them; new vocabulary terms are saved with them."""
        if not self._batch:
            return
        vocab = self.vocab
        docs: list[int] = []
        terms: list[int] = []
        groups_rows, groups_ords = [], []
        for row0, ord_, toks in self._batch:
            for i, t in enumerate(toks):
                terms.extend([vocab.setdefault(x, len(vocab)) for x in t])
                docs.extend([row0 + i] * len(t))
            groups_rows.append((row0, len(toks)))
            groups_ords.append(ord_)
        d = np.asarray(docs, np.uint32)
        chunk_post = postings_of(d, np.asarray(terms, np.uint32), TF_DTYPE["chunks"])
        # paper postings: chunk doc -> paper ord, relative to the batch's first row
        base = groups_rows[0][0]
        n_rows = groups_rows[-1][0] + groups_rows[-1][1] - base
        group = np.zeros(max(n_rows, 1), np.uint32)
        for (row0, n), ord_ in zip(groups_rows, groups_ords):
            group[row0 - base: row0 - base + n] = ord_
        rel = (chunk_post[0], chunk_post[1] - np.uint32(base), chunk_post[2])
        paper_post = sum_postings(group, rel, TF_DTYPE["papers"])
        for field, post in (("chunks", chunk_post), ("papers", paper_post)):
            part = (self.con.execute("SELECT COALESCE(MAX(part), 0) + 1 FROM parts WHERE field = ?", (field,))
                    .fetchone()[0])
            save_part(self.folder / f"part-{field}-{part}.npz", post)
            self.con.execute("INSERT INTO parts VALUES (?, ?)", (field, part))
        new = list(vocab.items())[self._vocab_saved:]
        self.con.executemany("INSERT OR IGNORE INTO vocab VALUES (?, ?)", new)
        self._vocab_saved = len(vocab)
        self._batch = []

    # -- publishing ------------------------------------------------------------------------
    def publish(self, removed: Sequence[str]) -> dict[str, int]:
        """Make staged papers live; delete ``removed`` papers and earlier versions of staged
        ones; build one segment per field from the parts (merging when a field has more than
        :data:`MAX_SEGMENTS`). Returns counts. Runs in the caller's transaction; segment
        folders are written before it commits, and old ones are removed by :meth:`cleanup`."""
        con = self.con
        con.execute("CREATE TEMP TABLE IF NOT EXISTS gone_s (paper_id TEXT PRIMARY KEY)")
        con.execute("DELETE FROM gone_s")
        con.executemany("INSERT OR IGNORE INTO gone_s VALUES (?)", [(p,) for p in removed])
        con.execute("INSERT OR IGNORE INTO gone_s SELECT paper_id FROM pdocs WHERE state = 2")
        con.execute("UPDATE rows SET state = 0 WHERE state = 1 AND paper_id IN (SELECT paper_id FROM gone_s)")
        con.execute("UPDATE pdocs SET state = 0 WHERE state = 1 AND paper_id IN (SELECT paper_id FROM gone_s)")
        n_terms = len(self.vocab)
        for field, table, col, limit in (("chunks", "rows", "row", self.next_row),
                                         ("papers", "pdocs", "ord", self.next_ord)):
            staged = np.zeros(limit, bool)
            staged[np.fromiter((r[0] for r in con.execute(f"SELECT {col} FROM {table} WHERE state = 2")), np.int64)] = True
            parts = [r[0] for r in con.execute("SELECT part FROM parts WHERE field = ? ORDER BY part", (field,))]
            segs = [r[0] for r in con.execute("SELECT seg FROM segments WHERE field = ? ORDER BY seg", (field,))]
            nxt = _meta(con, f"next_seg_{field}", 1)
            if parts:
                paths = [self.folder / f"part-{field}-{p}.npz" for p in parts]
                n = write_segment(self.folder / f"{field}-{nxt}", [lambda p=p: load_part(p) for p in paths],
                                  n_terms, keep=staged, tf_dtype=TF_DTYPE[field])
                con.execute("INSERT INTO segments VALUES (?, ?, ?, ?)", (field, nxt, n_terms, n))
                con.execute("DELETE FROM parts WHERE field = ?", (field,))
                segs.append(nxt)
                nxt += 1
            if len(segs) > MAX_SEGMENTS:
                dead = np.zeros(limit, bool)
                dead[np.fromiter((r[0] for r in con.execute(f"SELECT {col} FROM {table} WHERE state = 0")), np.int64)] = True
                n = write_segment(self.folder / f"{field}-{nxt}",
                                  [lambda s=s: Segment(self.folder / f"{field}-{s}").as_part() for s in segs],
                                  n_terms, keep=~dead, tf_dtype=TF_DTYPE[field])
                con.execute("DELETE FROM segments WHERE field = ?", (field,))
                con.execute("INSERT INTO segments VALUES (?, ?, ?, ?)", (field, nxt, n_terms, n))
                nxt += 1
            self._set(f"next_seg_{field}", nxt)
        con.execute("UPDATE rows SET state = 1 WHERE state = 2")
        con.execute("UPDATE pdocs SET state = 1 WHERE state = 2")
        stats = {}
        for field, table, col, limit in (("chunks", "rows", "row", self.next_row),
                                         ("papers", "pdocs", "ord", self.next_ord)):
            self._files[f"{field}.dl"].flush()
            dl = np.memmap(self.folder / f"{field}.dl", dtype=np.uint32, mode="r", shape=(limit,)) if limit \
                else np.zeros(0, np.uint32)
            dead = np.fromiter((r[0] for r in con.execute(f"SELECT {col} FROM {table} WHERE state = 0")), np.int64)
            n_live = limit - len(dead)
            sum_dl = int(dl.sum(dtype=np.int64)) - int(dl[dead].sum(dtype=np.int64)) if limit else 0
            self._set(f"n_live_{field}", n_live)
            self._set(f"sum_dl_{field}", sum_dl)
            stats[field] = n_live
        self._set("limit_rows", self.next_row)
        self._set("limit_ords", self.next_ord)
        self._set("generation", (_meta(con, "generation", 0) or 0) + 1)
        self._set("live_chunks", stats["chunks"])
        return stats

    def cleanup(self) -> None:
        """After the commit: remove part files and segment folders no longer registered."""
        live = {f"{f}-{s}" for f, s in self.con.execute("SELECT field, seg FROM segments")}
        parts = {f"part-{f}-{p}.npz" for f, p in self.con.execute("SELECT field, part FROM parts")}
        for p in self.folder.iterdir():
            if p.is_dir() and p.name.split("-")[0] in FIELDS and p.name not in live:
                shutil.rmtree(p, ignore_errors=True)
            elif p.name.startswith("part-") and p.name not in parts:
                p.unlink(missing_ok=True)

    def live_paper_vectors(self) -> tuple[list[str], np.ndarray]:
        """``(paper ids sorted, (n, dim) paper vectors)`` of the live papers (after publish)."""
        rows = self.con.execute("SELECT paper_id, ord FROM pdocs WHERE state = 1 ORDER BY paper_id").fetchall()
        self._files["paper_vectors.f32"].flush()
        if not rows:
            return [], np.zeros((0, self.dim), np.float32)
        mm = np.memmap(self.folder / "paper_vectors.f32", dtype=np.float32, mode="r", shape=(self.next_ord, self.dim))
        return [r[0] for r in rows], np.asarray(mm[[r[1] for r in rows]])

