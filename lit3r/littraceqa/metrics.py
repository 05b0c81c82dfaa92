"""The LitTraceQA official metrics (the shared task's scoring, restated below), as pure functions.

Per question: paper P/R/F1 (sets of paper ids), evidence P/R/F1 (sets of normalised evidence
keys), multiple-choice accuracy, freeform exact match, table row P/R/F1 and cell accuracy.
Macro = mean over the questions that have that answer type. Leaderboard overall =
(paper_F1 + evidence_F1 + mean(MC_acc, row_F1, cell_acc_macro)) / 3.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from graph.errors import shown_id, shown_text
from lit3r.errors import InputError
from lit3r.littraceqa.format import evidence_key, normalize_text


def prf(pred: set, gold: set) -> tuple[float, float, float]:
    """Set precision, recall, F1. Both empty: 1; one empty: 0."""
    if not pred and not gold:
        return 1.0, 1.0, 1.0
    if not pred or not gold:
        return 0.0, 0.0, 0.0
    hit = len(pred & gold)
    p, r = hit / len(pred), hit / len(gold)
    return p, r, (2 * p * r / (p + r) if hit else 0.0)


def _number(value: Any) -> Optional[float]:
    try:
        return float(str(value).replace("%", "").replace(",", "").strip())
    except ValueError:
        return None


def cell_equal(pred: Any, gold: Any, col_type: str = "string") -> bool:
    """Numbers: relative/absolute tolerance 1e-6 after removing %; else normalised strings."""
    gn, pn = _number(gold), _number(pred)
    if gn is not None and pn is not None:
        return abs(gn - pn) <= 1e-6 or abs(gn - pn) <= 1e-6 * max(abs(gn), abs(pn))
    return normalize_text(pred) == normalize_text(gold)


def table_scores(pred_rows: list[dict], gold_table: dict) -> dict[str, float]:
    """Row P/R/F1 over row keys and cell accuracy over gold rows x non-key columns.

    Returns ``{row_p, row_r, row_f1, cells_correct, cells_total, cell_acc}``.
    """
    schema = gold_table.get("schema") or []
    keys = [c["name"] for c in schema if c.get("is_row_key")] or ([schema[0]["name"]] if schema else [])
    others = [c for c in schema if c["name"] not in keys]

    def key(row: dict) -> tuple:
        return tuple(normalize_text(row.get(k, "")) for k in keys)

    gold_rows = gold_table.get("rows") or []
    pred_by_key: dict[tuple, dict] = {}
    for row in pred_rows or []:
        pred_by_key.setdefault(key(row), row)
    p, r, f1 = prf(set(pred_by_key), {key(g) for g in gold_rows})
    correct = total = 0
    for g in gold_rows:
        pr = pred_by_key.get(key(g))
        for c in others:
            total += 1
            correct += pr is not None and cell_equal(pr.get(c["name"], ""), g.get(c["name"], ""), c.get("type", "string"))
    acc = correct / total if total else f1
    return {"row_p": p, "row_r": r, "row_f1": f1, "cells_correct": correct, "cells_total": total, "cell_acc": acc}


def _obj(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _ids(items: Any) -> set[str]:
    """Paper ids of a ``gold_papers`` list; entries that are not ``{"paper_id": str}`` do not count."""
    return {p["paper_id"] for p in items if isinstance(p, dict) and isinstance(p.get("paper_id"), str)
            and p["paper_id"]} if isinstance(items, list) else set()


def _keys(items: Any) -> set[tuple]:
    """Evidence keys of an ``evidence`` list; malformed items do not count."""
    if not isinstance(items, list):
        return set()
    out = set()
    for e in items:
        if isinstance(e, dict) and isinstance(e.get("paper_id"), str) and isinstance(e.get("source_type"), str):
            k = evidence_key(e)
            if k:
                out.add(k)
    return out


def score_question(pred: dict, gold: dict) -> dict[str, Any]:
    """All metrics of one question (``pred``: a submission line, ``gold``: a validation line).
    Malformed parts of ``pred`` (wrong types) score as missing, never raise."""
    out: dict[str, Any] = {"query_id": gold["query_id"], "task_family": gold.get("task_family"),
                           "evidence_type": gold.get("primary_evidence_type")}
    out["paper_p"], out["paper_r"], out["paper_f1"] = prf(_ids(pred.get("gold_papers")), _ids(gold.get("gold_papers")))
    out["evidence_p"], out["evidence_r"], out["evidence_f1"] = prf(_keys(pred.get("evidence")), _keys(gold.get("evidence")))
    ga, pa = _obj(gold.get("answer")), _obj(pred.get("answer"))
    if "multiple_choice" in ga:
        guess = str(_obj(pa.get("multiple_choice")).get("gold", "")).strip().upper()
        out["mc_acc"] = float(guess == str(ga["multiple_choice"]["gold"]).strip().upper())
    if "freeform" in ga:
        out["freeform_em"] = float(normalize_text(_obj(pa.get("freeform")).get("text", ""))
                                   == normalize_text(ga["freeform"]["text"]))
    if "table" in ga:
        rows = _obj(pa.get("table")).get("rows")
        out.update(table_scores([r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else [], ga["table"]))
    return out


def _mean(rows: list[dict], key: str) -> Optional[float]:
    vals = [r[key] for r in rows if key in r]
    return statistics.fmean(vals) if vals else None


def aggregate(rows: list[dict]) -> dict[str, Any]:
    """Macro averages, micro cell accuracy and the leaderboard overall score."""
    agg: dict[str, Any] = {"questions": len(rows)}
    for k in ("paper_p", "paper_r", "paper_f1", "evidence_p", "evidence_r", "evidence_f1", "mc_acc",
              "freeform_em", "row_p", "row_r", "row_f1", "cell_acc"):
        agg[k] = _mean(rows, k)
    cells = [r for r in rows if "cells_total" in r]
    total = sum(r["cells_total"] for r in cells)
    agg["cell_acc_micro"] = sum(r["cells_correct"] for r in cells) / total if total else None
    agg["cell_acc_macro"] = agg.pop("cell_acc")
    answer = [x for x in (agg["mc_acc"], agg["row_f1"], agg["cell_acc_macro"]) if x is not None]
    agg["overall"] = ((agg["paper_f1"] or 0.0) + (agg["evidence_f1"] or 0.0)
                      + (statistics.fmean(answer) if answer else 0.0)) / 3 if rows else None
    return agg


def _gold_answer_problem(gold: dict) -> Optional[str]:
    """What is wrong with the answer of a gold line, in the shapes :func:`score_question` reads
    (``"field F: must be ..."``), or None."""
    answer = gold.get("answer")
    if answer is None:
        return None
    if not isinstance(answer, dict):
        return 'field "answer": must be an object like {"freeform": {"text": "..."}}'
    mc, ff, table = answer.get("multiple_choice"), answer.get("freeform"), answer.get("table")
    if "multiple_choice" in answer and not (isinstance(mc, dict) and isinstance(mc.get("gold"), (str, int))
                                            and not isinstance(mc.get("gold"), bool)):
        return 'field "answer.multiple_choice": must be an object like {"gold": "A"}'
    if "freeform" in answer and not (isinstance(ff, dict) and isinstance(ff.get("text"), str)):
        return 'field "answer.freeform": must be an object like {"text": "..."}'
    if "table" in answer:
        if not isinstance(table, dict):
            return 'field "answer.table": must be an object like {"schema": [...], "rows": [...]}'
        schema, rows = table.get("schema"), table.get("rows")
        if schema is not None and not (isinstance(schema, list) and all(
                isinstance(c, dict) and isinstance(c.get("name"), str) for c in schema)):
            return 'field "answer.table.schema": must be a list of columns like {"name": "Method"}'
        if rows is not None and not (isinstance(rows, list) and all(isinstance(r, dict) for r in rows)):
            return 'field "answer.table.rows": must be a list of objects (column name -> cell)'
    return None


def evaluate(preds: Iterable[Any], golds: Iterable[dict], gold_name: Optional[str] = None) -> dict[str, Any]:
    """Score a submission against gold: ``{"overall": {...}, "by_task_family": {...},
    "by_evidence_type": {...}, "questions": [...], "missing_predictions": [...], "warnings": [...]}``.
    A gold question without a prediction scores as an empty prediction; prediction lines that
    are not objects with a string ``query_id``, duplicates (the first counts) and unknown query
    ids are ignored and counted in ``warnings`` (an empty submission is one warning too). Raises
    InputError for an empty gold set or a gold line without ``query_id``, ``question`` and
    ``gold_papers``, with a query id of an earlier line, or with an answer of the wrong shape;
    the message names ``gold GOLD_NAME:LINE`` (``gold line LINE`` without ``gold_name``)."""
    golds = list(golds)
    if not golds:
        named = f" {shown_text(gold_name, 200)}" if gold_name else ""
        raise InputError(f"the gold file{named} has no questions: pass a LitTraceQA gold JSONL (validation.jsonl)")
    first: dict[str, int] = {}
    for no, g in enumerate(golds, start=1):
        where = f"gold {shown_text(gold_name, 200)}:{no}:" if gold_name else f"gold line {no}"
        if not isinstance(g, dict) or not isinstance(g.get("query_id"), str):
            raise InputError(f"{where} has no query_id: pass a LitTraceQA gold file (validation.jsonl)")
        if not isinstance(g.get("gold_papers"), list) or not ("question" in g or "task_family" in g):
            raise InputError(f"{where} has no question and gold_papers (a questions file or a submission?): "
                             f"pass a LitTraceQA gold file (validation.jsonl) as --gold")
        if g["query_id"] in first:
            raise InputError(f"{where} field \"query_id\": {shown_id(g['query_id'])} is already on line "
                             f"{first[g['query_id']]}: fix the line (query ids are unique)")
        first[g["query_id"]] = no
        problem = _gold_answer_problem(g)
        if problem:
            raise InputError(f"{where} {problem}: fix the line")
    gold_ids = {g["query_id"] for g in golds}
    by_id: dict[str, dict] = {}
    bad = dup = unknown = 0
    for p in preds:
        if not isinstance(p, dict) or not isinstance(p.get("query_id"), str):
            bad += 1
        elif p["query_id"] in by_id:
            dup += 1
        else:
            unknown += p["query_id"] not in gold_ids
            by_id[p["query_id"]] = p
    warnings = [w for n, w in ((bad, "prediction line(s) without a string query_id were ignored"),
                               (dup, "duplicate prediction(s) were ignored (the first line counts)"),
                               (unknown, "prediction(s) for query ids not in the gold file were ignored")) if n
                for w in [f"{n} {w}"]]
    if not by_id:
        warnings.append("the submission has no prediction for any gold question: every question scores 0 (pass "
                        "the JSONL that `lit3r run` wrote)")
    rows = [score_question(by_id.get(g["query_id"], {"query_id": g["query_id"]}), g) for g in golds]
    groups: dict[str, dict[str, list]] = {"by_task_family": defaultdict(list), "by_evidence_type": defaultdict(list)}
    for r in rows:
        groups["by_task_family"][r["task_family"] or "unknown"].append(r)
        groups["by_evidence_type"][r["evidence_type"] or "unknown"].append(r)
    return {"overall": aggregate(rows),
            **{name: {k: aggregate(v) for k, v in sorted(g.items())} for name, g in groups.items()},
            "questions": rows, "missing_predictions": sorted(gold_ids - set(by_id)), "warnings": warnings}


#: Cut-offs of candidate recall@k (the seed paper reports 1/5/10/20/50).
RECALL_KS = (1, 5, 10, 20, 50)


def recall_at_k(candidates: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Candidate recall@k: share of the gold papers among the first ``k`` candidates (1.0 when
    there is no gold)."""
    gold = set(gold)
    return len(gold & set(candidates[:k])) / len(gold) if gold else 1.0


