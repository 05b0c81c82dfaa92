"""The Cypher guard (graph/cypher_guard.py) on plans shaped like Neo4j 5.26's EXPLAIN plans;
tests/integration/test_security.py runs it against a real server."""

from __future__ import annotations

import pytest

from graph.cypher_guard import DBMS_INFO_PROCEDURES, READ_ONLY_PROCEDURES, code, refusal, split_mode


def plan(*ops: tuple[str, str]) -> dict:
    """A linear plan, the first operator on top: ``("ProcedureCall", "db.labels() :: ...")``."""
    node: dict = {}
    for op, details in reversed(ops):
        node = {"operatorType": f"{op}@neo4j", "args": {"Details": details}, "children": [node] if node else []}
    return node


READ = plan(("ProduceResults", "n"), ("AllNodesScan", "n"))


def test_code_drops_comments_and_literals_whatever_the_spelling():
    assert code("MATCH (n) // LOAD CSV\nRETURN n") == "match (n) return n"
    assert code("LOAD/*x*/CSV FROM 'file:///etc/passwd' AS l") == "load csv from '' as l"
    assert code('RETURN "it\'s // not a comment \\" LOAD CSV" AS s') == "return '' as s"
    assert code("CALL `db`.`clear``Caches`()") == "call db.clear`caches()"
    assert code("RETURN 'open") == "return ''"           # unterminated: to the end
    assert code("RETURN 1 /* open") == "return 1"


@pytest.mark.parametrize("query, query_type, ops, expect", [
    ("LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l", "r", [("ProduceResults", "l"), ("LoadCSV", "l")],
     "LOAD CSV reads files and URLs"),
    ("load /* */ csv from $u as l return l", "r", [("ProduceResults", "l")], "LOAD CSV reads files and URLs"),
    ("CALL db.clearQueryCaches()", "s", [("ProcedureCall", "db.clearQueryCaches() :: (value :: STRING)")],
     "CALL db.clearQueryCaches is not one of the read-only procedures"),
    ("CALL db.awaitIndexes()", "r", [("ProcedureCall", "db.awaitIndexes() :: ()")],
     "CALL db.awaitIndexes is not one of"),
    ("TERMINATE TRANSACTIONS 'x'", "r", [("TerminateTransactions", "transactions(x)")],
     "TerminateTransactions acts on the server"),
    ("CREATE (n)", "w", [("Create", "(n)")], "the query writes (query type 'w'): pass --write to run a query that writes"),
    ("MATCH (n) SET n.a = 1 RETURN n", "rw", [("SetProperty", "n.a = $autoint_0")], "query type 'rw'"),
    ("CREATE INDEX i FOR (n:X) ON (n.a)", "s", [("CreateIndex", "RANGE INDEX i")], "changes the schema or the DBMS"),
    ("MATCH (n) RETURN n", None, [("ProduceResults", "n")], "did not plan it as a read (query type None)"),
])
def test_refused_with_one_line_that_names_the_fix(query, query_type, ops, expect):
    why = refusal(query, query_type, plan(*ops))
    assert why is not None and why.startswith("not a plain read: ") and expect in why and "--write" in why
    assert "\n" not in why


def test_plain_reads_pass():
    assert refusal("MATCH (n) RETURN n", "r", READ) is None
    assert refusal("RETURN 'LOAD CSV FROM file:///etc/passwd' AS s // LOAD CSV", "r", READ) is None
    for name in READ_ONLY_PROCEDURES:
        assert refusal(f"CALL {name}()", "r", plan(("ProcedureCall", f"{name}() :: (x :: STRING)"))) is None
    assert refusal("SHOW INDEXES", "r", plan(("ShowIndexes", "allIndexes"))) is None


def test_plugin_functions_are_refused_however_they_are_written():
    plugins = ["apoc.text.join", "apoc.load.jsonParams"]
    for query in ("RETURN apoc.text.join(['a'], ',')", "RETURN `apoc`.`text`.`join`(['a'], ',')",
                  "RETURN APOC . text /* x */ . join (['a'], ',')"):
        why = refusal(query, "r", READ, plugins)
        assert why is not None and "apoc.text.join() is a plugin function" in why, query
    # in the plan only (the server resolved it), and not when only a string mentions it
    projection = plan(("Projection", "apoc.load.jsonParams($autostring_0, $m, $n) AS x"))
    assert "apoc.load.jsonParams()" in (refusal("RETURN f(1) AS x", "r", projection, plugins) or "")
    assert refusal("RETURN 'apoc.text.join(1)' AS s", "r", READ, plugins) is None


def test_a_leading_explain_or_profile_is_split_off_for_the_guard():
    assert split_mode("PROFILE MATCH (n) RETURN count(n)") == ("PROFILE", " MATCH (n) RETURN count(n)")
    assert split_mode("  // why\n /* plan */ explain MATCH (n) RETURN n") == ("EXPLAIN", " MATCH (n) RETURN n")
    assert split_mode("MATCH (profile) RETURN profile") == (None, "MATCH (profile) RETURN profile")
    assert split_mode("PROFILED") == (None, "PROFILED")  # a word, not the keyword


def test_dbms_information_procedures_pass_alone_and_nothing_rides_along():
    """Neo4j plans CALL dbms.components() as DBMS work (query type 's'): it passes when the plan
    holds only such calls and operators that shape their rows."""
    for name in DBMS_INFO_PROCEDURES:
        assert refusal(f"CALL {name}()", "s", plan(("ProduceResults", "name"), ("ProcedureCall", f"{name}() :: (x)"))) \
            is None
    shaped = plan(("ProduceResults", "name, v"), ("Projection", "versions[0] AS v"), ("Top", "name ASC LIMIT 1"),
                  ("ProcedureCall", "dbms.components() :: (name :: STRING, versions :: LIST<STRING>)"))
    assert refusal("CALL dbms.components() YIELD name, versions RETURN name, versions[0] AS v ORDER BY name LIMIT 1",
                   "s", shaped) is None
    create = plan(("ProduceResults", ""), ("EmptyResult", ""), ("Create", "(n:X {name: name})"),
                  ("ProcedureCall", "dbms.components() :: (name :: STRING)"))
    why = refusal("CALL dbms.components() YIELD name CREATE (n:X {name: name})", "s", create)
    assert why == ("not a plain read: CALL dbms.components passes alone or with RETURN, WHERE, ORDER BY, LIMIT or "
                   "UNWIND, and this query adds Create: pass --write to run it")
    config = plan(("ProduceResults", "name"), ("ProcedureCall", "dbms.listConfig() :: (name :: STRING)"))
    assert "CALL dbms.listConfig is not one of the read-only procedures" in (refusal("CALL dbms.listConfig()", "s",
                                                                                       config) or "")
    assert "changes the schema or the DBMS" in (refusal("CREATE INDEX i FOR (n:X) ON (n.a)", "s",
                                                         plan(("CreateIndex", "RANGE INDEX i"))) or "")
