"""The servers backend end to end: real Neo4j + OpenSearch as the system of record.

The embedded stores and the servers agree on the corpus; a machine with only the server
settings (no local file) answers like the machine that ingested; a load killed with SIGKILL
and run again leaves no duplicate and nothing missing; pruned and restored papers follow.
The servers (conftest ``servers``) never skip: a server that cannot start fails the tests.
"""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from graph.embedded import EmbeddedGraphStore
from lit3r.cli import main
from lit3r.config import load_settings
from lit3r.errors import ServersMismatch
from lit3r.index.build import build_stores
from lit3r.littraceqa.metrics import recall_at_k
from lit3r.pipeline.engine import Engine
from tests.conftest import CORPUS
from tests.integration.conftest import move_corpus, server_settings


@pytest.fixture(scope="module")
def both(subset_home, servers, tmp_path_factory):
    """(embedded settings, server settings) over the same built corpus, loaded into the servers
    by `build_stores` (the local build is unchanged: only the servers are written)."""
    home = tmp_path_factory.mktemp("server-home") / "home"
    shutil.copytree(subset_home, home)
    server = server_settings(home, servers, "lit3r-test")
    report = build_stores(server)
    assert report.encoded_papers == 0  # embeddings come from the local build
    assert report.servers["written"] == 10 and report.servers["neo4j"]["nodes"] > 1000
    assert report.servers["opensearch"]["docs"] > 1000
    again = build_stores(server)
    assert again.servers["written"] == 0 and again.servers["deleted"] == 0  # nothing changed: nothing written
    return load_settings(home=subset_home), server


@pytest.fixture(scope="module")
def engines(both):
    emb, srv = both
    return Engine(emb), Engine(srv)


def test_graph_answers_are_identical(engines):
    emb, srv = engines[0].graph, engines[1].graph
    assert isinstance(emb, EmbeddedGraphStore) and type(srv).__name__ == "Neo4jGraphStore"
    assert emb.paper_ids() == srv.paper_ids()
    for pid in emb.paper_ids():
        assert srv.cites(pid) == emb.cites(pid)
        assert srv.cited_by(pid) == emb.cited_by(pid)
        assert [p for p, _ in srv.similar_papers(pid, 10)] == [p for p, _ in emb.similar_papers(pid, 10)]
        assert [s for _, s in srv.similar_papers(pid, 10)] == pytest.approx([s for _, s in emb.similar_papers(pid, 10)])
        e, s = emb.coupled_papers(pid, 2, 50), srv.coupled_papers(pid, 2, 50)
        assert [(p, n) for p, _, n in s] == [(p, n) for p, _, n in e]
        assert [j for _, j, _ in s] == pytest.approx([j for _, j, _ in e])
        assert [c.model_dump() for c in srv.chunks_of(pid)] == [c.model_dump() for c in emb.chunks_of(pid)]
    assert emb.cited_by("1706.03762") and emb.coupled_papers("2007.14062")  # the checks are not vacuous


def _questions():
    return [json.loads(line) for line in (CORPUS / "questions_dev_inputs.jsonl").open()]


def _overlap(a, b, k=10):
    a, b = [x for x, _ in a[:k]], [x for x, _ in b[:k]]
    return len(set(a) & set(b)) / max(1, min(k, len(a)))


def test_search_lanes_agree_on_dev_questions(engines):
    e, s = engines
    lanes = {"chunk_bm25": [], "paper_bm25": [], "dense": []}
    for q in _questions():
        v = e.encoder.encode_queries([q["question"]])[0]
        lanes["chunk_bm25"].append(_overlap(e.index.chunk_bm25(q["question"], 10), s.index.chunk_bm25(q["question"], 10)))
        lanes["paper_bm25"].append(_overlap(e.index.paper_bm25(q["question"], 10), s.index.paper_bm25(q["question"], 10)))
        lanes["dense"].append(_overlap(e.index.chunk_dense(v, 10), s.index.chunk_dense(v, 10)))
    means = {k: sum(v) / len(v) for k, v in lanes.items()}
    assert all(m >= 0.9 for m in means.values()), means


def test_final_candidate_recall_agrees(engines):
    gold = {json.loads(line)["query_id"]: [p["paper_id"] for p in json.loads(line)["gold_papers"]]
            for line in (CORPUS / "questions_dev.jsonl").open()}
    rec = []
    for engine in engines:
        rs = [recall_at_k(engine.ask(q["question"], query_id=q["query_id"]).candidates, gold[q["query_id"]], 50)
              for q in _questions()]
        rec.append(sum(rs) / len(rs))
    assert abs(rec[0] - rec[1]) <= 0.02, rec