def candidate_recall(traces: Iterable[dict], golds: Iterable[dict], ks: tuple[int, ...] = RECALL_KS) -> dict[str, Any]:
    """Candidate recall@k of the ranked candidates in ``traces`` (lines with ``query_id`` and
    ``candidates``, as written by ``lit3r run``) against the gold papers: macro over questions,
    overall and by task family and evidence type. A gold question without a trace (or whose
    trace has no candidate list) counts 0 and is listed in ``missing_traces``.

    Returns ``{"ks": [...], "overall": {k: r}, "by_task_family": {name: {k: r}},
    "by_evidence_type": {...}, "questions": n, "missing_traces": [...]}`` (k as strings)."""
    by_id = {t["query_id"]: [c for c in t["candidates"] if isinstance(c, str)] for t in traces
             if isinstance(t, dict) and isinstance(t.get("query_id"), str) and isinstance(t.get("candidates"), list)}
    golds = list(golds)
    rows = []
    for g in golds:
        gold = _ids(g.get("gold_papers"))
        cands = by_id.get(g["query_id"], [])
        rows.append((g.get("task_family") or "unknown", g.get("primary_evidence_type") or "unknown",
                     {str(k): recall_at_k(cands, gold, k) for k in ks}))

    def avg(sel: list[dict]) -> dict[str, float]:
        return {str(k): statistics.fmean(r[str(k)] for r in sel) for k in ks} if sel else {}

    fam: dict[str, list] = defaultdict(list)
    ev: dict[str, list] = defaultdict(list)
    for f, e, r in rows:
        fam[f].append(r)
        ev[e].append(r)
    return {"ks": list(ks), "overall": avg([r for _, _, r in rows]),
            "by_task_family": {k: avg(v) for k, v in sorted(fam.items())},
            "by_evidence_type": {k: avg(v) for k, v in sorted(ev.items())},
            "questions": len(rows), "missing_traces": sorted(g["query_id"] for g in golds if g["query_id"] not in by_id)}


