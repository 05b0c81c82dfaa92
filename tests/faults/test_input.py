"""Fault class: odd input files and options (issue 25, item 7). JSON Lines split on "\\n" only
(U+2028, U+2029 and U+0085 inside a JSON string never split a line); a file name of any bytes
reported as its bytes; every PDF PyMuPDF opens is ingested (bytes after %%EOF included);
non-regular files named *.pdf reported and skipped; bad options and table schemas refused before
any model loads."""

from __future__ import annotations

import json
import os
import resource

import pytest

from tests.conftest import CORPUS
from tests.faults.conftest import QUESTION, errors, lit3r

PDF = CORPUS / "pdfs" / "1706.03762.pdf"


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085"], ids=["U+2028", "U+2029", "U+0085"])
def test_a_line_separator_inside_a_json_string_does_not_split_the_line(small_home, tmp_path, sep):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "q0", "question": f"Which attention mechanism{sep}does the "
                                   f"Transformer use?"}, ensure_ascii=False) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    res, seconds = lit3r(small_home, "run", "--queries", str(queries), "--out", str(out), "--no-trace-graph")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stdout + res.stderr[-2000:]
    assert "1 answered, 0 already in" in res.stdout and "bad input" not in res.stderr, res.stdout + res.stderr
    assert [json.loads(line)["query_id"] for line in out.read_text(encoding="utf-8").split("\n") if line] == ["q0"]
    # the submission and its traces, whose lines hold the question's text, read back whole by `lit3r eval`
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"query_id": "q0", "question": f"a{sep}b", "gold_papers": [], "answer": {}},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    scored, _ = lit3r(None, "eval", "--gold", str(gold), "--pred", str(out), "--json")
    assert scored.returncode == 0 and json.loads(scored.stdout)["overall"]["questions"] == 1, scored.stderr
    assert seconds < 120, seconds


def test_metadata_in_utf16_with_a_line_separator_in_a_title(tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    os.symlink(PDF, pdfs / "a.pdf")
    meta = tmp_path / "meta.jsonl"
    title = "Attention\u2028Is All You Need"
    meta.write_bytes(json.dumps({"paper_id": "attn", "pdf": "a.pdf", "title": title},
                                ensure_ascii=False).encode("utf-16") + "\n".encode("utf-16-le"))
    home = tmp_path / "home"
    res, _ = lit3r(home, "ingest", str(pdfs), "--metadata", str(meta), "--no-build", "--no-images", "--workers", "1")
    assert res.returncode == 0 and "warning" not in res.stderr, res.stderr[-2000:]
    papers = [json.loads(line) for line in (home / "papers.jsonl").read_text(encoding="utf-8").split("\n") if line]
    assert [(p["paper_id"], p["title"]) for p in papers] == [("attn", title)]


def test_a_pdf_with_bytes_after_its_end_marker_is_ingested(tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "tail.pdf").write_bytes(PDF.read_bytes() + b"\n<html><body>" + b"a download page's tail " * 400)
    home = tmp_path / "home"
    res, seconds = lit3r(home, "ingest", str(pdfs), "--no-build", "--no-images", "--workers", "1")
    assert res.returncode == 0 and "skipped" not in res.stderr, res.stderr[-2000:]
    assert "1 paper(s)" in res.stdout and "(1 parsed" in res.stdout, res.stdout
    assert seconds < 120, seconds


def test_non_regular_files_and_undecodable_names_are_reported_and_skipped(tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    os.symlink(PDF, pdfs / "good.pdf")
    os.mkfifo(pdfs / "fifo.pdf")
    os.symlink("/dev/zero", pdfs / "x.pdf")
    (pdfs / os.fsdecode(b"bad\xff\xfe name.pdf")).write_bytes(b"not a PDF")
    home = tmp_path / "home"
    res, seconds = lit3r(home, "ingest", str(pdfs), "--no-build", "--no-images", "--workers", "1", timeout=120)
    lines = errors(res.stderr)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert f"warning: {pdfs / 'fifo.pdf'}: not a regular file (a FIFO): skipped (pass PDF files)" in lines, lines
    assert f"warning: {pdfs / 'x.pdf'}: not a regular file (a device reached by a link to /dev/zero): skipped " \
           f"(pass PDF files)" in lines, lines
    assert "skipped bad\\xff\\xfe name.pdf: not a PDF (no %PDF header): convert it to PDF or remove it" in lines, lines
    assert "1 paper(s)" in res.stdout and "2 input problem(s)" in res.stdout, res.stdout
    assert seconds < 60, seconds


@pytest.mark.parametrize("schema, why", [
    ('[{"name": "Model"}, {"name": "model"}]', "column 'model' is given twice"),
    ('[{"name": "Model", "is_row_key": true}, {"name": " MODEL "}]', "is given twice"),
])
def test_a_table_schema_with_columns_equal_but_for_case_is_refused_before_the_models_load(small_home, schema, why):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    res, seconds = lit3r(small_home, "ask", QUESTION, "--table-schema", schema)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = errors(res.stderr)
    assert res.returncode == 2 and "Traceback" not in res.stderr and res.stdout == "", res.stderr[-2000:]
    assert len(lines) == 1 and why in lines[0] and "--table-schema" in lines[0], lines
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert cpu < 2.0, cpu  # nothing but the interpreter and the command line loads: measured 0.4 s of CPU
    assert seconds < 10, seconds  # wall time on 2 busy cores: measured 1-3 s


def test_an_empty_table_schema_in_a_batch_is_a_bad_line(small_home, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "t", "question": QUESTION, "answer_types": ["table"],
                                   "table_schema": []}) + "\n")
    res, seconds = lit3r(small_home, "run", "--queries", str(queries), "--out", str(tmp_path / "o.jsonl"))
    lines = errors(res.stderr)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert lines[0] == f"bad input {queries}:1 (query_id 't'): field \"table_schema\": empty while answer_types has " \
                       f"\"table\": give at least one column: fix the line", lines
    assert seconds < 10, seconds
