"""questions_dev + questions_dev2 over the 60 real papers, end to end, scored with the official metrics
(issues 6 and 24), per fixed fold, for the union, and per task family, evidence type and answer type.

For each LLM setting (``none``: extractive reader; ``smollm2``: the packaged SmolLM2-135M-Instruct
GGUF in process through llama.cpp, decomposition + verification + the two-stage LLM reader) it
runs the same code as ``lit3r run --queries QUESTIONS.jsonl --out SUB.jsonl`` and
``lit3r eval --gold GOLD.jsonl --pred SUB.jsonl --plot recall.png``, and prints the
leaderboard metrics, candidate recall@k, seconds per question, LLM calls and tokens, the
number of validation repairs, and abstention: how many dev-set questions abstain (none
should) and how many of ``OFF_TOPIC``, questions this corpus cannot answer (all should).

Folds (issue 24, item 4): the 37 questions of questions_dev and questions_dev2, sorted by query id,
alternate between fold A (1st, 3rd, 5th ...) and fold B (2nd, 4th ...): :func:`fold_of`. The split
is fixed (it depends on the ids alone); a reader rule or weight stays only if neither fold gets
worse. The per-question scores go to ``OUT/scores-NAME.json`` (compare two runs question by question).

    .venv/bin/python bench/qa_bench.py --home DIR [--llm none,smollm2] [--llm-papers 5] [--out DIR]

DIR: a corpus folder with the 60 papers ingested and built
(``lit3r --home DIR ingest ../shared/data/corpus/pdfs --metadata ../shared/data/corpus/manifest.jsonl``).
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
from lit3r.littraceqa.batch import run_batch  # noqa: E402
from lit3r.littraceqa.metrics import RECALL_KS, candidate_recall, evaluate, plot_recall  # noqa: E402
from lit3r.pipeline.engine import Engine  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "corpus"
#: The dev sets: (gold file, questions file), in the order they are run.
DEV_SETS = [("questions_dev.jsonl", "questions_dev_inputs.jsonl"), ("questions_dev2.jsonl", "questions_dev2_inputs.jsonl")]
METRICS = ["overall", "paper_f1", "evidence_f1", "mc_acc", "freeform_em", "row_f1", "cell_acc_macro"]
#: Questions no paper of the corpus answers (the abstention check of issue 13).
OFF_TOPIC = ["What is the recommended dosage of ibuprofen for children?", "x", "Who won the 2018 FIFA World Cup final?",
             "How do I bake sourdough bread at home?", "What is the boiling point of ethanol at sea level?",
             "Which planets in the solar system have rings?", "What is the capital city of Australia?",
             "How many calories are in a banana?", "What are the symptoms of vitamin D deficiency?",
             "Which river is the longest in South America?", "What is the tallest mountain in Africa?",
             "How does a car engine's turbocharger work?"]


def fmt(v) -> str:
    return "  -   " if v is None else f"{v:.3f} "


def dev_golds() -> list[dict]:
    """The gold lines of both dev sets."""
    return [json.loads(line) for gold, _ in DEV_SETS for line in (CORPUS / gold).open() if line.strip()]


def fold_of(golds: list[dict]) -> dict[str, str]:
    """``{query_id: "A" | "B"}``: sorted by query id, the questions alternate A, B, A, B ... (module
    docstring)."""
    return {qid: "AB"[i % 2] for i, qid in enumerate(sorted(g["query_id"] for g in golds))}


def answer_type(gold: dict) -> str:
    """The scored answer type of a gold question: table, multiple_choice or freeform."""
    answer = gold.get("answer") or {}
    return next((t for t in ("table", "multiple_choice") if t in answer), "freeform")


def groups_of(preds: list[dict], golds: list[dict]) -> list[tuple[str, dict]]:
    """``[(group name, aggregate)]``: fold A, fold B, the union, and the union per task family,
    evidence type and answer type (:func:`lit3r.littraceqa.metrics.evaluate` on each subset)."""
    folds = fold_of(golds)
    res = evaluate(preds, golds)
    out = [(f"fold {f}", evaluate(preds, [g for g in golds if folds[g["query_id"]] == f])["overall"]) for f in "AB"]
    out += [("union", res["overall"])]
    out += [(f"family={k}", v) for k, v in res["by_task_family"].items()]
    out += [(f"evidence={k}", v) for k, v in res["by_evidence_type"].items()]
    for kind in sorted({answer_type(g) for g in golds}):
        out.append((f"answer={kind}", evaluate(preds, [g for g in golds if answer_type(g) == kind])["overall"]))
    return out


def print_groups(groups: list[tuple[str, dict]]) -> None:
    """One line per group: its question count and the leaderboard metrics."""
    print(f"{'group':34s} {'n':>3s} " + " ".join(f"{m[:11]:11s}" for m in METRICS))
    for g, agg in groups:
        print(f"{g:34s} {agg['questions']:3d} " + " ".join(f"{fmt(agg[m]):11s}" for m in METRICS))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="corpus folder with the 60 papers built")
    ap.add_argument("--llm", default="none,smollm2", help="comma-separated: none, smollm2")
    ap.add_argument("--llm-papers", type=int, default=5, help="papers read by LLM stage 1 (SmolLM2 run)")
    ap.add_argument("--out", type=Path, default=None, help="where submissions, traces and plots go")
    args = ap.parse_args()
    out_dir = args.out or Path(tempfile.mkdtemp(prefix="lit3r-qa-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    golds = dev_golds()
    inputs = out_dir / "questions.jsonl"
    inputs.write_text("".join((CORPUS / q).read_text() for _, q in DEV_SETS))
    folds = fold_of(golds)
    print(f"{len(golds)} questions of questions_dev and questions_dev2 over the 60 papers (fold A "
          f"{sum(f == 'A' for f in folds.values())}, fold B {sum(f == 'B' for f in folds.values())}); "
          f"outputs in {out_dir}")
    for name in args.llm.split(","):
        llm = {"provider": "none"} if name == "none" else {"provider": "local", "cache": False, "max_tokens": 384}
        settings = load_settings(home=args.home, llm=llm)
        settings.read.llm_papers = args.llm_papers
        engine = Engine(settings)
        sub = out_dir / f"sub-{name}.jsonl"
        sub.unlink(missing_ok=True)
        (out_dir / f"sub-{name}.jsonl.traces.jsonl").unlink(missing_ok=True)
        t = time.perf_counter()
        report = run_batch(engine, inputs, sub, progress=False)
        secs = time.perf_counter() - t
        preds = [json.loads(line) for line in sub.open()]
        traces = [json.loads(line) for line in (out_dir / f"sub-{name}.jsonl.traces.jsonl").open()]
        res = evaluate(preds, golds)
        rec = candidate_recall(traces, golds)
        plot_recall({"all": rec["overall"], **rec["by_task_family"]}, out_dir / f"recall-{name}.png",
                    f"questions_dev + questions_dev2, LLM {name}")
        calls = [t["trace"]["llm"]["calls"] for t in traces if "trace" in t]
        toks = [t["trace"]["llm"]["prompt_tokens"] + t["trace"]["llm"]["completion_tokens"] for t in traces if "trace" in t]
        repairs = sum(len(t["trace"]["validation"]) for t in traces if "trace" in t)
        readers = {t["trace"]["reader"]["name"] for t in traces if "trace" in t}
        print(f"\n== LLM {name}: {report.answered} answered, {len(report.failures)} failed; "
              f"{secs / max(1, len(preds)):.1f} s/question; reader {', '.join(sorted(readers))}; "
              f"LLM calls/question {statistics.fmean(calls) if calls else 0:.1f}, "
              f"tokens/question {statistics.fmean(toks) if toks else 0:.0f}; validation repairs {repairs}")
        print_groups(groups_of(preds, golds))
        (out_dir / f"scores-{name}.json").write_text(json.dumps(
            [{**q, "fold": folds[q["query_id"]]} for q in res["questions"]], indent=1))
        print("candidate recall@k  " + "  ".join(f"@{k}: {rec['overall'][str(k)]:.3f}" for k in RECALL_KS))
        for fam, curve in rec["by_task_family"].items():
            print(f"  {fam:30s}" + "  ".join(f"@{k}: {curve[str(k)]:.3f}" for k in RECALL_KS))
        if name == "none":
            dev = sum(not p.get("gold_papers") for p in preds)
            off = sum(engine.ask(q).read.papers == [] for q in OFF_TOPIC)
            print(f"abstained: dev sets {dev}/{len(preds)} (0 expected), off-topic {off}/{len(OFF_TOPIC)} "
                  "(all expected)")


if __name__ == "__main__":
    main()
