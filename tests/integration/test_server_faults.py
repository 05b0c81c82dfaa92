"""Server faults (issue 16, item 3) against the real Neo4j and OpenSearch (conftest ``servers``).

A server that is down (a closed port), an OpenSearch that answers 401, ends every command in
one line naming the server, the cause and the fix, exit code 1, well within 15 s; a
35,000-character question ranks on both backends under the same term cap; one ingest at a time
per data folder and per pair of servers; no server notice reaches the user.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional

import pytest

from graph.search.tokenize import MAX_QUERY_TERMS, cap_terms, tokenize
from lit3r.errors import Locked
from lit3r.index.build import build_stores
from lit3r.index.lock import servers_lease
from tests.conftest import CORPUS, ROOT
from tests.integration.conftest import move_corpus, server_settings

PREFIX = "lit3r-test"  # the prefix of test_backends: one Neo4j database holds one corpus


@pytest.fixture(scope="module")
def loaded(subset_home, servers, tmp_path_factory):
    """A copy of the subset home whose corpus is loaded into the servers (``(home, settings)``)."""
    home = tmp_path_factory.mktemp("faults") / "home"
    shutil.copytree(subset_home, home)
    settings = server_settings(home, servers, PREFIX)
    move_corpus(servers[0])  # the session's servers may hold another module's corpus
    build_stores(settings)
    return home, settings


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed once the socket is: connection refused


def _env(servers, neo4j_uri=None, opensearch_url=None) -> dict:
    neo, osr = servers
    return {**os.environ, "LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": neo4j_uri or neo.uri,
            "LIT3R_NEO4J__USER": "", "LIT3R_OPENSEARCH__URL": opensearch_url or osr.url,
            "LIT3R_OPENSEARCH__INDEX_PREFIX": PREFIX, "LIT3R_LLM__PROVIDER": "none"}


def _lit3r(home, env, *args, timeout=120):
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), *args], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=timeout)
    return res, time.perf_counter() - t0


def _queries(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"query_id": "q1", "question": "What is multi-head attention?",
                                "answer_types": ["freeform"]}) + "\n")
    return path


def _commands(tmp_path):
    return {"ask": ["ask", "What is multi-head attention?", "--no-trace-graph"],
            "run": ["run", "--queries", str(_queries(tmp_path)), "--out", str(tmp_path / "out.jsonl"),
                    "--no-trace-graph"],
            "graph": ["graph", "papers"], "cypher": ["cypher", "MATCH (p:Paper) RETURN count(p) AS n"]}


def _one_line(res, elapsed, *expected):
    err = res.stderr.strip()
    assert res.returncode == 1, (res.returncode, res.stdout[-500:], err[-2000:])
    assert "Traceback" not in err and len(err.splitlines()) == 1, err[-2000:]
    for text in expected:
        assert text in err, err
    assert elapsed < 15, (elapsed, err)
    return err


@pytest.mark.parametrize("command", ["ask", "run", "graph", "cypher"])
def test_neo4j_down_is_one_line_in_every_command(loaded, servers, tmp_path, command):
    home, _ = loaded
    port = _closed_port()
    res, s = _lit3r(home, _env(servers, neo4j_uri=f"bolt://127.0.0.1:{port}"), *_commands(tmp_path)[command])
    _one_line(res, s, f"Neo4j at bolt://127.0.0.1:{port} cannot be reached", "Connection refused",
              "LIT3R_NEO4J__URI")


def _packstream_message(tag: int, fields: dict[str, str]) -> bytes:
    """One chunked Bolt message: a structure ``tag`` holding a map of strings."""
    def text(value: str) -> bytes:
        b = value.encode()
        return (bytes([0x80 + len(b)]) if len(b) < 16 else bytes([0xD0, len(b)])) + b

    body = bytes([0xB1, tag, 0xA0 + len(fields)]) + b"".join(text(k) + text(v) for k, v in fields.items())
    return struct.pack(">H", len(body)) + body + b"\x00\x00"


def _bolt_denying_every_password() -> socket.socket:
    """A listening socket that speaks Bolt 5.4 like a Neo4j with auth enabled given a wrong
    password: HELLO succeeds, LOGON fails with ``Neo.ClientError.Security.Unauthorized``. (The
    test Neo4j runs without auth, where every password is accepted.)"""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()

    def message(conn) -> Optional[bytes]:
        data = b""
        while True:
            head = conn.recv(2, socket.MSG_WAITALL)
            if len(head) < 2:
                return None
            size = struct.unpack(">H", head)[0]
            if size == 0:
                return data
            data += conn.recv(size, socket.MSG_WAITALL)

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                if len(conn.recv(20, socket.MSG_WAITALL)) < 20:  # magic + 4 proposed versions
                    continue
                conn.sendall(bytes([0, 0, 4, 5]))
                while (m := message(conn)) is not None and len(m) > 1 and m[1] != 0x02:  # until GOODBYE
                    if m[1] == 0x01:  # HELLO
                        conn.sendall(_packstream_message(0x70, {"server": "Neo4j/5.26.0", "connection_id": "b-1"}))
                    elif m[1] == 0x6A:  # LOGON
                        conn.sendall(_packstream_message(0x7F, {
                            "code": "Neo.ClientError.Security.Unauthorized",
                            "message": "The client is unauthorized due to authentication failure."}))
                    else:
                        conn.sendall(_packstream_message(0x7E, {}))  # IGNORED

    threading.Thread(target=serve, daemon=True).start()
    return sock


@pytest.mark.parametrize("command", ["ask", "graph", "cypher"])
def test_a_wrong_neo4j_password_is_one_line(loaded, servers, tmp_path, command):
    home, _ = loaded
    sock = _bolt_denying_every_password()
    try:
        uri = f"bolt://127.0.0.1:{sock.getsockname()[1]}"
        env = {**_env(servers, neo4j_uri=uri), "LIT3R_NEO4J__USER": "neo4j", "LIT3R_NEO4J__PASSWORD": "wrong-pw"}
        res, s = _lit3r(home, env, *_commands(tmp_path)[command])
    finally:
        sock.close()
    err = _one_line(res, s, f"Neo4j at {uri} refused the credentials", "LIT3R_NEO4J__PASSWORD")
    assert "wrong-pw" not in err


@pytest.mark.parametrize("command", ["ask", "run"])
def test_opensearch_down_is_one_line(loaded, servers, tmp_path, command):
    home, _ = loaded
    port = _closed_port()
    res, s = _lit3r(home, _env(servers, opensearch_url=f"http://127.0.0.1:{port}"), *_commands(tmp_path)[command])
    _one_line(res, s, f"OpenSearch at http://127.0.0.1:{port} cannot be reached", "Connection refused",
              "LIT3R_OPENSEARCH__URL")


def test_opensearch_down_during_ingest_keeps_the_local_index(loaded, servers, tmp_path):
    home, _ = loaded
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    os.symlink(CORPUS / "pdfs" / "1706.03762.pdf", pdfs / "1706.03762.pdf")
    port = _closed_port()
    res, s = _lit3r(home, _env(servers, opensearch_url=f"http://127.0.0.1:{port}"), "ingest", str(pdfs),
                    "--metadata", str(CORPUS / "manifest.jsonl"), "--no-images", "--json")
    err = res.stderr.strip().splitlines()[-1]
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert f"OpenSearch at http://127.0.0.1:{port} cannot be reached" in err and "local index is built" in err
    assert s < 180  # the parse and local build of the folder come first; the server fault itself is one check


class _Unauthorized(BaseHTTPRequestHandler):
    """An HTTP server that answers every request like OpenSearch's security plugin without
    credentials: 401 with its JSON body."""

    def _deny(self) -> None:
        body = json.dumps({"error": {"root_cause": [{"type": "security_exception", "reason": "Unauthorized"}],
                                     "type": "security_exception", "reason": "Unauthorized"}, "status": 401}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("WWW-Authenticate", 'Basic realm="OpenSearch Security"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_HEAD = do_PUT = _deny

    def log_message(self, *args) -> None:
        pass


def test_opensearch_401_is_one_line(loaded, servers, tmp_path):
    home, _ = loaded
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        res, s = _lit3r(home, _env(servers, opensearch_url=url), *_commands(tmp_path)["ask"])
    finally:
        server.shutdown()
    _one_line(res, s, f"OpenSearch at {url} refused the credentials (HTTP 401)", "LIT3R_OPENSEARCH__PASSWORD")


def _long_question(home) -> str:
    """35,000 characters: the corpus's chunk texts (thousands of distinct terms) and filler words
    found in no paper, then the question."""
    texts = [json.loads(line)["text"] for line in (home / "chunks.jsonl").read_text().splitlines()[::3]]
    words = " ".join(f"zzfiller{i}" for i in range(300)) + " " + " ".join(texts)
    tail = " What is multi-head attention?"
    return words[: 35000 - len(tail)] + tail


def test_a_long_question_is_capped_alike_on_both_backends(loaded, subset_home):
    from graph.search.embedded import EmbeddedSearchIndex
    from lit3r.factory import opensearch_index

    question = _long_question(subset_home)
    assert len(question) == 35000 and len(tokenize(question)) > 2 * MAX_QUERY_TERMS
    local, remote = EmbeddedSearchIndex.open(subset_home / "index"), opensearch_index(loaded[1])
    try:
        for lane in ("chunk_bm25", "paper_bm25"):
            a, b = getattr(local, lane)(question, 10), getattr(remote, lane)(question, 10)  # no maxClauseCount
            assert a and b
            assert len({h[0] for h in a} & {h[0] for h in b}) >= 8, (lane, a, b)
        field = local._v().fields["chunks"]
        ids = local._term_ids(tokenize(question))
        kept_local = cap_terms(tokenize(question), lambda ts: {t: field.doc_freq(ids[t]) for t in ts if t in ids})
        kept_remote = cap_terms(tokenize(question), lambda ts: remote.doc_freq(remote.chunk_index, ts))
        assert len(kept_local) == MAX_QUERY_TERMS and kept_local == kept_remote  # the rarest known terms
        assert not any(t.startswith("zzfiller") for t in kept_local)  # in no document: dropped first
    finally:
        remote.close()


def test_a_long_question_on_the_servers_prints_no_server_notice(loaded, servers):
    home, _ = loaded
    res, _ = _lit3r(home, _env(servers), "ask", _long_question(home), "--no-trace-graph", "--json", timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "maxClauseCount" not in res.stderr
    for notice in ("deprecat", "Notification", "GqlStatusObject", "warn"):
        assert notice.lower() not in res.stderr.lower(), res.stderr[-2000:]


def test_a_second_ingest_into_the_same_home_stops_with_a_message(tmp_path):
    from filelock import FileLock

    home, pdfs = tmp_path / "home", tmp_path / "pdfs"
    pdfs.mkdir()
    os.symlink(CORPUS / "pdfs" / "1706.03762.pdf", pdfs / "1706.03762.pdf")
    home.mkdir()
    env = {**os.environ, "LIT3R_BACKEND": "embedded"}
    with FileLock(str(home / ".ingest.lock")):  # what a running `lit3r ingest` holds
        res, s = _lit3r(home, env, "ingest", str(pdfs), "--no-build", "--no-images")
    _one_line(res, s, f"another `lit3r ingest` into {home} is running", "wait for it to finish")
    assert not (home / "papers.jsonl").exists()  # nothing was written by the refused run
    # two at once: one parses, the other stops at once; the corpus holds the paper once
    runs = [subprocess.Popen([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs),
                              "--no-build", "--no-images"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [(p.wait(timeout=180), p.stderr.read()) for p in runs]
    assert sorted(rc for rc, _ in outs) in ([0, 0], [0, 1]), outs
    assert all("Traceback" not in err for _, err in outs)
    assert all("another `lit3r ingest`" in err for rc, err in outs if rc == 1)
    assert len((home / "papers.jsonl").read_text().splitlines()) == 1


def test_a_second_load_into_the_same_servers_stops_with_a_message(loaded, tmp_path):
    home, settings = loaded
    with servers_lease(settings, tmp_path):  # another data folder loading these servers
        with pytest.raises(Locked, match="another ingest is loading Neo4j"):
            build_stores(settings)
    build_stores(settings)  # released: the next load runs
