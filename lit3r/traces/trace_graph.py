"""A question's trace dict -> its evidence-trace graph (:class:`graph.trace.TraceGraph`), and the
reading, storing and showing of traces: the one builder behind ``lit3r ask``, ``lit3r run``,
``lit3r trace load`` and ``lit3r mcp``.

The input is a trace line as ``lit3r run`` writes it to ``OUT.traces.jsonl``:
``{"query_id", "trace", "candidates"}`` where ``trace`` is :meth:`lit3r.pipeline.engine.AskResult.trace`
(``question``, ``rounds``, ``subqueries`` with ``pooled_chunks``, ``ranking_a``, ``ranking_b``,
``relate_sources``, ``seeds``, ``answer`` (the submission line), ``evidence_chunks``, ``reader``,
``validation``). The graph's shape is documented in :mod:`graph.trace`; the backends only write it.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional, Sequence

from graph.trace import TraceEdge, TraceGraph, TraceNode, question_key
from lit3r.errors import InputError, shown_id
from lit3r.littraceqa.jsonl import jsonl_lines, loads_line, read_capped, why_not_json

#: Trace fields the graph needs (traces written before Lit3R stored them cannot be loaded).
NEEDED = ("question", "rounds", "subqueries", "ranking_a", "ranking_b", "relate_sources", "seeds", "evidence_chunks")


def now() -> str:
    """The UTC time as ``2026-12-01T22:40:00.123456Z`` (sorts as time)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def trace_line(result: Any) -> dict[str, Any]:
    """The trace line of an :class:`lit3r.pipeline.engine.AskResult` (what ``lit3r run`` writes)."""
    return {"query_id": result.query_id, "trace": result.trace(), "candidates": result.candidates}


def trace_graph(line: dict[str, Any], run: str, stored_at: Optional[str] = None) -> TraceGraph:
    """The graph of one trace line (module docstring) for ``run``; ``stored_at``: ISO time (default
    now). Raises InputError naming the first missing field, for a run name with "/" (the
    separator of question keys) and for a trace whose fields have the wrong shape."""
    if not run.strip() or "/" in run:
        raise InputError(f"run name {shown_id(run)} is empty or holds '/': pass --run NAME without '/'")
    try:
        return _trace_graph(line, run, stored_at)
    except InputError:
        raise
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        qid = line.get("query_id") if isinstance(line, dict) else None
        raise InputError(f"trace of {shown_id(qid)} has a field of the wrong shape ({type(exc).__name__}: "
                         f"{str(exc)[:120]}): pass the OUT.traces.jsonl that `lit3r run` wrote, unedited") from None


def _trace_graph(line: dict[str, Any], run: str, stored_at: Optional[str]) -> TraceGraph:
    qid, t = line.get("query_id"), line.get("trace")
    if not isinstance(qid, str) or not isinstance(t, dict):
        raise InputError('a trace line needs a string "query_id" and a "trace" object')
    lacking = [k for k in NEEDED if k not in t]
    if lacking:
        raise InputError(f"trace of {shown_id(qid)} has no {lacking[0]!r}: it was written by an older Lit3R; answer the "
                         f"questions again with `lit3r run` to get complete traces")
    qkey = question_key(run, qid)
    nodes = [TraceNode(qkey, "Question", {"text": t["question"], "stored_at": stored_at or now(),
                                          "seeds": list(t["seeds"]), "reader": (t.get("reader") or {}).get("name")})]
    edges: list[TraceEdge] = []
    subs = list(t["subqueries"])
    for r in t["rounds"]:
        rkey = f"{qkey}/r{r['round']}"
        nodes.append(TraceNode(rkey, "Round", {"round": r["round"], "pool_size": r.get("pool_size", 0),
                                               "verdict": json.dumps(r.get("verdict")), "errors": list(r.get("errors") or []),
                                               "seconds": float(r.get("seconds") or 0.0)}))
        edges.append(TraceEdge(qkey, "HAS_ROUND", "trace", rkey))
        for i, query in enumerate(r["subqueries"], 1):
            sq = _take(subs, query)
            skey = f"{rkey}/s{i}"
            pooled = sq.get("pooled_chunks", []) if sq else []
            nodes.append(TraceNode(skey, "Subquery", {"round": r["round"], "index": i, "query": query,
                                                      "prf_query": (sq or {}).get("prf_query", ""), "pooled": len(pooled)}))
            edges.append(TraceEdge(rkey, "HAS_SUBQUERY", "trace", skey, {"index": i}))
            edges += [TraceEdge(skey, "POOLED", "chunk", cid, {"rank": k, "score": float(score)})
                      for k, (cid, score) in enumerate(pooled, 1)]
    edges += _papers(qkey, t, line.get("candidates") or [])
    akey = f"{qkey}/answer"
    answer = t.get("answer") or {}
    text = ((answer.get("answer") or {}).get("freeform") or {}).get("text")
    choice = ((answer.get("answer") or {}).get("multiple_choice") or {}).get("choice")
    papers = list(dict.fromkeys(p["paper_id"] for p in answer.get("gold_papers") or []))
    evidence = list(dict.fromkeys(t["evidence_chunks"]))
    nodes.append(TraceNode(akey, "Answer", {
        "reader": (t.get("reader") or {}).get("name"), "text": text, "choice": choice, "papers": papers,
        "evidence_chunks": evidence, "validation": list(t.get("validation") or []),
        "line": json.dumps(answer, ensure_ascii=False),
        **{k: t[k] for k in ("answered_by", "degraded") if isinstance(t.get(k), (str, bool))}}))
    edges.append(TraceEdge(qkey, "HAS_ANSWER", "trace", akey))
    edges += [TraceEdge(akey, "SUPPORTED_BY", "chunk", c, {"rank": k, "kind": "chunk"}) for k, c in enumerate(evidence, 1)]
    edges += [TraceEdge(akey, "SUPPORTED_BY", "paper", p, {"rank": k, "kind": "paper"}) for k, p in enumerate(papers, 1)]
    for n in nodes:  # what every trace node carries (graph/trace.py)
        n.props.update({"key": n.key, "run": run, "query_id": qid, "question": qkey})
    return TraceGraph(run, qid, nodes, edges)


