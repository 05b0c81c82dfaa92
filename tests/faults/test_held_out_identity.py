"""Held-out paper identity faults (trial 25): a PDF renamed between two ingests is the same
paper (its bytes), so `lit3r ingest PDF_DIR --prune` keeps it, with its chunks and its index
entry; only a paper whose bytes are under no name in PDF_DIR is pruned."""

from __future__ import annotations

import json
import shutil

from tests.conftest import CORPUS
from tests.faults.conftest import PAPERS, lit3r


def _ids(home) -> list[str]:
    return sorted(json.loads(line)["paper_id"] for line in (home / "papers.jsonl").read_text().splitlines() if line)


def test_prune_keeps_a_paper_whose_pdf_was_renamed(home_copy, tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    shutil.copy(CORPUS / "pdfs" / f"{PAPERS[0]}.pdf", pdfs / "renamed by the user.pdf")
    shutil.copy(CORPUS / "pdfs" / f"{PAPERS[1]}.pdf", pdfs / f"{PAPERS[1]}.pdf")
    chunks = (home_copy / "chunks.jsonl").read_bytes()
    res, _ = lit3r(home_copy, "ingest", str(pdfs), "--no-images", "--prune")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert "pruned" not in res.stdout and _ids(home_copy) == sorted(PAPERS), res.stdout + res.stderr
    assert (home_copy / "chunks.jsonl").read_bytes() == chunks  # nothing of the renamed paper is lost
    assert "index in" in res.stdout and "removed" not in res.stdout, res.stdout
    (pdfs / "renamed by the user.pdf").unlink()  # now its bytes are gone: --prune drops it
    res, _ = lit3r(home_copy, "ingest", str(pdfs), "--no-images", "--prune")
    assert res.returncode == 0 and "1 pruned" in res.stdout and _ids(home_copy) == [PAPERS[1]], res.stdout
