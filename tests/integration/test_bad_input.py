"""Bad input is reported in one line and skipped; re-runs are idempotent and resume."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
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


# ----------------------------------------------------------------------------- issue 16, item 4

SMALL = ["2002.08909", "2412.13171", "2108.09084"]  # three small real PDFs (11-12 pages)


@contextmanager
def _without_root():
    """Run the block as ``nobody`` when the tests run as root (root reads a chmod 000 file);
    a no-op for any other user."""
    if os.geteuid() != 0:
        yield
        return
    warm = Path(tempfile.mkdtemp(prefix="lit3r-warm-"))  # as root: the modules a run imports lazily
    ingest_corpus(CORPUS / "pdfs" / f"{SMALL[0]}.pdf", warm, workers=1, images=False, progress=False)
    shutil.rmtree(warm)
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def test_an_unreadable_file_or_folder_never_stops_the_corpus(shared_data):
    base = Path(tempfile.mkdtemp(prefix="lit3r-perm-"))  # not under pytest's 0700 folder: `nobody` must enter it
    try:
        base.chmod(0o777)
        pdfs = base / "pdfs"
        (pdfs / "private").mkdir(parents=True)
        for pid in SMALL[:2]:
            shutil.copyfile(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
        shutil.copyfile(CORPUS / "pdfs" / f"{SMALL[2]}.pdf", pdfs / "locked.pdf")
        shutil.copyfile(CORPUS / "pdfs" / "2401.04658.pdf", pdfs / "private" / "2401.04658.pdf")
        for p in [pdfs, *pdfs.rglob("*")]:
            p.chmod(0o777 if p.is_dir() else 0o644)
        (pdfs / "locked.pdf").chmod(0o000)
        (pdfs / "private").chmod(0o000)
        out = base / "out"
        with _without_root():
            report = ingest_corpus(pdfs, out, workers=1, images=False, progress=False)
        reasons = {Path(f).name: r for f, r in report.failures}
        assert list(reasons) == ["locked.pdf"]
        assert reasons["locked.pdf"] == ("locked.pdf: cannot be read (Permission denied): fix its permissions "
                                         "(chmod +r) or remove it")
        assert report.problems == [f"{pdfs / 'private'}: folder cannot be read (Permission denied): fix its "
                                   f"permissions (chmod +rx) to ingest its PDFs"]
        assert report.parsed == 2 and sorted(p.paper_id for p in load_corpus(out)[0]) == SMALL[:2]
        assert json.loads((out / "report.json").read_text())["failures"][0][1] == reasons["locked.pdf"]
        # fixed: the next run adds them and keeps the rest
        (pdfs / "locked.pdf").chmod(0o644)
        (pdfs / "private").chmod(0o777)
        with _without_root():
            again = ingest_corpus(pdfs, out, workers=1, images=False, progress=False)
        assert (again.parsed, again.unchanged, again.failures, again.problems) == (2, 2, [], [])
        assert sorted(p.paper_id for p in load_corpus(out)[0]) == sorted([*SMALL[:2], "locked", "2401.04658"])
    finally:
        for p in [base, *base.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o777)
        shutil.rmtree(base)


def _cli_ingest(pdfs: Path, home: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), "--no-build",
                           "--no-images", "--workers", "1", *extra], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_copies_loops_odd_names_and_bad_metadata_lines_are_reported(shared_data, tmp_path):
    """A real `lit3r ingest`: byte-identical PDFs are one paper, links that loop and metadata
    lines that are wrong are each one line, a file name with spaces and commas gives an id that
    `--papers` takes as it is."""
    pdfs = tmp_path / "pdfs"
    (pdfs / "sub").mkdir(parents=True)
    shutil.copyfile(CORPUS / "pdfs" / f"{SMALL[0]}.pdf", pdfs / f"{SMALL[0]}.pdf")
    shutil.copyfile(CORPUS / "pdfs" / f"{SMALL[0]}.pdf", pdfs / "sub" / "REALM copy (1).pdf")
    shutil.copyfile(CORPUS / "pdfs" / f"{SMALL[1]}.pdf", pdfs / "Fastformer, v2 (2021).pdf")
    os.symlink("b.pdf", pdfs / "a.pdf")
    os.symlink("a.pdf", pdfs / "b.pdf")
    os.symlink("..", pdfs / "sub" / "up")
    os.symlink("missing.pdf", pdfs / "gone.pdf")
    meta = tmp_path / "meta.jsonl"
    meta.write_bytes(b"\xef\xbb\xbf" + b"\n".join([
        json.dumps({"id": SMALL[0], "title": "REALM from the metadata", "year": 2020}).encode(),
        b'{"id": "x", "title": ',
        json.dumps({"id": SMALL[0], "title": "a second line for the same id"}).encode(),
        json.dumps({"id": "elsewhere", "title": "T", "pdf": "nowhere.pdf"}).encode(),
        '{"id": "latin", "title": "Caf\u00e9"}'.encode("latin-1"),
    ]) + b"\n")
    home = tmp_path / "home"
    res = _cli_ingest(pdfs, home, "--metadata", str(meta))
    assert res.returncode == 0, res.stderr
    err = res.stderr.splitlines()
    assert "duplicate REALM copy (1).pdf: the same bytes as 2002.08909.pdf: ingested once, as paper '2002.08909'" \
        in err
    warnings = [line for line in err if line.startswith("warning: ")]
    expected = [f"{meta}:2: not valid JSON", f"{meta}:3: paper_id '2002.08909' is already on line 1",
                f"{meta}:5: not UTF-8 (byte 0xe9", f"{pdfs / 'a.pdf'}: symbolic link loop",
                f"{pdfs / 'b.pdf'}: symbolic link loop", f"{pdfs / 'gone.pdf'}: symbolic link to a missing file",
                f"{pdfs / 'sub' / 'up'}: symbolic link loop", f"{meta}:4: pdf 'nowhere.pdf' is not under {pdfs}"]
    for want in expected:
        assert sum(w.startswith(f"warning: {want}") for w in warnings) == 1, (want, warnings)
    assert len(warnings) == len(expected)
    assert "(2 parsed, 0 unchanged, 0 skipped, 1 duplicate(s), 8 input problem(s))" in res.stdout
    papers = {p.paper_id: p for p in load_corpus(home)[0]}
    assert sorted(papers) == ["2002.08909", "Fastformer_v2_2021"]
    assert papers["2002.08909"].title == "REALM from the metadata"  # the BOM line is read
    from lit3r.cli.params import PAPER_IDS

    assert PAPER_IDS.convert(",".join(papers), None, None) == list(papers)
    # a second run: the copy is still one paper, nothing re-parsed; --json carries every line
    again = _cli_ingest(pdfs, home, "--metadata", str(meta), "--json")
    rep = json.loads(again.stdout)["ingest"]
    assert (rep["parsed"], rep["unchanged"], len(rep["duplicates"]), len(rep["problems"])) == (0, 2, 1, 8)


def test_copies_in_a_corpus_made_before_are_one_paper(shared_data, tmp_path):
    """A copy added later (another folder) never becomes a second paper, and a corpus that holds
    two papers of the same bytes (an older version) keeps one of them."""
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir()
    later.mkdir()
    shutil.copyfile(CORPUS / "pdfs" / f"{SMALL[1]}.pdf", first / "zeta.pdf")
    shutil.copyfile(CORPUS / "pdfs" / f"{SMALL[1]}.pdf", later / "alpha.pdf")
    out = tmp_path / "out"
    ingest_corpus(first, out, workers=1, images=False, progress=False)
    rep = ingest_corpus(later, out, workers=1, images=False, progress=False)
    assert rep.duplicates == [(str(later / "alpha.pdf"),
                               "alpha.pdf: the same bytes as paper 'zeta', already in the corpus: not added again")]
    assert [p.paper_id for p in load_corpus(out)[0]] == ["zeta"]
    # an older corpus with both: a journal entry of the copy, as an earlier version wrote it
    entry = json.loads((out / ".state" / "zeta.json").read_text())
    entry["paper_id"] = entry["paper"]["paper_id"] = "alpha"
    (out / ".state" / "alpha.json").write_text(json.dumps(entry))
    rep = ingest_corpus(first, out, workers=1, images=False, progress=False)
    assert [p.paper_id for p in load_corpus(out)[0]] == ["zeta"]
    assert any(w.startswith("alpha: parsed from the same PDF bytes as zeta") for w in rep.warnings)
