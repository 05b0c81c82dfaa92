"""The embedded search index's file check (``lit3r doctor``, and the vector sample read when an
index is opened): the database's header, ``quick_check``, tables and meta; the vector and
document-length files' sizes; a sample of vector rows; each BM25 segment's ``.npy`` files.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Optional

import numpy as np

from graph.errors import IndexDamaged, NotBuiltError, PermissionDenied, first_unreadable
from graph.search.embedded_schema import DB_NAME, TF_DTYPE
from graph.sqlite import Database

#: ``PRAGMA quick_check`` runs on index databases up to this size (about 40 ms per 25 MB on 2
#: cores); a larger one gets the header, table and meta checks only, to keep `lit3r doctor` fast.
QUICK_CHECK_BYTES = 512 << 20
#: Vector rows read (evenly spaced) to see that a vector file holds unit vectors, not zeros or garbage.
SAMPLE_ROWS = 256
#: The tables every built index database holds (its search rows and the graph store's records).
TABLES = ("meta", "vocab", "rows", "pdocs", "segments", "parts", "papers", "chunks", "refs", "cites", "neighbours")
_FIX = "run `lit3r ingest PDF_DIR --rebuild` to rebuild it"


def vectors_damage(vectors: np.ndarray, strict: bool = True) -> Optional[str]:
    """Why a ``(rows, dim)`` float32 map of L2-normalised vectors is damaged, from
    :data:`SAMPLE_ROWS` evenly spaced rows, or None: a non-finite value, every sampled row zero
    (a zeroed file) or, with ``strict``, a non-zero row whose norm is not 1 (garbage bytes)."""
    if not len(vectors):
        return None
    idx = np.unique(np.linspace(0, len(vectors) - 1, min(SAMPLE_ROWS, len(vectors))).astype(np.int64))
    sample = np.asarray(vectors[idx], np.float64)
    if not np.isfinite(sample).all():
        return "non-finite values"
    norms = np.linalg.norm(sample, axis=1)
    if not norms.any():
        return f"only zeros in the {len(idx)} row(s) read"
    off = (norms > 0) & (np.abs(norms - 1) > 0.01)
    if strict and off.any():
        row = int(idx[np.flatnonzero(off)[0]])
        return f"row {row} has norm {norms[off][0]:.3g}, not 1"
    return None


def _damaged(folder: Path, what: str) -> IndexDamaged:
    return IndexDamaged(f"the index in {folder} is damaged ({what}): {_FIX}")


def check_files(folder: Path, quick_check_bytes: int = QUICK_CHECK_BYTES) -> dict:
    """Cheap check of every file of the built index in ``folder`` (vectors are sampled; the
    postings are read once, for their doc ids): the database's header, a ``PRAGMA quick_check`` when it is at most
    ``quick_check_bytes`` (read-only), its tables and meta; the vector and document-length files'
    sizes; a sample of vector rows (:func:`vectors_damage`); each BM25 segment's three ``.npy``
    headers, shapes, postings count and doc ids (:func:`_check_segment`). Returns ``{"chunks", "rows", "papers", "segments",
    "quick_check"}`` (live chunks, vector rows, paper documents, segment folders, whether
    quick_check ran). Raises NotBuiltError when there is no database, IndexDamaged naming the
    first damaged file and the fix otherwise."""
    folder = Path(folder)
    path = folder / DB_NAME
    if not path.is_file():
        raise NotBuiltError(f"no corpus index in {folder}: run `lit3r ingest PDF_DIR` first (or pass --home)")
    with path.open("rb") as fh:
        if fh.read(16) != b"SQLite format 3\x00":
            raise _damaged(folder, f"{DB_NAME} is not a SQLite database")
    size = path.stat().st_size
    db = Database(path, readonly=True)
    try:
        try:
            con = db.connect()
            if size <= quick_check_bytes:
                first = con.execute("PRAGMA quick_check").fetchone()
                if not first or first[0] != "ok":
                    raise _damaged(folder, f"{DB_NAME} fails quick_check: {' '.join(str(first and first[0]).split())[:100]}")
            have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            missing = [t for t in TABLES if t not in have]
            if missing:
                raise _damaged(folder, f"{DB_NAME} lacks the table {missing[0]}")
            meta = {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM meta")}
            segments = con.execute("SELECT field, seg, n_terms, n_postings FROM segments ORDER BY field, seg").fetchall()
        except sqlite3.DatabaseError as exc:
            blocked = first_unreadable(folder, path, folder / f"{DB_NAME}-wal", folder / f"{DB_NAME}-shm")
            if blocked:  # SQLite says only "unable to open": the fix is the permissions, not a rebuild
                raise PermissionDenied(blocked) from None
            raise _damaged(folder, f"{DB_NAME}: {' '.join(str(exc).split())[:100]}") from None
        except ValueError as exc:
            raise _damaged(folder, f"{DB_NAME}: a meta value is not JSON ({exc})") from None
    finally:
        db.close()
    if meta.get("limit_rows") is None:
        raise NotBuiltError(f"no corpus index in {folder}: run `lit3r ingest PDF_DIR` first (or pass --home)")
    dim = int(meta.get("dim") or 0)
    rows = max(int(meta.get("limit_rows") or 0), int(meta.get("next_row") or 0))
    ords = max(int(meta.get("limit_ords") or 0), int(meta.get("next_ord") or 0))
    for name, n, width in (("chunk_vectors.f32", rows, 4 * dim), ("paper_vectors.f32", ords, 4 * dim),
                           ("chunks.dl", rows, 4), ("papers.dl", ords, 4)):
        f = folder / name
        have_bytes = f.stat().st_size if f.is_file() else -1
        if have_bytes < n * width:
            held = "is missing" if have_bytes < 0 else f"holds {have_bytes:,} bytes"
            raise _damaged(folder, f"{name} {held}, the index needs {n * width:,}")
        if name.endswith(".f32") and n and dim:
            why = vectors_damage(np.memmap(f, dtype=np.float32, mode="r", shape=(n, dim)))
            if why:
                raise _damaged(folder, f"{name}: {why}")
    for field, seg, n_terms, n_postings in segments:
        _check_segment(folder, folder / f"{field}-{seg}", int(n_terms), int(n_postings), TF_DTYPE.get(field, np.uint32),
                       rows if field == "chunks" else ords)
    return {"chunks": int(meta.get("live_chunks") or 0), "rows": rows, "papers": int(meta.get("n_live_papers") or 0),
            "segments": len(segments), "quick_check": size <= quick_check_bytes}


def _check_segment(folder: Path, seg: Path, n_terms: int, n_postings: int, tf_dtype, n_docs: int) -> None:
    """One BM25 segment's files: loadable ``.npy`` headers, ``indptr`` of ``n_terms + 1`` int64
    from 0 to ``n_postings`` and never decreasing, ``docs`` (uint32) and ``tf`` of ``n_postings``
    each, every doc id below ``n_docs`` (one pass over each map: they are read, not sampled)."""
    if not seg.is_dir():
        raise _damaged(folder, f"the BM25 segment folder {seg.name} is missing")
    arrays = {}
    for name in ("indptr", "docs", "tf"):
        f = seg / f"{name}.npy"
        if not f.is_file():
            raise _damaged(folder, f"{seg.name}/{name}.npy is missing")
        try:
            arrays[name] = np.load(f, mmap_mode="r", allow_pickle=False)
        except PermissionError:
            raise PermissionDenied(f) from None
        except (ValueError, EOFError, OSError) as exc:
            short = isinstance(exc, EOFError) or "length is greater than file size" in str(exc)
            raise _damaged(folder, f"{seg.name}/{name}.npy " + ("is cut short" if short else "has no valid .npy header")) \
                from None
    indptr = arrays["indptr"]
    shapes = {"indptr": (n_terms + 1,), "docs": (n_postings,), "tf": (n_postings,)}
    dtypes = {"indptr": np.dtype(np.int64), "docs": np.dtype(np.uint32), "tf": np.dtype(tf_dtype)}
    for name, arr in arrays.items():
        if arr.shape != shapes[name] or arr.dtype.kind not in "iu" or (name != "tf" and arr.dtype != dtypes[name]):
            raise _damaged(folder, f"{seg.name}/{name}.npy holds {arr.dtype}{list(arr.shape)}, the index needs "
                                   f"{dtypes[name]}{list(shapes[name])}")
    if int(indptr[0]) != 0 or int(indptr[-1]) != n_postings:
        raise _damaged(folder, f"{seg.name}/indptr.npy runs from {int(indptr[0])} to {int(indptr[-1])}, the index "
                               f"needs 0 to {n_postings}")
    if len(indptr) > 1 and bool((np.diff(indptr) < 0).any()):
        raise _damaged(folder, f"{seg.name}/indptr.npy decreases somewhere (it must never decrease)")
    top = int(arrays["docs"].max()) if n_postings else -1
    if top >= n_docs:
        raise _damaged(folder, f"{seg.name}/docs.npy names document {top:,}, the index has {n_docs:,}")

