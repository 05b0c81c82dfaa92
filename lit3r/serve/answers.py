"""The answering tools of ``lit3r mcp``: ``ask`` (the whole pipeline, as ``lit3r ask``) and
``trace`` (a stored evidence trace, as ``lit3r graph trace``).

``ask`` stores each answer's evidence trace in the configured trace store under the server's
run (``mcp-<start time>``) and query id ``q1``, ``q2``, ... (:func:`lit3r.traces.trace_graph.store_traces`,
secrets masked first); the result names them, and ``trace`` reads them back
(:func:`lit3r.traces.trace_graph.trace_view`). A trace store that cannot be written (a read-only home)
costs the answer nothing: the result says why in ``trace_note``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from graph import explore
from graph.sqlite import Error as SQLiteError
from lit3r.errors import Lit3rError
from lit3r.littraceqa.format import evidence_chunks
from lit3r.present.redact import redact_data
from lit3r.present.server_errors import server_errors
from lit3r.serve.corpus import locator
from lit3r.serve.errors import echoed, error_line

if TYPE_CHECKING:
    from lit3r.serve.session import Session

#: Candidate papers an ``ask`` result lists (the whole ranking is in the trace).
SHOWN_CANDIDATES = 10


def ask(session: "Session", question: str, options: Optional[dict[str, str]] = None,
        table_schema: Optional[list[dict]] = None, papers: Optional[Sequence[str]] = None,
        llm: Optional[str] = None) -> dict[str, Any]:
    """Answer ``question`` with the full pipeline (:meth:`lit3r.pipeline.engine.Engine.ask`).

    Returns ``{question, answer, answered_by, degraded, papers, evidence, candidates, trace,
    trace_note, timings}``: ``answer`` is the validated LitTraceQA submission line (what ``lit3r
    ask --json`` prints as ``submission``, with this server's query id), ``papers`` the heads of
    the supporting papers, ``evidence`` the locators and text of the chunks behind the answer's
    evidence items, ``candidates`` the first :data:`SHOWN_CANDIDATES` candidate papers, ``trace``
    ``{query_id, run}`` of the stored trace (None when it could not be stored), timings in
    seconds. Raises BadQuestion (empty question, one option, unknown paper ids), LLMError."""
    engine = session.engine(llm)
    query_id = session.next_query_id()
    with engine.snapshot():
        result = engine.ask(question, options=options, query_id=query_id, table_schema=table_schema, papers=papers)
        chunks = evidence_chunks(result.read.evidence, result.line)
        heads = engine.paper_heads([*result.read.papers, *result.candidates[:SHOWN_CANDIDATES]])
        stored, note = _store(session, engine, result)
    return {
        "question": echoed(question),
        "answer": _cut_echo(result.line, result.question),
        "answered_by": result.answered_by(),
        "degraded": result.degraded(),
        "papers": [explore.head(heads[p]) for p in result.read.papers],
        "evidence": [locator(c) for c in chunks],
        "candidates": [{"rank": i, "paper_id": p, "title": heads[p].title}
                       for i, p in enumerate(result.candidates[:SHOWN_CANDIDATES], start=1)],
        "trace": stored,
        "trace_note": note,
        "timings": {k: round(v, 3) for k, v in result.timings.items()},
    }


def _cut_echo(line: dict[str, Any], question: str) -> dict[str, Any]:
    """The submission line with a long question that its free text repeats (an abstention says
    what it found no evidence for) cut as :func:`echoed` cuts it."""
    text = ((line.get("answer") or {}).get("freeform") or {}).get("text")
    if not isinstance(text, str) or echoed(question) == question or question not in text:
        return line
    freeform = {**line["answer"]["freeform"], "text": text.replace(question, echoed(question))}
    return {**line, "answer": {**line["answer"], "freeform": freeform}}


def _store(session: "Session", engine: Any, result: Any) -> tuple[Optional[dict], Optional[str]]:
    from lit3r.traces.trace_graph import store_traces, trace_line

    line = redact_data(trace_line(result), session.secrets)
    errors: tuple[type[BaseException], ...] = (Lit3rError, OSError, SQLiteError, *server_errors())
    try:
        store_traces(session.settings, [line], session.run, engine.graph)
    except errors as exc:
        return None, "the trace was not stored: " + error_line(exc, session.settings, session.secrets)
    return {"query_id": result.query_id, "run": session.run}, None


def trace(session: "Session", query_id: str, run: Optional[str] = None) -> dict[str, Any]:
    """The stored evidence trace of ``query_id`` (of ``run``; default: the newest question of
    that id): ``{question, candidates, evidence_path}`` as ``lit3r graph trace QUERY_ID --json``
    prints it, a question longer than :data:`lit3r.serve.errors.ECHO_CHARS` characters cut
    wherever it is repeated.
    Raises UnknownIdError for a question no trace holds."""
    from lit3r.factory import trace_store
    from lit3r.traces.trace_graph import trace_view

    store = trace_store(session.settings, session.graph())
    try:
        view = trace_view(store, query_id, run)
    finally:
        store.close()
    q = view["question"]
    full, cut = q["text"], echoed(q["text"])
    if cut != full:  # a long question, wherever the trace repeats it (subqueries, PRF queries)
        q["text"] = cut
        for rnd in q.get("rounds") or []:
            for sq in rnd.get("subqueries") or []:
                sq.update({k: sq[k].replace(full, cut) for k in ("query", "prf_query") if isinstance(sq.get(k), str)})
    return view
