"""Bad settings and bad batch files end with one clear error and lose nothing (issue 12 trials)."""

from __future__ import annotations

import json

import pytest

from lit3r.config import load_settings
from lit3r.errors import ConfigError, InputError
from lit3r.littraceqa.batch import _drop_torn_line, done_ids, read_inputs
from lit3r.littraceqa.inputs import scan_inputs
from tests.conftest import SHARED


@pytest.mark.parametrize("name, value, message", [
    ("LIT3R_RETRIEVE__RERANK_WEIGHTS", "abc", "valid JSON"),
    ("LIT3R_RETRIEVE", "{bad", "valid JSON"),
    ("LIT3R_RETREIVE__RRF_K", "1", "did you mean LIT3R_RETRIEVE__RRF_K?"),
    ("LIT3R_MODELS__DEVICE", "bogus", "auto, cpu, cuda, cuda:N or mps"),
    ("LIT3R_RETRIEVE__RERANK_WEIGHTS", "[0.5]", "setting retrieve.rerank_weights (or LIT3R_RETRIEVE__RERANK_WEIGHTS)"),
    ("LIT3R_HOME", "", "LIT3R_HOME is empty"),
    ("LIT3R_LLM__TIMEOUT", "inf", "setting llm.timeout (or LIT3R_LLM__TIMEOUT): Input should be a finite number"),
])
def test_bad_variables_are_one_line_config_errors(monkeypatch, tmp_path, name, value, message):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        load_settings(**({} if name == "LIT3R_HOME" else {"home": tmp_path}))


def test_an_unknown_variable_gets_no_unrelated_suggestion(monkeypatch, tmp_path):
    monkeypatch.setenv("LIT3R_FOO", "1")
    with pytest.raises(ConfigError) as exc:
        load_settings(home=tmp_path)
    assert "did you mean" not in str(exc.value)


def test_config_paths_that_are_not_files(monkeypatch, tmp_path):
    monkeypatch.setenv("LIT3R_CONFIG", str(tmp_path))
    with pytest.raises(ConfigError, match="names a folder"):
        load_settings(home=tmp_path)
    monkeypatch.delenv("LIT3R_CONFIG")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        load_settings(home=tmp_path / "file")
    (tmp_path / "config.toml").mkdir()
    with pytest.raises(ConfigError, match="config.toml is a folder"):
        load_settings(home=tmp_path)


@pytest.mark.parametrize("line, message", [
    ('{"query_id": ["a"], "question": "q"}', 'field "query_id": input should be a valid string'),
    ('{"query_id": 1, "question": "q"}', 'field "query_id": input should be a valid string'),
    ('{"query_id": "a"}', '(query_id \'a\'): field "question": missing'),
    ('{"query_id": "a", "question": "  "}', 'field "question": is empty'),
    ('{"query_id": "a", "question": "q", "answer_types": "freeform"}', 'field "answer_types": input should be a valid list'),
    ('{"query_id": "a", "question": "q", "answer_types": []}', 'field "answer_types": list should have at least 1'),
    ('{"query_id": "a", "question": "q", "answer_types": ["bogus"]}',
     'field "answer_types[0]": \'bogus\' is not one of \'freeform\', \'multiple_choice\' or \'table\''),
    ('{"query_id": "a", "question": "q", "multiple_choice_options": ["A", "B"]}',
     'field "multiple_choice_options[0]": input should be a valid dictionary'),
    ('{"query_id": "a", "question": "q", "multiple_choice_options": [{"label": "A", "text": "x"}, {"label": "B"}]}',
     'field "multiple_choice_options[1].text": missing'),
    ('{"query_id": "a", "question": "q", "multiple_choice_options": [{"label": "A", "text": "x"}, '
     '{"label": "a", "text": "y"}]}', 'field "multiple_choice_options": label \'a\' is given twice'),
    ('{"query_id": "a", "question": "q", "multiple_choice_options": [{"label": "A", "text": "x"}]}',
     'field "multiple_choice_options": one option only'),
    ('{"query_id": "a", "question": "q", "answer_types": ["multiple_choice"]}',
     'field "multiple_choice_options": missing while answer_types has "multiple_choice"'),
    ('{"query_id": "a", "question": "q", "table_schema": "bad"}', 'field "table_schema": input should be a valid list'),
    ('{"query_id": "a", "question": "q", "table_schema": [{"name": "M", "type": "int"}]}',
     'field "table_schema[0].type": \'int\' is not one of \'string\', \'number\' or \'boolean\''),
    ('{"query_id": "a", "question": "q", "table_schema": [{"type": "number"}]}', 'field "table_schema[0].name": missing'),
    ('{"query_id": "a", "question": "q", "table_schema": [{"name": "M"}, {"name": " m"}]}',
     'field "table_schema": column \' m\' is given twice'),
    ('{"query_id": "a", "question": "q", "table_schema": [{"name": "M", "is_row_key": "yes"}]}',
     'field "table_schema[0].is_row_key": input should be a valid boolean'),
    ('["a", "b"]', "not a JSON object (a list)"),
    ("[" * 30000 + "]" * 30000, "not valid JSON"),
])
def test_each_bad_question_line_is_one_message_naming_line_and_field(tmp_path, line, message):
    good = json.dumps({"query_id": "g", "question": "Which attention does Big Bird use?"})
    path = tmp_path / "q.jsonl"
    path.write_text(good + "\n" + line + "\n" + good.replace('"g"', '"h"') + "\n")
    rows, problems = scan_inputs(path)
    assert [r["query_id"] for r in rows] == ["g", "h"]  # the rest of the batch goes on
    assert len(problems) == 1 and problems[0].startswith(f"{path}:2") and message in problems[0], problems
    assert "\n" not in problems[0] and len(problems[0]) < 400
    with pytest.raises(InputError, match="q.jsonl:2"):  # all or nothing: what --fail-fast runs
        read_inputs(path)


