"""Which Cypher ``lit3r cypher`` runs without ``--write``: plain reads, nothing else.

A read transaction alone does not make a query harmless: Neo4j runs ``LOAD CSV`` (files on the
server, any URL), procedures such as ``db.clearQueryCaches()`` and ``TERMINATE TRANSACTIONS``
inside one. So the query is ``EXPLAIN``ed first (planned, never run) and :func:`refusal` reads
the plan the server returns, which does not depend on how the query is spelled (case, comments,
whitespace, backticks):

1. ``LOAD CSV`` (a ``LoadCSV`` operator, or the clause in the query's code with comments and
   string literals removed) is refused;
2. every ``ProcedureCall`` operator must name a procedure of :data:`READ_ONLY_PROCEDURES`;
3. commands that act on the server (``TERMINATE TRANSACTIONS``, administration commands on the
   system database) are refused;
4. user-defined functions (plugins such as APOC, which can read files and URLs; their names come
   from the server, ``cypher/plugin_functions.cypher``) are refused where the plan or the code
   calls them;
5. the summary's query type must be ``r`` (``rw`` and ``w`` write, ``s`` changes the schema or
   the DBMS), or ``s`` for a plan of :data:`DBMS_INFO_PROCEDURES` calls (``dbms.components``,
   the server's version) and :data:`RESULT_OPERATORS` alone.

In Cypher, files and the network are reached only through LOAD CSV, procedures and plugin
functions: 1, 2 and 4 close them. A leading ``EXPLAIN`` or ``PROFILE`` is taken off before the
guard's own EXPLAIN (:func:`split_mode`): ``PROFILE`` of a plain read runs (and returns its
profiled plan), ``PROFILE`` of anything else is refused as that query is.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, Optional

#: Procedures that only read the database or describe the server's version (``CALL db.labels()``
#: runs without ``--write``). ``db.indexes``, ``db.constraints``, ``dbms.procedures`` and
#: ``dbms.functions`` are Neo4j 4's listings (Neo4j 5 has ``SHOW INDEXES`` etc. instead, which
#: pass as reads). Not here: anything that writes, changes the schema, kills or lists connections,
#: reads the configuration (``dbms.listConfig``, ``dbms.queryJmx``) or other users' queries
#: (``db.stats.*``).
READ_ONLY_PROCEDURES = frozenset({
    "db.labels", "db.relationshipTypes", "db.propertyKeys", "db.schema.visualization",
    "db.schema.nodeTypeProperties", "db.schema.relTypeProperties", "db.index.fulltext.queryNodes",
    "db.index.fulltext.queryRelationships", "db.index.fulltext.listAvailableAnalyzers", "db.index.vector.queryNodes",
    "db.index.vector.queryRelationships", "db.info", "db.ping", "dbms.components", "dbms.info",
    "db.indexes", "db.constraints", "dbms.procedures", "dbms.functions",
})

#: :data:`READ_ONLY_PROCEDURES` as messages name them.
READ_ONLY_SHOWN = ("db.labels, db.relationshipTypes, db.propertyKeys, db.schema.visualization / nodeTypeProperties / "
                   "relTypeProperties, db.index.fulltext.* and db.index.vector.* queries, db.info, db.ping, "
                   "dbms.components, dbms.info")

#: Read-only procedures that Neo4j plans as DBMS work (query type ``s``): such a query passes
#: when its plan holds only these calls and the operators of :data:`RESULT_OPERATORS`.
DBMS_INFO_PROCEDURES = frozenset({"dbms.components", "dbms.info"})

#: Operators that only shape the rows of a procedure's result (no data read, nothing written).
RESULT_OPERATORS = frozenset({
    "ProduceResults", "ProcedureCall", "EagerProcedureCall", "Projection", "Filter", "Limit", "Skip", "Top", "Sort",
    "PartialSort", "PartialTop", "Distinct", "OrderedDistinct", "EagerAggregation", "OrderedAggregation", "Unwind",
    "Argument", "Eager",
})

#: A leading ``EXPLAIN`` or ``PROFILE`` (after whitespace and comments), any case.
_MODE = re.compile(r"\A(?:\s+|//[^\n]*(?:\n|\Z)|/\*.*?\*/)*(explain|profile)\b", re.IGNORECASE | re.DOTALL)

#: Plan operators (without their ``@database`` part) refused whatever the query type says.
SERVER_COMMANDS = ("TerminateTransactions", "AdministrationCommand")

_FIX = "pass --write to run it"


def refusal(query: str, query_type: Optional[str], plan: Optional[dict[str, Any]],
            plugin_functions: Iterable[str] = ()) -> Optional[str]:
    """Why ``query`` may not run as a plain read, as ``"not a plain read: <why>: <fix>"``, or
    None when it may. ``query_type``: the EXPLAIN summary's (``r``, ``rw``, ``w``, ``s``);
    ``plan``: its plan (``{"operatorType", "args", "children"}``); ``plugin_functions``: the
    server's user-defined function names."""
    ops = list(_operators(plan)) if plan else []
    text = code(query)
    if any(op == "LoadCSV" for op, _ in ops) or re.search(r"\bload csv\b", text):
        return (f"not a plain read: LOAD CSV reads files and URLs on the Neo4j server: {_FIX} (the server's own "
                f"file and URL settings still apply)")
    for op, details in ops:
        if op.endswith("ProcedureCall"):  # (an eager one too)
            name = _procedure(details)
            if name not in READ_ONLY_PROCEDURES:
                return (f"not a plain read: CALL {name or '(unnamed procedure)'} is not one of the read-only "
                        f"procedures ({READ_ONLY_SHOWN}): {_FIX}")
        if op in SERVER_COMMANDS:
            return f"not a plain read: {op} acts on the server, not on the data: {_FIX}"
    called = _calls(text) | {c for _, details in ops for c in _calls(details.lower())}
    for name in plugin_functions:
        if name.lower() in called:
            return f"not a plain read: {name}() is a plugin function, which can reach files and URLs: {_FIX}"
    if query_type == "r":
        return None
    if query_type == "s" and any(op.endswith("ProcedureCall") for op, _ in ops) and \
            all(_procedure(d) in DBMS_INFO_PROCEDURES for op, d in ops if op.endswith("ProcedureCall")):
        other = sorted({op for op, _ in ops if op not in RESULT_OPERATORS})
        if not other:
            return None  # CALL dbms.components(): the server's version, planned as DBMS work
        name = next(_procedure(d) for op, d in ops if op.endswith("ProcedureCall"))
        return (f"not a plain read: CALL {name} passes alone or with RETURN, WHERE, ORDER BY, LIMIT or UNWIND, and "
                f"this query adds {other[0]}: {_FIX}")
    if query_type in ("w", "rw"):
        return f"not a plain read: the query writes (query type {query_type!r}): pass --write to run a query that writes"
    if query_type == "s":
        return f"not a plain read: the query changes the schema or the DBMS (query type 's'): {_FIX}"
    return f"not a plain read: the server did not plan it as a read (query type {query_type!r}): {_FIX}"


