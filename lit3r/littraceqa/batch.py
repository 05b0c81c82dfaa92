"""Batch runs: LitTraceQA input JSONL -> submission JSONL, with traces in a side file.

Bounded concurrency (threads: the engine is read-only per question; concurrency pays off when
an LLM endpoint is the bottleneck), progress on stderr (:mod:`graph.progress`), resume (query
ids already in the output are skipped), and isolation: a failing question gets a line with an
``error`` field in the output and the trace file, the others go on, and the next run answers it
again. One run at a time writes an output (:func:`out_lock`), never the questions file itself
(:func:`check_out`), each line in one ``write`` (:func:`_append`): every valid query id of the
input is in the output exactly once (docs/RELIABILITY.md).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from graph.atomic import write_bytes_atomic
from graph.errors import ServerFault
from graph.progress import Reporter
from lit3r.errors import InputError
from lit3r.littraceqa.inputs import scan_inputs
from lit3r.littraceqa.jsonl import jsonl_lines, read_capped, torn_tail
from lit3r.present.redact import redact, redact_data, secret_values
from lit3r.present.server_errors import server_message


@dataclass
class BatchReport:
    """Counts of one run and the failures ``(query_id, one-line error)``; ``paths``: answers per
    path (``llm``, ``fallback``, ``extractive``: :meth:`lit3r.pipeline.engine.AskResult.answered_by`),
    ``degraded``: answers in which an LLM step failed or the fallback answered, ``faults``: per
    LLM fault class (:mod:`lit3r.llm.faults`), the questions that met it."""

    inputs: int = 0
    skipped: int = 0
    answered: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    #: One line per bad input line ("FILE:LINE: field ...: fix the line"): not run, nothing written.
    invalid: list[str] = field(default_factory=list)
    paths: Counter = field(default_factory=Counter)
    degraded: int = 0
    faults: Counter = field(default_factory=Counter)
    #: The one-line server fault (Neo4j, OpenSearch) that stopped the run; its question and
    #: those after it were not run (nothing written: the next run answers them).
    stopped: str = ""
    not_run: int = 0

    def failure_classes(self) -> Counter:
        """Failed questions per error class (the name before the first colon of each error)."""
        return Counter(err.split(":", 1)[0] for _, err in self.failures)

    def summary(self, out: Path) -> str:
        """The run's one-line summary: answered (per path), degraded, failed (per class), LLM faults."""
        line = f"{self.answered} answered, {self.skipped} already in {out}, {len(self.failures)} failed"
        if self.failures:
            line += " (" + ", ".join(f"{k} {v}" for k, v in sorted(self.failure_classes().items())) + ")"
        line += f" (of {self.inputs})"
        if self.invalid:
            line += f"; {len(self.invalid)} bad input line(s) not run (fix them and run again)"
        if self.paths:
            line += "; answered by " + ", ".join(f"{k} {v}" for k, v in sorted(self.paths.items()))
        if self.degraded or self.faults:
            faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items()))
            line += f"; {self.degraded} degraded" + (f" (questions per LLM fault: {faults})" if faults else "")
        if self.stopped:
            line += f"; stopped, {self.not_run} not run: {self.stopped} (then run the same command again)"
        return line


def read_inputs(path: Path) -> list[dict]:
    """Question lines (LitTraceQA input format, :mod:`lit3r.littraceqa.inputs`), all or nothing:
    raises InputError naming the file, the line and the field at the first bad line (what
    ``lit3r run --fail-fast`` does), and for a file that cannot be read or is not UTF-8."""
    rows, problems = scan_inputs(path)
    if problems:
        raise InputError(problems[0])
    return rows


def done_ids(out: Path) -> set[str]:
    """Query ids already written to a submission file. Raises InputError when the file is not a
    submission (a line that is not a JSON object with a query_id, or not UTF-8): it is never
    appended to or cut."""
    ids: set[str] = set()
    if not out.is_file():
        return ids
    for row in _rows(out):
        if "error" not in row:  # a failed question's line is answered again by the next run
            ids.add(row["query_id"])
    return ids


def _rows(out: Path) -> list[dict]:
    """The lines of the submission file ``out`` as dicts (each with a string ``query_id``);
    InputError when it is not a submission file."""
    try:
        text = read_capped(out).decode("utf-8")  # each line bounded
    except UnicodeDecodeError:
        raise InputError(f"--out {out}: not a UTF-8 submission file: choose another --out") from None
    rows = []
    for no, line in jsonl_lines(text):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row["query_id"], str):
                raise TypeError("query_id")
        except (ValueError, KeyError, TypeError, RecursionError):  # also a number over the digit limit
            raise InputError(f"--out {out}:{no}: not a submission line: choose another --out "
                             f"(it is never overwritten)") from None
        rows.append(row)
    return rows


