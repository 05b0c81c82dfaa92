"""Evidence traces as a graph, on both backends, with real PDFs and a real Neo4j + OpenSearch.

After `lit3r ask` the evidence path from the Question node reaches every evidence item of the
answer (embedded and Neo4j); `lit3r run` traces loaded with `lit3r trace load` read the same
on both backends; a run is deleted as a whole; the Browser guide, served by `lit3r browser`,
loads in a real headless Chromium and each of its queries passes EXPLAIN on the Neo4j server
(and the trace queries return the stored trace).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request

import pytest
from click.testing import CliRunner

from graph.cypher import statement
from graph.embedded import EmbeddedGraphStore
from graph.neo4j_store import Neo4jGraphStore, connect
from graph.search.embedded import DB_NAME
from lit3r.cli import main
from lit3r.cli.browser import guide_queries
from lit3r.index.build import build_stores
from lit3r.littraceqa.format import evidence_item, evidence_key
from tests.conftest import ROOT
from tests.integration.conftest import move_corpus, server_settings

QUESTION = "Which method reduces the complexity of self-attention to linear time, and how?"
BATCH = [{"query_id": "t1", "question": "How does a sparse attention mechanism handle longer sequences?"},
         {"query_id": "t2", "question": "Which prompting method makes a language model reason step by step?",
          "answer_types": ["freeform", "multiple_choice"],
          "multiple_choice_options": [{"label": "A", "text": "chain of thought"}, {"label": "B", "text": "beam search"}]}]


@pytest.fixture(scope="module")
def homes(subset_home, servers, tmp_path_factory):
    """``(embedded home, servers home, env of the servers backend, neo4j server)``: copies of the
    built subset (traces are written into the data folder), the second loaded into the servers."""
    base = tmp_path_factory.mktemp("trace-homes")
    emb, srv = base / "embedded", base / "servers"
    shutil.copytree(subset_home, emb)
    shutil.copytree(subset_home, srv)
    for home in (emb, srv):  # other modules' `run`s store their traces in the shared subset home
        (home / "traces.sqlite").unlink(missing_ok=True)
    move_corpus(servers[0])  # the session's servers may hold another module's corpus
    build_stores(server_settings(srv, servers, "lit3r-test"))
    neo, osr = servers
    env = {"LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": neo.uri, "LIT3R_NEO4J__USER": "",
           "LIT3R_NEO4J__PASSWORD": "", "LIT3R_OPENSEARCH__URL": osr.url, "LIT3R_OPENSEARCH__INDEX_PREFIX": "lit3r-test"}
    return emb, srv, env, neo


def _cli(env, home, *args):
    res = CliRunner(env=env).invoke(main, ["--home", str(home), *args])
    assert res.exit_code == 0, res.output
    return res


def _chunk_keys(store, items):
    """The official evidence key of each submission evidence item -> the stored chunks with that key."""
    out = {}
    for item in items:
        key = evidence_key(item)
        out[key] = {c.chunk_id for c in store.chunks_of(item["paper_id"]) if evidence_key(evidence_item(c)) == key}
    return out


def _ask_and_check_path(env, home, store):
    res = _cli(env, home, "ask", QUESTION, "--json")
    answer = json.loads(res.stdout)
    run = answer["trace_graph"]["run"]  # --json carries the store's report instead of a stderr note
    assert run.startswith("ask-") and answer["trace_graph"]["questions"] == 1
    items = answer["submission"]["evidence"]
    assert items, answer["submission"]  # not vacuous: the answer has evidence
    view = json.loads(_cli(env, home, "graph", "trace", "cli", "--json").stdout)
    assert view["question"]["run"] == run and view["question"]["text"] == QUESTION
    path = view["evidence_path"]
    reached = {row["chunk_id"] for row in path}
    # every evidence item of the answer is reached from the Question, through a stored chunk of its paper
    for key, chunks in _chunk_keys(store, items).items():
        assert chunks & reached, (key, chunks, reached)
    assert all(row["paper_id"] == store.chunk(row["chunk_id"]).paper_id for row in path)
    assert all(row["candidate_rank"] is not None for row in path)  # evidence comes from candidate papers
    assert {row["chunk_id"] for row in path} == set(view["question"]["answer"]["evidence_chunks"])
    rounds = view["question"]["rounds"]
    assert rounds and rounds[0]["pool_size"] > 0 and rounds[0]["subqueries"][0]["pooled"] > 0
    assert {r["paper_id"] for r in view["candidates"] if r["rank"] is not None} == set(answer["candidates"])
    for c in view["candidates"]:  # a Ranking-B paper that is no seed was brought by at least one source
        if c["rank_b"] is not None and c["seed_rank"] is None:
            assert c["sources"], c
    return run, view


def test_ask_stores_the_evidence_path_on_the_embedded_backend(homes):
    emb, _, _, _ = homes
    store = EmbeddedGraphStore.open(emb / "index" / DB_NAME)
    try:
        run, _ = _ask_and_check_path({}, emb, store)
    finally:
        store.close()
    assert (emb / "traces.sqlite").is_file()
    before = json.loads(_cli({}, emb, "trace", "list", "--json").stdout)
    res = _cli({}, emb, "ask", QUESTION, "--no-trace-graph")
    assert "trace graph" not in res.stderr and json.loads(_cli({}, emb, "trace", "list", "--json").stdout) == before
    _cli({}, emb, "trace", "delete", run)
    res = CliRunner().invoke(main, ["--home", str(emb), "graph", "trace", "cli", "--run", run])
    assert res.exit_code == 1 and "unknown traced question" in res.output and "lit3r trace list" in res.output


def test_ask_stores_the_evidence_path_in_neo4j(homes):
    _, srv, env, neo = homes
    store = Neo4jGraphStore(connect(neo.uri))
    try:
        before = store.run_read("MATCH (p:Paper) RETURN count(p) AS n", {})[0]["n"]
        run, view = _ask_and_check_path(env, srv, store)
        # the named statement Browser users run gives the same path
        rows = store.run_read(statement("trace_evidence_path"), {"query_id": "cli", "run": run})
        assert [r["chunk_id"] for r in rows] == [r["chunk_id"] for r in view["evidence_path"]]
        q = store.run_read("MATCH (q:Question {run: $run})-[:HAS_ANSWER]->(a:Answer)-[:SUPPORTED_BY]->(c:Chunk) "
                           "RETURN collect(c.chunk_id) AS ids", {"run": run})[0]["ids"]
        assert sorted(q) == sorted(r["chunk_id"] for r in rows)
        _cli(env, srv, "trace", "delete", run)
        left = store.run_read("MATCH (t:Trace {run: $run}) RETURN count(t) AS n", {"run": run})[0]["n"]
        assert left == 0
        assert store.run_read("MATCH (p:Paper) RETURN count(p) AS n", {})[0]["n"] == before  # corpus untouched
    finally:
        store.close()


def test_batch_traces_read_the_same_on_both_backends(homes, tmp_path):
    emb, srv, env, _ = homes
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in BATCH))
    out = tmp_path / "same.jsonl"
    res = _cli({}, emb, "run", "--queries", str(queries), "--out", str(out))
    assert "trace graph stored: run same, 2 question(s)" in res.stderr
    traces = out.with_name("same.jsonl.traces.jsonl")
    loaded = json.loads(_cli(env, srv, "trace", "load", str(traces), "--json").stdout)
    assert loaded["run"] == "same" and loaded["questions"] == 2 and loaded["missing"] == []
    listed = {(q["run"], q["query_id"]) for q in json.loads(_cli(env, srv, "trace", "list", "--run", "same",
                                                                  "--json").stdout)}
    assert listed == {("same", "t1"), ("same", "t2")}
    for qid in ("t1", "t2"):
        views = [json.loads(_cli(e, h, "graph", "trace", qid, "--run", "same", "--json").stdout)
                 for e, h in (({}, emb), (env, srv))]
        for v in views:
            v["question"].pop("stored_at")
        assert views[0] == views[1]
        assert views[0]["candidates"] and views[0]["question"]["rounds"]
        top = views[0]["candidates"][0]["paper_id"]
        one = [json.loads(_cli(e, h, "trace", "candidates", qid, "--run", "same", "--paper", top, "--json").stdout)
               for e, h in (({}, emb), (env, srv))]
        assert one[0] == one[1] and len(one[0]) == 1
        for row in views[0]["evidence_path"]:  # every question a chunk and its paper supported
            for target in (row["chunk_id"], row["paper_id"]):
                sup = [json.loads(_cli(e, h, "trace", "supported", target, "--json").stdout) for e, h in
                       (({}, emb), (env, srv))]
                assert [r for r in sup[0] if r["run"] == "same"] == [r for r in sup[1] if r["run"] == "same"]
                assert ("same", qid) in {(r["run"], r["query_id"]) for r in sup[1]}
    for e, h in (({}, emb), (env, srv)):
        assert "deleted" in _cli(e, h, "trace", "delete", "same").stdout
        res = CliRunner(env=e).invoke(main, ["--home", str(h), "trace", "delete", "same"])
        assert res.exit_code == 1 and "no trace of run 'same'" in res.output


def _params(queries):
    """The parameters the guide's :params / :param commands set, ``{name: value}`` (JSON-ish)."""
    out = {}
    for q in queries:
        m = re.match(r":params \{(.*)\}$", q.strip())
        if m:
            out = {k: json.loads(v) for k, v in re.findall(r"(\w+): ([^,]+)", m.group(1))}
        m = re.match(r":param (\w+) =>\s*(.+)$", q.strip())
        if m:
            out[m.group(1)] = json.loads(m.group(2))
    return out


