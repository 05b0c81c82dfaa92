"""Retrieve with an LLM on questions_dev (issue 5): candidate recall@k with LLM `none` and with
the packaged SmolLM2-135M (llama_cpp.server, real HTTP, and in process), LLM calls and tokens
per question, latency of one round, and the trace of one multi-paper question.

    .venv/bin/python bench/retrieve_llm_bench.py --home DIR [--limit N]

SmolLM2 has an 8k context: the verifier sees the top 5 papers x 2 chunks x 600 chars here
(the seed paper's 20 x 2 x 1,800 is for large-context models; all three are settings).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lit3r.config import load_settings  # noqa: E402
from lit3r.littraceqa.metrics import recall_at_k  # noqa: E402
from lit3r.pipeline.engine import Engine  # noqa: E402
from tests.servers import llama_server  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "corpus"
KS = (1, 5, 10, 50)


def run(engine: Engine, questions, gold) -> dict:
    rec, calls, ptok, ctok, secs, one_round = [], [], [], [], [], []
    traces = {}
    for q in questions:
        t = time.perf_counter()
        res = engine.ask(q["question"], query_id=q["query_id"])
        secs.append(time.perf_counter() - t)
        rec.append([recall_at_k(res.candidates, gold[q["query_id"]], k) for k in KS])
        calls.append(res.usage.calls)
        ptok.append(res.usage.prompt_tokens)
        ctok.append(res.usage.completion_tokens)
        one_round.append(res.rounds[0].seconds if res.rounds else 0.0)
        traces[q["query_id"]] = res.trace()
    return {"recall": [statistics.fmean(r[i] for r in rec) for i in range(len(KS))],
            "calls": statistics.fmean(calls), "prompt_tokens": statistics.fmean(ptok),
            "completion_tokens": statistics.fmean(ctok), "seconds": statistics.fmean(secs),
            "round1_seconds": statistics.fmean(one_round), "traces": traces}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    gold = {json.loads(line)["query_id"]: [p["paper_id"] for p in json.loads(line)["gold_papers"]]
            for line in (CORPUS / "questions_dev.jsonl").open()}
    qs = [json.loads(line) for line in (CORPUS / "questions_dev_inputs.jsonl").open()]
    qs = qs[: args.limit] if args.limit else qs
    small = {"verify_papers": 5, "verify_chunk_chars": 600}
    results = {}
    base = load_settings(home=args.home)
    results["none"] = run(Engine(base), qs, gold)
    with llama_server.start(Path(tempfile.mkdtemp())) as server:
        s = load_settings(home=args.home, retrieve=small, llm={
            "provider": "openai", "model": "smollm2", "base_url": server.url, "json_mode": "object_schema",
            "max_tokens": 200, "cache": False})
        results["smollm2 via llama_cpp.server"] = run(Engine(s), qs, gold)
    s = load_settings(home=args.home, retrieve=small, llm={"provider": "local", "max_tokens": 200, "cache": False,
                                                           "profile": "full"})  # the server run's settings
    results["smollm2 in process"] = run(Engine(s), qs[:3], gold)
    for name, r in results.items():
        print(f"{name:30s} recall@" + "/".join(map(str, KS)) + " = " + "/".join(f"{x:.3f}" for x in r["recall"])
              + f"  LLM calls {r['calls']:.1f}, tokens {r['prompt_tokens']:.0f}+{r['completion_tokens']:.0f} per "
              f"question; round 1 {r['round1_seconds']:.1f} s; total {r['seconds']:.1f} s per question")
    multi = next(q["query_id"] for q in qs if len(gold[q["query_id"]]) > 1)
    print(f"\ntrace of {multi} (SmolLM2 via llama_cpp.server):")
    print(json.dumps(results["smollm2 via llama_cpp.server"]["traces"][multi], indent=1)[:6000])


if __name__ == "__main__":
    main()
