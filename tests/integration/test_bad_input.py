"""Bad input is reported in one line and skipped; re-runs are idempotent and resume."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pymupdf
import pytest

from ingest.corpus import ingest_corpus, load_corpus
from tests.conftest import CORPUS, ROOT

GOOD = ["2309.06275", "2406.08177", "2108.09084"]


@pytest.fixture()
def pdf_dir(shared_data, tmp_path):
    d = tmp_path / "pdfs"
    d.mkdir()
    for pid in GOOD:
        shutil.copyfile(CORPUS / "pdfs" / f"{pid}.pdf", d / f"{pid}.pdf")
    real = (CORPUS / "pdfs" / "2309.06275.pdf").read_bytes()
    (d / "truncated.pdf").write_bytes(real[: len(real) // 2])
    doc = pymupdf.open(stream=real)
    doc.save(d / "encrypted.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    (d / "empty.pdf").write_bytes(b"")
    png = doc[0].get_pixmap(dpi=40).tobytes("png")
    (d / "picture.pdf").write_bytes(png)  # a PNG renamed .pdf
    scan = pymupdf.open()
    page = scan.new_page()
    page.insert_image(page.rect, stream=png)
    scan.save(d / "scanned.pdf")  # image-only
    return d


def test_bad_files_are_reported_and_skipped(pdf_dir, tmp_path):
    report = ingest_corpus(pdf_dir, tmp_path / "out", workers=2, progress=False)
    reasons = dict((Path(f).name, r) for f, r in report.failures)
    assert set(reasons) == {"truncated.pdf", "encrypted.pdf", "empty.pdf", "picture.pdf", "scanned.pdf"}
    assert "truncated" in reasons["truncated.pdf"]
    assert "encrypted" in reasons["encrypted.pdf"]
    assert "empty" in reasons["empty.pdf"]
    assert "not a PDF" in reasons["picture.pdf"]
    assert "no text layer" in reasons["scanned.pdf"]
    assert all("\n" not in r and ": " in r for r in reasons.values())
    papers, chunks, refs = load_corpus(tmp_path / "out")
    assert sorted(p.paper_id for p in papers) == sorted(GOOD)
    assert chunks and refs


def test_rerun_is_idempotent_and_incremental(pdf_dir, tmp_path):
    out = tmp_path / "out"
    ingest_corpus(pdf_dir, out, workers=1, progress=False)
    before = {n: (out / n).read_bytes() for n in ("papers.jsonl", "chunks.jsonl", "references.jsonl")}
    again = ingest_corpus(pdf_dir, out, workers=1, progress=False)
    assert again.parsed == 0 and again.unchanged == len(GOOD)
    assert {n: (out / n).read_bytes() for n in before} == before
    # add one more paper: only it is parsed, the rest is kept, nothing is duplicated
    shutil.copyfile(CORPUS / "pdfs" / "1706.03762.pdf", pdf_dir / "1706.03762.pdf")
    more = ingest_corpus(pdf_dir, out, workers=1, progress=False)
    assert more.parsed == 1 and more.unchanged == len(GOOD)
    papers, chunks, _ = load_corpus(out)
    assert sorted(p.paper_id for p in papers) == sorted(GOOD + ["1706.03762"])
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    # Fastformer (2108.09084) cites the Transformer: resolved now that it is in the corpus
    refs = [json.loads(line) for line in (out / "references.jsonl").open()]
    assert any(r["paper_id"] == "2108.09084" and r["cited_paper_id"] == "1706.03762" for r in refs)


def test_interrupted_run_resumes(shared_data, tmp_path):
    """Kill a real `lit3r ingest` mid-run, run it again, and compare with an uninterrupted run."""
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    ids = ["2007.14062", "2201.11903", "2101.03961", "1706.03762", "2309.06275", "2406.08177"]
    for pid in ids:
        os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "lit3r.cli", "ingest", str(pdfs), "--out", str(out), "--workers", "1", "--no-images"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((out / ".state").glob("*.json"))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(list((out / ".state").glob("*.json")))
    assert 2 <= done < len(ids), "the run was not interrupted mid-way"
    assert not (out / "chunks.jsonl").exists()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"{len(ids) - done} parsed, {done} unchanged" in res.stdout
    fresh = tmp_path / "fresh"
    ingest_corpus(pdfs, fresh, workers=1, images=False, progress=False)
    for name in ("papers.jsonl", "chunks.jsonl", "references.jsonl"):
        assert (out / name).read_text() == (fresh / name).read_text().replace(str(fresh), str(out))
