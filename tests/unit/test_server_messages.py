"""The shared BM25 term cap and the one-line server messages (issue 16, item 3), without servers
(the servers themselves: tests/integration/test_server_faults.py)."""

from __future__ import annotations

from neo4j.exceptions import AuthError, ClientError, ServiceUnavailable
from opensearchpy.exceptions import AuthenticationException, ConnectionError, RequestError

from graph.search.tokenize import MAX_QUERY_TERMS, cap_terms
from lit3r.config import load_settings
from lit3r.server_errors import server_message


def test_a_query_under_the_cap_is_unchanged():
    toks = ["attention", "attention", "heads"]
    assert cap_terms(toks, lambda ts: {}) == toks


def test_a_long_query_keeps_its_rarest_known_terms_once_in_order():
    toks = [f"t{i}" for i in range(MAX_QUERY_TERMS + 100)] * 2 + ["unknown"]
    df = {f"t{i}": 10_000 - i for i in range(MAX_QUERY_TERMS + 100)}  # later terms are rarer
    kept = cap_terms(toks, lambda ts: {t: df[t] for t in ts if t in df})
    assert kept == [f"t{i}" for i in range(100, MAX_QUERY_TERMS + 100)]
    assert len(cap_terms(toks, lambda ts: {t: 1 for t in ts}, limit=10)) == 10  # ties: first positions


def test_server_messages_name_the_server_the_cause_and_the_fix(tmp_path):
    s = load_settings(home=tmp_path, backend="neo4j+opensearch", neo4j={"uri": "bolt://db:7687"},
                      opensearch={"url": "http://os:9200"})
    down = server_message(s, ServiceUnavailable("Couldn't connect to db:7687 (reason [Errno 111] Connection refused)"))
    assert down.startswith("Neo4j at bolt://db:7687 cannot be reached ([Errno 111] Connection refused)")
    assert "LIT3R_NEO4J__URI" in down
    auth = AuthError("The client is unauthorized due to authentication failure.")
    assert "refused the credentials" in server_message(s, auth) and "neo4j.password" in server_message(s, auth)
    assert "Neo4j at bolt://db:7687 refused a request" in server_message(s, ClientError("bad"))
    os_down = server_message(s, ConnectionError("N/A", "[Errno 111] Connection refused", None))
    assert os_down.startswith("OpenSearch at http://os:9200 cannot be reached ([Errno 111] Connection refused)")
    assert "HTTP 401" in server_message(s, AuthenticationException(401, "security_exception", {}))
    info = {"error": {"root_cause": [{"type": "too_many_clauses", "reason": "maxClauseCount is set to 1024"}]}}
    bad = server_message(s, RequestError(400, "search_phase_execution_exception", info))
    assert "HTTP 400: too_many_clauses: maxClauseCount is set to 1024" in bad
    assert all("\n" not in m for m in (down, os_down, bad))
