"""Writing the embedded search index (:mod:`graph.search.embedded`): stage papers batch by
batch, then publish them in one transaction (driven by :mod:`lit3r.index.build`).

The layout written is the one :mod:`graph.search.embedded` documents and reads.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from graph.errors import IndexDamaged
from graph.search.bm25 import Postings, Segment, load_part, postings_of, save_part, sum_postings, write_segment
from graph.search.embedded import EmbeddedSearchIndex
from graph.search.embedded_schema import DB_NAME, FIELDS, MAX_SEGMENTS, SCHEMA, TF_DTYPE, meta_value
from graph.search.tokenize import tokenize
from graph.sqlite import Database


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
        old_dim = meta_value(self.con, "dim")
        if old_dim not in (None, dim):
            raise ValueError(f"the index in {folder} holds {old_dim}-d vectors, the encoder gives {dim}-d: rebuild it")
        self.dim, self.head_chars = dim, head_chars
        self._set("dim", dim)
        self._set("k1", k1)
        self._set("b", b)
        self.vocab: dict[str, int] = dict(self.con.execute("SELECT term, id FROM vocab"))
        self._vocab_saved = len(self.vocab)
        self.next_row = meta_value(self.con, "next_row", 0)
        self.next_ord = meta_value(self.con, "next_ord", 0)
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

    def has_vectors(self, chunk_hash: str, n: int) -> bool:
        """Whether :meth:`cached_vectors` finds vectors for this chunk-text hash (nothing read)."""
        return n > 0 and self.con.execute("SELECT 1 FROM pdocs WHERE chunk_hash = ? AND n_rows = ? LIMIT 1",
                                          (chunk_hash, n)).fetchone() is not None

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
            nxt = meta_value(con, f"next_seg_{field}", 1)
            if parts:
                paths = [self.folder / f"part-{field}-{p}.npz" for p in parts]
                n = write_segment(self.folder / f"{field}-{nxt}", [functools.partial(load_part, p) for p in paths],
                                  n_terms, keep=staged, tf_dtype=TF_DTYPE[field])
                con.execute("INSERT INTO segments VALUES (?, ?, ?, ?)", (field, nxt, n_terms, n))
                con.execute("DELETE FROM parts WHERE field = ?", (field,))
                segs.append(nxt)
                nxt += 1
            if len(segs) > MAX_SEGMENTS:
                dead = np.zeros(limit, bool)
                dead[np.fromiter((r[0] for r in con.execute(f"SELECT {col} FROM {table} WHERE state = 0")), np.int64)] = True
                n = write_segment(self.folder / f"{field}-{nxt}",
                                  [functools.partial(_segment_postings, self.folder / f"{field}-{s}") for s in segs],
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
        self._set("generation", (meta_value(con, "generation", 0) or 0) + 1)
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


def _segment_postings(folder: Path) -> Postings:
    """The postings of a segment folder, read when a merge needs them."""
    return Segment(folder).as_part()


def build_index(folder: Path, chunk_ids: Sequence[str], chunk_texts: Sequence[str], chunk_papers: Sequence[str],
                vectors: np.ndarray, k1: float = 1.5, b: float = 0.75, head_chars: int = 4000) -> EmbeddedSearchIndex:
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
    return EmbeddedSearchIndex.open(folder, k1=k1, b=b)
