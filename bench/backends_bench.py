"""Neo4j + OpenSearch on the 60 real papers (issue 4): load throughput and query latency.

Starts real servers from tests/servers (Maven artifacts), loads an already built corpus into
them, and prints: Neo4j node write rate, OpenSearch bulk rate, and median latencies of
bibliographic coupling for one seed, paper BM25, chunk BM25 and k-NN search, next to the
embedded backend's.

    .venv/bin/python bench/backends_bench.py --home DIR   # DIR: a data folder built by `lit3r ingest`
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lit3r.config import load_settings  # noqa: E402
from lit3r.index.build import build_stores  # noqa: E402
from lit3r.pipeline.engine import Engine  # noqa: E402
from tests.servers import neo4j_server, opensearch_server  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "corpus"


def median_ms(fn, args_list) -> float:
    times = []
    for args in args_list:
        t = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--home", type=Path, required=True)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lit3r-servers-"))
    neo4j_server.build()
    opensearch_server.build()
    t = time.perf_counter()
    neo = neo4j_server.start(work / "neo4j")
    osr = opensearch_server.start(work / "opensearch")
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
