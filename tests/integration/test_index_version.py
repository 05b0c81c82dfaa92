"""The index names the corpus version it holds (issue 16, item 6): after an ingest with --no-build
or a build killed mid-way, `lit3r doctor` and `lit3r ask` say in one line that the index is older
than the corpus; the next `lit3r ingest` brings them together. Real PDFs, real CLI in
subprocesses, the model-free hashing encoder."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from ingest.stamp import read_version
from lit3r.config import Settings
from lit3r.index.state import stale_index_message
from tests.conftest import CORPUS, ROOT
from tests.integration.test_index_updates import KILLED_BUILD, PAPERS

#: The killed build of test_index_updates with batches of 50 chunks: killed after two committed batches.
KILLED_SMALL_BATCHES = KILLED_BUILD.replace("batch_chunks=200", "batch_chunks=50")

STALE = "was built before the last ingest"


def _index_check(lit3r: list[str]) -> dict:
    res = subprocess.run(lit3r + ["doctor", "--json"], cwd=ROOT, capture_output=True, text=True)
    assert res.stdout.lstrip().startswith("{"), (res.stdout[-1000:], res.stderr[-2000:])
    return next(c for c in json.loads(res.stdout)["checks"] if c["name"] == "index")


def test_an_index_older_than_the_corpus_is_reported_until_the_next_build(tmp_path):
    pdfs, home = tmp_path / "pdfs", tmp_path / "home"
    pdfs.mkdir()
    home.mkdir()
    (home / "config.toml").write_text('[models]\nchunk_encoder = "hashing:64"\npaper_encoder = "hashing:64"\n')
    for pid in PAPERS[:2]:
        (pdfs / f"{pid}.pdf").symlink_to(CORPUS / "pdfs" / f"{pid}.pdf")
    settings = Settings(home=home, models={"chunk_encoder": "hashing:64", "paper_encoder": "hashing:64"})
    lit3r = [sys.executable, "-m", "lit3r.cli", "--home", str(home)]
    ingest = lit3r + ["ingest", str(pdfs), "--no-images"]
    res = subprocess.run(ingest, cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    first = read_version(home)
    manifest = json.loads((home / "index" / "manifest.json").read_text())
    assert first and manifest["corpus_version"] == first
    assert stale_index_message(settings) is None
    check = _index_check(lit3r)
    assert check["ok"] and "up to date" in check["detail"], check

    # an ingest that changes nothing keeps the version (the hash is of the records)
    assert subprocess.run(ingest + ["--no-build"], cwd=ROOT, capture_output=True).returncode == 0
    assert read_version(home) == first and stale_index_message(settings) is None

    # new papers ingested without a build: the index still answers, from the older corpus, and says so
    for pid in PAPERS[2:4]:
        (pdfs / f"{pid}.pdf").symlink_to(CORPUS / "pdfs" / f"{pid}.pdf")
    assert subprocess.run(ingest + ["--no-build"], cwd=ROOT, capture_output=True).returncode == 0
    assert read_version(home) not in (None, first)
    check = _index_check(lit3r)
    assert not check["ok"] and STALE in check["detail"] and "lit3r ingest PDF_DIR" in check["detail"], check
    ask = subprocess.run(lit3r + ["ask", "attention"], cwd=ROOT, capture_output=True, text=True)
    assert ask.returncode == 0 and ask.stdout.strip(), ask.stderr[-2000:]  # it answers, from the older index
    warnings = [line for line in ask.stderr.splitlines() if STALE in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: "), ask.stderr

    # a build killed mid-way (SIGKILL in its third encoder call, after two staged batches) publishes nothing: still older
    res = subprocess.run([sys.executable, "-c", KILLED_SMALL_BATCHES, str(home)], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == -signal.SIGKILL, res.stderr[-2000:]
    assert STALE in (stale_index_message(settings) or "")
    assert not _index_check(lit3r)["ok"]

    # the next ingest finishes the build: up to date again
    res = subprocess.run(ingest, cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert stale_index_message(settings) is None
    assert json.loads((home / "index" / "manifest.json").read_text())["corpus_version"] == read_version(home)
    assert _index_check(lit3r)["ok"]
    ask = subprocess.run(lit3r + ["ask", "attention"], cwd=ROOT, capture_output=True, text=True)
    assert ask.returncode == 0 and STALE not in ask.stderr, ask.stderr[-2000:]


def test_an_ingest_killed_while_rewriting_the_corpus_files_leaves_no_version(tmp_path):
    """No ``corpus.json`` while the record files are rewritten: an index that has a version is
    then reported older (never silently taken as current)."""
    from ingest.stamp import clear_stamp, write_stamp

    home = tmp_path / "home"
    home.mkdir()
    index = home / "index"
    index.mkdir()
    (index / "manifest.json").write_text(json.dumps({"corpus_version": "abc", "report": {}}))
    settings = Settings(home=home)
    write_stamp(home, "abc")
    assert stale_index_message(settings) is None
    clear_stamp(home)
    assert read_version(home) is None and STALE in (stale_index_message(settings) or "")
    (home / "corpus.json").write_text("{torn")
    assert read_version(home) is None and STALE in (stale_index_message(settings) or "")
