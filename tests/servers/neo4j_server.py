"""Build and run a real Neo4j 5 server (Bolt, auth disabled) for the tests, without Docker.

The server is Neo4j's own in-process harness (``org.neo4j.test:neo4j-harness``) behind a tiny
Java launcher in ``tests/servers/neo4j``; Maven fetches the jars once into ``target/lib``.

    from tests.servers.neo4j_server import build, start
    build()                                   # no-op when target/ is up to date
    with start(tmp_path) as server:           # free ports picked here
        driver = neo4j.GraphDatabase.driver(server.uri)   # no auth

Run ``python tests/servers/neo4j_server.py`` for a self-check with the ``neo4j`` driver.
"""

from __future__ import annotations

import collections
import fcntl
import hashlib
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Optional

try:
    from tests.servers import jvm
except ImportError:  # run as a script: python tests/servers/<name>_server.py
    import jvm  # type: ignore[no-redef]

PROJECT = Path(__file__).resolve().parent / "neo4j"
TARGET = PROJECT / "target"
STAMP = TARGET / "build.sha256"
MAIN_CLASS = "lit3r.Neo4jServer"
HEAP = os.environ.get("NEO4J_TEST_HEAP", "768m")
#: Neo4j's page cache (the store files it keeps in memory) unless ``NEO4J_TEST_PAGECACHE`` or
#: ``start(page_cache=...)`` says otherwise: small for the tests' small graphs.
PAGE_CACHE = "64m"
_SIZE = re.compile(r"^(\d+)([kmg]?)$", re.I)


def size_bytes(size: str) -> int:
    """``"64m"``, ``"1g"``, ``"512k"``, ``"1048576"`` -> bytes. Raises ValueError on other text."""
    m = _SIZE.match(size.strip())
    if not m:
        raise ValueError(f"not a size: {size!r} (write e.g. 64m or 1g)")
    return int(m.group(1)) * 1024 ** " kmg".index((m.group(2) or " ").lower())


