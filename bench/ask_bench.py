"""`lit3r ask` on the 60 real papers: build cost, latency and candidate recall (issue 3).

Prints: ingest + build time and peak memory (a real `lit3r ingest` subprocess), warm latency per
question (no LLM), candidate recall@1/5/10/50 of the gold papers on questions_dev.jsonl for
single- and multi-paper questions with Ranking A alone and with A+B, the share of single-paper
questions whose evidence locators hit the gold (paper, page, object), and MC accuracy.

    .venv/bin/python bench/ask_bench.py [--home DIR]   # DIR: reuse an ingested corpus
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lit3r.config import load_settings  # noqa: E402
from lit3r.littraceqa.metrics import recall_at_k  # noqa: E402
from lit3r.pipeline.engine import Engine  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "corpus"
KS = (1, 5, 10, 50)


def gold_key(ev: dict) -> tuple:
    """(paper, page, object number or None) of a gold or predicted evidence item."""
    loc = ev["locator"]
    obj = None
    for key in ("table_id", "figure_id", "equation_id", "algorithm_id", "citation_id"):
        if key in loc:
            m = re.search(r"\d+", str(loc[key]))
            obj = (key, m.group(0)) if m else None
    return ev["paper_id"], loc.get("page"), obj


def evidence_hit(pred: list[dict], gold: list[dict]) -> bool:
    """A predicted item on the gold paper and page, with the gold object when it names one."""
    for g in gold:
        gp, gpage, gobj = gold_key(g)
        for p in pred:
            pp, ppage, pobj = gold_key(p)
            if pp == gp and ppage == gpage and (gobj is None or pobj == gobj):
                return True
    return False


def ingest(home: Path) -> tuple[float, float]:
    """Run a real `lit3r ingest` into ``home``; returns (seconds, peak RSS of children in MiB)."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(CORPUS / "pdfs"),
                    "--metadata", str(CORPUS / "manifest.jsonl")], check=True, cwd=ROOT)
    return time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--home", type=Path, help="an already ingested data folder (skips the ingest run)")
    args = ap.parse_args()
    home = args.home
    if home is None:
        home = Path(tempfile.mkdtemp(prefix="lit3r-ask-bench-"))
        secs, rss = ingest(home)
        print(f"ingest + build (60 papers, 1,336 pages, PNG crops, embeddings, stores): {secs:.1f} s, "
              f"peak memory {rss:.0f} MiB")
    settings = load_settings(home=home)
    t = time.perf_counter()
    engine = Engine(settings)
    print(f"engine load (stores + encoder): {time.perf_counter() - t:.2f} s")
    gold = {json.loads(line)["query_id"]: json.loads(line) for line in (CORPUS / "questions_dev.jsonl").open()}
    inputs = [json.loads(line) for line in (CORPUS / "questions_dev_inputs.jsonl").open()]
    engine.ask("warm-up question about attention", query_id="warm")
    rows = []
    for q in inputs:
        opts = {o["label"]: o["text"] for o in q.get("multiple_choice_options", [])} or None
        t = time.perf_counter()
        res = engine.ask(q["question"], options=opts, query_id=q["query_id"], answer_types=tuple(q["answer_types"]))
        dt = time.perf_counter() - t
        g = gold[q["query_id"]]
        gp = [p["paper_id"] for p in g["gold_papers"]]
        sub = res.submission()
        rows.append({
            "multi": len(gp) > 1, "latency": dt,
            "a": [recall_at_k([p for p, _ in res.ranking_a], gp, k) for k in KS],
            "ab": [recall_at_k(res.candidates, gp, k) for k in KS],
            "hit": evidence_hit(sub["evidence"], g["evidence"]),
            "mc": (sub["answer"].get("multiple_choice", {}).get("gold") == g["answer"]["multiple_choice"]["gold"])
            if "multiple_choice" in g["answer"] else None,
            "paper_hit": bool(set(p["paper_id"] for p in sub["gold_papers"]) & set(gp)),
        })
    lat = [r["latency"] for r in rows]
    print(f"latency per question, warm, no LLM: mean {statistics.fmean(lat):.2f} s, max {max(lat):.2f} s "
          f"({len(rows)} questions)")
    for name, sel in (("single-paper", [r for r in rows if not r["multi"]]), ("multi-paper", [r for r in rows if r["multi"]]),
                      ("all", rows)):
        for lane in ("a", "ab"):
            rec = [statistics.fmean(r[lane][i] for r in sel) for i in range(len(KS))]
            label = "Ranking A  " if lane == "a" else "A+B (cands)"
            print(f"{name:13s} n={len(sel):2d} {label} recall@" + "/".join(map(str, KS)) + " = "
                  + "/".join(f"{x:.3f}" for x in rec))
    single = [r for r in rows if not r["multi"]]
    print(f"single-paper evidence locator hits: {sum(r['hit'] for r in single)}/{len(single)}")
    mc = [r["mc"] for r in rows if r["mc"] is not None]
    print(f"multiple-choice accuracy (extractive reader): {sum(mc)}/{len(mc)}; "
          f"a gold paper among the answer papers: {sum(r['paper_hit'] for r in rows)}/{len(rows)}")


if __name__ == "__main__":
    main()
