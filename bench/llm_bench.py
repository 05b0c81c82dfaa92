"""questions_dev through a real LLM (a GGUF or an endpoint) next to LLM none (issue 14).

It prints the official metrics, candidate recall@k, and per pipeline stage the LLM calls, tokens, seconds, invalid replies (not valid JSON
for the schema), runaway replies (cut at the token limit) and failures; which path answered each
question (``llm``, ``fallback``: an LLM step failed and the extractive answer was kept in part or
whole) and the questions lost (no submission line).

    .venv/bin/python bench/llm_bench.py --home DIR --model-path MODEL.gguf [--profile small] [--out DIR]
    .venv/bin/python bench/llm_bench.py --home DIR --base-url http://127.0.0.1:8080/v1 --model NAME

``--model-path`` (default ``LIT3R_LLM__MODEL_PATH``): a GGUF run in process by llama.cpp (the
local provider); ``--base-url``/``--model``: any OpenAI-compatible endpoint. ``--profile``: the
LLM profile (``lit3r/profiles/small.toml`` sizes the prompts for a small model on CPUs; ``full``:
the seed paper's sizes). Both runs go through ``lit3r run`` (:func:`run_batch`): a run killed
part-way resumes where it stopped when started again with the same ``--out``. ``--limit N``: the
first N questions only. DIR: a corpus folder with the 60 papers ingested and built. Nothing here
is a dependency of the project or of CI: the GGUF is the user's (the issue names one to assemble
by hand).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lit3r.config import load_settings  # noqa: E402
from lit3r.littraceqa.batch import run_batch  # noqa: E402
from lit3r.littraceqa.metrics import RECALL_KS, candidate_recall, evaluate  # noqa: E402
from lit3r.llm.client import STAGE_COUNTS  # noqa: E402
from lit3r.pipeline.engine import Engine  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "corpus"
METRICS = ["overall", "paper_f1", "evidence_f1", "mc_acc", "freeform_em", "row_f1", "cell_acc_macro"]
STAGES = ["decompose", "verify", "read_paper", "synthesize"]


def fmt(v) -> str:
    return "  -  " if v is None else f"{v:.3f}"


def run(name: str, llm: dict, args, queries: Path, golds: list[dict]) -> dict:
    """One ``lit3r run`` of ``queries`` with LLM settings ``llm``; its scores and counts."""
    settings = load_settings(home=args.home, llm=llm)
    engine = Engine(settings)
    sub = args.out / f"sub-{name}.jsonl"
    t = time.perf_counter()
    report = run_batch(engine, queries, sub, progress=args.progress)
    secs = time.perf_counter() - t
    preds = [json.loads(line) for line in sub.open()]
    traces = [json.loads(line) for line in sub.with_name(sub.name + ".traces.jsonl").open()]
    asked = {g["query_id"] for g in golds}
    stages: dict[str, Counter] = {s: Counter() for s in STAGES}
    paths, notes, per_q = Counter(), Counter(), []
    for tr in traces:
        t_ = tr.get("trace")
        if not t_:
            continue
        for stage, counts in t_["llm"].get("stages", {}).items():
            stages.setdefault(stage, Counter()).update(counts)
        paths[t_["answered_by"]] += 1
        notes.update(n.split(":", 1)[0][:60] for n in t_["reader"]["notes"])
        per_q.append((tr["query_id"], t_["answered_by"], (t_.get("timings") or {}).get("total", 0.0),
                      t_["llm"]["calls"]))
    return {"name": name, "eval": evaluate(preds, golds), "recall": candidate_recall(traces, golds),
            "lost": sorted(asked - {p["query_id"] for p in preds}), "failures": report.failures,
            "paths": paths, "degraded": report.degraded, "faults": report.faults, "stages": stages,
            "seconds": secs / max(1, report.answered), "notes": notes, "profile": settings.llm.profile_in_force(),
            "per_question": per_q}


def print_runs(runs: list[dict]) -> None:
    print(f"\n{'metric':22s}" + "".join(f"{r['name'][:24]:>26s}" for r in runs))
    for m in METRICS:
        print(f"{m:22s}" + "".join(f"{fmt(r['eval']['overall'][m]):>26s}" for r in runs))
    for k in RECALL_KS:
        print(f"{'candidate recall@' + str(k):22s}" + "".join(f"{r['recall']['overall'][str(k)]:>26.3f}" for r in runs))
    for fam in runs[0]["eval"]["by_task_family"]:
        print(f"{'overall ' + fam[:14]:22s}" + "".join(
            f"{fmt(r['eval']['by_task_family'].get(fam, {}).get('overall')):>26s}" for r in runs))
    print(f"{'seconds / question':22s}" + "".join(f"{r['seconds']:>26.1f}" for r in runs))
    print(f"{'questions lost':22s}" + "".join(f"{len(r['lost']):>26d}" for r in runs))
    for r in runs:
        print(f"\n== {r['name']} (LLM profile {r['profile']}): answered by {dict(r['paths'])}; degraded {r['degraded']}; "
              f"LLM faults {dict(r['faults']) or 'none'}; failed {len(r['failures'])} {r['failures'][:3]}")
        if not any(sum(c.values()) for c in r["stages"].values()):
            continue
        print(f"   {'stage':12s}" + "".join(f"{c:>18s}" for c in STAGE_COUNTS))
        for stage, c in r["stages"].items():
            if sum(c.values()):
                print(f"   {stage:12s}" + "".join(f"{c.get(k, 0):>18.1f}" if k == "seconds" else f"{c.get(k, 0):>18d}"
                                                  for k in STAGE_COUNTS))
        print("   runaway replies (cut at the token limit): " + str(sum(c.get("cut", 0) for c in r["stages"].values())))
        print("   reader notes (first words, count): " + "; ".join(f"{n} x{k}" for n, k in r["notes"].most_common(8)))
        for qid, path, secs, calls in r["per_question"]:
            print(f"   {qid:12s} {path:10s} {secs:7.1f} s  {calls:3d} calls")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="corpus folder with the 60 papers built")
    ap.add_argument("--model-path", default=os.environ.get("LIT3R_LLM__MODEL_PATH"), help="GGUF (local provider)")
    ap.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint instead of a GGUF")
    ap.add_argument("--model", default="local-model", help="model name at --base-url")
    ap.add_argument("--profile", default="small", help="LLM profile: small (the default here: a small model on "
                    "CPUs), full or auto (lit3r's default)")
    ap.add_argument("--max-tokens", type=int, default=None, help="llm.max_tokens (default: the profile's)")
    ap.add_argument("--limit", type=int, default=0, help="the first N questions only")
    ap.add_argument("--out", type=Path, default=None, help="submissions and traces (resumable)")
    ap.add_argument("--progress", action="store_true", help="progress lines on stderr")
    args = ap.parse_args()
    if not args.model_path and not args.base_url:
        ap.error("give --model-path GGUF (or LIT3R_LLM__MODEL_PATH) or --base-url")
    args.out = args.out or Path(tempfile.mkdtemp(prefix="lit3r-llm-bench-"))
    args.out.mkdir(parents=True, exist_ok=True)
    inputs = [json.loads(line) for line in (CORPUS / "questions_dev_inputs.jsonl").open()]
    inputs = inputs[: args.limit] if args.limit else inputs
    queries = args.out / "questions.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in inputs))
    ids = {q["query_id"] for q in inputs}
    golds = [g for g in (json.loads(line) for line in (CORPUS / "questions_dev.jsonl").open()) if g["query_id"] in ids]
    llm: dict = {"provider": "local", "model_path": args.model_path} if args.model_path else \
        {"provider": "openai", "base_url": args.base_url, "model": args.model, "api_key": os.environ.get("OPENAI_API_KEY", "none")}
    llm |= {"profile": args.profile, "cache": False}
    if args.max_tokens:
        llm["max_tokens"] = args.max_tokens
    label = Path(args.model_path).stem if args.model_path else args.model
    print(f"{len(inputs)} questions_dev questions; outputs in {args.out}", flush=True)
    runs = [run("none", {"provider": "none"}, args, queries, golds)]
    runs.append(run(label, llm, args, queries, golds))
    print_runs(runs)


if __name__ == "__main__":
    main()
