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
   the DBMS).

In Cypher, files and the network are reached only through LOAD CSV, procedures and plugin
functions: 1, 2 and 4 close them.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, Optional

#: Procedures that only read the database (``CALL db.labels()`` runs without ``--write``).
READ_ONLY_PROCEDURES = frozenset({
    "db.labels", "db.relationshipTypes", "db.propertyKeys", "db.schema.visualization",
    "db.schema.nodeTypeProperties", "db.schema.relTypeProperties", "db.index.fulltext.queryNodes",
    "db.index.fulltext.queryRelationships", "db.index.vector.queryNodes", "db.index.vector.queryRelationships",
    "db.info", "db.ping",
})

#: :data:`READ_ONLY_PROCEDURES` as messages name them.
READ_ONLY_SHOWN = ("db.labels, db.relationshipTypes, db.propertyKeys, db.schema.visualization / nodeTypeProperties / "
                   "relTypeProperties, db.index.fulltext.* and db.index.vector.* queries, db.info, db.ping")

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
            name = details.split("(", 1)[0].strip()
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
    if query_type in ("w", "rw"):
        return f"not a plain read: the query writes (query type {query_type!r}): pass --write to run a query that writes"
    if query_type == "s":
        return f"not a plain read: the query changes the schema or the DBMS (query type 's'): {_FIX}"
    return f"not a plain read: the server did not plan it as a read (query type {query_type!r}): {_FIX}"


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


__all__ = ["READ_ONLY_PROCEDURES", "READ_ONLY_SHOWN", "SERVER_COMMANDS", "refusal", "code"]
