"""The storage boundary (issue 26, item 1): Cypher, SQL and the database drivers stay in graph/.

Above graph/ (lit3r/ and ingest/, read with ``ast``, nothing imported) no module imports a driver
(:data:`DRIVERS`) except the few on :data:`DRIVER_IMPORTS_ALLOWED`, which tell driver classes
apart for their messages, and no string holds a Cypher statement (:data:`CYPHER`; they are
named files of ``cypher/``) or an SQL statement (:data:`SQL`; the embedded stores run them).
Docstrings are prose and are not read.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The packages above graph/ that the walk reads.
ABOVE_GRAPH = ("lit3r", "ingest")

#: Database drivers and clients: only graph/ imports them.
DRIVERS = {"neo4j", "opensearchpy", "opensearch", "sqlite3", "apsw", "psycopg", "psycopg2", "pymongo"}

#: Modules (by file name, wherever a package move puts them) that must tell driver classes apart,
#: with the reason. Everything else catches :class:`graph.errors.ServerFault` (a Lit3rError).
DRIVER_IMPORTS_ALLOWED = {
    "server_errors.py": "writes each driver error's one line (which server, why, the fix)",
    "cypher_run.py": "says ServiceUnavailable and AuthError apart from a Cypher error of `lit3r cypher`",
    "doctor.py": "says an OpenSearch ConnectionTimeout (a port that never answers) apart from its other errors",
}

#: A Cypher clause on a node or path pattern, or a clause only Cypher has.
CYPHER = re.compile(r"\b(?:OPTIONAL\s+MATCH|MATCH|MERGE|CREATE)\s*\(|\bDETACH\s+DELETE\b|\bUNWIND\s+\$|"
                    r"\bCALL\s+(?:db|dbms|apoc|gds)\.|\bSHOW\s+(?:CONSTRAINTS|INDEXES|DATABASES)\b")
#: An SQL statement (upper-case keywords, as every statement of the stores is written).
SQL = re.compile(r"\bSELECT\b[^\n]*\bFROM\b|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|"
                 r"\bDELETE\s+FROM\b|\bCREATE\s+(?:TABLE|(?:UNIQUE\s+)?INDEX|VIEW|TRIGGER)\b|\bPRAGMA\s+\w+|"
                 r"\bDROP\s+TABLE\b|\bBEGIN\s+(?:IMMEDIATE|EXCLUSIVE)\b")


def _modules() -> list[Path]:
    return sorted(p for pkg in ABOVE_GRAPH for p in (ROOT / pkg).rglob("*.py"))


def _docstrings(tree: ast.AST) -> set[int]:
    """``id()`` of the docstring nodes of a module and its classes and functions."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def driver_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, module)`` of each import of a :data:`DRIVERS` package in ``tree``."""
    found = []
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        found += [(node.lineno, n) for n in names if n.split(".")[0] in DRIVERS]
    return found


def statements(tree: ast.AST) -> list[tuple[int, str, str]]:
    """``(line, "Cypher" or "SQL", the string)`` of each string constant (f-string parts too,
    docstrings left out) that holds a statement."""
    skip, found = _docstrings(tree), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            for kind, pattern in (("Cypher", CYPHER), ("SQL", SQL)):
                if pattern.search(node.value):
                    found.append((node.lineno, kind, node.value))
    return found


def test_the_walk_reads_every_module_above_graph():
    mods = _modules()
    assert len(mods) > 100 and any(p.name == "server_errors.py" for p in mods)
    assert not any(p.is_relative_to(ROOT / "graph") for p in mods)


def test_no_driver_import_above_graph_outside_the_allow_list():
    bad = [f"{p.relative_to(ROOT)}:{line}: import {mod}" for p in _modules() if p.name not in DRIVER_IMPORTS_ALLOWED
           for line, mod in driver_imports(ast.parse(p.read_text(encoding="utf-8")))]
    assert not bad, "driver imports above graph/ (catch graph.errors.ServerFault instead):\n" + "\n".join(bad)


def test_the_allow_list_is_no_longer_than_needed():
    used = {p.name for p in _modules() if driver_imports(ast.parse(p.read_text(encoding="utf-8")))}
    assert used <= set(DRIVER_IMPORTS_ALLOWED), used - set(DRIVER_IMPORTS_ALLOWED)
    assert set(DRIVER_IMPORTS_ALLOWED) <= used, f"allowed but no longer needed: {set(DRIVER_IMPORTS_ALLOWED) - used}"


def test_no_cypher_or_sql_string_above_graph():
    bad = [f"{p.relative_to(ROOT)}:{line}: {kind}: {' '.join(text.split())[:100]}" for p in _modules()
           for line, kind, text in statements(ast.parse(p.read_text(encoding="utf-8")))]
    assert not bad, "statements above graph/ (name them in cypher/, or give a store a method):\n" + "\n".join(bad)


@pytest.mark.parametrize("source, kind", [
    ('q = "MATCH (p:Paper) RETURN count(p) AS n"', "Cypher"),
    ('q = f"MERGE (l:Lock {{id: {x}}})"', "Cypher"),
    ('q = """\nUNWIND $rows AS r\nRETURN r"""', "Cypher"),
    ('q = "SHOW CONSTRAINTS YIELD name RETURN name"', "Cypher"),
    ('rows = db.execute("SELECT paper_id, COUNT(*) FROM chunks GROUP BY paper_id")', "SQL"),
    ('con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", v)', "SQL"),
    ('con.execute("PRAGMA quick_check")', "SQL"),
])
def test_the_walk_finds_a_statement(source, kind):
    assert [k for _, k, _ in statements(ast.parse(source))] == [kind]


