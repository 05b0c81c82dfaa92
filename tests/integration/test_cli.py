from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lit3r.cli import main
from tests.conftest import CORPUS, HARD, ROOT, SHARED

SHARED_LTQA = SHARED / "littraceqa"


def test_ingest_command_writes_the_corpus_folder(shared_data, tmp_path):
    res = CliRunner().invoke(main, ["ingest", str(HARD), "--out", str(tmp_path / "c"), "--workers", "2"])
    assert res.exit_code == 0, res.output
    assert "4 paper(s)" in res.output
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
    """A metadata line that is not JSON is one line naming the file and line; the PDFs are still
    ingested (issue 16, item 4: metadata problems are reported per line)."""
    meta = tmp_path / "m.jsonl"
    meta.write_text("{not json\n")
    res = CliRunner().invoke(main, ["ingest", str(HARD), "--out", str(tmp_path / "c"), "--metadata", str(meta),
                                    "--no-build"])
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    assert sum("m.jsonl:1" in line for line in res.output.splitlines()) == 1, res.output


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


def _one_line_error(res, text):
    assert res.exit_code != 0, res.output
    assert text in res.output and "Traceback" not in res.output
    assert res.output.strip().count("\n") == 0, res.output


def test_bad_arguments_are_one_clear_line(shared_data, tmp_path):
    runner = CliRunner()
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_line_error(runner.invoke(main, ["ingest", str(HARD), "--out", str(a_file)]), "is a file")
    _one_line_error(runner.invoke(main, ["ingest", str(a_file), "--out", str(tmp_path / "c")]), "not a PDF file or a folder")
    _one_line_error(runner.invoke(main, ["ingest", str(empty), "--out", str(tmp_path / "c")]), "no PDF files under")
    usage = runner.invoke(main, ["ingest", str(HARD), "--workers", "0"])  # click's usage error
    assert usage.exit_code == 2 and "Error: Invalid value for '--workers'" in usage.output
    pdf_meta = runner.invoke(main, ["ingest", str(HARD), "--out", str(tmp_path / "c"), "--metadata",
                                    str(HARD / "mineru_demo.pdf")])
    _one_line_error(pdf_meta, "not a UTF-8 text file")
    meta = tmp_path / "m.jsonl"  # a bad line is one warning; the ingest goes on (issue 16, item 4)
    meta.write_text('{"paper_id": "a", "year": "soon"}\n')
    res = runner.invoke(main, ["ingest", str(HARD), "--out", str(tmp_path / "c2"), "--metadata", str(meta), "--no-build"])
    assert res.exit_code == 0 and sum("field 'year'" in ln for ln in res.output.splitlines()) == 1, res.output


def test_all_files_bad_exits_non_zero(tmp_path):
    d = tmp_path / "pdfs"
    d.mkdir()
    (d / "a.pdf").write_bytes(b"")
    res = CliRunner().invoke(main, ["ingest", str(d), "--out", str(tmp_path / "c")])
    assert res.exit_code == 1 and "empty file" in res.output and "none of the 1 PDF" in res.output


def test_one_pdf_file_and_prune(shared_data, tmp_path):
    runner = CliRunner()
    out = tmp_path / "c"
    res = runner.invoke(main, ["ingest", str(HARD / "ligatures_hyphenation_headers.pdf"), "--out", str(out)])
    assert res.exit_code == 0 and "1 paper(s)" in res.output, res.output
    res = runner.invoke(main, ["ingest", str(HARD / "mineru_demo.pdf"), "--out", str(out)])
    assert "2 paper(s)" in res.output  # the corpus grows by default
    res = runner.invoke(main, ["ingest", str(HARD / "mineru_demo.pdf"), "--out", str(out), "--prune"])
    assert "1 paper(s)" in res.output and "1 pruned" in res.output
    assert [json.loads(line)["paper_id"] for line in (out / "papers.jsonl").open()] == ["mineru_demo"]
    assert not (out / "images" / "ligatures_hyphenation_headers").exists()


