"""The embedded search index's on-disk names: the database file, the SQLite schema of its
search tables (``rows``, ``pdocs``, ``segments``, ``parts``, ``vocab``, ``meta``), the BM25
fields and the meta values. Shared by the reader (:mod:`graph.search.embedded`), the writer
(:mod:`graph.search.embedded_writer`) and the file check (:mod:`graph.search.embedded_check`),
so that neither imports the other.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Optional

import numpy as np

DB_NAME = "lit3r.sqlite"
LIVE, DEAD, STAGED = 1, 0, 2
FIELDS = ("chunks", "papers")
TF_DTYPE = {"chunks": np.uint16, "papers": np.uint32}
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


def meta_value(db_or_con, key: str, default=None):
    """The JSON value of ``key`` in the index's meta table, or ``default``."""
    row = db_or_con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return json.loads(row[0]) if row else default


def index_readable(folder: Path) -> bool:
    """Whether the index database in ``folder`` opens and answers (False when there is none in
    an existing ``folder``; True when there is no folder, or a folder without a database)."""
    path = folder / DB_NAME
    if not path.is_file():
        return not folder.exists() or folder.is_dir()
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            con.execute("SELECT COUNT(*) FROM meta").fetchone()
        finally:
            con.close()
        return True
    except sqlite3.DatabaseError:
        return False


def stored_dim(folder: Path) -> Optional[int]:
    """The vector dimension of the index in ``folder``, or None when there is none (or it is unreadable)."""
    path = Path(folder) / DB_NAME
    if not path.is_file():
        return None
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return meta_value(con, "dim")
    except sqlite3.DatabaseError:
        return None
    finally:
        con.close()

