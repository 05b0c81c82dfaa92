"""The real LitTraceQA questions over the partial paper pool (titles only): issue 6, benches 5b, 5c.

5b: the 55 validation questions over ``paper_pool_partial.jsonl`` (4,776 real papers: id, title,
    venue, year; no abstracts, no PDFs), candidate recall@1/5/10/20/50 with Ranking A alone and
    with A+B, per task family. Only the title lanes can work there: chunk BM25 and dense search
    see one title chunk per paper, paper BM25 sees the title, SIMILAR_TO neighbours come from
    titles; bibliographic coupling has no references. The bench prints which Relate lanes
    returned anything.
5c: retrieval-only batch throughput (Retrieve + Relate, no reading) on ``test_extra_inputs.jsonl``
    (4,901 questions) over the same pool: questions per second and peak memory (RSS).

No LLM (provider none): one retrieval round per question.

    .venv/bin/python bench/pool_bench.py [--home DIR] [--limit N]   # N: questions of 5c (default all)
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest.corpus import ingest_metadata_only  # noqa: E402
from lit3r.config import load_settings  # noqa: E402
from lit3r.index.build import build_stores  # noqa: E402
from lit3r.littraceqa.metrics import RECALL_KS, recall_at_k  # noqa: E402
from lit3r.pipeline.engine import Engine  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "littraceqa"


def rss_mib() -> float:
    """Peak resident memory of this process so far, MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, default=None, help="corpus folder to (re)use; default a temp folder")
    ap.add_argument("--limit", type=int, default=None, help="questions of 5c (default: all 4,901)")
    args = ap.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="lit3r-pool-"))
    settings = load_settings(home=home)

    t = time.perf_counter()
    rep = ingest_metadata_only(DATA / "paper_pool_partial.jsonl", home)
    built = build_stores(settings)
    print(f"pool: {rep.papers} metadata-only papers ({rep.parsed} new); ingest + build "
          f"{time.perf_counter() - t:.1f} s (build {built.seconds['total']:.1f} s{', cached' if built.skipped else ''})")
    engine = Engine(settings)

    # 5b ------------------------------------------------------------------------------------
    golds = [json.loads(line) for line in (DATA / "validation.jsonl").open()]
    inputs = {q["query_id"]: q for q in map(json.loads, (DATA / "validation_inputs.jsonl").open())}
    known = set(engine.graph.paper_ids())
    rec: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    lanes: dict[str, int] = defaultdict(int)
    in_pool = total_gold = 0
    t = time.perf_counter()
    for g in golds:
        q = inputs[g["query_id"]]
        gold = {p["paper_id"] for p in g["gold_papers"]}
        in_pool += len(gold & known)
        total_gold += len(gold)
        res = engine.ask(q["question"], query_id=q["query_id"], answer=False)
        a = [p for p, _ in res.ranking_a]
        for name, ids in res.relate.sources.items():
            lanes[name] += bool(ids)
        for fam in ("all", g["task_family"]):
            for k in RECALL_KS:
                rec[(fam, "A")][k].append(recall_at_k(a, gold, k))
                rec[(fam, "A+B")][k].append(recall_at_k(res.candidates, gold, k))
    secs = time.perf_counter() - t
    print(f"\n5b: {len(golds)} validation questions, {in_pool}/{total_gold} gold papers in the pool; "
          f"{secs / len(golds):.2f} s/question")
    print("Relate lanes with results (questions): " + ", ".join(f"{k} {v}" for k, v in sorted(lanes.items())))
    print(f"{'family':28s} {'ranking':7s} " + " ".join(f"R@{k:<5d}" for k in RECALL_KS) + "  n")
    for (fam, which), per_k in sorted(rec.items(), key=lambda kv: (kv[0][0] != "all", kv[0])):
        n = len(per_k[RECALL_KS[0]])
        print(f"{fam:28s} {which:7s} " + " ".join(f"{statistics.fmean(per_k[k]):.3f} " for k in RECALL_KS) + f" {n}")

    # 5c ------------------------------------------------------------------------------------
    extra = [json.loads(line) for line in (DATA / "test_extra_inputs.jsonl").open()][: args.limit]
    before = rss_mib()
    t = time.perf_counter()
    lat = []
    for q in extra:
        s = time.perf_counter()
        engine.ask(q["question"], query_id=q["query_id"], answer=False)
        lat.append(time.perf_counter() - s)
    secs = time.perf_counter() - t
    lat.sort()
    print(f"\n5c: {len(extra)} questions of test_extra_inputs, retrieval only (Retrieve + Relate), 1 process: "
          f"{len(extra) / secs:.2f} questions/s ({secs:.0f} s); latency p50 {lat[len(lat) // 2] * 1000:.0f} ms, "
          f"p95 {lat[int(len(lat) * 0.95)] * 1000:.0f} ms; peak RSS {rss_mib():.0f} MiB (before 5c {before:.0f} MiB)")


if __name__ == "__main__":
    main()
