"""Neo4j + OpenSearch on the 60 real papers (issue 4): load throughput and query latency.

Starts real servers from tests/servers (Maven artifacts), loads an already built corpus into
them, and prints: Neo4j node write rate, OpenSearch bulk rate, and median latencies of
bibliographic coupling for one seed, paper BM25, chunk BM25 and k-NN search, next to the
embedded backend's.

    .venv/bin/python bench/backends_bench.py --home DIR   # DIR: a data folder built by `lit3r ingest`

``--load-only``: only the cold first load of DIR's built index into fresh servers (the newest JDK
17-25 with the full JIT, tests/servers/jvm.py), with the CPU seconds of each process
(bench/load_cpu.py) and the machine's load average; ``--fingerprint OUT`` then writes what the
servers hold and rank (bench/load_check.py) to OUT, to compare two load paths (``cmp``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.load_cpu import add_write_mode, write_mode  # noqa: E402
from lit3r.config import load_settings  # noqa: E402
from lit3r.index.build import build_stores  # noqa: E402
from lit3r.pipeline.engine import Engine  # noqa: E402
from tests.servers import jvm, neo4j_server, opensearch_server  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "corpus"


def median_ms(fn, args_list) -> float:
    times = []
    for args in args_list:
        t = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def load_only(home: Path, fingerprint: Optional[Path], options: dict) -> None:
    """The cold first load of ``home``'s built index into fresh servers (module docstring)."""
    from bench.load_check import fingerprint as take
    from bench.load_cpu import measured, pids_value
    from graph.search.embedded import EmbeddedSearchIndex
    from lit3r.factory import opensearch_index
    from lit3r.index.load import sync_servers

    work = Path(tempfile.mkdtemp(prefix="lit3r-servers-"))
    neo4j_server.build()
    opensearch_server.build()
    os.environ.setdefault("NEO4J_TEST_HEAP", "3g")
    os.environ.setdefault("OPENSEARCH_HEAP", "3g")
    neo = neo4j_server.start(work / "neo4j", full_jit=True, page_cache=os.environ.get("NEO4J_TEST_PAGECACHE", "1g"))
    osr = opensearch_server.start(work / "opensearch", timeout=300, full_jit=True)
    try:
        settings = load_settings(home=home, backend="neo4j+opensearch",
                                 neo4j={"uri": neo.uri, "user": None, "password": None},
                                 opensearch={"url": osr.url, "index_prefix": "load"})
        res = measured(sync_servers, pids_value(neo.process.pid, osr.proc.pid))(settings, **options)
        n, o, cpu = res["neo4j"], res["opensearch"], res["cpu"]
        print(json.dumps({"jdk": jvm.choose().java, **res}, indent=1))
        print(f"Neo4j {n['nodes']:,} nodes, {n['nodes_per_s']:,.0f} nodes/s, {cpu['neo4j_nodes_per_cpu_s']:,.0f} per "
              f"Neo4j CPU s; OpenSearch {o['docs']:,} docs, {o['docs_per_s']:,.0f} docs/s, "
              f"{cpu['opensearch_docs_per_cpu_s']:,.0f} per OpenSearch CPU s; Python {cpu['python_s']:.1f} CPU s "
              f"({cpu['python_s_per_1k_docs']:.2f} per 1k docs); load {res['seconds']:.1f} s; load average "
              f"{cpu['loadavg_1m_before']:.1f} -> {cpu['loadavg_1m_after']:.1f}", flush=True)
        if fingerprint:
            texts = {c["chunk_id"]: c["text"] for c in map(json.loads, (home / "chunks.jsonl").open(encoding="utf-8"))}
            index = opensearch_index(settings)
            try:
                got = take(neo.uri, index, EmbeddedSearchIndex.open(settings.index_dir), texts)
            finally:
                index.close()
            fingerprint.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            print(f"fingerprint: {fingerprint}")
    finally:
        osr.stop()
        neo.stop()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--load-only", action="store_true", help="only the cold first load, with CPU seconds per process")
    ap.add_argument("--fingerprint", type=Path, default=None, help="with --load-only: write what the servers hold here")
    add_write_mode(ap, "--load-only")
    args = ap.parse_args()
    if args.load_only:
        load_only(args.home, args.fingerprint, write_mode(args))
        return
    work = Path(tempfile.mkdtemp(prefix="lit3r-servers-"))
    neo4j_server.build()
    opensearch_server.build()
    t = time.perf_counter()
    neo = neo4j_server.start(work / "neo4j", full_jit=True)
    osr = opensearch_server.start(work / "opensearch", full_jit=True)
    print(f"servers started in {time.perf_counter() - t:.1f} s ({neo.uri}, {osr.url})")
    try:
        home = work / "home"
        shutil.copytree(args.home, home)
        settings = load_settings(home=home, backend="neo4j+opensearch",
                                 neo4j={"uri": neo.uri, "user": None, "password": None},
                                 opensearch={"url": osr.url})
        rep = build_stores(settings)
        sv = rep.servers
        n, o = sv["neo4j"], sv["opensearch"]
        print(f"Neo4j load: {n['nodes']} nodes (+ relationships) in {n['seconds']:.1f} s = "
              f"{n['nodes_per_s']:.0f} nodes/s")
        print(f"OpenSearch bulk: {o['docs']} docs in {o['seconds']:.1f} s = {o['docs_per_s']:.0f} docs/s")
        # the same records into a second index prefix on the now warm JVMs (a long-running
        # server's steady state): new indices, so every paper is written again
        warm = settings.model_copy(update={"opensearch": settings.opensearch.model_copy(update={"index_prefix": "warm"})})
        from lit3r.index.load import sync_servers

        w = sync_servers(warm)
        print(f"again, warm JVMs: Neo4j {w['neo4j']['nodes_per_s']:.0f} nodes/s, "
              f"OpenSearch {w['opensearch']['docs_per_s']:.0f} docs/s")
        emb, srv = Engine(load_settings(home=args.home)), Engine(settings)
        qs = [json.loads(line)["question"] for line in (CORPUS / "questions_dev_inputs.jsonl").open()]
        seeds = [(p,) for p in emb.graph.paper_ids()]
        vecs = [(emb.encoder.encode_queries([q])[0], 50) for q in qs]
        for name, engine in (("embedded", emb), ("neo4j+opensearch", srv)):
            g, i = engine.graph, engine.index
            print(f"{name:17s} coupling {median_ms(lambda p, g=g: g.coupled_papers(p, 2, 50), seeds):6.1f} ms  "
                  f"paper BM25 {median_ms(lambda p, i=i: i.paper_bm25(i.paper_head(p, 1200), 51), seeds):6.1f} ms  "
                  f"chunk BM25 {median_ms(lambda q, i=i: i.chunk_bm25(q, 200), [(q,) for q in qs]):6.1f} ms  "
                  f"k-NN {median_ms(lambda v, k, i=i: i.chunk_dense(v, k), vecs):6.1f} ms (medians)")
            t = time.perf_counter()
            for q in qs:
                engine.ask(q)
            print(f"{'':17s} ask, warm: {(time.perf_counter() - t) / len(qs):.2f} s per question")
    finally:
        osr.stop()
        neo.stop()


if __name__ == "__main__":
    main()
