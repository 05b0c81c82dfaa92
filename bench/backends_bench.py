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

from lit3r.build import build_stores  # noqa: E402
from lit3r.config import load_settings  # noqa: E402
from lit3r.engine import Engine  # noqa: E402
from tests.servers import neo4j_server, opensearch_server  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "corpus"


def median_ms(fn, args_list) -> float:
    times = []
    for args in args_list:
        t = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _neighbours(graph):
    from graph.records import Neighbour

    return [Neighbour(paper_id=p, neighbour_id=n, score=sc, rank=r)
            for p in graph.paper_ids() for r, (n, sc) in enumerate(graph.similar_papers(p, 100), start=1)]


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
        n, o = rep.servers["neo4j"], rep.servers["opensearch"]
        print(f"Neo4j load: {n['nodes']} nodes (+ relationships) in {n['write_seconds']:.1f} s = "
              f"{n['nodes_per_s']:.0f} nodes/s (target >= 5,000); per statement: "
              + ", ".join(f"{k} {v:.2f} s" for k, v in n["steps"].items()))
        print(f"OpenSearch bulk: {o['docs']} docs in {o['seconds']:.1f} s = {o['docs_per_s']:.0f} docs/s")
        # the same load again on the now warm JVM (a long-running server's steady state)
        from graph.neo4j_store import Neo4jGraphStore
        from ingest.corpus import load_corpus

        papers, chunks, refs = load_corpus(home)
        store = Neo4jGraphStore(neo.uri)
        emb_graph = Engine(load_settings(home=args.home)).graph
        warm = store.load(papers, chunks, refs, _neighbours(emb_graph))
        store.close()
        print(f"Neo4j load again, warm JVM: {warm['nodes_per_s']:.0f} nodes/s; per statement: "
              + ", ".join(f"{k} {v:.2f} s" for k, v in warm["steps"].items()))
        emb, srv = Engine(load_settings(home=args.home)), Engine(settings)
        qs = [json.loads(line)["question"] for line in (CORPUS / "questions_dev_inputs.jsonl").open()]
        seeds = [(p,) for p in emb.graph.paper_ids()]
        vecs = [(emb.encoder.encode_queries([q])[0], 50) for q in qs]
        for name, engine in (("embedded", emb), ("neo4j+opensearch", srv)):
            g, i = engine.graph, engine.index
            print(f"{name:17s} coupling {median_ms(lambda p: g.coupled_papers(p, 2, 50), seeds):6.1f} ms  "
                  f"paper BM25 {median_ms(lambda p: i.paper_bm25(i.paper_head(p, 1200), 51), seeds):6.1f} ms  "
                  f"chunk BM25 {median_ms(lambda q: i.chunk_bm25(q, 200), [(q,) for q in qs]):6.1f} ms  "
                  f"k-NN {median_ms(lambda v, k: i.chunk_dense(v, k), vecs):6.1f} ms (medians)")
            t = time.perf_counter()
            for q in qs:
                engine.ask(q)
            print(f"{'':17s} ask, warm: {(time.perf_counter() - t) / len(qs):.2f} s per question")
    finally:
        osr.stop()
        neo.stop()


if __name__ == "__main__":
    main()
