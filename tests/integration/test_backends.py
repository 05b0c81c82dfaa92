"""One backend test suite: the embedded stores and real Neo4j + OpenSearch servers agree.

The servers are started by this module from Maven artifacts (tests/servers/); they never skip:
a server that cannot start fails the tests with its reason.
"""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from graph.embedded import EmbeddedGraphStore
from lit3r.build import build_stores
from lit3r.cli import main
from lit3r.config import load_settings
from lit3r.engine import Engine
from lit3r.fusion import recall_at
from tests.conftest import CORPUS
from tests.servers import neo4j_server, opensearch_server


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    work = tmp_path_factory.mktemp("servers")
    try:
        neo4j_server.build()
        opensearch_server.build()
        neo = neo4j_server.start(work / "neo4j")
    except Exception as exc:
        pytest.fail(f"Neo4j could not start: {exc}")
    try:
        osr = opensearch_server.start(work / "opensearch")
    except Exception as exc:
        neo.stop()
        pytest.fail(f"OpenSearch could not start: {exc}")
    yield neo, osr
    osr.stop()
    neo.stop()


@pytest.fixture(scope="module")
def both(subset_home, servers, tmp_path_factory):
    """(embedded settings, server settings) over the same built corpus."""
    neo, osr = servers
    home = tmp_path_factory.mktemp("server-home") / "home"
    shutil.copytree(subset_home, home)
    server = load_settings(home=home, backend="neo4j+opensearch",
                           neo4j={"uri": neo.uri, "user": None, "password": None},
                           opensearch={"url": osr.url, "index_prefix": "lit3r-test"})
    report = build_stores(server)
    assert not report.skipped and report.encoded_papers == 0  # embeddings come from the cache
    assert report.servers["neo4j"]["nodes"] > 1000 and report.servers["opensearch"]["docs"] > 1000
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
        rs = [recall_at(engine.ask(q["question"], query_id=q["query_id"]).candidates, gold[q["query_id"]], 50)
              for q in _questions()]
        rec.append(sum(rs) / len(rs))
    assert abs(rec[0] - rec[1]) <= 0.02, rec


def test_cypher_command_explores_and_refuses_writes(both):
    _, srv = both
    env = {"LIT3R_NEO4J__URI": srv.neo4j.uri, "LIT3R_NEO4J__USER": "", "LIT3R_NEO4J__PASSWORD": ""}
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
    res = runner.invoke(main, ["cypher", "CREATE (:Paper {paper_id: 'x'})"])
    assert res.exit_code == 1 and "--write" in res.output


def test_doctor_checks_the_servers(both):
    _, srv = both
    env = {"LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": srv.neo4j.uri, "LIT3R_NEO4J__USER": "",
           "LIT3R_OPENSEARCH__URL": srv.opensearch.url, "LIT3R_OPENSEARCH__INDEX_PREFIX": "lit3r-test"}
    res = CliRunner(env=env).invoke(main, ["--home", str(srv.home), "doctor"])
    assert res.exit_code == 0, res.output
    assert "[ok] neo4j: Neo4j/5" in res.output and "[ok] opensearch: OpenSearch 2" in res.output
