"""Held-out batch output faults (trial 25): a second `lit3r run` that names the same --out by
another path (a symbolic link, a hard link) is refused while the first holds it, like a second
run on the same path (tests/faults/test_batch_output.py). The first run's lock is taken by the
real :func:`lit3r.littraceqa.batch.out_lock` in this process; the second run is the real CLI."""

from __future__ import annotations

import json
import os

import pytest

from tests.faults.conftest import errors, lit3r


@pytest.mark.parametrize("how", ["symbolic link", "hard link"])
def test_a_run_on_a_link_to_an_out_another_run_holds_is_refused(small_home, tmp_path, how):
    from lit3r.littraceqa.batch import out_lock

    queries, out = tmp_path / "q.jsonl", tmp_path / "out.jsonl"
    queries.write_text(json.dumps({"query_id": "q1", "question": "Which attention mechanism does the Transformer use?"})
                       + "\n")
    out.write_text(json.dumps({"query_id": "q0", "gold_papers": [], "evidence": [], "answer": {}}) + "\n")
    before = out.read_bytes()
    other = tmp_path / "other-name.jsonl"
    (os.link if how == "hard link" else os.symlink)(out, other)
    with out_lock(out):  # what the first `lit3r run --out out.jsonl` holds while it answers
        res, seconds = lit3r(small_home, "run", "--queries", str(queries), "--out", str(other), "--no-trace-graph")
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert errors(res.stderr) == [f"Error: --out {other}: another `lit3r run` is writing it: wait for it to finish, "
                                  f"or choose another --out"], res.stderr
    assert out.read_bytes() == before and seconds < 60
    res, _ = lit3r(small_home, "run", "--queries", str(queries), "--out", str(other), "--no-trace-graph")
    assert res.returncode == 0, res.stderr[-2000:]  # released: the link is a valid --out again
    assert [json.loads(line)["query_id"] for line in out.read_text().splitlines()] == ["q0", "q1"]


def test_an_out_that_is_a_fifo_is_refused_at_once(small_home, tmp_path):
    queries, out = tmp_path / "q.jsonl", tmp_path / "out.jsonl"
    queries.write_text(json.dumps({"query_id": "q1", "question": "Which attention mechanism does the Transformer use?"})
                       + "\n")
    os.mkfifo(out)  # no reader: writing to it would wait without end
    res, seconds = lit3r(small_home, "run", "--queries", str(queries), "--out", str(out), "--no-trace-graph",
                         timeout=120)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert errors(res.stderr) == [f"Error: --out {out} is not a regular file (a FIFO): write the submission to a "
                                  f"file"], res.stderr
    assert seconds < 60, seconds
