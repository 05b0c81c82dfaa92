from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from lit3r.cli import main
from tests.conftest import CORPUS, HARD, ROOT


def test_ingest_command_writes_the_corpus_folder(shared_data, tmp_path):
    res = CliRunner().invoke(main, ["ingest", str(HARD), "--out", str(tmp_path / "c"), "--workers", "2"])
    assert res.exit_code == 0, res.output
    assert "4 papers" in res.output
    for name in ("papers.jsonl", "chunks.jsonl", "references.jsonl", "report.json"):
        assert (tmp_path / "c" / name).is_file()
    fields = json.loads((tmp_path / "c" / "chunks.jsonl").open().readline())
    assert {"chunk_id", "paper_id", "kind", "page", "section", "object_id", "text", "seq"} <= set(fields)


def test_missing_folder_is_one_clear_line(tmp_path):
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "ingest", str(tmp_path / "nope")],
                         cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 1
    assert res.stderr.strip().count("\n") == 0 and "PDF folder not found" in res.stderr
    assert "Traceback" not in res.stderr


def test_bad_metadata_is_one_clear_line(shared_data, tmp_path):
    meta = tmp_path / "m.jsonl"
    meta.write_text("{not json\n")
    res = CliRunner().invoke(main, ["ingest", str(HARD), "--out", str(tmp_path / "c"), "--metadata", str(meta)])
    assert res.exit_code == 1 and "m.jsonl:1" in res.output and "Traceback" not in res.output


def test_metadata_overrides_page_one(shared_data, tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "x.pdf").symlink_to(CORPUS / "pdfs" / "2309.06275.pdf")
    meta = tmp_path / "m.jsonl"
    meta.write_text(json.dumps({"paper_id": "re2", "title": "Re-Reading", "venue": "EMNLP", "year": 2024,
                                "abstract": "We read twice.", "authors": ["A B"], "pdf": "x.pdf"}) + "\n")
    res = CliRunner().invoke(main, ["ingest", str(pdfs), "--out", str(tmp_path / "c"), "--metadata", str(meta),
                                    "--no-images"])
    assert res.exit_code == 0, res.output
    paper = json.loads((tmp_path / "c" / "papers.jsonl").read_text())
    assert paper["paper_id"] == "re2" and paper["authors"] == ["A B"]
    first = json.loads((tmp_path / "c" / "chunks.jsonl").open().readline())
    assert first["text"] == "[EMNLP 2024] Re-Reading\n\nWe read twice."