@pytest.mark.parametrize("source", [
    'msg = "no match: create an index (run `lit3r ingest`) and select a paper from the list"',
    'def f():\n    """MATCH (p:Paper) RETURN p, in a docstring."""',
    'hint = "the papers matched (3) were merged"',
])
def test_prose_is_not_a_statement(source):
    assert statements(ast.parse(source)) == []


@pytest.mark.parametrize("source", ["import sqlite3", "from neo4j.exceptions import AuthError",
                                    "import opensearchpy.helpers as h", "from opensearchpy import OpenSearch"])
def test_the_walk_finds_a_driver_import(source):
    assert driver_imports(ast.parse(source))


def test_a_relative_or_unrelated_import_is_no_driver_import():
    assert driver_imports(ast.parse("from . import neo4j_store\nimport neo4jish\nfrom graph.sqlite import Error")) == []


# -- the stores raise a driver error as a ServerFault with the line of before ---------------------

def _closed_port() -> int:
    """A local TCP port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def closed(tmp_path):
    """Settings of the servers backend whose Neo4j and OpenSearch are a closed local port."""
    from lit3r.config import load_settings

    port = _closed_port()
    return load_settings(home=tmp_path, backend="neo4j+opensearch", neo4j={"uri": f"bolt://127.0.0.1:{port}"},
                         opensearch={"url": f"http://127.0.0.1:{port}"})


def _raised(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the test compares what was raised
        return exc
    raise AssertionError("nothing was raised")


def test_the_neo4j_stores_raise_a_driver_error_as_a_server_fault_with_the_same_line(closed):
    import neo4j

    from graph.errors import BackendUnavailable, Lit3rError, ServerFault
    from lit3r import factory
    from lit3r.present.server_errors import server_message

    n = closed.neo4j
    driver = neo4j.GraphDatabase.driver(n.uri, auth=(n.user, n.password or ""), connection_timeout=5)
    before = _raised(driver.verify_connectivity)  # what the callers caught before the boundary closed
    driver.close()
    assert isinstance(before, neo4j.exceptions.ServiceUnavailable)
    line = server_message(closed, before)
    assert line.startswith(f"Neo4j at {n.uri} cannot be reached (") and "\n" not in line

    store = factory.neo4j_store(closed, max_transaction_retry_time=0.2)
    try:
        for call in (store.reach, store.paper_ids, lambda: store.chunks_per_paper(), store.paper_counts,
                     lambda: store.claim_load_lease("o", "who", 60000)):
            fault = _raised(call)
            assert isinstance(fault, ServerFault) and isinstance(fault, BackendUnavailable)
            assert isinstance(fault, Lit3rError) and fault.server == "Neo4j" and fault.down
            assert type(fault.cause) is type(before) and fault.__cause__ is fault.cause
            assert server_message(closed, fault) == line
        traces = factory.trace_store(closed, store)
        fault = _raised(lambda: traces.questions())
        assert isinstance(fault, ServerFault) and fault.down and server_message(closed, fault) == line
    finally:
        store.close()
    fault = _raised(lambda: factory.open_stores(closed))  # the backend's stores, opened as a command opens them
    assert isinstance(fault, ServerFault) and server_message(closed, fault) == line


def test_the_opensearch_index_raises_a_client_error_as_a_server_fault_with_the_same_line(closed):
    from opensearchpy.exceptions import ConnectionError

    from graph.errors import ServerFault
    from graph.search.opensearch import make_client
    from lit3r import factory
    from lit3r.present.server_errors import server_message

    o = closed.opensearch
    client = make_client(o.urls)
    before = _raised(lambda: client.count(index=f"{o.index_prefix}-papers"))  # the client's own error
    client.close()
    assert isinstance(before, ConnectionError)
    line = server_message(closed, before)
    assert line.startswith(f"OpenSearch at {o.url} cannot be reached (") and "\n" not in line

    index = factory.opensearch_index(closed)
    try:
        for call in (index.count, index.stored_meta, index.server_version, index.refresh,
                     lambda: index.chunk_bm25("attention heads", 5), lambda: index.bulk_mode().__enter__()):
            fault = _raised(call)
            assert isinstance(fault, ServerFault) and fault.server == "OpenSearch" and fault.down
            assert type(fault.cause) is type(before) and server_message(closed, fault) == line
    finally:
        index.close()


def test_one_request_s_fault_is_not_a_server_down():
    from neo4j.exceptions import ClientError
    from opensearchpy.exceptions import AuthorizationException, RequestError

    from graph.server_faults import NEO4J, OPENSEARCH, fault

    assert not fault(NEO4J, ClientError("Invalid input 'MATC'")).down
    assert not fault(OPENSEARCH, RequestError(400, "parsing_exception", {})).down
    assert fault(OPENSEARCH, AuthorizationException(403, "security_exception", {})).down  # no request can pass


def test_the_cli_says_a_store_s_server_fault_in_the_line_of_before(closed, tmp_path):
    """`lit3r graph papers` on the servers backend with Neo4j a closed port: exit 1 and the one
    line server_message wrote for the driver's error (lit3r.cli.Lit3rGroup)."""
    import subprocess
    import sys

    import neo4j

    from lit3r.present.server_errors import server_message

    n = closed.neo4j
    driver = neo4j.GraphDatabase.driver(n.uri, auth=(n.user, n.password or ""), connection_timeout=5)
    line = server_message(closed, _raised(driver.verify_connectivity))
    driver.close()
    (tmp_path / "config.toml").write_text(f'backend = "neo4j+opensearch"\n[neo4j]\nuri = "{n.uri}"\n'
                                          f'[opensearch]\nurl = "{closed.opensearch.url}"\n')
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(tmp_path), "graph", "papers"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1] == f"Error: {line}"
