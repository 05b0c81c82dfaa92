"""The pieces of `lit3r mcp` that need no server: the schemas' choices follow the registries,
long inputs are cut with their length, and every error is one line with its fix, secrets masked."""

from __future__ import annotations

import sqlite3
from typing import get_args

import pytest

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


@pytest.mark.parametrize("stop", ["ctrl-c", "hang-up", "ctrl-d"])
def test_lit3r_mcp_on_a_terminal_says_what_it_serves_and_stops_in_one_line(tmp_path, stop):
    """Run by hand, `lit3r mcp` printed nothing, and Ctrl-C did not stop it (stdin is read in a
    worker thread); a hung-up terminal ended in a traceback."""
    import os
    import pty
    import signal
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "lit3r.cli", "--home", str(tmp_path), "mcp", "--no-warm"],
                            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.close(slave)
    try:
        first = proc.stderr.readline()
        assert first.startswith(f"lit3r mcp: serving {tmp_path} (embedded backend)") and "docs/MCP.md" in first, first
        if stop == "ctrl-c":
            proc.send_signal(signal.SIGINT)
        elif stop == "hang-up":
            os.close(master)
        else:
            os.write(master, b"\x04")
        rest = proc.communicate(timeout=60)[1]
    finally:
        proc.kill()
        if stop != "hang-up":
            os.close(master)
    assert proc.returncode == (130 if stop == "ctrl-c" else 0), rest
    assert "Traceback" not in rest and len(rest.strip().splitlines()) <= 1, rest
