"""Segmented BM25 on disk: Lucene scoring over memory-mapped postings, built in a stream.

Why not bm25s' own indexer: it needs the whole tokenised corpus as Python lists and builds a
precomputed score matrix, so at the seed's 2.56M chunks it needs tens of GB and every added
paper changes every score (N, avgdl and df are global). Here, as in Lucene, postings store raw
term frequencies and the score is computed at query time (seed paper section 2.1: BM25 with
k1=1.5, b=0.75; bm25s' ``method="lucene"`` formulas, which the tests check score for score):

    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    w(t, d) = idf(t) * tf / (tf + k1 * (1 - b + b * dl(d) / avgdl))

N, avgdl and df count live documents only, so a corpus updated in place scores exactly like one
built from scratch. A repeated query term counts once per occurrence (as bm25s and a Lucene
``match`` query do); a document without tokens has length 1 (as bm25s indexes it).

On disk, per field (``chunks``, ``papers``): ``<field>.dl`` (uint32 document lengths by doc id,
append-only) and one folder per segment, ``<field>-<n>/`` with ``indptr.npy`` (int64, term id ->
postings start), ``docs.npy`` (uint32 doc ids) and ``tf.npy`` (term frequencies). Term ids come
from one vocabulary (SQLite table ``vocab``). A build writes each batch's postings as a part
file; :func:`write_segment` counting-sorts the parts into a segment with memory bounded by one
part plus the term counts.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence, Union

import numpy as np
from numpy.lib.format import open_memmap

from graph.errors import IndexDamaged, PermissionDenied

Postings = tuple[np.ndarray, np.ndarray, np.ndarray]  # (term ids, doc ids, tf), equal lengths


def postings_of(docs: np.ndarray, terms: np.ndarray, tf_dtype=np.uint32) -> Postings:
    """Postings ``(term ids, doc ids, tf)`` from one entry per token occurrence: ``docs[i]``
    holds token ``terms[i]``. Sorted by (doc, term)."""
    if len(docs) == 0:
        return np.zeros(0, np.uint32), np.zeros(0, np.uint32), np.zeros(0, tf_dtype)
    key = docs.astype(np.uint64) << np.uint64(32) | terms.astype(np.uint64)
    uniq, counts = np.unique(key, return_counts=True)
    return ((uniq & np.uint64(0xFFFFFFFF)).astype(np.uint32), (uniq >> np.uint64(32)).astype(np.uint32),
            counts.astype(tf_dtype))


def sum_postings(groups: np.ndarray, post: Postings, tf_dtype=np.uint32) -> Postings:
    """Postings of coarser documents: ``groups[doc]`` is the coarse doc of each fine doc (a
    paper's postings from its chunks' postings); tf adds up."""
    terms, docs, tf = post
    if len(terms) == 0:
        return terms, docs, tf.astype(tf_dtype)
    key = groups[docs].astype(np.uint64) << np.uint64(32) | terms.astype(np.uint64)
    uniq, inv = np.unique(key, return_inverse=True)
    sums = np.bincount(inv.ravel(), weights=tf, minlength=len(uniq))
    return ((uniq & np.uint64(0xFFFFFFFF)).astype(np.uint32), (uniq >> np.uint64(32)).astype(np.uint32),
            sums.astype(tf_dtype))


def save_part(path: Path, post: Postings) -> None:
    """Write one batch's postings (a part file, ``.npz``), atomically."""
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, terms=post[0], docs=post[1], tf=post[2])
    tmp.replace(path)


def load_part(path: Path) -> Postings:
    with np.load(path) as z:
        return z["terms"], z["docs"], z["tf"]


