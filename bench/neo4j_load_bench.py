"""Neo4j alone: the cold first load of a built home, with Neo4j's CPU seconds per statement and per thread.

Starts a fresh test Neo4j (tests/servers/, heap ``NEO4J_TEST_HEAP`` default 3g, page cache 1g, the
full JIT unless ``--c1``), reads the home's records first (so the local reads are not timed), then
writes them as :func:`lit3r.index.load.sync_servers` does (batches of about ``BATCH_CHUNKS`` chunks:
``write_papers`` then ``mark_loaded``; then the SIMILAR_TO lists and the orphan prune), without
OpenSearch. Prints one JSON object: nodes, wall and Neo4j CPU seconds, nodes/s and nodes per Neo4j
CPU second, Neo4j CPU seconds per named statement (psutil, around each statement's transactions:
compiler and GC threads running meanwhile are counted in), and the JVM's CPU seconds by thread
kind over its whole life (``/proc/PID/task``, names cut at 15 characters: ``C2 CompilerThre`` / ``C1 CompilerThre`` the JIT,
``neo4j.BoltWorker`` the transactions, ``java`` the start) and the machine's load average.

    PYTHONPATH=. .venv/bin/python bench/neo4j_load_bench.py --home HOME   # HOME: e.g. scale_bench --keep
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds (user + system) of a process's threads over their lives, by name (a trailing "-N" dropped)."""
    out: collections.Counter = collections.Counter()
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # the thread ended
        name, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
        out[re.sub(r"-\d+$", "", name)] += (int(rest[11]) + int(rest[12])) / tick
    return {k: round(v, 1) for k, v in out.most_common(8)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="a home whose index is built")
    ap.add_argument("--c1", action="store_true", help="C1 only (the tests' JIT mode), not the full JIT")
    args = ap.parse_args()

    import psutil

    from graph.embedded import EmbeddedGraphStore
    from graph.neo4j_store import Neo4jGraphStore, connect
    from graph.search.embedded import DB_NAME
    from lit3r.index.load import BATCH_CHUNKS
    from tests.servers import neo4j_server

    local = EmbeddedGraphStore.open(args.home / "index" / DB_NAME)
    sizes = local.chunks_per_paper()
    batches: list[list[str]] = [[]]
    pending = 0
    for pid in local.paper_ids():
        batches[-1].append(pid)
        pending += sizes.get(pid, 0)
        if pending >= BATCH_CHUNKS:
            batches.append([])
            pending = 0
    batches = [b for b in batches if b]
    recs = [local.records(b) for b in batches]
    lists = local.neighbour_lists()

    os.environ.setdefault("NEO4J_TEST_HEAP", "3g")
    neo4j_server.build()
    work = Path(tempfile.mkdtemp(prefix="lit3r-neo4j-load-"))
    neo = neo4j_server.start(work / "neo4j", full_jit=not args.c1, page_cache=os.environ.get("NEO4J_TEST_PAGECACHE", "1g"))
    try:
        proc = psutil.Process(neo.process.pid)

        def cpu() -> float:
            t = proc.cpu_times()
            return t.user + t.system

        per: collections.Counter = collections.Counter()
        write = Neo4jGraphStore._write

        def counted(self, name, rows, key="rows"):
            before = cpu()
            write(self, name, rows, key)
            per[name] += cpu() - before

        Neo4jGraphStore._write = counted  # type: ignore[method-assign]
        graph = Neo4jGraphStore(connect(neo.uri))
        c0, t0, la = cpu(), time.perf_counter(), os.getloadavg()[0]
        graph.ensure_schema()
        nodes = 0
        for batch, rec in zip(batches, recs):
            nodes += graph.write_papers([p for p, _, _ in rec], [c for _, cs, _ in rec for c in cs],
                                        [r for _, _, rs in rec for r in rs])
            graph.mark_loaded({p: "loaded" for p in batch})
        graph.write_neighbours(lists)
        graph.prune_orphans()
        wall, used = time.perf_counter() - t0, cpu() - c0
        graph.close()
        print(json.dumps({"papers": sum(map(len, batches)), "nodes": nodes, "wall_s": round(wall, 1),
                          "neo4j_cpu_s": round(used, 1), "nodes_per_s": round(nodes / wall),
                          "nodes_per_neo4j_cpu_s": round(nodes / used), "jit": "C1" if args.c1 else "full",
                          "neo4j_cpu_s_by_statement": {k: round(v, 1) for k, v in per.items()},
                          "neo4j_cpu_s_by_thread": thread_cpu(neo.process.pid),
                          "loadavg_1m": [round(la, 1), round(os.getloadavg()[0], 1)]}, indent=1), flush=True)
    finally:
        neo.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
