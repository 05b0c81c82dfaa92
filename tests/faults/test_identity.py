"""Fault class: paper identity (issue 25, item 3). A paper id that a stored paper holds is not
taken over by another file with other bytes: the file is refused with one line naming both
files, and the stored records stay byte for byte, unless the user passes ``--replace``."""

from __future__ import annotations

import json
import os

from tests.conftest import CORPUS
from tests.faults.conftest import errors, lit3r

RECORDS = ("papers.jsonl", "chunks.jsonl", "references.jsonl")


def _folder(path, pid: str, title: str):
    """A folder holding ``PID.pdf`` (a link to the real PDF) and a metadata file that names it
    paper ``taken`` with ``title``."""
    path.mkdir()
    os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", path / f"{pid}.pdf")
    meta = path / "meta.jsonl"
    meta.write_text(json.dumps({"paper_id": "taken", "pdf": f"{pid}.pdf", "title": title, "year": 2017}) + "\n")
    return path, meta


def test_a_taken_paper_id_is_refused_naming_both_files_and_replace_replaces(tmp_path):
    home = tmp_path / "home"
    first, meta1 = _folder(tmp_path / "a", "1706.03762", "Attention Is All You Need")
    second, meta2 = _folder(tmp_path / "b", "2007.14062", "Big Bird")
    res, _ = lit3r(home, "ingest", str(first), "--metadata", str(meta1), "--no-build", "--no-images", "--workers", "1")
    assert res.returncode == 0, res.stderr[-2000:]
    res, _ = lit3r(home, "ingest", str(first), "--metadata", str(meta1), "--no-build", "--no-images", "--workers", "1")
    assert res.returncode == 0 and "already taken" not in res.stderr, res.stderr  # the same file: the same paper
    before = {name: (home / name).read_bytes() for name in RECORDS}

    res, seconds = lit3r(home, "ingest", str(second), "--metadata", str(meta2), "--no-build", "--no-images",
                         "--workers", "1")
    lines = errors(res.stderr)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    refused = [line for line in lines if "paper id 'taken' is already taken" in line]
    assert len(refused) == 1 and str(second / "2007.14062.pdf") in refused[0] \
        and str(first / "1706.03762.pdf") in refused[0] and "--replace" in refused[0], lines
    assert {name: (home / name).read_bytes() for name in RECORDS} == before  # nothing stored is lost
    assert seconds < 60, seconds

    res, _ = lit3r(home, "ingest", str(second), "--metadata", str(meta2), "--no-build", "--no-images",
                   "--workers", "1", "--replace")
    assert res.returncode == 0, res.stderr[-2000:]
    papers = [json.loads(line) for line in (home / "papers.jsonl").open()]
    assert [(p["paper_id"], p["title"]) for p in papers] == [("taken", "Big Bird")]
    assert papers[0]["source"]["file"] == str(second / "2007.14062.pdf")

