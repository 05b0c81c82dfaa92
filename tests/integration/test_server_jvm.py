"""The test servers on the JDKs tests/servers/jvm.py chooses: OpenJDK 17 alone (a machine without a
newer JDK), and the newest installed JDK with the full JIT and Lucene's vector API."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.servers import jvm, neo4j_server, opensearch_server


def _openjdk17_alone(tmp_path: Path) -> Path:
    """A JVM root holding only the installed OpenJDK 17 (as on a machine where it is the only JDK)."""
    homes = [Path(j.java).parents[1] for j in jvm.installed() if j.version == 17]
    if not homes:
        pytest.fail(f"no OpenJDK 17 in {jvm.JVM_ROOT}: install openjdk-17-jdk-headless (the oldest JDK the "
                    f"test servers support, checked here)")
    root = tmp_path / "jvms"
    root.mkdir()
    (root / homes[0].name).symlink_to(homes[0])
    return root


def _knn_top(url: str) -> list[str]:
    from opensearchpy import OpenSearch, helpers

    client = OpenSearch(url, timeout=120)
    client.indices.create(index="jvm-check", body={
        "settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0}},
        "mappings": {"properties": {"vector": {"type": "knn_vector", "dimension": 4, "method": {
            "name": "hnsw", "engine": "lucene", "space_type": "innerproduct"}}}}})
    vectors = {"a": [1, 0, 0, 0], "b": [0, 1, 0, 0], "c": [0.8, 0.6, 0, 0], "d": [0, 0, 1, 0]}
    helpers.bulk(client, [{"_index": "jvm-check", "_id": k, "_source": {"vector": v}} for k, v in vectors.items()],
                 refresh="true")
    res = client.search(index="jvm-check", body={"size": 2, "query": {"knn": {"vector": {
        "vector": [0.9, 0.1, 0, 0], "k": 2}}}})
    client.close()
    return [h["_id"] for h in res["hits"]["hits"]]


def _cypher(uri: str) -> list[tuple[str, str]]:
    import neo4j

    with neo4j.GraphDatabase.driver(uri, auth=None) as driver:
        driver.execute_query("CREATE (:Paper {paper_id: 'p1'})-[:CITES]->(:Work {work_id: 'w1'})")
        records, _, _ = driver.execute_query("MATCH (p:Paper)-[:CITES]->(w:Work) RETURN p.paper_id AS p, w.work_id AS w")
    return [(r["p"], r["w"]) for r in records]


def _java_of(pid: int) -> str:
    return (Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]).decode()


def test_both_servers_start_on_openjdk_17_alone_and_answer_knn_and_cypher(tmp_path, monkeypatch):
    root = _openjdk17_alone(tmp_path)
    for name in ("TEST_SERVERS_JAVA_HOME", "OPENSEARCH_JAVA", "OPENSEARCH_JAVA_OPTS", "TEST_SERVERS_FULL_JIT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEST_SERVERS_JVM_ROOT", str(root))
    java17 = jvm.choose().java
    assert jvm.choose().version == 17
    neo4j_server.build()
    opensearch_server.build()
    # Neo4j as the tests run it (C1); OpenSearch as the load benches do (the full JIT: no vector flags on 17)
    with neo4j_server.start(tmp_path / "neo4j", timeout=240) as neo, \
            opensearch_server.start(tmp_path / "opensearch", timeout=300, full_jit=True) as osr:
        assert Path(_java_of(neo.process.pid)).resolve() == Path(java17).resolve()
        assert Path(_java_of(osr.proc.pid)).resolve() == Path(java17).resolve()
        assert "jdk.incubator.vector" not in Path(f"/proc/{osr.proc.pid}/cmdline").read_bytes().decode()
        assert _cypher(neo.uri) == [("p1", "w1")]
        assert _knn_top(osr.url) == ["a", "c"]


def test_the_newest_jdk_with_the_full_jit_turns_lucenes_vector_api_on(tmp_path, monkeypatch):
    for name in ("TEST_SERVERS_JAVA_HOME", "OPENSEARCH_JAVA", "OPENSEARCH_JAVA_OPTS"):
        monkeypatch.delenv(name, raising=False)
    jdk = jvm.choose()
    opensearch_server.build()
    with opensearch_server.start(tmp_path / "opensearch", timeout=300, full_jit=True) as osr:
        assert _knn_top(osr.url) == ["a", "c"]
        log = osr.log_path.read_text(errors="replace")
    # Lucene logs which vector code it runs once its first vector is indexed or searched
    if jdk.version is not None and jdk.version >= jvm.VECTOR_API_FROM:
        assert "Java vector incubator API enabled" in log, log[-3000:]
    else:
        assert "Java vector incubator API enabled" not in log
