"""Integration fixtures: real data, one built 10-paper corpus shared by the modules."""

import os
import subprocess
import sys

import pytest

from tests.conftest import CORPUS, ROOT

#: A 10-paper subset: gold papers of six single-paper dev questions plus related papers.
SUBSET = ["2309.06275", "2406.08177", "2501.12948", "2501.10120", "2309.09117", "1706.03762", "2007.14062",
          "2006.04768", "2201.11903", "2511.11007"]


@pytest.fixture(autouse=True)
def _needs_shared_data(shared_data):
    """Every integration test reads ../shared/data: fail with one clear message without it."""
    return shared_data


@pytest.fixture(scope="session")
def subset_ingest(shared_data, tmp_path_factory):
    """``(home, run)``: a data folder with the SUBSET ingested and built by a real `lit3r ingest`
    run, and that run (``subprocess.CompletedProcess``: its stdout and stderr were pipes, not a
    terminal)."""
    pdfs = tmp_path_factory.mktemp("pdfs")
    for pid in SUBSET:
        os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
    home = tmp_path_factory.mktemp("home")
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), "--metadata",
                          str(CORPUS / "manifest.jsonl"), "--no-images"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "10 paper(s)" in res.stdout and "10 paper(s) encoded" in res.stdout
    return home, res


@pytest.fixture(scope="session")
def hashing_home(shared_data, tmp_path_factory):
    """A data folder with two papers (1706.03762, 2007.14062) ingested and built by a real
    `lit3r ingest` with the model-free hashing:64 encoder (its config.toml says so): seconds to
    build. Shared: a test that changes it works on a copy (``shutil.copytree``)."""
    pdfs, home = tmp_path_factory.mktemp("hashing-pdfs"), tmp_path_factory.mktemp("hashing-home")
    for pid in ("1706.03762", "2007.14062"):
        os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
    (home / "config.toml").write_text('[models]\nchunk_encoder = "hashing:64"\npaper_encoder = "hashing:64"\n')
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), "--no-images"],
                         cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0 and "2 paper(s) encoded" in res.stdout, res.stderr[-2000:]
    return home


@pytest.fixture(scope="session")
def subset_home(subset_ingest):
    """A data folder with the SUBSET ingested and built by a real `lit3r ingest` run."""
    return subset_ingest[0]


def server_settings(home, servers, prefix: str, **extra):
    """Settings of the servers backend over ``home`` with OpenSearch indices ``<prefix>-*``."""
    from lit3r.config import load_settings

    neo, osr = servers
    return load_settings(home=home, backend="neo4j+opensearch", neo4j={"uri": neo.uri, "user": None, "password": None},
                         opensearch={"url": osr.url, "index_prefix": prefix, **extra})


@pytest.fixture(scope="session")
def subset_records(subset_home):
    """``(papers, chunks, references, neighbours, vectors)`` of the built subset: records as
    stored, SIMILAR_TO edges and the chunk vectors (rows in ``chunks`` order)."""
    from graph.embedded import EmbeddedGraphStore
    from graph.search.embedded import DB_NAME, EmbeddedSearchIndex
    from ingest.corpus import load_corpus

    papers, chunks, refs = load_corpus(subset_home)
    graph = EmbeddedGraphStore.open(subset_home / "index" / DB_NAME)
    neighbours = [n for p in papers for n in graph.neighbours_of(p.paper_id)]
    vectors = EmbeddedSearchIndex.open(subset_home / "index").vectors_of([c.chunk_id for c in chunks])
    return papers, chunks, refs, neighbours, vectors


def move_corpus(neo) -> None:
    """Let the Neo4j corpus be loaded with another OpenSearch index prefix next (what
    ``lit3r.backends.servers.MOVE_HINT`` tells users to run)."""
    from graph.neo4j_store import Neo4jGraphStore, connect

    store = Neo4jGraphStore(connect(neo.uri))
    try:
        store.run_write("MATCH (m:Lit3rCorpus) DELETE m", {})
    finally:
        store.close()


def send_json(handler, code: int, payload, headers: dict | None = None) -> None:
    """Write ``payload`` as a JSON response with status ``code`` (and extra ``headers``) from a
    ``BaseHTTPRequestHandler``: the misbehaving OpenAI-compatible servers of the tests."""
    import json

    data = json.dumps(payload).encode()
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)