def split_mode(query: str) -> tuple[Optional[str], str]:
    """``("EXPLAIN" | "PROFILE" | None, the query without that keyword)``: the guard plans the
    query itself (``EXPLAIN PROFILE ...`` is no valid Cypher), and ``PROFILE`` of a plain read is
    a plain read that also returns its profiled plan."""
    m = _MODE.match(query)
    return (m.group(1).upper(), query[m.end():]) if m else (None, query)


def _procedure(details: str) -> str:
    """The procedure name of a ``ProcedureCall`` operator's details (``db.labels() :: ...``)."""
    return details.split("(", 1)[0].strip()


def _operators(plan: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """``(operator, details)`` of every node of an EXPLAIN plan, the ``@database`` part of the
    operator's name dropped."""
    args = plan.get("args") or {}
    yield str(plan.get("operatorType", "")).split("@", 1)[0], str(args.get("Details", args.get("details", "")))
    for child in plan.get("children") or []:
        yield from _operators(child)


def _calls(text: str) -> set[str]:
    """The names invoked in lower-case code text: ``apoc.text.join`` of ``apoc . text.join (``."""
    text = re.sub(r"\s*\.\s*", ".", text)
    return {m.group(1) for m in re.finditer(r"([a-z_][\w.$]*)\s*\(", text)}


def code(query: str) -> str:
    """``query`` as code only, for the checks above: comments dropped (each one a space), string
    literals emptied (``''``), backtick-quoted names unquoted, lower case, whitespace runs as one
    space. An unterminated literal or comment runs to the end."""
    out, i, n = [], 0, len(query)
    while i < n:
        ch = query[i]
        if query.startswith("//", i):
            end = query.find("\n", i)
            i = n if end < 0 else end
            out.append(" ")
        elif query.startswith("/*", i):
            end = query.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif ch in "'\"":
            j = i + 1
            while j < n and query[j] != ch:
                j += 2 if query[j] == "\\" else 1
            out.append("''")
            i = j + 1
        elif ch == "`":
            j, name = i + 1, []
            while j < n and not (query[j] == "`" and not query.startswith("``", j)):
                name.append(query[j])
                j += 2 if query.startswith("``", j) else 1
            out.append("".join(name))
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return " ".join("".join(out).lower().split())


__all__ = ["READ_ONLY_PROCEDURES", "READ_ONLY_SHOWN", "DBMS_INFO_PROCEDURES", "RESULT_OPERATORS", "SERVER_COMMANDS",
           "refusal", "code", "split_mode"]