def _take(subs: list[dict], query: str) -> Optional[dict]:
    """The first subquery trace of ``query`` (removed from ``subs``: rounds may repeat a query)."""
    for i, s in enumerate(subs):
        if s.get("query") == query:
            return subs.pop(i)
    return None


def _papers(qkey: str, t: dict, candidates: list[str]) -> list[TraceEdge]:
    """CANDIDATE edges for every paper of Ranking A, Ranking B and the final list; SEED and
    RELATED (one per Relate source that holds a Ranking-B paper) edges."""
    rank_a = {p: (k, float(s)) for k, (p, s) in enumerate(_pairs(t["ranking_a"]), 1)}
    rank_b = {p: k for k, p in enumerate(t["ranking_b"], 1)}
    final = {p: k for k, p in enumerate(candidates, 1)}
    in_source = {src: {p: k for k, p in enumerate(ps, 1)} for src, ps in (t["relate_sources"] or {}).items()}
    edges = []
    for pid in dict.fromkeys([*candidates, *rank_a, *rank_b]):
        sources = sorted(s for s, ranks in in_source.items() if pid in rank_b and pid in ranks)
        a = rank_a.get(pid)
        edges.append(TraceEdge(qkey, "CANDIDATE", "paper", pid, {
            "rank": final.get(pid), "rank_a": a[0] if a else None, "score_a": a[1] if a else None,
            "rank_b": rank_b.get(pid), "sources": sources}))
        edges += [TraceEdge(qkey, "RELATED", "paper", pid, {"source": s, "rank": in_source[s][pid]}) for s in sources]
    edges += [TraceEdge(qkey, "SEED", "paper", p, {"rank": k}) for k, p in enumerate(dict.fromkeys(t["seeds"]), 1)]
    return edges


def _pairs(ranking: list) -> list[tuple[str, float]]:
    """Ranking A as ``[(paper_id, score)]`` from ``[[id, score]]`` or ``[{paper_id, score}]``."""
    return [(r["paper_id"], r["score"]) if isinstance(r, dict) else (r[0], r[1]) for r in ranking]


def read_trace_lines(path: Path) -> tuple[list[dict], list[str]]:
    """``(trace lines, query ids of the failed questions)`` of a ``*.traces.jsonl`` file. Raises
    InputError naming the file and line for a file that is not UTF-8 JSON lines."""
    lines, failed = [], []
    try:
        text = read_capped(Path(path)).decode("utf-8")  # a regular file only, each line bounded
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file: pass the OUT.traces.jsonl of `lit3r run`") from None
    for no, raw in jsonl_lines(text):
        if not raw.strip():
            continue
        try:
            row = loads_line(raw)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"{path}:{no}: not valid JSON ({why_not_json(exc)}): fix or drop the line") from None
        if not isinstance(row, dict) or not isinstance(row.get("query_id"), str):
            raise InputError(f'{path}:{no}: not a trace line (no "query_id"): pass the OUT.traces.jsonl of `lit3r run`')
        if "error" in row and "trace" not in row:
            failed.append(row["query_id"])
            continue
        lines.append(row)
    return lines, failed


def run_name(path: Path) -> str:
    """The run a trace file belongs to: its name without ``.traces.jsonl`` and ``.jsonl``
    (``sub.jsonl.traces.jsonl`` -> ``sub``)."""
    name = Path(path).name
    for tail in (".traces.jsonl", ".jsonl"):
        if name.endswith(tail):
            name = name[: -len(tail)]
    return name or "run"


def store_traces(settings: Any, lines: Sequence[dict], run: str, graph: Any = None) -> dict[str, Any]:
    """Build the graph of each trace line (:func:`lit3r.traces.trace_graph.trace_graph`) and write them
    to the configured trace store (``graph``: the corpus store already open). Returns the
    store's write report plus ``run``."""
    from lit3r.factory import trace_store

    stamp = now()
    graphs = [trace_graph(line, run, stamp) for line in lines]
    store = trace_store(settings, graph)
    try:
        report = store.write(graphs)
    finally:
        store.close()
    return {**report, "run": run}


def trace_view(store: Any, query_id: str, run: Optional[str]) -> dict[str, Any]:
    """``{question, candidates, evidence_path}``: one question's whole trace (shapes of
    :class:`graph.trace.TraceStore`)."""
    q = store.question(query_id, run)
    return {"question": q, "candidates": store.candidates(query_id, q["run"]),
            "evidence_path": store.evidence_path(query_id, q["run"])}


def ask_run_name() -> str:
    """The run of one ``lit3r ask``: ``ask-<UTC time to the second>-<6 random hex digits>`` (e.g.
    ``ask-20261201T224000Z-3f9a01``): two asks in the same second are two runs, not one trace
    overwriting the other."""
    return "ask-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)
