"""The locks of the build-and-load wing: one mechanism, the ``filelock`` library (an OS lock that
a killed process releases), and one error, :class:`lit3r.errors.Locked`, whose message says what
holds the lock and what to do.

- The data folder, for one ``lit3r ingest`` (parse, build, load): ``HOME/.ingest.lock``
  (:func:`ingest_lock`).
- The index, for one build (two builds appending to the same files would corrupt them):
  ``HOME/.build.lock``, which names the holder's pid while held (:func:`build_lock`).
- The servers (backend "neo4j+opensearch"; :func:`servers_lease`, taken around the load of
  :func:`lit3r.index.build.build_stores`, so a server that is down still leaves the local index
  built): two ingests from different data folders into the same Neo4j database would delete each
  other's OpenSearch documents mid-load. No file both machines see exists, so the lease is one
  ``(:Lit3rLoadLock {id: "load"})`` node in that database, claimed in one write transaction when
  absent or stale, renewed every :data:`RENEW_S` s by a thread, deleted at the end. A lease not
  renewed for :data:`LEASE_S` s (its ingest was killed) is taken over. Its refusal is the same
  :class:`~lit3r.errors.Locked`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import uuid
from pathlib import Path
from typing import Callable, Iterator

from lit3r.config import Settings
from lit3r.errors import Lit3rError, Locked

#: Seconds between renewals of the servers lease, and after which an unrenewed lease is stale.
RENEW_S, LEASE_S = 10.0, 60.0



def _holder(path: Path) -> str:
    """What the lock file ``path`` says holds it ("pid N"), or "another process"."""
    try:
        return path.read_text(encoding="utf-8").strip() or "another process"
    except OSError:
        return "another process"


def _note(path: Path, text: str) -> None:
    """Write ``text`` into the lock file ``path`` (best effort: the OS lock is what counts)."""
    with contextlib.suppress(OSError), open(path, "r+", encoding="utf-8") as fh:
        fh.write(text)
        fh.truncate()


@contextlib.contextmanager
def file_lock(path: Path, busy: Callable[[str], str]) -> Iterator[None]:
    """Hold the OS lock on the file ``path`` (created if missing; ``filelock.FileLock``, never
    waited for) and write "pid N" into it while held. Raises :class:`lit3r.errors.Locked` with
    ``busy(holder)`` as its message when another process holds it (``holder``: what the file
    says, "another process" when it says nothing), and OSError when the file cannot be opened."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise Locked(busy(_holder(path))) from None
    try:
        _note(path, f"pid {os.getpid()}")
        yield
    finally:
        _note(path, "")
        lock.release()


@contextlib.contextmanager
def ingest_lock(home: Path) -> Iterator[None]:
    """Hold the data folder ``home`` (created if missing) for one ingest (parse, build, load);
    raises :class:`lit3r.errors.Locked` with what to do while another ingest holds it, and
    Lit3rError when the folder cannot be written."""
    held = file_lock(home / ".ingest.lock", lambda _: f"another `lit3r ingest` into {home} is running: wait for it "
                                                     f"to finish, then run the command again")
    try:
        home.mkdir(parents=True, exist_ok=True)
        held.__enter__()
    except OSError as exc:
        raise Lit3rError(f"{exc.filename or home}: {exc.strerror or exc}: the corpus folder must be writable "
                         f"(choose another with --home or --out)") from None
    try:
        yield
    finally:
        held.__exit__(None, None, None)


def build_lock(home: Path) -> contextlib.AbstractContextManager[None]:
    """Hold ``home/.build.lock`` for one build of the index in ``home``; a second build fails at
    once with :class:`lit3r.errors.Locked` naming the holder's pid."""
    return file_lock(home / ".build.lock", lambda who: f"another build of {home} is running ({who}): wait for it "
                                                       f"to finish, then run the command again")


@contextlib.contextmanager
def servers_lease(settings: Settings, home: Path) -> Iterator[None]:
    """Hold the servers' load lease (module docstring) around a load into Neo4j and OpenSearch;
    raises :class:`lit3r.errors.Locked` while another load holds it, and graph.errors.ServerFault when
    Neo4j cannot be reached (the lease statements: ``cypher/load_lease_*.cypher``)."""
    from lit3r.backends.servers import neo4j_store

    store = neo4j_store(settings)
    owner, who = uuid.uuid4().hex, f"pid {os.getpid()} on {socket.gethostname()}, data folder {home}"
    try:
        store.reach()
        row = store.claim_load_lease(owner, who, int(LEASE_S * 1000))
        if not row["mine"]:
            raise Locked(
                f"another ingest is loading Neo4j at {settings.neo4j.uri} and OpenSearch ({row['who']}, renewed "
                f"{row['age_s']} s ago): wait for it to finish, then run the command again (a killed load's lease "
                f"lapses after {LEASE_S:.0f} s)")
        stop = threading.Event()

        def renew() -> None:
            while not stop.wait(RENEW_S):
                with contextlib.suppress(Exception):  # a server fault shows in the load itself
                    store.renew_load_lease(owner)

        thread = threading.Thread(target=renew, name="lit3r-load-lease", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=RENEW_S)
            with contextlib.suppress(Exception):
                store.release_load_lease(owner)
    finally:
        store.close()

