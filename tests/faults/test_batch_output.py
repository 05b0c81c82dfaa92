"""Fault class: batch output of `lit3r run` (issue 25, item 4). One run at a time writes --out
(an OS lock on ``OUT.lock``), --out is never the --queries file (one path, a hard link or a
symbolic link), lines are appended whole, and every query id of the input is in --out exactly
once (answered, or with an ``error`` field when its question failed; the next run answers it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from tests.conftest import ROOT
from tests.faults.conftest import errors, lit3r

QUESTIONS = ["Which attention mechanism does the Transformer use?", "How many layers does the encoder stack have?",
             "Which sparse attention pattern does Big Bird use?", "What is the sequence length of Big Bird?",
             "Which optimizer trains the Transformer?", "What does global attention attend to in Big Bird?"]


def _queries(path, n: int = len(QUESTIONS)):
    path.write_text("".join(json.dumps({"query_id": f"q{i}", "question": QUESTIONS[i % len(QUESTIONS)]}) + "\n"
                            for i in range(n)))
    return path


def _ids(out) -> Counter:
    return Counter(json.loads(line)["query_id"] for line in out.read_text(encoding="utf-8").split("\n") if line)


@pytest.mark.parametrize("how", ["hard link", "symbolic link"])
def test_out_that_is_the_queries_file_is_refused_before_the_models_load(small_home, tmp_path, how):
    queries = _queries(tmp_path / "q.jsonl")
    before = queries.read_bytes()
    out = tmp_path / "out.jsonl"
    (os.link if how == "hard link" else os.symlink)(queries, out)
    res, seconds = lit3r(small_home, "run", "--queries", str(queries), "--out", str(out), "--no-trace-graph")
    lines = errors(res.stderr)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert lines == [f"Error: --out {out} is the --queries file {queries} (the same file): write the submission "
                     f"to another file"], lines
    assert queries.read_bytes() == before
    assert seconds < 30, seconds  # refused before any model loads: measured about 3 s


def test_a_second_run_on_the_same_out_is_refused_while_the_first_holds_it(small_home, tmp_path):
    from filelock import FileLock

    queries, out = _queries(tmp_path / "q.jsonl"), tmp_path / "out.jsonl"
    out.write_text(json.dumps({"query_id": "q0", "gold_papers": [], "evidence": [], "answer": {}}) + "\n")
    before = out.read_bytes()
    with FileLock(str(tmp_path / "out.jsonl.lock")):  # what a running `lit3r run` holds
        res, seconds = lit3r(small_home, "run", "--queries", str(queries), "--out", str(out), "--no-trace-graph")
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert errors(res.stderr) == [f"Error: --out {out}: another `lit3r run` is writing it: wait for it to finish, "
                                  f"or choose another --out"], res.stderr
    assert out.read_bytes() == before and seconds < 30


def test_two_runs_at_once_write_each_question_once(small_home, tmp_path):
    queries, out = _queries(tmp_path / "q.jsonl", 12), tmp_path / "out.jsonl"
    env = {**os.environ, "LIT3R_BACKEND": "embedded", "LIT3R_LLM__PROVIDER": "none"}
    cmd = [sys.executable, "-m", "lit3r.cli", "--home", str(small_home), "run", "--queries", str(queries), "--out",
           str(out), "--no-trace-graph"]
    procs = [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all("Traceback" not in err for _, err in outs), outs
    ids = _ids(out)
    assert ids == Counter({f"q{i}": 1 for i in range(12)}), ids
    refused = [err for (_, err), p in zip(outs, procs) if p.returncode == 1]
    assert all("another `lit3r run` is writing it" in err for err in refused), outs


def test_a_failed_question_has_its_error_line_and_the_next_run_answers_it(small_home, tmp_path):
    """One question raises inside the real engine: its --out line carries ``error``, the others
    are answered; the next run answers it and the file still holds each id once."""
    from lit3r.config import load_settings
    from lit3r.littraceqa.batch import run_batch
    from lit3r.pipeline.engine import Engine

    queries, out = _queries(tmp_path / "q.jsonl", 4), tmp_path / "out.jsonl"
    engine = Engine(load_settings(home=small_home, llm={"provider": "none"}))
    real_ask = engine.ask

    def ask(question, **kw):
        if kw.get("query_id") == "q2":
            raise RuntimeError("the reader met a fault")
        return real_ask(question, **kw)

    engine.ask = ask
    report = run_batch(engine, queries, out, progress=False)
    assert report.answered == 3 and [q for q, _ in report.failures] == ["q2"]
    rows = {json.loads(line)["query_id"]: json.loads(line) for line in out.read_text().splitlines()}
    assert set(rows) == {"q0", "q1", "q2", "q3"} and rows["q2"]["error"].startswith("RuntimeError: the reader")
    assert rows["q2"]["answer"] == {} and all("error" not in rows[q] for q in ("q0", "q1", "q3"))
    engine.ask = real_ask
    again = run_batch(engine, queries, out, progress=False)
    assert again.answered == 1 and again.skipped == 3 and not again.failures
    assert _ids(out) == Counter({f"q{i}": 1 for i in range(4)})
    assert all("error" not in json.loads(line) for line in out.read_text().splitlines())


def test_lines_are_appended_whole_through_the_cli(small_home, tmp_path):
    """A submission whose last line was cut by a killed writer is repaired and completed: every
    line whole, each id once (resume still works with the lock)."""
    queries, out = _queries(tmp_path / "q.jsonl", 3), tmp_path / "out.jsonl"
    res, _ = lit3r(small_home, "run", "--queries", str(queries), "--out", str(out), "--no-trace-graph")
    assert res.returncode == 0, res.stderr[-2000:]
    lines = out.read_bytes().split(b"\n")
    out.write_bytes(b"\n".join(lines[:2]) + b"\n" + lines[2][:25])  # torn last line
    res, _ = lit3r(small_home, "run", "--queries", str(queries), "--out", str(out), "--no-trace-graph")
    assert res.returncode == 0 and "1 answered, 2 already in" in res.stdout, res.stdout + res.stderr[-2000:]
    assert out.read_bytes().endswith(b"\n") and _ids(out) == Counter({"q0": 1, "q1": 1, "q2": 1})
