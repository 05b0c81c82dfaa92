"""The ingest run as a library call (lit3r/index/ingest_run.py), on a metadata-only paper pool written
here: the report, the run's failure line, and a request with nothing to ingest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lit3r.config import load_settings
from lit3r.errors import InputError
from lit3r.index.ingest_run import IngestRequest, ingest_run


def _pool(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_metadata_only_pool_is_added_without_a_build(tmp_path: Path) -> None:
    pool = _pool(tmp_path / "pool.jsonl", [
        {"paper_id": "p1", "title": "Sparse attention for long documents", "venue": "ACL", "year": 2021},
        {"paper_id": "p2", "title": "Linear recurrences at scale", "venue": "ICML", "year": 2024}])
    settings = load_settings(home=tmp_path / "home")
    request = IngestRequest(metadata_file=pool, metadata_only=True, build=False)  # no encoder in the fast tier
    said: list[str] = []
    done = ingest_run(settings, request, progress=False, say=said.append)
    assert done.report.papers == 2 and done.report.parsed + done.report.unchanged == 2
    assert done.built is None
    assert done.failure(request) is None
    again = ingest_run(settings, request, progress=False, say=said.append)
    assert again.report.papers == 2  # idempotent


def test_a_pool_without_titles_is_the_run_failure_line(tmp_path: Path) -> None:
    pool = _pool(tmp_path / "pool.jsonl", [{"paper_id": "p1", "venue": "ACL"}])
    request = IngestRequest(metadata_file=pool, metadata_only=True, build=False)
    done = ingest_run(load_settings(home=tmp_path / "home"), request, progress=False, say=lambda _line: None)
    assert done.failure(request) == f"no paper with a title in {pool}: give lines with paper_id and title"


def test_nothing_to_ingest_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nothing to ingest"):
        ingest_run(load_settings(home=tmp_path / "home"), IngestRequest(), progress=False, say=lambda _line: None)
