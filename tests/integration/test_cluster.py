"""Lit3R on an OpenSearch cluster: 2 nodes on 127.0.0.1 (one JVM, tests/servers/), indices with
2 primary shards and 1 replica created from settings, the whole 60-paper corpus loaded, and the
same candidates as on the single node. The model-free ``hashing:384`` encoder keeps the build
short (this test is about the cluster, not the model)."""

from __future__ import annotations

import json

import pytest

from ingest.corpus import ingest_corpus
from lit3r.config import load_settings
from lit3r.index.build import build_stores
from lit3r.pipeline.engine import Engine
from tests.conftest import CORPUS
from tests.integration.conftest import move_corpus
from tests.servers import neo4j_server, opensearch_server

MODELS = {"chunk_encoder": "hashing:384", "paper_encoder": "hashing:384"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A 2-node OpenSearch cluster and its own Neo4j (one Neo4j database holds one corpus)."""
    opensearch_server.build()
    work = tmp_path_factory.mktemp("cluster")
    try:
        server = opensearch_server.start(work / "opensearch", nodes=2)
    except Exception as exc:
        pytest.fail(f"the 2-node OpenSearch cluster could not start: {exc}")
    try:
        neo = neo4j_server.start(work / "neo4j")
    except Exception as exc:
        server.stop()
        pytest.fail(f"Neo4j could not start: {exc}")
    yield server, neo
    neo.stop()
    server.stop()


@pytest.fixture(scope="module")
def corpus_home(shared_data, tmp_path_factory):
    home = tmp_path_factory.mktemp("corpus60")
    report = ingest_corpus(CORPUS / "pdfs", home, metadata_file=CORPUS / "manifest.jsonl", workers=2,
                           progress=False, images=False)
    assert report.failures == [] and report.parsed == 60
    return home


def _settings(home, neo, urls, prefix, **index):
    return load_settings(home=home, backend="neo4j+opensearch", models=MODELS,
                         neo4j={"uri": neo.uri, "user": None, "password": None},
                         opensearch={"url": ",".join(urls), "index_prefix": prefix, **index})


def test_a_two_node_cluster_gives_the_single_node_candidates(corpus_home, servers, cluster):
    neo, single = servers
    cluster, neo2 = cluster
    move_corpus(neo)
    # HNSW is approximate per shard; with candidates near the shard size k-NN is close to exact
    # on both layouts, so what is compared is the sharding (BM25 statistics, merging), not HNSW
    knn = {"hnsw_ef_construction": 200, "knn_candidates": 3000}
    one = _settings(corpus_home, neo, [single.url], "one", **knn)
    two = _settings(corpus_home, neo2, cluster.urls, "two", shards=2, replicas=1, **knn)
    assert build_stores(one).servers["written"] == 60
    assert build_stores(two).servers["written"] == 60  # new indices: every paper again
    client = Engine(two).index.client
    health = client.cluster.health(params={"wait_for_status": "green"})
    assert health["number_of_nodes"] == 2 and health["status"] == "green"
    shards = client.cat.shards(index="two-*", params={"format": "json"})
    assert len(shards) == 8 and {s["state"] for s in shards} == {"STARTED"}  # 2 indices x 2 primaries x 2 copies
    assert len({s["node"] for s in shards}) == 2
    assert {s["prirep"] for s in shards if s["index"] == "two-chunks"} == {"p", "r"}
    e1, e2 = Engine(one), Engine(two)
    assert e2.index.sharded and not e1.index.sharded
    assert e2.index.count() == e1.index.count() and e1.index.count()["papers"] == 60
    questions = [json.loads(line) for line in (CORPUS / "questions_dev_inputs.jsonl").open()]
    same, diffs = 0, {}
    for q in questions:
        a = e1.ask(q["question"], query_id=q["query_id"]).candidates
        b = e2.ask(q["question"], query_id=q["query_id"]).candidates
        assert a[:3] == b[:3], (q["query_id"], _lanes(e1, e2, q["question"]))
        if a[:10] == b[:10] or (set(a[:10]) == set(b[:10]) and _near_ties(e1, q["question"], a[:10], b[:10])):
            same += 1
        else:
            diffs[q["query_id"]] = {"lanes": _lanes(e1, e2, q["question"]), "single": a[:10], "cluster": b[:10]}
    assert same == len(questions), diffs
    # every node serves the corpus
    for url in cluster.urls:
        node = _settings(corpus_home, neo2, [url], "two")
        assert Engine(node).index.count() == e1.index.count()


def _near_ties(engine, question, a, b) -> bool:
    """The two top-10 lists hold the same papers and differ only where the single node's Ranking
    A scores are within 1% of each other (float-level differences of sharded BM25 statistics)."""
    scores = dict(engine.ask(question, answer=False).ranking_a)
    for x, y in zip(a, b):
        if x != y and abs(scores.get(x, 0.0) - scores.get(y, 0.0)) > 0.01 * max(abs(scores.get(x, 0.0)), 1e-9):
            return False
    return True


def _lanes(e1, e2, question):
    """Which lane differs (for the failure message)."""
    v = e1.encoder.encode_queries([question])[0]
    out = {}
    for name, call in (("chunk_bm25", lambda e: e.index.chunk_bm25(question, 50)),
                       ("paper_bm25", lambda e: e.index.paper_bm25(question, 50)),
                       ("dense", lambda e: e.index.chunk_dense(v, 50))):
        x, y = call(e1), call(e2)
        i = next((i for i, (p, q) in enumerate(zip(x, y)) if p[0] != q[0]), None)
        out[name] = None if i is None else (i, x[i], y[i])
    return out
