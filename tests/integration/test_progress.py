"""Progress of long steps when stderr is not a terminal (CI, a log file, `make demo | tee`):
plain lines ``<step>: <done>/<total> <unit>s, <seconds> s``, never tqdm's carriage returns."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from click.testing import CliRunner

from lit3r.cli import main
from tests.conftest import CORPUS, ROOT

ENCODING = re.compile(r"^encoding: (?P<done>[\d,]+)/(?P<total>[\d,]+) chunks(, (?P<rate>[\d.]+) chunks/s)?"
                      r"(, about (?P<left>\d+ (s|min|h \d+ min)) left|, \d+ s)$")
LINE = re.compile(r"^(?P<step>[a-zA-Z ]+): (?P<done>\d+)/(?P<total>\d+) (?P<unit>[a-z]+), \d+ s$")


def progress_lines(stderr: str, step: str) -> list[tuple[int, int, str]]:
    """``[(done, total, unit)]`` of the progress lines of ``step`` in ``stderr``."""
    out = []
    for line in stderr.splitlines():
        m = LINE.match(line)
        if m and m["step"] == step:
            out.append((int(m["done"]), int(m["total"]), m["unit"]))
    return out


def test_a_real_ingest_writes_plain_progress_lines(subset_ingest):
    _, run = subset_ingest  # `lit3r ingest` of 10 real PDFs with stderr a pipe
    assert "\r" not in run.stderr and "\x1b" not in run.stderr
    parsing = progress_lines(run.stderr, "parsing PDFs")
    assert parsing and parsing[-1] == (10, 10, "pdfs")
    # encoding counts chunks, with the rate; every line before the end says the time left
    encoding = [m for m in map(ENCODING.match, run.stderr.splitlines()) if m]
    assert encoding, run.stderr
    counts = [(int(m["done"].replace(",", "")), int(m["total"].replace(",", ""))) for m in encoding]
    done, total = counts[-1]
    assert done == total == sum(1 for _ in (subset_ingest[0] / "chunks.jsonl").open())
    assert [d for d, _ in counts] == sorted(d for d, _ in counts)  # counts only go up
    assert encoding[-1]["rate"] and float(encoding[-1]["rate"]) > 0
    assert all(m["left"] for m, (d, t) in zip(encoding, counts) if m["rate"] and d < t)


def test_a_batch_writes_plain_progress_lines(subset_home, tmp_path):
    queries = tmp_path / "q.jsonl"
    rows = [json.loads(line) for line in (CORPUS / "questions_dev_inputs.jsonl").open()][:2]
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = CliRunner().invoke(main, ["--home", str(subset_home), "run", "--queries", str(queries), "--out",
                                    str(tmp_path / "sub.jsonl")])
    assert res.exit_code == 0, res.output
    assert progress_lines(res.stderr, "questions")[-1] == (2, 2, "questions")
    assert "2 answered" in res.stdout and "questions:" not in res.stdout  # progress goes to stderr only


def test_encoding_counts_the_chunks_it_encodes_with_the_rate(tmp_path):
    """A real ingest of two PDFs with the model-free hashing encoder: the encoding line counts
    every chunk of the corpus; a second ingest encodes nothing and writes no encoding line."""
    pdfs, home = tmp_path / "pdfs", tmp_path / "home"
    pdfs.mkdir()
    home.mkdir()
    for pid in ("1706.03762", "2007.14062"):
        (pdfs / f"{pid}.pdf").symlink_to(CORPUS / "pdfs" / f"{pid}.pdf")
    (home / "config.toml").write_text('[models]\nchunk_encoder = "hashing:64"\npaper_encoder = "hashing:64"\n')
    cmd = [sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), "--no-images"]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    encoding = [m for m in map(ENCODING.match, run.stderr.splitlines()) if m]
    chunks = sum(1 for _ in (home / "chunks.jsonl").open())
    assert chunks > 50 and encoding, run.stderr
    last = encoding[-1]
    assert int(last["done"].replace(",", "")) == int(last["total"].replace(",", "")) == chunks
    assert float(last["rate"]) > 0
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and "encoding:" not in again.stderr, again.stderr[-2000:]
