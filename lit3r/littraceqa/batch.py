"""Batch runs: LitTraceQA input JSONL -> submission JSONL, with traces in a side file.

Bounded concurrency (threads: the engine is read-only per question; concurrency pays off when
an LLM endpoint is the bottleneck), a progress bar, resume (query ids already in the output are
skipped), and isolation: a failing question is recorded in the trace file and the others go on.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from tqdm import tqdm

from lit3r.errors import InputError


@dataclass
class BatchReport:
    """Counts of one run and the failures ``(query_id, one-line error)``."""

    inputs: int = 0
    skipped: int = 0
    answered: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)


def read_inputs(path: Path) -> list[dict]:
    """Question lines; raises ValueError naming the file and line for bad JSON or a line without
    ``query_id``/``question``, and for duplicate query ids."""
    rows, seen = [], set()
    for no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{no}: not valid JSON ({exc.msg}): fix the line") from None
        if not isinstance(row, dict) or not row.get("query_id") or not isinstance(row.get("question"), str):
            raise InputError(f"{path}:{no}: needs \"query_id\" and \"question\": fix the line")
        if row["query_id"] in seen:
            raise InputError(f"{path}:{no}: duplicate query_id {row['query_id']!r}: make ids unique")
        seen.add(row["query_id"])
        rows.append(row)
    return rows


def done_ids(out: Path) -> set[str]:
    """Query ids already written to a submission file (a torn last line is ignored)."""
    ids = set()
    if out.is_file():
        for line in out.read_text(encoding="utf-8").splitlines():
            try:
                ids.add(json.loads(line)["query_id"])
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
    return ids


def run_batch(engine, queries: Path, out: Path, *, workers: int = 1, progress: bool = True,
              traces: Optional[Path] = None) -> BatchReport:
    """Answer every question of ``queries`` not yet in ``out``; append submission lines to
    ``out`` and ``{"query_id", "trace", "candidates"}`` (or ``"error"``) lines to ``traces``
    (default ``<out>.traces.jsonl``)."""
    rows = read_inputs(queries)
    out = Path(out)
    traces = traces or out.with_name(out.name + ".traces.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    _drop_torn_line(out)
    done = done_ids(out)
    todo = [r for r in rows if r["query_id"] not in done]
    report = BatchReport(inputs=len(rows), skipped=len(rows) - len(todo))
    lock = threading.Lock()

    def one(row: dict) -> None:
        opts = {o["label"]: o["text"] for o in row.get("multiple_choice_options") or []} or None
        types = tuple(row.get("answer_types") or ("freeform",))
        try:
            res = engine.ask(row["question"], options=opts, query_id=row["query_id"], answer_types=types,
                             table_schema=row.get("table_schema") or None)
            line, trace = res.submission(), {"query_id": row["query_id"], "trace": res.trace(),
                                             "candidates": res.candidates}
        except Exception as exc:  # one failing question never loses the others
            with lock:
                report.failures.append((row["query_id"], f"{type(exc).__name__}: {exc}"[:300]))
                _append(traces, {"query_id": row["query_id"], "error": report.failures[-1][1]})
            return
        with lock:
            _append(out, line)
            _append(traces, trace)
            report.answered += 1

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool, \
            tqdm(total=len(todo), desc="questions", unit="q", disable=not progress) as bar:
        for fut in as_completed([pool.submit(one, r) for r in todo]):
            fut.result()
            bar.update()
    return report


def _append(path: Path, obj: dict) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
        fh.flush()


def _drop_torn_line(path: Path) -> None:
    """An interrupted write can leave a last line without its newline: cut it off."""
    if path.is_file():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            path.write_bytes(data[: data.rfind(b"\n") + 1])
