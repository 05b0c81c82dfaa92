"""Bad settings and bad batch files end with one clear error and lose nothing (issue 12 trials)."""

from __future__ import annotations

import json

import pytest

from lit3r.config import load_settings
from lit3r.errors import ConfigError, InputError
from lit3r.littraceqa.batch import _drop_torn_line, done_ids, read_inputs


@pytest.mark.parametrize("name, value, message", [
    ("LIT3R_RETRIEVE__RERANK_WEIGHTS", "abc", "valid JSON"),
    ("LIT3R_RETRIEVE", "{bad", "valid JSON"),
    ("LIT3R_RETREIVE__RRF_K", "1", "did you mean LIT3R_RETRIEVE__RRF_K?"),
    ("LIT3R_MODELS__DEVICE", "bogus", "auto, cpu, cuda, cuda:N or mps"),
    ("LIT3R_RETRIEVE__RERANK_WEIGHTS", "[0.5]", "setting retrieve.rerank_weights (or LIT3R_RETRIEVE__RERANK_WEIGHTS)"),
    ("LIT3R_HOME", "", "LIT3R_HOME is empty"),
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
    ('{"query_id": ["a"], "question": "q"}', 'string "query_id"'),
    ('{"query_id": 1, "question": "q"}', 'string "query_id"'),
    ('{"query_id": "a", "question": "q", "answer_types": "freeform"}', '"answer_types" must be a list'),
    ('{"query_id": "a", "question": "q", "answer_types": ["bogus"]}', '"answer_types" must be a list'),
    ('{"query_id": "a", "question": "q", "multiple_choice_options": ["A", "B"]}', '"multiple_choice_options"'),
    ('{"query_id": "a", "question": "q", "multiple_choice_options": [{"label": "A"}]}', '"multiple_choice_options"'),
    ('{"query_id": "a", "question": "q", "table_schema": "bad"}', '"table_schema"'),
    ("[" * 30000 + "]" * 30000, "not valid JSON"),
])
def test_malformed_question_lines_name_the_line(tmp_path, line, message):
    path = tmp_path / "q.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InputError, match=f"q.jsonl:1: .*{message[:20]}".replace("[", r"\[").replace('"', '"')):
        read_inputs(path)


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
