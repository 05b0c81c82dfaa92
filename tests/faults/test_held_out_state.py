"""Held-out damaged state (trial 25): an index whose ``manifest.json`` was cut short (not JSON)
or whose ``paper_vectors.f32`` lost its tail refuses to answer (`ask`, `run`), with one line
naming the file and the fix, as `lit3r doctor` does; nothing is changed. (A missing manifest or
chunk vectors file: tests/faults/test_state.py.)"""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.faults.conftest import QUESTION, errors, lit3r


def _digests(folder) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith((".lock", "-wal", "-shm"))}


@pytest.mark.parametrize("name", ["manifest.json", "paper_vectors.f32"])
def test_an_index_file_cut_short_refuses_to_answer_and_names_the_fix(home_copy, tmp_path, name):
    path = home_copy / "index" / name
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    before = _digests(home_copy)
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "q1", "question": QUESTION}) + "\n")
    for args in (["ask", QUESTION], ["run", "--queries", str(queries), "--out", str(tmp_path / "out.jsonl")]):
        res, seconds = lit3r(home_copy, *args, "--no-trace-graph")
        lines = errors(res.stderr)
        assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
        assert res.stdout == "" and not (tmp_path / "out.jsonl").exists(), res.stdout  # no answer from the rest
        assert len(lines) == 1 and name in lines[0] and "`lit3r ingest PDF_DIR --rebuild`" in lines[0], lines
        assert seconds < 120, seconds
    doctor, _ = lit3r(home_copy, "doctor")
    assert doctor.returncode == 1 and "[FAIL] index" in doctor.stdout and name in doctor.stdout, doctor.stdout
    assert _digests(home_copy) == before
