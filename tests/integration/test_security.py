"""Security (issue 16, item 1) against a real Neo4j 5 server.

`lit3r cypher` without --write runs plain reads only (graph/cypher_guard.py: EXPLAIN, query
type, LOAD CSV, procedures, plugin functions), every read statement of cypher/ still runs, and
the test server itself refuses file URLs and blocks addresses for LOAD CSV (as docker-compose.yml
configures Neo4j). Secrets planted in the configuration file and in the environment never
appear in any output or any file the commands write.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from click.testing import CliRunner

from graph.cypher import names, statement
from graph.cypher_guard import code
from lit3r.cli import main
from tests.conftest import ROOT, SHARED

POOL = SHARED / "littraceqa" / "paper_pool_partial.jsonl"


@pytest.fixture(scope="module")
def neo(tmp_path_factory):
    """A real Neo4j 5 (tests/servers), empty, auth off; Neo4j alone (no OpenSearch needed)."""
    from tests.servers import neo4j_server

    try:
        neo4j_server.build()
        server = neo4j_server.start(tmp_path_factory.mktemp("neo4j-security"))
    except Exception as exc:
        pytest.fail(f"Neo4j could not start: {exc}")
    yield server
    server.stop()


def _runner(neo, **env: str) -> CliRunner:
    return CliRunner(env={"LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": neo.uri, "LIT3R_NEO4J__USER": "",
                          "LIT3R_NEO4J__PASSWORD": "", **env})  # `lit3r cypher` needs the Neo4j backend


def _count(neo) -> int:
    import neo4j

    with neo4j.GraphDatabase.driver(neo.uri, auth=None) as driver:
        return driver.execute_query("MATCH (n) RETURN count(n) AS n").records[0]["n"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PROCS = ("db.labels, db.relationshipTypes, db.propertyKeys, db.schema.visualization / nodeTypeProperties / "
         "relTypeProperties, db.index.fulltext.* and db.index.vector.* queries, db.info, db.ping, dbms.components, "
         "dbms.info")
LOAD = ("not a plain read: LOAD CSV reads files and URLs on the Neo4j server: pass --write to run it (the server's own "
        "file and URL settings still apply)")

REFUSED = [
    ("LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l", LOAD),
    ("load /* no */ csv FROM 'http://127.0.0.1:9/x.csv' AS l RETURN l", LOAD),
    ("MATCH (n) CALL (n) { LOAD CSV FROM 'file:///etc/hosts' AS l RETURN l } RETURN l", LOAD),
    ("CALL db.clearQueryCaches()",
     f"not a plain read: CALL db.clearQueryCaches is not one of the read-only procedures ({PROCS}): pass --write to run it"),
    ("CALL `db`.`clearQueryCaches`()",
     f"not a plain read: CALL db.clearQueryCaches is not one of the read-only procedures ({PROCS}): pass --write to run it"),
    ("CALL db.labels() YIELD label CALL dbms.listConfig() YIELD name RETURN label, name",
     f"not a plain read: CALL dbms.listConfig is not one of the read-only procedures ({PROCS}): pass --write to run it"),
    ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'",
     "not a plain read: TerminateTransactions acts on the server, not on the data: pass --write to run it"),
    ("CREATE (:Paper {paper_id: 'x'})",
     "not a plain read: the query writes (query type 'w'): pass --write to run a query that writes"),
    ("MATCH (n) DETACH DELETE n",
     "not a plain read: the query writes (query type 'w'): pass --write to run a query that writes"),
    ("CREATE INDEX probe FOR (n:Probe) ON (n.a)",
     "not a plain read: the query changes the schema or the DBMS (query type 's'): pass --write to run it"),
    # a leading PROFILE / EXPLAIN is checked as the query it profiles
    ("PROFILE CREATE (:Paper {paper_id: 'x'})",
     "not a plain read: the query writes (query type 'w'): pass --write to run a query that writes"),
    ("profile LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l", LOAD),
    ("EXPLAIN CALL db.clearQueryCaches()",
     f"not a plain read: CALL db.clearQueryCaches is not one of the read-only procedures ({PROCS}): pass --write to run it"),
    ("CALL dbms.listConfig()",
     f"not a plain read: CALL dbms.listConfig is not one of the read-only procedures ({PROCS}): pass --write to run it"),
    ("CALL dbms.components() YIELD name CREATE (:Probe {name: name})",
     "not a plain read: CALL dbms.components passes alone or with RETURN, WHERE, ORDER BY, LIMIT or UNWIND, and this "
     "query adds Create: pass --write to run it"),
    ("SHOW DATABASES", "not a plain read: AdministrationCommand acts on the server, not on the data: pass --write to run it"),
]


@pytest.mark.parametrize("query, message", REFUSED)
def test_cypher_without_write_refuses_what_is_not_a_plain_read(neo, query, message):
    res = _runner(neo).invoke(main, ["cypher", query])
    assert res.exit_code == 1 and res.output == f"Error: {message}\n", res.output
    assert _count(neo) == 0


def test_plain_reads_and_every_read_statement_run_without_write(neo):
    runner = _runner(neo)
    for query in ("CALL db.labels()", "SHOW INDEXES YIELD name RETURN name", "MATCH (n) RETURN count(n) AS n",
                  "RETURN 'LOAD CSV FROM file:///etc/passwd' AS s // LOAD CSV, CALL db.clearQueryCaches()"):
        res = runner.invoke(main, ["cypher", query])
        assert res.exit_code == 0, (query, res.output)
    params = ["ids=[\"a\"]", "paper_id=2007.14062", "from=2007.14062", "to=1706.03762", "work=attention", "limit=5",
              "min_shared=2", "batch=10", "rows=[]", "index_prefix=x"]
    args = [a for p in params for a in ("--param", p)]
    writes = re.compile(r"\b(create|merge|set|delete|remove|drop)\b")
    reads = [n for n in names() if not writes.search(code(statement(n)))]
    assert {"explore_neighbourhood", "papers", "relate_coupling", "plugin_functions"} <= set(reads)
    for name in names():
        res = runner.invoke(main, ["cypher", name, *args])
        if name in reads:
            assert res.exit_code == 0, (name, res.output)
        else:
            assert res.exit_code == 1 and res.output.startswith("Error: "), (name, res.output)
    res = runner.invoke(main, ["cypher", str(ROOT / "cypher" / "explore_neighbourhood.cypher"), *args])
    assert res.exit_code == 0, res.output
    assert _count(neo) == 0  # no write statement ran


def test_profile_explain_and_the_read_only_procedures_run_without_write(neo):
    """Issue 16: PROFILE and EXPLAIN of a plain read, dbms.components (planned as DBMS work) and
    the schema listings are plain reads; PROFILE prints the rows and the profiled plan."""
    runner = _runner(neo)
    res = runner.invoke(main, ["cypher", "PROFILE MATCH (n) RETURN count(n) AS n"])
    assert res.exit_code == 0 and "PROFILE plan (rows and db hits as run)" in res.output, res.output
    assert "NodeCountFromCountStore" in res.output and "db hits" in res.output
    res = runner.invoke(main, ["cypher", "PROFILE MATCH (n) RETURN count(n) AS n", "--json"])
    out = json.loads(res.stdout)
    assert res.exit_code == 0 and out["rows"] == [{"n": 0}] and out["plan"]["operatorType"].startswith("ProduceResults")
    res = runner.invoke(main, ["cypher", "/* plan only */ explain MATCH (n) RETURN n LIMIT 1"])
    assert res.exit_code == 0 and "EXPLAIN plan" in res.output and "AllNodesScan" in res.output, res.output
    res = runner.invoke(main, ["cypher", "CALL dbms.components()", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)[0]["name"] == "Neo4j Kernel", res.output
    for query in ("CALL dbms.components() YIELD name, versions RETURN name, versions[0] AS v ORDER BY name LIMIT 1",
                  "CALL dbms.info()", "CALL db.labels()", "CALL db.relationshipTypes()", "CALL db.propertyKeys()",
                  "CALL db.schema.visualization()", "SHOW INDEXES", "SHOW CONSTRAINTS", "SHOW PROCEDURES",
                  "PROFILE CALL db.labels()"):
        res = runner.invoke(main, ["cypher", query])
        assert res.exit_code == 0, (query, res.output)
    assert _count(neo) == 0


def test_write_runs_and_the_server_itself_confines_load_csv(neo):
    runner = _runner(neo)
    res = runner.invoke(main, ["cypher", "--write", "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l"])
    assert res.exit_code == 1 and "allow_csv_import_from_file_urls' is false" in res.output, res.output
    assert "root:" not in res.output
    res = runner.invoke(main, ["cypher", "--write", f"LOAD CSV FROM 'http://127.0.0.1:{_free_port()}/x' AS l RETURN l"])
    assert res.exit_code == 1 and "cypher_ip_blocklist" in res.output, res.output
    res = runner.invoke(main, ["cypher", "--write", "CREATE (p:Probe) RETURN count(p) AS n", "--json"])
    assert res.exit_code == 0 and json.loads(res.output) == [{"n": 1}], res.output
    res = runner.invoke(main, ["cypher", "--write", "MATCH (p:Probe) DELETE p"])
    assert res.exit_code == 0 and _count(neo) == 0, res.output


# -- secrets ---------------------------------------------------------------------------------

SECRETS = {"neo4j password (file)": "neo4j-pw-Q7x9Lq2", "llm api_key (file)": "sk-file-W4n6Tr1",
           "llm api_key (LIT3R_LLM__API_KEY)": "sk-env-M5b8Yc3", "opensearch password (env)": "os-pw-Z3m8Kd5",
           "OPENAI_API_KEY": "sk-openai-P2v5Hs8", "password in the OpenSearch URL": "url-pw-J9c3Bf6"}


class _EchoKey(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that refuses every request, quoting the key it was sent."""

    seen: list[str] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        auth = self.headers.get("authorization") or ""
        _EchoKey.seen.append(auth)
        body = json.dumps({"error": {"message": f"invalid key {auth}", "type": "invalid_request_error",
                                     "code": "invalid_api_key"}}).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def echo_llm():
    server = HTTPServer(("127.0.0.1", 0), _EchoKey)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_planted_secrets_never_appear_in_any_output_or_file(neo, echo_llm, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[neo4j]\npassword = "{SECRETS["neo4j password (file)"]}"\n'
                                      f'[llm]\napi_key = "{SECRETS["llm api_key (file)"]}"\n')
    pool = tmp_path / "pool.jsonl"
    pool.write_text("\n".join(POOL.read_text(encoding="utf-8").splitlines()[:20]) + "\n")
    base = {"LIT3R_HOME": str(home), "LIT3R_OPENSEARCH__USER": "admin",
            "LIT3R_OPENSEARCH__PASSWORD": SECRETS["opensearch password (env)"],
            "OPENAI_API_KEY": SECRETS["OPENAI_API_KEY"], "LIT3R_LLM__BASE_URL": echo_llm,
            "LIT3R_LLM__RETRIES": "0"}
    servers = {**base, "LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": neo.uri,  # auth off: any password
               "LIT3R_OPENSEARCH__URL": f"http://admin:{SECRETS['password in the OpenSearch URL']}@127.0.0.1:"
                                        f"{_free_port()}", "LIT3R_LLM__API_KEY": SECRETS["llm api_key (LIT3R_LLM__API_KEY)"]}
    question = "How much does 500xCompressor outperform ICAE?"
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "s1", "question": question}) + "\n")
    runs = [
        (base, ["ingest", "--metadata-only", "--metadata", str(pool)]),
        (base, ["doctor"]), (base, ["doctor", "--json"]), ({**base, "LIT3R_LLM__PROVIDER": "openai"}, ["doctor"]),
        (base, ["config", "show"]), (base, ["config", "show", "--json"]), (servers, ["config", "show", "--changed"]),
        (base, ["ask", question, "--json", "--llm", "openai"]), (base, ["ask", question, "--llm", "openai"]),
        ({**servers, "LIT3R_LLM__PROVIDER": "openai"}, ["doctor", "--json"]),
        (servers, ["ask", question, "--json"]),
        ({**servers, "LIT3R_NEO4J__URI": f"bolt://127.0.0.1:{_free_port()}"}, ["cypher", "RETURN 1"]),
        # a batch through the echoing LLM: submission, traces, the trace graph and the summary
        (base, ["run", "--queries", str(queries), "--out", str(tmp_path / "sub.jsonl"), "--llm", "openai"]),
    ]
    outputs = []
    for env, args in runs:
        res = CliRunner(env=env).invoke(main, args)
        outputs.append((args, res.exit_code, res.stdout + res.stderr))
    assert outputs[0][1] == 0 and outputs[7][1] == 0, outputs[0][2][-2000:] + outputs[7][2][-2000:]
    text = outputs[9][2]
    checks = {c["name"]: c for c in json.JSONDecoder().raw_decode(text, text.index("{"))[0]["checks"]}
    assert not checks["opensearch"]["ok"] and not checks["llm"]["ok"]  # the failures happened
    assert 'password = "***"' in outputs[1][2] and 'api_key = "***"' in outputs[1][2]
    assert any(SECRETS["llm api_key (file)"] in a for a in _EchoKey.seen)  # the key went out and came back
    assert outputs[-1][1] == 0 and (tmp_path / "sub.jsonl.traces.jsonl").is_file(), outputs[-1][2][-2000:]
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != home / "config.toml"]
    assert any(p.name == "manifest.json" for p in files)
    for what, value in SECRETS.items():
        for args, _, text in outputs:
            assert value not in text, f"{what} printed by `lit3r {' '.join(args)}`"
        for path in files:
            assert value.encode() not in path.read_bytes(), f"{what} written to {path}"
