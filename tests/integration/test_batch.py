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
    traces_file = tmp_path / "sub.jsonl.traces.jsonl"
    tlines = traces_file.read_text().splitlines()
    traces_file.write_text("\n".join(tlines[:4]) + "\n" + tlines[4][:30])  # the trace file torn too: repaired
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


def test_bad_lines_are_each_one_message_and_the_rest_of_the_batch_goes_on(subset_home, tmp_path):
    """A real `lit3r run` over a batch with bad lines (issue 16, item 5): one message per bad line
    before any question runs, the good questions answered, the bad ones get no submission line;
    --fail-fast stops at the first bad line before any work."""
    queries = tmp_path / "q.jsonl"
    lines = [
        {"query_id": "good", "question": "Which sparse attention pattern does Big Bird use?"},
        {"query_id": "no_text", "question": "q", "answer_types": ["multiple_choice"],
         "multiple_choice_options": [{"label": "A", "text": "x"}, {"label": "B"}]},
        {"query_id": "twice", "question": "q", "answer_types": ["multiple_choice"],
         "multiple_choice_options": [{"label": "A", "text": "x"}, {"label": "A", "text": "y"}]},
        {"query_id": "col_type", "question": "q", "answer_types": ["table"], "table_schema": [{"name": "M", "type": "int"}]},
        {"query_id": "cols", "question": "q", "answer_types": ["table"], "table_schema": [{"name": "M"}, {"name": "M"}]},
        {"query_id": "essay", "question": "q", "answer_types": ["essay"]},
        {"query_id": "blank", "question": "   "},
        {"query_id": "mc", "question": "Which attention does Big Bird use?", "answer_types": ["multiple_choice"],
         "multiple_choice_options": [{"label": "A", "text": "sparse"}, {"label": "B", "text": "dense"}]},
    ]
    queries.write_text("\n".join(json.dumps(x) for x in lines) + "\n{not json\n")
    out = tmp_path / "o.jsonl"
    fast = CliRunner().invoke(main, ["--home", str(subset_home), "run", "--queries", str(queries), "--out", str(out),
                                     "--fail-fast", "--no-trace-graph"])
    assert fast.exit_code == 1 and not out.exists()
    assert f"Error: {queries}:2 (query_id 'no_text'): field \"multiple_choice_options[1].text\": missing: fix the " \
           f"line (--fail-fast: no question was run)" in fast.output
    res = CliRunner().invoke(main, ["--home", str(subset_home), "run", "--queries", str(queries), "--out", str(out),
                                    "--no-trace-graph"])
    assert res.exit_code == 1, res.output
    bad = [line for line in res.output.splitlines() if line.startswith("bad input ")]
    fields = ['"multiple_choice_options[1].text"', '"multiple_choice_options"', '"table_schema[0].type"',
              '"table_schema"', '"answer_types[0]"', '"question"']
    assert [b.split(": ")[0].split(" (")[0] for b in bad] == [f"bad input {queries}:{n}" for n in (2, 3, 4, 5, 6, 7, 9)]
    for b, name in zip(bad, fields):
        assert f"field {name}" in b, (b, name)
    assert "not valid JSON" in bad[-1]
    assert "2 answered, 0 already in" in res.output and "7 bad input line(s) not run" in res.output
    subs = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted(s["query_id"] for s in subs) == ["good", "mc"]
    assert next(s for s in subs if s["query_id"] == "mc")["answer"]["multiple_choice"]["gold"] in ("A", "B")
    # fixed, a line runs on the next run; the answered ones are kept
    lines[5]["answer_types"] = ["freeform"]
    queries.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    again = CliRunner().invoke(main, ["--home", str(subset_home), "run", "--queries", str(queries), "--out", str(out),
                                      "--no-trace-graph"])
    assert "1 answered, 2 already in" in again.output and "5 bad input line(s) not run" in again.output


def test_bad_input_file_is_one_clear_line(subset_home, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query_id": "a"}\n')
    res = CliRunner().invoke(main, ["--home", str(subset_home), "run", "--queries", str(queries), "--out",
                                    str(tmp_path / "o.jsonl")])
    assert res.exit_code == 1 and f"bad input {queries}:1 (query_id 'a'): field \"question\": missing" in res.output
    assert f"{queries} holds no valid question: fix the lines above" in res.output