def test_cypher_command_explores_and_refuses_writes(both):
    _, srv = both
    env = {"LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": srv.neo4j.uri, "LIT3R_NEO4J__USER": "",
           "LIT3R_NEO4J__PASSWORD": ""}
    runner = CliRunner(env=env)
    res = runner.invoke(main, ["cypher", "explore_neighbourhood", "--param", "paper_id=2007.14062", "--json"])
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)[0]
    assert row["paper_id"] == "2007.14062" and "1706.03762" in row["cites"] and row["coupled"]
    res = runner.invoke(main, ["cypher", "explore_citing_work", "--param", "work=attention is all you need"])
    assert res.exit_code == 0 and "2007.14062" in res.output, res.output
    res = runner.invoke(main, ["cypher", "explore_citation_path", "--param", "from=2007.14062",
                               "--param", "to=2006.04768", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)[0]["hops"] >= 1, res.output
    res = runner.invoke(main, ["cypher", "explore_cocitation", "--param", "paper_id=1706.03762", "--json"])
    assert res.exit_code == 0 and 0 < len(json.loads(res.stdout)) <= 25, res.output  # $limit defaults to 25
    res = runner.invoke(main, ["cypher", "explore_cocitation", "--param", "paper_id=1706.03762", "--param", "limit=2",
                               "--json"])
    assert res.exit_code == 0 and len(json.loads(res.stdout)) == 2, res.output
    res = runner.invoke(main, ["cypher", "explore_neighbourhood", "--param", "paper_id=2007.14062"])
    assert res.exit_code == 0 and "2006.04768" in res.stdout, res.output  # the table holds every id in full
    res = runner.invoke(main, ["cypher", "CREATE (:Paper {paper_id: 'x'})"])
    assert res.exit_code == 1 and "--write" in res.output
    res = runner.invoke(main, ["cypher", "UNWIND range(1, 100000) AS x RETURN x", "--limit", "10", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout) == [{"x": i} for i in range(1, 11)], res.output
    assert "more than 10 rows" in res.stderr


def test_doctor_checks_the_servers(both):
    _, srv = both
    env = {"LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": srv.neo4j.uri, "LIT3R_NEO4J__USER": "",
           "LIT3R_OPENSEARCH__URL": srv.opensearch.url, "LIT3R_OPENSEARCH__INDEX_PREFIX": "lit3r-test"}
    res = CliRunner(env=env).invoke(main, ["--home", str(srv.home), "doctor"])
    assert res.exit_code == 0, res.output
    assert "[ok] neo4j: Neo4j/5" in res.output and "[ok] opensearch: OpenSearch 2" in res.output


def _answers(engine):
    out = {}
    for q in _questions():
        r = engine.ask(q["question"], query_id=q["query_id"])
        out[q["query_id"]] = (r.submission(), r.candidates)
    return out


def test_a_machine_with_only_the_server_settings_answers_the_same(both, tmp_path):
    """Acceptance (issue 11): the servers alone answer the questions_dev questions exactly as the
    ingesting machine does, with every local file of the home deleted."""
    _, srv = both
    built = _answers(Engine(srv))
    bare = tmp_path / "elsewhere"  # the same server settings; no corpus file, index or cache here
    assert _answers(Engine(srv.model_copy(update={"home": bare}))) == built
    assert not bare.exists()


def _server_counts(settings):
    from lit3r.factory import neo4j_store, opensearch_index

    g = neo4j_store(settings)
    try:
        row = g.run_read(
            "MATCH (c:Chunk) WITH count(c) AS chunks, count(DISTINCT c.chunk_id) AS ids "
            "OPTIONAL MATCH (:Paper)-[h:HAS_CHUNK]->() WITH chunks, ids, count(h) AS has "
            "OPTIONAL MATCH (:Paper)-[r:CITES]->() WITH chunks, ids, has, count(r) AS cites "
            "OPTIONAL MATCH (:Paper)-[s:SIMILAR_TO]->() WITH chunks, ids, has, cites, count(s) AS similar "
            "MATCH (p:Paper) RETURN chunks, ids, has, cites, similar, count(p) AS papers, count(p.hash) AS done", {})[0]
        works = g.run_read("MATCH (w:Work) RETURN count(w) AS n, count(DISTINCT w.work_id) AS ids", {})[0]
    finally:
        g.close()
    index = opensearch_index(settings)
    try:
        index.client.indices.refresh(index=f"{index.chunk_index},{index.paper_index}")
        docs = index.count()
    finally:
        index.close()
    return {**row, "works": works["n"], "work_ids": works["ids"], "docs": docs}


def _expected(settings):
    from graph.embedded import EmbeddedGraphStore
    from graph.search.embedded import DB_NAME

    g = EmbeddedGraphStore.open(settings.index_dir / DB_NAME)
    ids = g.paper_ids()
    recs = g.records(ids)
    return {"papers": len(ids), "chunks": sum(len(c) for _, c, _ in recs), "cites": sum(len(r) for _, _, r in recs),
            "similar": sum(len(v) for v in g.neighbour_lists().values())}


KILLED_LOAD = r"""
import sys
from lit3r.config import load_settings
from lit3r.index.load import sync_servers
settings = load_settings(home=sys.argv[1])
sync_servers(settings, batch_chunks=100, on_batch=lambda done, total: print("batch", done, total, flush=True))
print("finished", flush=True)
"""


def test_a_load_killed_with_sigkill_finishes_on_the_next_run(both, servers, tmp_path):
    """kill -9 in the middle of a load (new indices: every paper is written), then the next
    load: every node, edge and document exactly once, and the same answers."""
    import os
    import signal
    import subprocess
    import sys

    from lit3r.index.load import sync_servers
    from tests.conftest import ROOT

    _, srv = both
    q = _questions()[0]
    before = Engine(srv).ask(q["question"], query_id=q["query_id"])
    settings = srv.model_copy(update={"opensearch": srv.opensearch.model_copy(update={"index_prefix": "lit3r-kill"})})
    neo, osr = servers
    with pytest.raises(ServersMismatch, match="mix two corpora"):  # one Neo4j database holds one corpus
        sync_servers(settings)
    move_corpus(neo)
    env = {**os.environ, "LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": neo.uri, "LIT3R_NEO4J__USER": "",
           "LIT3R_OPENSEARCH__URL": osr.url, "LIT3R_OPENSEARCH__INDEX_PREFIX": "lit3r-kill"}
    child = subprocess.Popen([sys.executable, "-c", KILLED_LOAD, str(srv.home)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = child.stdout.readline()
    assert line.startswith("batch"), (line, child.stderr.read()[-2000:])
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    want = _expected(settings)
    partial = _server_counts(settings)
    assert partial["done"] < want["papers"], "the load finished before it was killed: nothing was tested"
    assert partial["docs"]["papers"] < want["papers"]
    report = sync_servers(settings)
    assert report["written"] == want["papers"] - partial["done"]
    got = _server_counts(settings)
    assert got["chunks"] == got["ids"] == got["has"] == want["chunks"]
    assert got["papers"] == got["done"] == want["papers"]
    assert got["cites"] == want["cites"] and got["similar"] == want["similar"]
    assert got["works"] == got["work_ids"]
    assert got["docs"] == {"chunks": want["chunks"], "papers": want["papers"]}
    a = Engine(settings).ask(q["question"], query_id=q["query_id"])
    assert a.submission() == before.submission() and a.candidates == before.candidates
    # documents deleted by hand: the next load counts what is there and writes that paper again
    from lit3r.factory import opensearch_index

    index = opensearch_index(settings)
    index.client.delete_by_query(index=index.chunk_index, body={"query": {"term": {"paper_id": "1706.03762"}}},
                                 params={"refresh": "true"})
    index.close()
    assert sync_servers(settings)["written"] == 1
    assert _server_counts(settings)["docs"] == {"chunks": want["chunks"], "papers": want["papers"]}
    with pytest.raises(ServersMismatch, match="lit3r-kill"):  # the old indices no longer pair with the graph
        Engine(srv)


def _drop_paper(home, paper_id):
    for name in ("papers", "chunks", "references"):
        path = home / f"{name}.jsonl"
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines(keepends=True)
                 if json.loads(ln)["paper_id"] != paper_id]
        path.write_text("".join(lines), encoding="utf-8")


def test_pruned_and_restored_papers_follow_on_the_servers(both, servers, tmp_path):
    """The corpus loses a paper, then gets it back: each ingest writes only that difference."""
    _, srv = both
    move_corpus(servers[0])
    home = tmp_path / "home"
    shutil.copytree(srv.home, home)
    settings = srv.model_copy(update={"home": home,
                                      "opensearch": srv.opensearch.model_copy(update={"index_prefix": "lit3r-prune"})})
    assert build_stores(settings).servers["written"] == 10  # new indices: everything
    saved = {n: (home / f"{n}.jsonl").read_text(encoding="utf-8") for n in ("papers", "chunks", "references")}
    gone = "2511.11007"
    _drop_paper(home, gone)
    report = build_stores(settings)
    assert report.removed_papers == 1 and report.servers["deleted"] == 1
    engine = Engine(settings)
    graph, index = engine.graph, engine.index
    assert gone not in graph.paper_ids() and len(graph.paper_ids()) == 9
    with pytest.raises(KeyError):
        index.paper_head(gone, 10)
    assert _server_counts(settings)["docs"]["papers"] == 9
    for name, text in saved.items():
        (home / f"{name}.jsonl").write_text(text, encoding="utf-8")
    report = build_stores(settings)
    assert report.encoded_papers == 0 and report.servers["deleted"] == 0
    assert 1 <= report.servers["written"] <= 10 and gone in Engine(settings).graph.paper_ids()
    assert _server_counts(settings)["docs"] == {"chunks": _expected(settings)["chunks"], "papers": 10}
