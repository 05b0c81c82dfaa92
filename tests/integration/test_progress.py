"""Progress of long steps when stderr is not a terminal (CI, a log file, `make demo | tee`):
plain lines ``<step>: <done>/<total> <unit>s, <seconds> s``, never tqdm's carriage returns."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from lit3r.cli import main
from tests.conftest import CORPUS

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
    parsing, building = progress_lines(run.stderr, "parsing PDFs"), progress_lines(run.stderr, "building index")
    assert parsing and parsing[-1] == (10, 10, "pdfs")
    assert building and building[-1] == (10, 10, "papers")
    assert [d for d, _, _ in building] == sorted(d for d, _, _ in building)  # counts only go up


def test_a_batch_writes_plain_progress_lines(subset_home, tmp_path):
    queries = tmp_path / "q.jsonl"
    rows = [json.loads(line) for line in (CORPUS / "questions_dev_inputs.jsonl").open()][:2]
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = CliRunner().invoke(main, ["--home", str(subset_home), "run", "--queries", str(queries), "--out",
                                    str(tmp_path / "sub.jsonl")])
    assert res.exit_code == 0, res.output
    assert progress_lines(res.stderr, "questions")[-1] == (2, 2, "questions")
    assert "2 answered" in res.stdout and "questions:" not in res.stdout  # progress goes to stderr only