def test_eval_command_scores_validation_against_itself(tmp_path):
    gold = SHARED_LTQA / "validation.jsonl"
    pred = tmp_path / "pred.jsonl"
    with pred.open("w") as fh:
        for line in gold.open():
            g = json.loads(line)
            answer = {k: ({"gold": v["gold"]} if k == "multiple_choice" else v) for k, v in g["answer"].items()}
            fh.write(json.dumps({"query_id": g["query_id"], "gold_papers": g["gold_papers"],
                                 "evidence": g["evidence"], "answer": answer}) + "\n")
    res = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--pred", str(pred), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["overall"]["overall"] == 1.0
    table = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--pred", str(pred)])
    assert table.exit_code == 0 and "task_family=multi_paper" in table.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n")
    res = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--pred", str(bad)])
    assert res.exit_code == 1 and "bad.jsonl:1: not valid JSON" in res.output


@pytest.mark.parametrize("page, why", [
    ("NaN", "NaN is not a JSON number"), ("Infinity", "Infinity is not a JSON number"),
    ("1e400", "the number 1e400 is too large"), ("9" * 5000, "a number with over 4,300 digits")],
    ids=["nan", "inf", "1e400", "5000-digit"])
def test_eval_names_the_submission_line_of_a_number_that_is_not_one(tmp_path, page, why):
    """A submission's NaN, Infinity, 1e400 or 5,000-digit page is one line naming the
    submission and its line (not the gold file, not a traceback)."""
    gold = SHARED_LTQA / "validation.jsonl"
    g = json.loads(gold.open().readline())
    pred = tmp_path / "sub.jsonl"
    pred.write_text(json.dumps({"query_id": g["query_id"]}) + "\n" + '{"query_id": "x", "evidence": [{"paper_id": '
                    f'"A", "source_type": "text_span", "locator": {{"page": {page}}}}}]}}\n')
    res = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--pred", str(pred)])
    assert res.exit_code == 1 and res.output.splitlines() == [f"Error: {pred}:2: not valid JSON ({why}): fix the line"]


def test_eval_names_the_gold_line_of_a_malformed_answer(tmp_path):
    golds = [json.loads(line) for line in (SHARED_LTQA / "validation.jsonl").open()][:3]
    golds[1]["answer"] = {"freeform": "14.70"}
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(g) + "\n" for g in golds))
    pred = tmp_path / "sub.jsonl"
    pred.write_text("")
    res = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--pred", str(pred)])
    assert res.exit_code == 1 and res.output.splitlines() == [
        f'Error: gold {gold}:2: field "answer.freeform": must be an object like {{"text": "..."}}: fix the line']


def test_eval_and_run_refuse_a_file_that_is_not_regular_and_a_line_too_long(tmp_path, monkeypatch):
    """A FIFO (or a device: /dev/zero would be read without end) is refused before it is read;
    a line over the cap is an error naming FILE:LINE."""
    import os

    from lit3r.errors import InputError
    from lit3r.littraceqa.jsonl import read_capped

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    gold = SHARED_LTQA / "validation.jsonl"
    for args in (["eval", "--gold", str(gold), "--pred", str(fifo)], ["eval", "--gold", str(fifo), "--pred", str(gold)],
                 ["run", "--queries", str(fifo), "--out", str(tmp_path / "out.jsonl")],
                 ["--home", str(tmp_path), "trace", "load", str(fifo)]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 1 and res.output.splitlines() == [
            f"Error: {fifo}: not a regular file (a FIFO, which could be read without end): pass a JSONL file"], \
            res.output
    with pytest.raises(InputError, match="^/dev/null: not a regular file \\(a device or socket"):
        read_capped(Path("/dev/null"))
    big = tmp_path / "big.jsonl"
    big.write_text('{"a": 1}\n' + "x" * 11 + "\n" + "y" * 10 + "\n")
    assert read_capped(big, max_line=11) == big.read_bytes()  # the newline is not counted
    with pytest.raises(InputError, match=f"^{big}:2: the line is longer than"):
        read_capped(big, max_line=10)


def test_eval_skips_the_torn_last_line_of_a_killed_run_and_names_a_bad_middle_line(tmp_path):
    """Issue 16: a `lit3r run` killed mid-write (never resumed) leaves a torn last line in the
    submission and in SUB.jsonl.traces.jsonl: eval skips it with one warning per file (the file,
    and that `lit3r run` with the same --out repairs it) and scores the rest; a bad line in the
    middle stays a one-line error naming file:line."""
    golds = [json.loads(line) for line in (SHARED_LTQA / "validation.jsonl").open()][:4]
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps(g) + "\n" for g in golds))
    subs = [json.dumps({"query_id": g["query_id"], "gold_papers": g["gold_papers"], "evidence": g["evidence"],
                        "answer": {}}) for g in golds]
    traces = [json.dumps({"query_id": g["query_id"], "trace": {}, "candidates": g["gold_papers"]}) for g in golds]
    pred = tmp_path / "sub.jsonl"
    torn = (subs[3][:-2] + ', "note": "é"}').encode()
    pred.write_bytes(("\n".join(subs[:3]) + "\n").encode() + torn[:-4])  # killed inside the 4th line's "é"
    (tmp_path / "sub.jsonl.traces.jsonl").write_text("\n".join(traces[:3]) + "\n" + traces[3][:30])
    res = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--pred", str(pred), "--json"])
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2, res.stderr
    assert f"{pred}:4: the last line is cut short" in warnings[0] and "`lit3r run` again with the same --out" \
        in warnings[0]
    assert "sub.jsonl.traces.jsonl:4: the last line is cut short" in warnings[1]
    report = json.loads(res.stdout)
    assert report["missing_predictions"] == [golds[3]["query_id"]]  # the torn one scores as empty
    assert report["candidate_recall"]["missing_traces"] == [golds[3]["query_id"]]
    pred.write_text(subs[0] + "\n" + subs[1][:25] + "\n" + subs[2] + "\n")  # a bad line in the middle
    res = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--pred", str(pred)])
    assert res.exit_code == 1 and res.output.strip().splitlines() == [
        f"Error: {pred}:2: not valid JSON (Unterminated string starting at): fix the line"], \
        res.output
    gold.write_text("".join(json.dumps(g) + "\n" for g in golds[:3]) + json.dumps(golds[3])[:25])
    res = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--pred", str(pred)])  # gold is never cut
    assert res.exit_code == 1 and f"{gold}:4: not valid JSON" in res.output