def test_a_whole_batch_file_is_checked_line_by_line(tmp_path):
    path = tmp_path / "q.jsonl"
    rows = [{"query_id": "q1", "question": "x", "answer_types": ["essay"]},
            {"query_id": "q2", "question": "x", "answer_types": ["table", "table"],
             "table_schema": [{"name": "Method", "is_row_key": True}, {"name": "Score", "type": "number"}],
             "task_family": "kept"},
            {"query_id": "q1", "question": "fixed later, it would clash"},
            {"query_id": "q3", "question": "x", "multiple_choice_options": [{"label": "A", "text": "1"},
                                                                             {"label": "B", "text": "2"}],
             "answer_types": ["multiple_choice"]}]
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(json.dumps(r) for r in rows).encode() + b"\n{broken\n\n")
    good, problems = scan_inputs(path)  # a UTF-8 byte-order mark is accepted
    assert [r["query_id"] for r in good] == ["q2", "q3"]
    assert good[0]["answer_types"] == ["table"] and good[0]["task_family"] == "kept"
    assert good[0]["table_schema"][1] == {"name": "Score", "type": "number", "is_row_key": False}
    assert [p.split(": ", 1)[0] for p in problems] == [f"{path}:1 (query_id 'q1')", f"{path}:3", f"{path}:5"]
    assert "'q1' is already on line 1" in problems[1]
    # the dev, validation and test inputs are all valid
    for name in ("corpus/questions_dev_inputs.jsonl", "littraceqa/validation_inputs.jsonl",
                 "littraceqa/test_inputs.jsonl"):
        f = SHARED / name
        if f.is_file():
            ok, bad = scan_inputs(f)
            assert bad == [] and len(ok) == sum(1 for line in f.open() if line.strip()), name


def test_non_utf8_inputs_and_outputs(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe{}\n")
    with pytest.raises(InputError, match="not a UTF-8"):
        read_inputs(bad)
    with pytest.raises(InputError, match="not a UTF-8 submission"):
        done_ids(bad)


def test_a_complete_last_line_without_newline_is_kept(tmp_path):
    out = tmp_path / "prev.jsonl"
    line = json.dumps({"query_id": "q1", "gold_papers": [], "evidence": [], "answer": {}})
    out.write_text(line)  # no final newline
    _drop_torn_line(out)
    assert out.read_text() == line + "\n" and done_ids(out) == {"q1"}
    out.write_text(line + "\n" + line[:20])  # a torn line: cut
    _drop_torn_line(out)
    assert out.read_text() == line + "\n"


def test_a_file_that_is_not_a_submission_is_never_cut(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\nimportant line without newline")
    _drop_torn_line(notes)
    assert notes.read_text() == "my notes\nimportant line without newline"
    with pytest.raises(InputError, match="not a submission line"):
        done_ids(notes)


def test_a_server_that_goes_down_mid_batch_stops_the_run_in_one_line(tmp_path):
    """Issue 16, item 3: once Neo4j cannot be reached every question would fail the same way, so
    the run stops with the one-line server message and the questions not run stay for the next
    run (nothing is written for them). The question reads the real Neo4j store on a closed port,
    which raises the driver's error as a ServerFault with ``.down`` (issue 26)."""
    import socket

    from graph.neo4j_store import Neo4jGraphStore, connect
    from lit3r.littraceqa.batch import run_batch

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = Neo4jGraphStore(connect(f"bolt://127.0.0.1:{port}", max_transaction_retry_time=0.2))

    class Asked:
        def __init__(self) -> None:
            self.calls = 0

        def ask(self, question, **kw):
            self.calls += 1
            return store.paper_ids()

    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"query_id": f"q{i}", "question": f"question {i}?"}) + "\n" for i in range(4)))
    engine = Asked()
    report = run_batch(engine, queries, tmp_path / "out.jsonl", workers=1)
    assert engine.calls == 1 and report.answered == 0 and report.failures == [] and report.not_run == 4
    assert report.stopped.startswith("Neo4j") and "\n" not in report.stopped
    assert "stopped, 4 not run" in report.summary(tmp_path / "out.jsonl")
    assert done_ids(tmp_path / "out.jsonl") == set()
    store.close()
