"""Batch runs: LitTraceQA input JSONL -> submission JSONL, with traces in a side file.

Bounded concurrency (threads: the engine is read-only per question; concurrency pays off when
an LLM endpoint is the bottleneck), progress on stderr (:mod:`graph.progress`), resume (query
ids already in the output are skipped), and isolation: a failing question is recorded in the
trace file and the others go on.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from graph.progress import Reporter
from lit3r.errors import InputError
from lit3r.redact import redact, redact_data, secret_values


@dataclass
class BatchReport:
    """Counts of one run and the failures ``(query_id, one-line error)``."""

    inputs: int = 0
    skipped: int = 0
    answered: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)


ANSWER_TYPES = ("freeform", "multiple_choice", "table")


def read_inputs(path: Path) -> list[dict]:
    """Question lines (LitTraceQA input format). Raises InputError naming the file and line for a
    file that is not UTF-8, bad JSON, a line without a string ``query_id`` and ``question``,
    malformed ``answer_types``, ``multiple_choice_options`` or ``table_schema``, and for
    duplicate query ids."""
    rows, seen = [], set()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file: pass a JSONL file of questions") from None
    for no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"{path}:{no}: not valid JSON ({getattr(exc, 'msg', 'too deeply nested')}): "
                             f"fix the line") from None
        problem = _input_problem(row)
        if problem:
            raise InputError(f"{path}:{no}: {problem}: fix the line")
        if row["query_id"] in seen:
            raise InputError(f"{path}:{no}: duplicate query_id {row['query_id']!r}: make ids unique")
        seen.add(row["query_id"])
        rows.append(row)
    return rows


def _input_problem(row: object) -> str:
    """What is wrong with one input line ("" when nothing)."""
    if not isinstance(row, dict) or not isinstance(row.get("query_id"), str) or not row["query_id"].strip() \
            or not isinstance(row.get("question"), str):
        return 'needs a string "query_id" and a string "question"'
    types = row.get("answer_types", ["freeform"])
    if not isinstance(types, list) or not types or any(t not in ANSWER_TYPES for t in types):
        return f'"answer_types" must be a list of {", ".join(ANSWER_TYPES)}'
    opts = row.get("multiple_choice_options")
    if opts is not None and (not isinstance(opts, list) or not all(
            isinstance(o, dict) and isinstance(o.get("label"), str) and isinstance(o.get("text"), str) for o in opts)):
        return '"multiple_choice_options" must be a list of {"label", "text"} objects'
    schema = row.get("table_schema")
    if schema is not None and (not isinstance(schema, list) or not all(
            isinstance(c, dict) and isinstance(c.get("name"), str) for c in schema)):
        return '"table_schema" must be a list of {"name", "type", "is_row_key"} columns'
    return ""


def done_ids(out: Path) -> set[str]:
    """Query ids already written to a submission file. Raises InputError when the file is not a
    submission (a line that is not a JSON object with a query_id, or not UTF-8): it is never
    appended to or cut."""
    ids: set[str] = set()
    if not out.is_file():
        return ids
    try:
        lines = out.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise InputError(f"--out {out}: not a UTF-8 submission file: choose another --out") from None
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            ids.add(row["query_id"])
        except (json.JSONDecodeError, KeyError, TypeError, RecursionError):
            raise InputError(f"--out {out}:{no}: not a submission line: choose another --out "
                             f"(it is never overwritten)") from None
    return ids


def run_batch(engine, queries: Path, out: Path, *, workers: int = 1, progress: bool = True,
              traces: Optional[Path] = None) -> BatchReport:
    """Answer every question of ``queries`` not yet in ``out``; append submission lines to
    ``out`` and ``{"query_id", "trace", "candidates"}`` (or ``"error"``) lines to ``traces``
    (default ``<out>.traces.jsonl``)."""
    rows = read_inputs(queries)
    out = Path(out)
    if out.exists() and Path(queries).resolve() == out.resolve():
        raise InputError(f"--out {out} is the --queries file: write the submission to another file")
    traces = traces or out.with_name(out.name + ".traces.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    _drop_torn_line(out)
    done = done_ids(out)
    todo = [r for r in rows if r["query_id"] not in done]
    report = BatchReport(inputs=len(rows), skipped=len(rows) - len(todo))
    lock = threading.Lock()

    secrets = secret_values(getattr(engine, "settings", None))  # traces and errors never carry a key or password

    def one(row: dict) -> None:
        opts = {o["label"]: o["text"] for o in row.get("multiple_choice_options") or []} or None
        types = tuple(row.get("answer_types") or ("freeform",))
        try:
            res = engine.ask(row["question"], options=opts, query_id=row["query_id"], answer_types=types,
                             table_schema=row.get("table_schema") or None)
            line, trace = res.submission(), {"query_id": row["query_id"], "trace": redact_data(res.trace(), secrets),
                                             "candidates": res.candidates}
        except Exception as exc:  # one failing question never loses the others
            with lock:
                report.failures.append((row["query_id"], redact(f"{type(exc).__name__}: {exc}", secrets)[:300]))
                _append(traces, {"query_id": row["query_id"], "error": report.failures[-1][1]})
            return
        with lock:
            _append(out, line)
            _append(traces, trace)
            report.answered += 1

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool, \
            Reporter(enabled=progress and bool(todo)).bar("questions", len(todo), "question") as bar:
        for fut in as_completed([pool.submit(one, r) for r in todo]):
            fut.result()
            bar.update()
    return report


def _append(path: Path, obj: dict) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
        fh.flush()


def _drop_torn_line(path: Path) -> None:
    """An interrupted write can leave a last line without its newline: cut it off when it is not
    a complete JSON object (a complete one gets its newline); anything else is kept as it is."""
    if not path.is_file():
        return
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    last = data[data.rfind(b"\n") + 1:]
    try:
        complete = isinstance(json.loads(last), dict)
    except (ValueError, RecursionError):
        complete = False
    if complete:
        with path.open("ab") as fh:
            fh.write(b"\n")
    elif last.lstrip().startswith(b"{"):  # a torn submission line
        path.write_bytes(data[: data.rfind(b"\n") + 1])