@pytest.mark.parametrize("args, line", [
    (["ask", "--bogus", "x"], "Error: No such option '--bogus': run `lit3r ask --help` for the usage"),
    (["ask"], "Error: Missing argument 'QUESTION': run `lit3r ask --help` for the usage"),
    (["bogus"], "Error: No such command 'bogus': run `lit3r --help` for the usage"),
    (["--bogus"], "Error: No such option '--bogus': run `lit3r --help` for the usage"),
    (["graph", "neighbourhood"], "Error: Missing argument 'PAPER': run `lit3r graph neighbourhood --help` for the usage"),
    (["ask", "q", "--tpo", "3"], "Error: No such option '--tpo'. Did you mean '--top'? Run `lit3r ask --help` for the usage"),
    (["ask", "q", "--top", "0"], "Error: Invalid value for '--top': 0 is not in the range x>=1: run `lit3r ask --help` "
                                 "for the usage"),
    (["ingest"], "Error: missing PDF_DIR: pass a folder of PDFs (or --metadata-only --metadata POOL.jsonl)"),
    # an option missing its value: click raises it without a context; the command is found from the arguments
    (["ask", "q", "--top"], "Error: Option '--top' requires an argument: run `lit3r ask --help` for the usage"),
    (["eval", "--gold"], "Error: Option '--gold' requires an argument: run `lit3r eval --help` for the usage"),
    (["graph", "coupling", "--limit"],
     "Error: Option '--limit' requires an argument: run `lit3r graph coupling --help` for the usage"),
    (["trace", "list", "--run"], "Error: Option '--run' requires an argument: run `lit3r trace list --help` for the usage"),
    (["cypher", "--param"], "Error: Option '--param' requires an argument: run `lit3r cypher --help` for the usage"),
])
def test_usage_errors_are_one_line_that_names_the_command_help(args, line):
    """Issue 16: a usage error is one line (not click's Usage / Try / Error), naming the problem
    and `lit3r COMMAND --help` (a message that says its own fix is kept as it is); exit code 2."""
    res = CliRunner().invoke(main, args, prog_name="lit3r")
    assert res.exit_code == 2 and res.output.splitlines() == [line], res.output


