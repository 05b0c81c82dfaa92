"""One SQLite database per corpus index: connections, pragmas and batched ``IN`` lookups.

The embedded graph store (:mod:`graph.embedded`) and the embedded search index share one
database file (``index/lit3r.sqlite``) so that a build commits records, search rows and BM25
segments in one transaction: a reader sees the previous corpus or the new one, never a mix.
WAL mode lets readers go on while a build writes. Each thread gets its own connection (sqlite3
connections are not shared across threads); readers open the file read-only (``immutable``
when its folder cannot be written, as on a read-only mount, where WAL files cannot be made).
:meth:`Database.snapshot` holds one read transaction, so that every read of a question sees
the same committed corpus even while a build publishes a new one.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from pathlib import Path
from typing import Iterator, Sequence

#: The error a damaged, cut-short or unreadable database file raises from the embedded stores
#: (``sqlite3.DatabaseError``), and the root of every SQLite error (``sqlite3.Error``): the layers
#: above catch these names, never the driver module.
DatabaseError, Error = sqlite3.DatabaseError, sqlite3.Error

#: Largest number of ``?`` placeholders per statement (SQLite's default limit is 32,766).
IN_BATCH = 900


class Database:
    """A SQLite file opened per thread. ``readonly`` opens with ``mode=ro`` (a missing file raises
    ``sqlite3.OperationalError``); writers create the file and set WAL mode."""

    def __init__(self, path: Path, *, readonly: bool = True) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._local = threading.local()

    def connect(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use)."""
        con = getattr(self._local, "con", None)
        if con is None:
            if self.readonly:
                frozen = "&immutable=1" if not os.access(self.path.parent, os.W_OK) else ""
                con = sqlite3.connect(f"file:{self.path}?mode=ro{frozen}", uri=True, check_same_thread=False,
                                      isolation_level=None)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                con = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("PRAGMA synchronous=NORMAL")
            con.execute("PRAGMA cache_size=-65536")  # 64 MiB page cache per connection
            con.execute("PRAGMA mmap_size=268435456")
            self._local.con = con
        return con

    @contextlib.contextmanager
    def snapshot(self):
        """One read transaction on this thread's connection for the block (re-entrant)."""
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            self.connect().execute("BEGIN")
        self._local.depth = depth + 1
        try:
            yield
        finally:
            self._local.depth = depth
            if depth == 0:
                self.connect().execute("COMMIT")

    @property
    def in_snapshot(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    def execute(self, sql: str, params: Sequence = ()) -> sqlite3.Cursor:
        return self.connect().execute(sql, params)

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


def batched_in(db: Database, sql: str, keys: Sequence, extra: Sequence = ()) -> Iterator[tuple]:
    """Rows of ``sql`` (which holds one ``{in}`` placeholder for a ``?, ?, ...`` list) for all
    ``keys``, in batches of :data:`IN_BATCH`. ``extra`` parameters follow the keys."""
    for i in range(0, len(keys), IN_BATCH):
        part = list(keys[i:i + IN_BATCH])
        yield from db.execute(sql.format(in_=",".join("?" * len(part))), [*part, *extra])
