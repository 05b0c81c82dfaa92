"""The shared BM25 term cap and the one-line server messages (issue 16, item 3), without servers
(the servers themselves: tests/integration/test_server_faults.py)."""

from __future__ import annotations

import socket
import threading
import time

from neo4j.exceptions import AuthError, ClientError, ServiceUnavailable
from opensearchpy.exceptions import AuthenticationException, ConnectionError, RequestError

from graph.search.tokenize import MAX_QUERY_TERMS, cap_terms
from lit3r.config import load_settings
from lit3r.present.server_errors import server_message


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


def test_doctor_gives_up_on_a_silent_opensearch_port_within_seconds(tmp_path):
    """Issue 16: an OpenSearch port that accepts and never answers fails the doctor's opensearch
    check in its short probe timeout (5 s), not the 30 s read timeout queries keep; the check that
    needs both servers is not run against them; everything in one line per check."""
    from lit3r import factory
    from lit3r.cli.doctor import PROBE_TIMEOUT_S, _probe_index, run_checks

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:  # accept every connection and never send a byte
        silent.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(silent.accept()[0])
            except OSError:
                pass

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    settings = load_settings(home=tmp_path, backend="neo4j+opensearch", neo4j={"uri": f"bolt://127.0.0.1:{closed}"},
                             opensearch={"url": url}, models={"chunk_encoder": "hashing:64", "paper_encoder": "hashing:64"})
    worker = threading.Thread(target=accept, daemon=True)
    worker.start()
    try:
        t0 = time.perf_counter()
        checks = {c["name"]: c for c in run_checks(settings)}
        seconds = time.perf_counter() - t0
    finally:
        stop.set()
        worker.join()
        for c in accepted:
            c.close()
        silent.close()
    assert accepted, "the doctor never connected to the silent port"
    assert seconds < 10, seconds  # 5-6 s: the probe's read timeout, once
    assert checks["opensearch"] == {"name": "opensearch", "ok": False, "detail": (
        f"OpenSearch at {url} did not answer within 5 s: check that it is OpenSearch, runs and is not overloaded, "
        f"or set opensearch.url / LIT3R_OPENSEARCH__URL to a running server")}
    assert checks["neo4j"]["detail"].startswith(f"Neo4j at bolt://127.0.0.1:{closed} cannot be reached")
    assert checks["servers agree"]["detail"] == "not checked: the neo4j check failed (above)"
    assert all("\n" not in c["detail"] for c in checks.values())
    # only the probe is short: the queries' client keeps its 30 s read timeout
    assert _probe_index(settings).client.transport.kwargs["timeout"].read_timeout == PROBE_TIMEOUT_S == 5
    assert factory.opensearch_client(settings).transport.kwargs["timeout"].read_timeout == 30