@pytest.mark.parametrize("args", [
    ["ask", "q", "--" + "y" * 20000],  # an unknown option
    ["y" * 20000],  # an unknown command
    ["ask", "q", "--option", "y" * 20000],  # a --option without =
    ["ask", "q", "--table-schema", json.dumps([{"name": "y" * 20000, "type": "x"}])],
    ["ask", "q", "--option", "y" * 20000 + "=1", "--option", "y" * 20000 + "=2"],  # a label given twice
])
def test_usage_errors_cut_a_pasted_blob(args):
    """A 20,000-character option, command or column name is echoed cut, with its length said."""
    res = CliRunner().invoke(main, args, prog_name="lit3r")
    lines = res.output.splitlines()
    assert res.exit_code == 2 and len(lines) == 1 and len(lines[0]) < 400, res.output[:500]
    assert "(20,00" in lines[0], lines[0]


def test_a_usage_error_is_one_line_on_the_real_command_line():
    lit3r = str(Path(sys.executable).with_name("lit3r"))  # the installed entry point
    res = subprocess.run([lit3r, "ask", "--bogus"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 2 and res.stdout == "" and res.stderr.splitlines() == [
        "Error: No such option '--bogus': run `lit3r ask --help` for the usage"], res.stderr
    group = subprocess.run([lit3r, "graph"], cwd=ROOT, capture_output=True, text=True)
    assert "Commands:" in group.stdout + group.stderr  # a group without its command still prints its help


def test_run_refuses_files_it_would_damage_and_fails_loudly(subset_home, tmp_path):
    """Issue 12 trials: a --out that is not a submission is never cut; --out == --queries is
    refused; a malformed question line is named before anything loads; failures exit 1."""
    from tests.conftest import CORPUS

    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "e1", "question": "  "}) + "\n")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\nimportant line without newline")
    runner = CliRunner()
    res = runner.invoke(main, ["--home", str(subset_home), "run", "--queries", str(CORPUS / "questions_dev_inputs.jsonl"),
                               "--out", str(notes)])
    assert res.exit_code == 1 and "not a submission line" in res.output
    assert notes.read_text() == "my notes\nimportant line without newline"
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"query_id": "g1", "question": "What does Linformer reduce?"}) + "\n")
    res = runner.invoke(main, ["--home", str(subset_home), "run", "--queries", str(good), "--out", str(good)])
    assert res.exit_code == 1 and "is the --queries file" in res.output
    res = runner.invoke(main, ["--home", str(subset_home), "run", "--queries", str(queries), "--out",
                               str(tmp_path / "o.jsonl")])
    # the empty question is a bad input line (issue 16, item 5): named before any work, exit 1
    assert res.exit_code == 1 and "q.jsonl:1" in res.output and '"question"' in res.output, res.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query_id": "b1", "question": "q", "answer_types": "freeform"}) + "\n")
    res = runner.invoke(main, ["--home", str(subset_home), "run", "--queries", str(bad), "--out", str(tmp_path / "b.jsonl")])
    assert res.exit_code == 1 and "bad.jsonl:1" in res.output and "answer_types" in res.output, res.output


def test_an_echoed_data_folder_is_escaped_and_cut(tmp_path):
    """A --home with a newline, a carriage return and a bell is echoed escaped, on one line (ask
    and doctor, whose lines name no Python class); a 6,000-character one is cut and told to be
    shorter."""
    home = str(tmp_path / "bad\nid\r\aend")
    shown = home.replace("\n", "\\n").replace("\r", "\\r").replace("\a", "\\x07")
    ask = CliRunner().invoke(main, ["--home", home, "ask", "q"])
    assert ask.exit_code == 1 and ask.output.splitlines() == [
        f"Error: no corpus index in {shown}/index: run `lit3r ingest PDF_DIR` first (or pass --home)"], ask.output
    doctor = CliRunner().invoke(main, ["--home", home, "doctor"])
    checks = [line for line in doctor.output.splitlines() if line.startswith("[")]
    assert f"[FAIL] corpus: no corpus in {shown}: run `lit3r ingest PDF_DIR`" in checks, doctor.output
    assert f"[FAIL] index: no index in {shown}/index: run `lit3r ingest PDF_DIR`" in checks, doctor.output
    long = CliRunner().invoke(main, ["--home", str(tmp_path / ("a" * 6000)), "ask", "q"])
    lines = long.output.splitlines()
    assert long.exit_code == 1 and len(lines) == 1 and len(lines[0]) < 300, long.output[:400]
    assert lines[0].startswith("Error: the data folder path is too long (") and lines[0].endswith(
        " characters)): pass a shorter --home (or LIT3R_HOME)"), lines[0]