def test_browser_guide_loads_and_its_queries_run(homes, tmp_path):
    _, srv, env, neo = homes
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "no chromium: `apt-get install chromium` (Debian) for the headless browser check"
    _cli(env, srv, "ask", QUESTION)  # one stored trace for the trace queries
    proc = subprocess.Popen([sys.executable, "-m", "lit3r.cli", "browser", "--port", "0", "--no-app"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        head = [proc.stdout.readline() for _ in range(4)]
        style = next(ln.strip() for ln in head if ln.strip().startswith(":style "))
        play = next(ln.strip() for ln in head if ln.strip().startswith(":play "))
        url = play.split(" ", 1)[1]
        assert url.startswith("http://localhost:") and url.endswith("/guide.html")
        with urllib.request.urlopen(url, timeout=10) as r:  # Neo4j Browser fetches it cross-origin
            assert r.status == 200 and r.headers["Access-Control-Allow-Origin"] == "*"
            page = r.read().decode()
        with urllib.request.urlopen(style.split(" ", 1)[1], timeout=10) as r:
            assert "node.Question" in r.read().decode()
        shot = tmp_path / "guide.png"
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,3000"]
        dom = subprocess.run([chromium, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120)
        subprocess.run([chromium, *flags, f"--screenshot={shot}", url], capture_output=True, timeout=120)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count("<slide") == 5 and 'class="guide"' in dom.stdout  # the page the browser built
    assert shot.is_file() and shot.stat().st_size > 10_000
    queries = guide_queries(dom.stdout)
    assert queries == guide_queries(page)
    params = _params(queries)
    cypher = [q for q in queries if not q.startswith(":")]
    assert len(cypher) >= 10
    store = Neo4jGraphStore(connect(neo.uri))
    try:
        for q in cypher:
            used = set(re.findall(r"\$(\w+)", q))
            assert used <= set(params), (used - set(params), q)  # the guide sets every parameter it uses
            with store.driver.session() as s:
                s.run("EXPLAIN " + q, **params).consume()  # valid Cypher on the test server
        # with the guide's defaults the trace queries find the newest question's trace
        for name in ("trace_questions", "trace_evidence_graph", "trace_evidence_path", "trace_why_candidate",
                     "trace_supported", "guide_corpus", "guide_neighbourhood_graph", "guide_coupling_graph"):
            q = statement(name)
            assert q in cypher, name
            assert store.run_read(q, {k: v for k, v in params.items() if f"${k}" in q}), name
    finally:
        store.close()


def test_a_closed_pipe_keeps_the_trace_and_the_hint_names_the_home(homes):
    """`lit3r --home H ask ... | head -1`: the reader of stdout goes away after the first line, the
    trace is stored all the same (it is written before the answer is printed), and the printed trace
    command carries the --home it was asked with (newuser27)."""
    emb, _, _, _ = homes
    cmd = [sys.executable, "-m", "lit3r.cli", "--home", str(emb), "ask", QUESTION]
    env = {k: v for k, v in os.environ.items() if k != "LIT3R_HOME"}
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    first = proc.stdout.readline()
    proc.stdout.close()  # the pipe's reader is gone, as after `| head -1`
    proc.wait(timeout=600)
    assert first.startswith("Answer:"), first
    listed = _cli({}, emb, "trace", "list").stdout
    assert QUESTION[:40] in listed, listed
    full = _cli({}, emb, "ask", QUESTION).stdout
    assert f"`lit3r --home {emb} graph trace cli --run ask-" in full, full[-500:]