def _drop_failed(out: Path) -> None:
    """Rewrite ``out`` (atomically) without the lines of questions that failed in an earlier run
    (an ``error`` field): this run answers them, so each query id stays on one line."""
    if not out.is_file():
        return
    lines = [line for line in out.read_bytes().split(b"\n") if line.strip()]  # each parses: done_ids read them
    keep = [line for line in lines if "error" not in json.loads(line)]
    if len(keep) != len(lines):
        write_bytes_atomic(out, b"".join(line + b"\n" for line in keep))


def check_out(queries: Path, out: Path, traces: Optional[Path] = None, *, probe_lock: bool = False) -> None:
    """Refuse (InputError) an ``out`` or ``traces`` that is the ``queries`` file (:func:`same_file`)
    or a FIFO or socket (writing would wait for a reader without end);
    ``probe_lock``: also refuse when another run holds ``out`` now (:func:`out_lock`), so that
    ``lit3r run`` says so before its models load."""
    traces = traces or out.with_name(out.name + ".traces.jsonl")
    for path, name in ((out, "--out"), (traces, "the traces file")):
        kind = _blocking_kind(path)
        if kind:  # opening it for writing waits for a reader without end
            raise InputError(f"{name} {path} is not a regular file ({kind}): write the submission to a file")
        if same_file(queries, path):  # one path, a hard link or a symbolic link: appending would grow the input
            raise InputError(f"{name} {path} is the --queries file {queries} (the same file): write the submission "
                             f"to another file")
    if probe_lock and out.parent.is_dir():
        with out_lock(out, create=False):
            pass


def _blocking_kind(path: Path) -> Optional[str]:
    """``"a FIFO"`` or ``"a socket"`` when ``path`` (links followed) is one, else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else None


def same_file(a: Path, b: Path) -> bool:
    """Are ``a`` and ``b`` one file (the same inode: one path, a hard link or a symbolic link)?"""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


@contextlib.contextmanager
def out_lock(out: Path, *, create: bool = True) -> Iterator[None]:
    """Hold ``out`` (and its traces) for one ``lit3r run``: two OS locks that a killed run
    releases, so that no second run appends to the same file under another name. One on
    ``<out>.lock`` beside the file ``out`` resolves to (the ``filelock`` library; a symbolic
    link to ``out`` takes the same lock), one on the file itself (``flock`` on its inode; a hard
    link to ``out`` takes the same lock; ``create``: the file is created empty when missing, else
    a missing file is not locked). Raises InputError at once while another run holds either:
    two runs appending to one file would write a question twice."""
    from filelock import FileLock, Timeout

    real = Path(os.path.realpath(out))
    lock = FileLock(str(real.with_name(real.name + ".lock")))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise _busy(out) from None
    except OSError as exc:  # its folder cannot be written (a full disk is said by the caller)
        raise _unwritable(out, exc) from None
    try:
        with _inode_lock(out, create):
            yield
    finally:
        lock.release()


def _busy(out: Path) -> InputError:
    return InputError(f"--out {out}: another `lit3r run` is writing it: wait for it to finish, or choose "
                      f"another --out")


def _unwritable(out: Path, exc: OSError) -> Exception:
    """A full disk as it is (the caller names the space needed), any other error as InputError."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return exc
    return InputError(f"--out {out}: cannot be written ({exc.strerror or exc}): choose a writable path")


