"""`lit3r run`: batch answers over the real 10-paper subset, resume, isolation of failures."""

from __future__ import annotations

import json

from click.testing import CliRunner

from lit3r.cli import main
from lit3r.config import load_settings
from lit3r.littraceqa.batch import run_batch
from lit3r.pipeline.engine import Engine
from tests.conftest import CORPUS
from tests.integration.conftest import SUBSET

INPUTS = CORPUS / "questions_dev_inputs.jsonl"


def test_run_resume_and_eval(subset_home, tmp_path):
    out = tmp_path / "sub.jsonl"
    # a run interrupted after 5 answers, the last one torn mid-write
    engine = Engine(load_settings(home=subset_home))
    first = [json.loads(line) for line in INPUTS.open()][:5]
    part = tmp_path / "part.jsonl"
    part.write_text("".join(json.dumps(q) + "\n" for q in first))
    run_batch(engine, part, out, progress=False)
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:4]) + "\n" + lines[4][:20])  # torn last line
    res = CliRunner().invoke(main, ["--home", str(subset_home), "run", "--queries", str(INPUTS), "--out", str(out),
                                    "--workers", "2"])
    assert res.exit_code == 0, res.output
    assert "13 answered, 4 already in" in res.output
    subs = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(s["query_id"] for s in subs) == sorted(json.loads(line)["query_id"] for line in INPUTS.open())
    gold = {g["query_id"]: {p["paper_id"] for p in g["gold_papers"]}
            for g in map(json.loads, (CORPUS / "questions_dev.jsonl").open())}
    for s in subs:
        assert set(s) == {"query_id", "gold_papers", "evidence", "answer"}
        if gold[s["query_id"]] <= set(SUBSET):  # answerable from the subset: the reader does not abstain
            assert s["gold_papers"], s["query_id"]
    traces = [json.loads(line) for line in (tmp_path / "sub.jsonl.traces.jsonl").open()]
    assert all("trace" in t and t["candidates"] for t in traces)
    assert all(t["trace"]["reader"]["name"] == "extractive" and isinstance(t["trace"]["validation"], list)
               for t in traces)
    inputs = {q["query_id"]: q for q in map(json.loads, INPUTS.open())}
    for s in subs:  # only the requested answer types; table answers follow their schema
        q = inputs[s["query_id"]]
        assert set(s["answer"]) <= set(q["answer_types"])
        if "table" in q["answer_types"] and s["gold_papers"]:  # an abstention has no rows
            names = [c["name"] for c in q["table_schema"]]
            assert s["answer"]["table"]["rows"] and all(list(r) == names for r in s["answer"]["table"]["rows"])
    png = tmp_path / "recall.png"
    scored = CliRunner().invoke(main, ["eval", "--gold", str(CORPUS / "questions_dev.jsonl"), "--pred", str(out),
                                       "--json", "--plot", str(png)])
    res = json.loads(scored.output)
    assert res["overall"]["paper_f1"] > 0.3  # 10-paper subset: measured 0.44
    assert res["overall"]["row_f1"] is not None  # table questions are answered
    rec = res["candidate_recall"]  # from sub.jsonl.traces.jsonl, found next to the submission
    assert rec["questions"] == 17 and 0.3 < rec["overall"]["50"] <= 1.0 and rec["missing_traces"] == []
    assert rec["overall"]["1"] <= rec["overall"]["5"] <= rec["overall"]["50"]
    assert png.read_bytes()[:4] == b"\x89PNG"
    table = CliRunner().invoke(main, ["eval", "--gold", str(CORPUS / "questions_dev.jsonl"), "--pred", str(out)])
    assert "Candidate recall@k from sub.jsonl.traces.jsonl" in table.output and "family=multi_paper" in table.output


def test_a_failing_question_does_not_stop_the_batch(subset_home, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "bad", "question": "   "}) + "\n"
                       + json.dumps({"query_id": "good", "question": "Big Bird sparse attention"}) + "\n")
    report = run_batch(Engine(load_settings(home=subset_home)), queries, tmp_path / "o.jsonl", progress=False)
    assert report.answered == 1 and report.failures[0][0] == "bad"
    assert [json.loads(x)["query_id"] for x in (tmp_path / "o.jsonl").read_text().splitlines()] == ["good"]


def test_bad_input_file_is_one_clear_line(subset_home, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query_id": "a"}\n')
    res = CliRunner().invoke(main, ["--home", str(subset_home), "run", "--queries", str(queries), "--out",
                                    str(tmp_path / "o.jsonl")])
    assert res.exit_code == 1 and 'q.jsonl:1: needs a string "query_id" and a string "question"' in res.output