def _sources_hash() -> str:
    digest = hashlib.sha256()
    for path in [PROJECT / "pom.xml", *sorted((PROJECT / "src").rglob("*.java"))]:
        digest.update(path.relative_to(PROJECT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def build() -> None:
    """Compile the launcher and copy its jars to target/lib, unless already done for this pom/source."""
    TARGET.mkdir(exist_ok=True)
    with open(TARGET / "build.lock", "w") as lock:       # parallel test workers build once
        fcntl.flock(lock, fcntl.LOCK_EX)
        wanted = _sources_hash()
        if ((TARGET / "lib").is_dir() and (TARGET / "classes" / "lit3r" / "Neo4jServer.class").exists()
                and STAMP.exists() and STAMP.read_text().strip() == wanted):
            return
        mvn = shutil.which("mvn")
        if not mvn:
            raise RuntimeError("no `mvn` on PATH: Maven is needed to build the Neo4j test server")
        shutil.rmtree(TARGET / "lib", ignore_errors=True)
        proc = subprocess.run([mvn, "-q", "-B", "package", "-DskipTests"], cwd=PROJECT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.splitlines()[-60:])
            raise RuntimeError(f"mvn package failed in {PROJECT} (exit {proc.returncode}):\n{tail}")
        STAMP.write_text(wanted + "\n")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Neo4jServer:
    """A running Neo4j JVM; ``stop()`` (or leaving the ``with`` block) ends it."""

    def __init__(self, process: subprocess.Popen, bolt_port: int, http_port: int, log: Path) -> None:
        self.process = process
        self.bolt_port = bolt_port
        self.http_port = http_port
        self.uri = f"bolt://127.0.0.1:{bolt_port}"
        self.http_uri = f"http://127.0.0.1:{http_port}"
        self.log = log
        self.lines: collections.deque[str] = collections.deque(maxlen=400)
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._pump, name="neo4j-stdout", daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        with open(self.log, "a", encoding="utf-8") as log:
            for line in self.process.stdout:
                log.write(line)
                log.flush()
                self.lines.append(line.rstrip("\n"))
                if line.startswith("READY "):
                    self._ready.set()

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.2):
            if self.process.poll() is not None:
                self._reader.join(5)
                raise self._failure(f"Neo4j exited with code {self.process.returncode} before READY")
            if time.monotonic() > deadline:
                self.stop()
                raise self._failure(f"Neo4j not ready after {timeout:.0f} s")

    def _failure(self, why: str) -> RuntimeError:
        tail = "\n".join(list(self.lines)[-40:])
        return RuntimeError(f"{why} (log: {self.log}); last output:\n{tail}")

    def stop(self, timeout: float = 20) -> None:
        if self.process.poll() is None:
            try:
                if self.process.stdin:
                    self.process.stdin.close()          # the launcher exits when stdin closes
            except OSError:
                pass
            self.process.terminate()                    # SIGTERM: runs the JVM shutdown hook
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._reader.join(5)

    def __enter__(self) -> Neo4jServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def java_command(bolt_port: int, http_port: int, data: Path, full_jit: bool = False,
                 page_cache: Optional[str] = None) -> list[str]:
    """The launcher's command line: the JDK of :func:`tests.servers.jvm.choose`, the heap
    (``NEO4J_TEST_HEAP``), the JIT mode (:func:`tests.servers.jvm.jit_options`) and the page
    cache (``page_cache``, else ``NEO4J_TEST_PAGECACHE``, else :data:`PAGE_CACHE`).

    With ``full_jit`` (the load benches) the heap starts at its maximum, as Neo4j's operations
    manual advises for a server (``server.memory.heap.initial_size`` = ``max_size``): grown from
    128 MiB, the young generation stays small through a bulk load, and each of its many
    collections copies the open transaction's state (at 0.1 scale: 10.4 s of serial GC pauses,
    1.2 s with the full heap; docs/BENCHMARKS.md#servers). The tests keep the small start."""
    jdk = jvm.choose()
    heap = os.environ.get("NEO4J_TEST_HEAP", HEAP)
    cache = page_cache or os.environ.get("NEO4J_TEST_PAGECACHE") or PAGE_CACHE
    return [jdk.java, f"-Xmx{heap}", f"-Xms{heap}" if full_jit else "-Xms128m", "-XX:+UseSerialGC",
            *jvm.jit_options(jdk, full_jit, vector_api=False),
            "-XX:+ExitOnOutOfMemoryError",
            "-cp", f"{TARGET / 'classes'}{os.pathsep}{TARGET / 'lib'}{os.sep}*", MAIN_CLASS,
            "--bolt-port", str(bolt_port), "--http-port", str(http_port), "--pagecache", str(size_bytes(cache)),
            "--data", str(data)]


def start(workdir: Path, timeout: float = 120, attempts: int = 3, full_jit: Optional[bool] = None,
          page_cache: Optional[str] = None) -> Neo4jServer:
    """Start Neo4j on free local ports with its data under ``workdir``; returns once Bolt is up.

    ``full_jit``: C2 as well as C1 (None: ``TEST_SERVERS_FULL_JIT``; :mod:`tests.servers.jvm`);
    ``page_cache``: e.g. ``"1g"`` (:func:`java_command`). A port taken between picking it and
    the JVM binding it is retried on new ports."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    if not (TARGET / "lib").is_dir():
        raise RuntimeError(f"{TARGET / 'lib'} missing: call build() first")
    for attempt in range(1, attempts + 1):
        bolt_port, http_port = _free_port(), _free_port()
        while http_port == bolt_port:
            http_port = _free_port()
        cmd = java_command(bolt_port, http_port, workdir / "neo4j",
                           jvm.full_jit_default() if full_jit is None else full_jit, page_cache)
        process = subprocess.Popen(cmd, cwd=workdir, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, bufsize=1)
        server = Neo4jServer(process, bolt_port, http_port, workdir / "neo4j-server.log")
        try:
            server._wait_ready(timeout)
            return server
        except RuntimeError as error:
            if attempt == attempts or "Address already in use" not in str(error):
                raise
    raise AssertionError("unreachable")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__":
    import tempfile

    import neo4j

    began = time.monotonic()
    build()
    print(f"build: {time.monotonic() - began:.1f} s")
    with tempfile.TemporaryDirectory() as tmp:
        began = time.monotonic()
        with start(Path(tmp)) as server:
            print(f"started {server.uri} (browser {server.http_uri}) in {time.monotonic() - began:.1f} s")
            with neo4j.GraphDatabase.driver(server.uri, auth=None) as driver:
                driver.verify_connectivity()
                driver.execute_query("CREATE CONSTRAINT paper_id IF NOT EXISTS "
                                     "FOR (p:Paper) REQUIRE p.paper_id IS UNIQUE")
                driver.execute_query("CREATE (:Paper {paper_id: 'a'})-[:CITES]->(:Work {work_id: 'w'})")
                records, _, _ = driver.execute_query(
                    "MATCH (p:Paper)-[:CITES]->(w:Work) RETURN p.paper_id AS p, w.work_id AS w")
                assert [(r["p"], r["w"]) for r in records] == [("a", "w")], records
                try:
                    driver.execute_query("CREATE (:Paper {paper_id: 'a'})")
                    raise AssertionError("the uniqueness constraint did not hold")
                except neo4j.exceptions.ConstraintError:
                    pass
                version = driver.execute_query("CALL dbms.components() YIELD versions RETURN versions[0] AS v")
                print(f"Neo4j {version.records[0]['v']}: MATCH, constraint OK; "
                      f"JVM RSS {_rss_mib(server.process.pid):.0f} MiB")
            began = time.monotonic()
        print(f"stopped in {time.monotonic() - began:.1f} s, exit code {server.process.returncode}")
