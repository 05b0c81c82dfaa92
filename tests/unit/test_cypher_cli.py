"""`lit3r cypher` without a Neo4j server: the embedded backend stops at once, an unreachable
server is one line within seconds, `--list` shows every statement's parameters and defaults,
a mistyped name gets suggestions. The commands run as a user runs them (a subprocess), so the
timings include starting Python."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from graph.cypher import REQUIRED, info, names
from tests.conftest import ROOT


def _lit3r(tmp_path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess, float]:
    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith("LIT3R_")}
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(tmp_path / "home"), *args], cwd=ROOT,
                         capture_output=True, text=True, env={**base, **env}, timeout=60)
    return res, time.perf_counter() - t


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_embedded_backend_says_cypher_needs_neo4j_at_once(tmp_path):
    res, secs = _lit3r(tmp_path, "cypher", "explore_neighbourhood", "--param", "paper_id=2007.14062")
    assert res.returncode == 1 and secs < 5, (secs, res.stderr)  # < 2 s on an idle machine; 5 for a loaded one
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Cypher needs the Neo4j backend" in lines[0], res.stderr
    assert "docker compose up" in lines[0] and "LIT3R_NEO4J__URI" in lines[0] and "neo4j+opensearch" in lines[0]


def test_unreachable_server_is_one_line_within_seconds(tmp_path):
    uri = f"bolt://127.0.0.1:{_free_port()}"
    res, secs = _lit3r(tmp_path, "cypher", "MATCH (p:Paper) RETURN p LIMIT 1", LIT3R_BACKEND="neo4j+opensearch",
                       LIT3R_NEO4J__URI=uri)
    assert res.returncode == 1 and secs < 8, (secs, res.stderr)  # the driver gives up after one attempt
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and f"Neo4j at {uri} cannot be reached" in lines[0], res.stderr
    assert "Connection refused" in lines[0] and "docker compose up" in lines[0]
    assert "retried" not in res.stderr


def test_unreachable_server_for_lit3r_graph_too(tmp_path):
    uri = f"bolt://127.0.0.1:{_free_port()}"
    res, secs = _lit3r(tmp_path, "graph", "papers", LIT3R_BACKEND="neo4j+opensearch", LIT3R_NEO4J__URI=uri)
    assert res.returncode == 1 and secs < 8, (secs, res.stderr)
    assert len(res.stderr.strip().splitlines()) == 1 and "cannot be reached" in res.stderr, res.stderr


def test_list_shows_every_statement_with_parameters_and_defaults(tmp_path):
    res, _ = _lit3r(tmp_path, "cypher", "--list", "--json")
    assert res.returncode == 0, res.stderr
    rows = {r["name"]: r for r in json.loads(res.stdout)}
    assert sorted(rows) == names()
    assert rows["explore_cocitation"]["parameters"] == "paper_id, limit=25"
    assert rows["relate_coupling"]["parameters"] == "paper_id, min_shared=2, limit=50"
    assert rows["explore_citation_path"]["parameters"] == "from, to"
    assert rows["paper_ids"]["parameters"] == "-"
    assert all(r["purpose"] and "\n" not in r["purpose"] for r in rows.values())
    assert rows["relate_similar"]["purpose"] == "Relate, source 1: SIMILAR_TO neighbours of a seed, best first."
    table, _ = _lit3r(tmp_path, "cypher", "--list")
    assert table.returncode == 0 and all(n in table.stdout for n in names()) and "limit=25" in table.stdout


def test_statement_parameters_come_from_the_code_and_defaults_from_the_header():
    assert list(info("relate_coupling").params) == ["paper_id", "min_shared", "limit"]
    assert info("papers").params == {"ids": REQUIRED} and info("paper_ids").params == {}
    i = info("explore_cocitation")
    assert i.required == ["paper_id"] and i.defaults() == {"limit": 25}
    assert info("find_papers").defaults() == {"text": None, "limit": 1000}
    assert info("explore_citing_work").params == {"work": REQUIRED}


@pytest.mark.parametrize("name, close", [("explore_neighbourhod", "explore_neighbourhood"),
                                         ("cocitation", "explore_cocitation"), ("relate_simliar", "relate_similar")])
def test_a_mistyped_name_gets_suggestions_not_a_syntax_error(tmp_path, name, close):
    uri = f"bolt://127.0.0.1:{_free_port()}"  # refused before any server is asked
    res, _ = _lit3r(tmp_path, "cypher", name, LIT3R_BACKEND="neo4j+opensearch", LIT3R_NEO4J__URI=uri)
    assert res.returncode == 1
    line = res.stderr.strip()
    assert line.startswith(f"Error: unknown statement {name}; did you mean") and close in line, line
    assert "SyntaxError" not in line and "cannot be reached" not in line


def test_missing_required_parameters_are_named_before_anything_is_sent(tmp_path):
    uri = f"bolt://127.0.0.1:{_free_port()}"
    res, _ = _lit3r(tmp_path, "cypher", "explore_citation_path", "--param", "from=2007.14062",
                    LIT3R_BACKEND="neo4j+opensearch", LIT3R_NEO4J__URI=uri)
    assert res.returncode == 1
    assert "statement explore_citation_path needs $to: pass --param to=VALUE" in res.stderr, res.stderr
