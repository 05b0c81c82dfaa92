"""One ingest at a time per data folder, and per pair of servers (``lit3r ingest``).

- The data folder: ``HOME/.ingest.lock`` (the ``filelock`` library, an OS lock that a killed
  process releases). A second ingest into the same folder stops at once with
  :class:`IngestLocked`.
- The servers (backend "neo4j+opensearch"; :func:`servers_lease`, taken by the load of
  :func:`lit3r.index.build.build_stores`, so a server that is down still leaves the local index built):
  two ingests from different data folders into the
  same Neo4j database would delete each other's OpenSearch documents mid-load. The load takes a
  lease: one ``(:Lit3rLoadLock {id: "load"})`` node in that database, claimed in one write
  transaction when absent or stale, renewed every :data:`RENEW_S` s by a thread, deleted at the
  end. A lease not renewed for :data:`LEASE_S` s (its ingest was killed) is taken over.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import uuid
from pathlib import Path
from typing import Iterator

from lit3r.config import Settings
from lit3r.errors import Lit3rError

#: Seconds between renewals of the servers lease, and after which an unrenewed lease is stale.
RENEW_S, LEASE_S = 10.0, 60.0


class IngestLocked(Lit3rError):
    """Another ingest holds the data folder or the servers."""


_CLAIM = """
MERGE (l:Lit3rLoadLock {id: 'load'})
ON CREATE SET l.owner = $owner, l.who = $who, l.renewed = timestamp()
WITH l, l.owner = $owner OR l.renewed < timestamp() - $lease_ms AS mine
SET l.owner = CASE WHEN mine THEN $owner ELSE l.owner END,
    l.who = CASE WHEN mine THEN $who ELSE l.who END,
    l.renewed = CASE WHEN mine THEN timestamp() ELSE l.renewed END
RETURN l.owner = $owner AS mine, l.who AS who, (timestamp() - l.renewed) / 1000 AS age_s
"""
_RENEW = "MATCH (l:Lit3rLoadLock {id: 'load', owner: $owner}) SET l.renewed = timestamp() RETURN count(l) AS n"
_RELEASE = "MATCH (l:Lit3rLoadLock {id: 'load', owner: $owner}) DELETE l"


@contextlib.contextmanager
def ingest_lock(home: Path) -> Iterator[None]:
    """Hold the data folder ``home`` (created if missing) for one ingest (parse, build, load);
    raises :class:`IngestLocked` with what to do while another ingest holds it, and Lit3rError
    when the folder cannot be written."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(home / ".ingest.lock"))
    try:
        home.mkdir(parents=True, exist_ok=True)
        lock.acquire(timeout=0)
    except Timeout:
        raise IngestLocked(f"another `lit3r ingest` into {home} is running: wait for it to finish, then run the "
                           f"command again") from None
    except OSError as exc:
        raise Lit3rError(f"{exc.filename or home}: {exc.strerror or exc}: the corpus folder must be writable "
                         f"(choose another with --home or --out)") from None
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def servers_lease(settings: Settings, home: Path) -> Iterator[None]:
    """Hold the servers' load lease (module docstring) around a load into Neo4j and OpenSearch;
    raises :class:`IngestLocked` while another load holds it, and the driver's errors when Neo4j
    cannot be reached."""
    from lit3r.factory import neo4j_store

    store = neo4j_store(settings)
    owner, who = uuid.uuid4().hex, f"pid {os.getpid()} on {socket.gethostname()}, data folder {home}"
    try:
        store.driver.verify_connectivity()
        row = store.run_write(_CLAIM, {"owner": owner, "who": who, "lease_ms": int(LEASE_S * 1000)})[0]
        if not row["mine"]:
            raise IngestLocked(
                f"another ingest is loading Neo4j at {settings.neo4j.uri} and OpenSearch ({row['who']}, renewed "
                f"{row['age_s']} s ago): wait for it to finish, then run the command again (a killed load's lease "
                f"lapses after {LEASE_S:.0f} s)")
        stop = threading.Event()

        def renew() -> None:
            while not stop.wait(RENEW_S):
                with contextlib.suppress(Exception):  # a server fault shows in the load itself
                    store.run_write(_RENEW, {"owner": owner})

        thread = threading.Thread(target=renew, name="lit3r-load-lease", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=RENEW_S)
            with contextlib.suppress(Exception):
                store.run_write(_RELEASE, {"owner": owner})
    finally:
        store.close()