def write_segment(folder: Path, parts: Iterable[Union[Postings, Callable[[], Postings]]], n_terms: int, keep: Optional[np.ndarray] = None,
                  tf_dtype=np.uint32) -> int:
    """Counting-sort ``parts`` into a segment folder; returns the number of postings.

    ``parts`` is iterated twice (a sequence, or a callable-free re-iterable such as a list of
    loaders); ``keep``: a boolean mask by doc id, postings of other docs are dropped. Memory:
    one part plus ``n_terms`` counters; the outputs are memory-mapped files.
    """
    parts = list(parts) if not isinstance(parts, (list, tuple)) else parts

    def each():
        for p in parts:
            t, d, f = p() if callable(p) else p
            if keep is not None and len(d):
                m = keep[d]
                t, d, f = t[m], d[m], f[m]
            yield t, d, f

    counts = np.zeros(n_terms, np.int64)
    for t, _, _ in each():
        counts += np.bincount(t, minlength=n_terms)[:n_terms]
    indptr = np.zeros(n_terms + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    nnz = int(indptr[-1])
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    np.save(tmp / "indptr.npy", indptr)
    docs_out = open_memmap(tmp / "docs.npy", mode="w+", dtype=np.uint32, shape=(nnz,))
    tf_out = open_memmap(tmp / "tf.npy", mode="w+", dtype=tf_dtype, shape=(nnz,))
    cursor = indptr[:-1].copy()
    for t, d, f in each():
        if not len(t):
            continue
        order = np.argsort(t, kind="stable")
        t, d, f = t[order], d[order], f[order]
        uniq, first, cnt = np.unique(t, return_index=True, return_counts=True)
        pos = cursor[t] + (np.arange(len(t)) - np.repeat(first, cnt))
        docs_out[pos] = d
        tf_out[pos] = f
        cursor[uniq] += cnt
    docs_out.flush()
    tf_out.flush()
    del docs_out, tf_out
    shutil.rmtree(folder, ignore_errors=True)
    tmp.replace(folder)
    return nnz


class Segment:
    """One memory-mapped segment (read-only)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        # plain ndarray views of the memory maps (np.memmap's per-slice overhead is 10 us)
        try:
            self.indptr = np.load(self.folder / "indptr.npy", mmap_mode="r", allow_pickle=False).view(np.ndarray)
            self.docs = np.load(self.folder / "docs.npy", mmap_mode="r", allow_pickle=False).view(np.ndarray)
            self.tf = np.load(self.folder / "tf.npy", mmap_mode="r", allow_pickle=False).view(np.ndarray)
        except PermissionError as exc:  # the fix is its permissions, not a rebuild
            raise PermissionDenied.of(exc, self.folder) from None
        except (EOFError, ValueError, OSError) as exc:  # cut short, garbled or missing
            raise IndexDamaged(f"the BM25 segment {self.folder} is unreadable ({type(exc).__name__}): run "
                               f"`lit3r ingest PDF_DIR --rebuild` to rebuild the index") from None

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """``(doc ids, tf)`` of one term (empty when the term came after this segment)."""
        if term + 1 >= len(self.indptr):
            return self.docs[:0], self.tf[:0]
        a, b = int(self.indptr[term]), int(self.indptr[term + 1])
        return self.docs[a:b], self.tf[a:b]

    def as_part(self) -> Postings:
        """All postings as ``(term ids, doc ids, tf)`` (for a merge)."""
        counts = np.diff(self.indptr)
        return (np.repeat(np.arange(len(counts), dtype=np.uint32), counts), np.asarray(self.docs),
                np.asarray(self.tf))


class BM25Field:
    """Query side of one field: its live segments, document lengths and live-document stats.

    ``limit``: doc ids at or past it are not published yet; ``dead``: boolean mask (length
    ``limit``) of deleted docs or None; ``n_live`` and ``sum_dl``: N and the total length of the
    live docs. Scores are float32 arrays of length ``limit`` (0 for non-matching docs).
    """

    def __init__(self, segments: Sequence[Segment], dl: np.ndarray, limit: int, dead: Optional[np.ndarray],
                 n_live: int, sum_dl: int, k1: float = 1.5, b: float = 0.75) -> None:
        self.segments = list(segments)
        self.dl = dl
        self.limit = limit
        self.dead = dead
        self.n_live = n_live
        self.avgdl = sum_dl / n_live if n_live else 1.0
        self.k1, self.b = k1, b

    def _damaged(self) -> IndexDamaged:
        """The error of a posting whose document id is past the documents (a damaged docs.npy)."""
        where = self.segments[0].folder.parent if self.segments else "the index"
        return IndexDamaged(f"the index in {where} is damaged (a BM25 posting names a document past the "
                            f"{self.limit:,} documents): run `lit3r ingest PDF_DIR --rebuild` to rebuild it")

    def doc_freq(self, term_id: int) -> int:
        """Live documents holding the term (the df of its IDF). IndexDamaged for a posting past
        the documents."""
        df = 0
        try:
            for seg in self.segments:
                d, _ = seg.postings(term_id)
                df += int(len(d) if self.dead is None else np.count_nonzero(~self.dead[d])) if len(d) else 0
        except IndexError:
            raise self._damaged() from None
        return df

    def scores(self, term_ids: Sequence[int]) -> np.ndarray:
        """BM25 scores of every doc for a query given as term ids (with repeats). IndexDamaged
        for a posting past the documents (a damaged ``docs.npy``)."""
        try:
            return self._scores(term_ids)
        except IndexError:
            raise self._damaged() from None

    def _scores(self, term_ids: Sequence[int]) -> np.ndarray:
        scores = np.zeros(self.limit, np.float32)
        if not self.n_live:
            return scores
        counts: dict[int, int] = {}
        for t in term_ids:
            counts[t] = counts.get(t, 0) + 1
        norm = np.float32(self.k1 / self.avgdl * self.b)
        base = np.float32(self.k1 * (1 - self.b))
        for t, mult in counts.items():
            lists = []
            for seg in self.segments:
                d, f = seg.postings(t)
                if len(d):
                    if self.dead is not None:
                        m = ~self.dead[d]
                        d, f = d[m], f[m]
                    lists.append((d, f))
            df = sum(len(d) for d, _ in lists)
            if not df:
                continue
            idf = np.float32(np.log(1 + (self.n_live - df + 0.5) / (df + 0.5)))
            for d, f in lists:
                tf = f.astype(np.float32)
                w = idf * tf / (tf + (base + norm * self.dl[d].astype(np.float32)))
                scores[d] += w * mult if mult > 1 else w
        return scores
