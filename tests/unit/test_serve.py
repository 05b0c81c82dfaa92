"""The pieces of `lit3r mcp` that need no server: the schemas' choices follow the registries,
long inputs are cut with their length, and every error is one line with its fix, secrets masked."""

from __future__ import annotations

import sqlite3
from typing import get_args

from lit3r.config import load_settings
from lit3r.errors import BadQuestion, UnknownIdError
from lit3r.llm.providers import PROVIDERS
from lit3r.serve.errors import ECHO_CHARS, echoed, error_line
from lit3r.serve.graphs import RELATIONS
from lit3r.serve.server import LLMName, Relation


def test_the_tool_schemas_offer_what_the_registries_hold():
    assert set(get_args(LLMName)) == set(PROVIDERS)
    assert get_args(Relation) == RELATIONS


def test_a_long_text_is_echoed_in_part_with_its_length():
    assert echoed("short question") == "short question"
    assert echoed("x" * ECHO_CHARS) == "x" * ECHO_CHARS
    cut = echoed("y" * 124_086)
    assert cut == "y" * ECHO_CHARS + "... (124,086 characters)"


def test_errors_are_one_line_with_the_fix_and_no_secret(tmp_path):
    settings = load_settings(home=tmp_path)
    secret = "s3cret-password-value"
    line = error_line(UnknownIdError("paper", "2999.00001"), settings, [])
    assert line == ("unknown paper id '2999.00001': the search_papers tool or the lit3r://papers resource lists "
                    "paper ids")
    line = error_line(UnknownIdError("paper", "2006.0476"), settings, [], lambda: ["2006.04768", "1706.03762"])
    assert line.startswith("unknown paper id '2006.0476' (did you mean 2006.04768") and "search_papers tool" in line
    line = error_line(BadQuestion(f"bad\nquestion with {secret}"), settings, [secret])
    assert "\n" not in line and secret not in line and "***" in line
    line = error_line(sqlite3.DatabaseError("file is not a database"), settings, [])
    assert "is damaged" in line and "lit3r ingest PDF_DIR --rebuild" in line
    line = error_line(RuntimeError(f"boom at bolt://neo4j:{secret}@host"), settings, [secret])
    assert line.startswith("unexpected error (RuntimeError: ") and secret not in line and "\n" not in line
