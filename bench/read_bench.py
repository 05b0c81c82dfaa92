"""The Read step's three parts, each measured on its own (issue 24, item 2), from a submission of
the dev sets (``bench/qa_bench.py --out DIR`` writes ``DIR/sub-none.jsonl`` and its traces):

- paper identification: paper precision and recall of the supporting papers (macro over the
  questions), and the candidate ceiling: the share of gold papers among the candidates the reader
  was given (the trace's ``candidates``), all of them and the first ``read.papers`` (10) that the
  extractive reader scores;
- evidence localization: per question, whether a gold evidence item is among the first 1 and 3
  evidence items of the submission, as a whole evidence key (paper, source type, page, object:
  "chunk") and as its paper and page ("page");
- answer extraction: multiple-choice accuracy, table row F1 and cell accuracy (macro).

Each for fold A, fold B and the union (the folds of :func:`bench.qa_bench.fold_of`).

    .venv/bin/python bench/read_bench.py --sub DIR/sub-none.jsonl [--traces DIR/sub-none.jsonl.traces.jsonl]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.qa_bench import dev_golds, fold_of  # noqa: E402
from lit3r.littraceqa.format import evidence_key  # noqa: E402
from lit3r.littraceqa.metrics import evaluate  # noqa: E402

#: The candidates the extractive reader scores (``read.papers``' default).
READ_PAPERS = 10


def _page_key(item: dict) -> tuple:
    loc = item.get("locator") if isinstance(item.get("locator"), dict) else {}
    return item.get("paper_id"), str(loc.get("page"))


def localization(pred: dict, gold: dict) -> dict[str, float]:
    """``{chunk@1, chunk@3, page@1, page@3}`` of one question (module docstring)."""
    items = [e for e in pred.get("evidence") or [] if isinstance(e, dict)]
    gold_items = gold.get("evidence") or []
    keys = {evidence_key(e) for e in gold_items} - {None}
    pages = {_page_key(e) for e in gold_items}
    out = {}
    for k in (1, 3):
        out[f"chunk@{k}"] = float(any(evidence_key(e) in keys for e in items[:k]))
        out[f"page@{k}"] = float(any(_page_key(e) in pages for e in items[:k]))
    return out


def ceiling(trace: dict, gold: dict, top: int | None) -> float:
    """The share of the gold papers among the first ``top`` candidates (all when None)."""
    want = {p["paper_id"] for p in gold.get("gold_papers") or []}
    have = set((trace.get("candidates") or [])[:top] if top else trace.get("candidates") or [])
    return len(want & have) / len(want) if want else 1.0


def measures(preds: dict[str, dict], traces: dict[str, dict], golds: list[dict]) -> dict[str, float | None]:
    """The read measures (module docstring) over ``golds``."""
    agg = evaluate(list(preds.values()), golds)["overall"]
    out: dict[str, float | None] = {"questions": len(golds), "paper_p": agg["paper_p"], "paper_r": agg["paper_r"],
                                    "paper_f1": agg["paper_f1"]}
    out["ceiling_all"] = statistics.fmean(ceiling(traces.get(g["query_id"], {}), g, None) for g in golds)
    out["ceiling_read"] = statistics.fmean(ceiling(traces.get(g["query_id"], {}), g, READ_PAPERS) for g in golds)
    loc = [localization(preds.get(g["query_id"], {}), g) for g in golds]
    for k in ("chunk@1", "chunk@3", "page@1", "page@3"):
        out[k] = statistics.fmean(x[k] for x in loc)
    out["evidence_f1"] = agg["evidence_f1"]
    out.update(mc=agg["mc_acc"], row_f1=agg["row_f1"], cells=agg["cell_acc_macro"], overall=agg["overall"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sub", type=Path, required=True, help="a submission of the dev sets (qa_bench's sub-none.jsonl)")
    ap.add_argument("--traces", type=Path, default=None, help="its traces (default: SUB.traces.jsonl)")
    args = ap.parse_args()
    traces_path = args.traces or args.sub.with_name(args.sub.name + ".traces.jsonl")
    for path in (args.sub, traces_path):
        if not path.is_file():
            sys.exit(f"error: {path} does not exist: pass the submission bench/qa_bench.py --out DIR wrote")
    preds = {p["query_id"]: p for p in map(json.loads, args.sub.open()) if isinstance(p, dict) and "query_id" in p}
    traces = {t["query_id"]: t for t in map(json.loads, traces_path.open()) if "query_id" in t}
    golds = dev_golds()
    folds = fold_of(golds)
    rows = [(f"fold {f}", measures(preds, traces, [g for g in golds if folds[g["query_id"]] == f])) for f in "AB"]
    rows.append(("union", measures(preds, traces, golds)))
    names = list(rows[0][1])
    print(f"{'':8s} " + " ".join(f"{n[:12]:>12s}" for n in names))
    for label, m in rows:
        print(f"{label:8s} " + " ".join(f"{'-':>12s}" if m[n] is None else f"{m[n]:12.3f}" for n in names))


if __name__ == "__main__":
    main()