@contextlib.contextmanager
def _inode_lock(out: Path, create: bool) -> Iterator[None]:
    """An exclusive ``flock`` on the file ``out`` (see :func:`out_lock`); nothing where the OS
    has no ``fcntl`` (Windows) or when ``out`` is missing and ``create`` is false."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the path lock alone
        yield
        return
    if not create and not out.exists():
        yield
        return
    try:
        fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _unwritable(out, exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(out) from None
        yield
    finally:
        os.close(fd)


def run_batch(engine, queries: Path, out: Path, *, workers: int = 1, progress: bool = True,
              traces: Optional[Path] = None, fail_fast: bool = False) -> BatchReport:
    """Answer every question of ``queries`` not yet in ``out``; append submission lines to
    ``out`` and ``{"query_id", "trace", "candidates"}`` (or ``"error"``) lines to ``traces``
    (default ``<out>.traces.jsonl``).

    Every line is checked before any question runs (:func:`lit3r.littraceqa.inputs.scan_inputs`):
    bad lines are listed in ``BatchReport.invalid`` and get no submission line (a gold question
    without one scores as an empty answer; once fixed, the next run answers it), the others run.
    ``fail_fast``: raise InputError at the first bad line instead, before any work."""
    rows, invalid = scan_inputs(queries)
    if invalid and fail_fast:
        raise InputError(f"{invalid[0]} (--fail-fast: no question was run)")
    out = Path(out)
    traces = traces or out.with_name(out.name + ".traces.jsonl")
    check_out(queries, out, traces)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out_lock(out):
        return _run_locked(engine, rows, invalid, out, traces, workers, progress)


def _run_locked(engine, rows: list[dict], invalid: list[str], out: Path, traces: Path, workers: int,
                progress: bool) -> BatchReport:
    """:func:`run_batch` once ``out`` is held (:func:`out_lock`)."""
    _drop_torn_line(out)
    _drop_torn_line(traces)  # a killed run can tear the last trace line too (it would block `lit3r eval`)
    done = done_ids(out)
    _drop_failed(out)
    todo = [r for r in rows if r["query_id"] not in done]
    report = BatchReport(inputs=len(rows), skipped=len(rows) - len(todo), invalid=invalid)
    lock = threading.Lock()

    secrets = secret_values(getattr(engine, "settings", None))  # traces and errors never carry a key or password
    stop = threading.Event()

    def fail(row: dict, exc: BaseException) -> None:
        with lock:
            report.failures.append((row["query_id"], redact(f"{type(exc).__name__}: {exc}", secrets)[:300]))
            _append(out, {"query_id": row["query_id"], "gold_papers": [], "evidence": [], "answer": {},
                          "error": report.failures[-1][1]})
            _append(traces, {"query_id": row["query_id"], "error": report.failures[-1][1]})

    def one(row: dict) -> None:
        if stop.is_set():  # a server fault stopped the run: the rest waits for the next run
            with lock:
                report.not_run += 1
            return
        opts = {o["label"]: o["text"] for o in row.get("multiple_choice_options") or []} or None
        types = tuple(row.get("answer_types") or ("freeform",))
        try:
            res = engine.ask(row["question"], options=opts, query_id=row["query_id"], answer_types=types,
                             table_schema=row.get("table_schema") or None)
            line, trace = res.submission(), {"query_id": row["query_id"], "trace": redact_data(res.trace(), secrets),
                                             "candidates": res.candidates}
        except ServerFault as exc:
            if not exc.down:  # one request's failure: this question's line says why
                fail(row, exc.cause)
                return
            with lock:  # the servers are down for every question: stop, one line
                report.not_run += 1
                if not report.stopped:
                    report.stopped = redact(server_message(getattr(engine, "settings", None), exc), secrets)
            stop.set()
            return
        except Exception as exc:  # one failing question never loses the others; its line says why
            fail(row, exc)
            return
        with lock:
            _append(out, line)
            _append(traces, trace)
            report.answered += 1
            report.paths[res.answered_by()] += 1
            report.degraded += res.degraded()
            report.faults.update(set(res.usage.faults))

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool, \
            Reporter(enabled=progress and bool(todo)).bar("questions", len(todo), "question") as bar:
        for fut in as_completed([pool.submit(one, r) for r in todo]):
            fut.result()
            bar.update()
    return report


def _append(path: Path, obj: dict) -> None:
    """Append ``obj`` as one whole line: a single ``write`` of the line's bytes to a file opened
    with ``O_APPEND`` (no other writer interleaves: :func:`out_lock`)."""
    data = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:  # a short write (a full disk raises instead) goes on where it stopped
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _drop_torn_line(path: Path) -> None:
    """An interrupted write can leave a last line without its newline: cut it off when it is not
    a complete JSON object (:func:`torn_tail`; a complete one gets its newline); anything else is
    kept as it is."""
    if not path.is_file():
        return
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    start = torn_tail(data)
    if start is not None:  # a torn submission line
        path.write_bytes(data[:start])
        return
    try:
        complete = isinstance(json.loads(data[data.rfind(b"\n") + 1:]), dict)
    except (ValueError, RecursionError):
        complete = False
    if complete:
        with path.open("ab") as fh:
            fh.write(b"\n")
