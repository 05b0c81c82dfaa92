"""Held-out odd file names (trial 25): real PDFs whose names are long (250 characters), in a
non-Latin script (each character quoted as 9 bytes in the journal's file name) or not UTF-8 are
ingested like any other, each as one paper whose id is the same on the next run; the
non-UTF-8 name also when the file itself is the PDF_DIR argument."""

from __future__ import annotations

import json
import os
import shutil

from tests.conftest import CORPUS
from tests.faults.conftest import errors, lit3r

LONG, CJK, UNDECODABLE = "a" * 250 + ".pdf", "注意力机制与稀疏变换器的长序列建模研究综述第二版" * 2 + ".pdf", b"caf\xe9-\xff.pdf"
PDFS = ("2006.04768", "1810.04805", "2002.08909")


def _ids(home) -> list[str]:
    return [json.loads(line)["paper_id"] for line in (home / "papers.jsonl").read_text().splitlines() if line]


def test_long_non_latin_and_non_utf8_names_are_ingested_with_stable_ids(tmp_path):
    pdfs, home = tmp_path / "pdfs", tmp_path / "home"
    pdfs.mkdir()
    for name, pid in zip((LONG, CJK), PDFS):
        shutil.copy(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / name)
    with open(os.path.join(os.fsencode(pdfs), UNDECODABLE), "wb") as fh:
        fh.write((CORPUS / "pdfs" / f"{PDFS[2]}.pdf").read_bytes())
    res, seconds = lit3r(home, "ingest", str(pdfs), "--no-build", "--no-images", "--workers", "1", timeout=300)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert "3 paper(s)" in res.stdout and "(3 parsed, 0 unchanged, 0 skipped)" in res.stdout, res.stdout + res.stderr
    ids = _ids(home)
    assert len(set(ids)) == 3 and all(len(i.encode()) <= 255 for i in ids), ids
    again, _ = lit3r(home, "ingest", str(pdfs), "--no-build", "--no-images", "--workers", "1", timeout=300)
    assert again.returncode == 0 and "(0 parsed, 3 unchanged, 0 skipped)" in again.stdout, again.stdout + again.stderr
    assert _ids(home) == ids


def test_a_non_utf8_pdf_given_as_the_argument_is_ingested(tmp_path):
    home, folder = tmp_path / "home", tmp_path / "pdfs"
    folder.mkdir()
    path = os.path.join(os.fsencode(folder), UNDECODABLE)
    with open(path, "wb") as fh:
        fh.write((CORPUS / "pdfs" / f"{PDFS[0]}.pdf").read_bytes())
    res, _ = lit3r(home, "ingest", os.fsdecode(path), "--no-build", "--no-images", "--workers", "1", timeout=300)
    assert res.returncode == 0 and "Traceback" not in res.stderr, errors(res.stderr)
    assert "1 paper(s)" in res.stdout and "1 parsed" in res.stdout, res.stdout + res.stderr