def plot_recall(curves: dict[str, dict[Any, float]], path, title: str = "Candidate recall@k") -> None:
    """Save recall@k curves (``{label: {k: recall}}``, k as strings or ints) as a PNG at ``path``
    (matplotlib, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
    for label, curve in curves.items():
        if curve:
            ks = sorted(int(k) for k in curve)
            ax.plot(ks, [curve[str(k)] if str(k) in curve else curve[k] for k in ks], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_xticks(list(RECALL_KS), [str(k) for k in RECALL_KS])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("k (candidates)")
    ax.set_ylabel("recall@k")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def evaluate_files(gold_file: Path, pred_file: Path, traces_file: Optional[Path] = None) -> dict[str, Any]:
    """:func:`evaluate` of the submission ``pred_file`` against the gold JSONL ``gold_file``, with
    ``candidate_recall`` from ``traces_file`` when given. ``warnings`` starts with one line per torn
    last line of the submission or its traces (a killed ``lit3r run``: skipped, said once).
    Raises InputError naming the file and line of a bad line (gold errors name the gold file)."""
    from lit3r.littraceqa.jsonl import read_rows

    golds = read_rows(gold_file)
    torn: list[str] = []  # warnings for a torn last line of the submission or its traces
    preds = read_rows(pred_file, torn)  # its errors name the submission, not the gold file
    res = evaluate(preds, golds, gold_name=str(gold_file))  # gold errors name the gold file and line
    if traces_file:
        res["candidate_recall"] = candidate_recall(read_rows(traces_file, torn), golds)
    res["warnings"] = [*torn, *res["warnings"]]
    return res
