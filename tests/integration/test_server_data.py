"""The no-Docker servers: `python -m tests.servers` starts the real Neo4j and OpenSearch, prints the
settings to export, and Ctrl-C stops both and deletes their data; `lit3r cypher` on a Neo4j that is
not there (or on the embedded backend) names both ways to start one."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from lit3r.cli import main
from tests.conftest import ROOT

#: Seconds for both servers to build (already built: seconds) and start on a loaded machine.
START = 600


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _data_files(work: Path) -> list[Path]:
    """Files under ``work`` other than the servers' own output logs."""
    return [p for p in work.rglob("*") if p.is_file() and p.name not in ("neo4j-server.log", "opensearch.log")]


def _fill(neo_uri: str, os_url: str) -> None:
    import neo4j
    from opensearchpy import OpenSearch

    with neo4j.GraphDatabase.driver(neo_uri, auth=None) as driver:
        driver.execute_query("UNWIND range(1, 2000) AS i CREATE (:Paper {paper_id: toString(i), title: 'a title'})")
    client = OpenSearch(os_url)
    client.indices.create(index="lit3r-data-check", body={"settings": {"number_of_replicas": 0}})
    for i in range(50):
        client.index(index="lit3r-data-check", id=str(i), body={"text": "some chunk text " * 20})
    client.indices.refresh(index="lit3r-data-check")
    client.indices.flush(index="lit3r-data-check")
    client.close()


def test_python_m_tests_servers_runs_both_and_ctrl_c_deletes_their_data(tmp_path):
    work = tmp_path / "servers"
    proc = subprocess.Popen([sys.executable, "-m", "tests.servers", str(work)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("export LIT3R_BACKEND=neo4j+opensearch "), (line, proc.stderr.read()[-2000:]
                                                                           if proc.poll() is not None else "")
        settings = dict(re.findall(r"(LIT3R_\w+)=(\S*)", line))
        assert "lit3r browser" in proc.stdout.readline()
        _fill(settings["LIT3R_NEO4J__URI"], settings["LIT3R_OPENSEARCH__URL"])
        assert _size(work / "opensearch" / "opensearch-data") > 10_000  # not vacuous: both hold data
        assert _size(work / "neo4j") > 10_000
        began = time.monotonic()
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        assert proc.wait(timeout=180) == 0, proc.stderr.read()[-2000:]
        print(f"stopped in {time.monotonic() - began:.1f} s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert not (work / "opensearch" / "opensearch-data").exists()
    assert _data_files(work) == []  # Neo4j's harness folder went too; only the two output logs stay
    # the Neo4j that was there is gone: `lit3r cypher` says how to start one, both ways
    env = {"LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": settings["LIT3R_NEO4J__URI"],
           "LIT3R_NEO4J__USER": "", "LIT3R_OPENSEARCH__URL": settings["LIT3R_OPENSEARCH__URL"]}
    res = CliRunner(env=env).invoke(main, ["--home", str(tmp_path / "home"), "cypher", "RETURN 1"])
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, res.output
    assert "cannot be reached" in res.output and "docker compose up -d neo4j" in res.output
    assert "python -m tests.servers" in res.output


def test_cypher_on_the_embedded_backend_names_both_ways_to_start_neo4j(tmp_path):
    env = {k: None for k in os.environ if k.startswith("LIT3R_")}  # unset
    res = CliRunner(env={**env, "LIT3R_BACKEND": "embedded"}).invoke(
        main, ["--home", str(tmp_path), "cypher", "RETURN 1"])
    assert res.exit_code == 1, res.output
    assert "docker compose up -d" in res.output and "python -m tests.servers" in res.output
