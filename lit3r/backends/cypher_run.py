"""Running Cypher on the Neo4j store under the read-only guard: what ``lit3r cypher`` and the
MCP ``cypher`` tool share (the CLI prints, the MCP server returns the rows).

- On the embedded backend nothing runs: :data:`NEEDS_NEO4J` says how to start Neo4j
  (``lit3r graph`` answers the exploration questions on both backends).
- The server is reached once (``Neo4jGraphStore.reach``) before any query, so an unreachable
  server is one line, not the driver's transaction retries.
- Without ``write`` only a plain read runs: the query is EXPLAINed first, and writes, LOAD CSV,
  procedures other than read-only ones and plugin functions are refused
  (:mod:`graph.cypher_guard`, :class:`lit3r.errors.CypherRefused`).
- A named statement of ``cypher/`` takes the defaults of its header (``$limit=25``;
  :func:`graph.cypher.info`); one whose required parameters are missing is refused before
  anything is sent; a word that is no statement name is "unknown statement NAME; did you
  mean ...", not a Cypher syntax error.

Every failure is a :class:`lit3r.errors.Lit3rError` whose message is one line with its fix.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graph.errors import ServerFault
from lit3r.backends import backend_of
from lit3r.errors import CypherFailed, clean_line
from lit3r.present.server_errors import NO_DOCKER, server_errors, server_message, start_hint

if TYPE_CHECKING:
    from graph.neo4j_store import Neo4jGraphStore
    from lit3r.config import Settings

#: Seconds to wait for the Neo4j server to answer the first connection.
CONNECT_TIMEOUT = 4.0

#: What ``lit3r cypher`` (and the MCP ``cypher`` tool) says on the embedded backend.
NEEDS_NEO4J = ("Cypher needs the Neo4j backend, and this configuration uses the embedded one (use `lit3r graph` "
               "to explore it): start Neo4j and OpenSearch with `NEO4J_PASSWORD=... docker compose up -d` in the "
               "Lit3R repo (docker-compose.yml) or " + NO_DOCKER + ", set backend = \"neo4j+opensearch\" and "
               "neo4j.uri / user / password "
               "(or LIT3R_BACKEND=neo4j+opensearch LIT3R_NEO4J__URI=bolt://localhost:7687 LIT3R_NEO4J__USER=neo4j "
               "LIT3R_NEO4J__PASSWORD=...), then load it with `lit3r ingest PDF_DIR`")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def runs_cypher(settings: "Settings") -> bool:
    """Whether the configured backend has a Neo4j store Cypher can run on (its ``runs_cypher``)."""
    return backend_of(settings).runs_cypher


def unreachable(uri: str, exc: BaseException) -> str:
    """One line for a Neo4j server that cannot be reached: the reason and what to do."""
    text = " ".join(str(exc).split())
    last = " ".join((str(exc).strip().splitlines() or [""])[-1].split())  # the driver's last attempt
    m = re.search(r"reason (\[Errno -?\d+\] [^)]*)", text)
    why = m.group(1) if m else (last[:200] or type(exc).__name__)
    return (f"Neo4j at {uri} cannot be reached ({why}): {start_hint('neo4j')} "
            f"or set neo4j.uri / LIT3R_NEO4J__URI to a running server")


def statement_list() -> list[dict]:
    """Every named statement: ``{name, parameters, purpose}`` (parameters as ``name`` or
    ``name=default``), by name."""
    from graph.cypher import info, names

    rows = []
    for n in names():
        i = info(n)
        params = ", ".join(k if k in i.required else f"{k}={json.dumps(v)}" for k, v in i.params.items())
        rows.append({"name": n, "parameters": params or "-", "purpose": i.purpose})
    return rows


def resolve(query_or_file: str, values: dict[str, Any], how: str = "--param {}=VALUE",
            files: bool = True) -> tuple[str, dict[str, Any]]:
    """``(query, parameters)``: a .cypher file's text (``files``), a named statement with its
    header defaults under ``values``, or the Cypher itself; ``how``: how the caller passes a
    parameter, for the missing-parameter line. Raises CypherFailed for an unreadable file, an
    unknown name, or missing parameters."""
    from graph.cypher import info, names, statement, suggestions

    path = Path(query_or_file)
    if files and path.suffix == ".cypher":
        try:
            return path.read_text(encoding="utf-8"), values
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise CypherFailed(f"{path}: cannot be read ({why}): pass a UTF-8 .cypher file") from None
    name = query_or_file.strip()
    if name in names():
        i = info(name)
        missing = [k for k in i.required if k not in values]
        if missing:
            pass_them = " ".join(how.format(k) for k in missing)
            raise CypherFailed(f"statement {name} needs {', '.join('$' + k for k in missing)}: pass {pass_them} "
                               f"(`lit3r cypher --list` shows every statement's parameters)")
        return statement(name), {**i.defaults(), **values}
    if _NAME.fullmatch(name):
        close = suggestions(name)
        hint = f"; did you mean {', '.join(close)}?" if close else ": no statement has a name like it"
        raise CypherFailed(f"unknown statement {name}{hint} (`lit3r cypher --list` lists them)")
    return query_or_file, values


def connect(settings: "Settings") -> "Neo4jGraphStore":
    """A Neo4j store over the configured database, reached once: CypherFailed (with the fix) on
    the embedded backend or when the server cannot be reached."""
    if not runs_cypher(settings):
        raise CypherFailed(NEEDS_NEO4J)
    from neo4j.exceptions import ServiceUnavailable

    from lit3r.factory import neo4j_store

    store = neo4j_store(settings, connection_timeout=CONNECT_TIMEOUT)
    try:
        store.reach()  # one attempt: no transaction retries against a missing server
    except ServerFault as exc:
        store.close()
        if isinstance(exc.cause, ServiceUnavailable):
            raise CypherFailed(unreachable(settings.neo4j.uri, exc.cause)) from None
        raise _failed(settings, exc, False) from None  # credentials
    except BaseException:
        store.close()
        raise
    return store


def run_cypher(store: "Neo4jGraphStore", settings: "Settings", query: str, values: dict[str, Any], limit: int,
               write: bool = False) -> tuple[list[dict], list[dict]]:
    """``(rows, plans)``: at most ``limit`` rows of ``query`` (a plain read under the guard;
    ``write``: a write transaction, unchecked) and the plan of an EXPLAIN or PROFILE query.
    Raises CypherRefused for a refused statement and CypherFailed for the server's errors
    (credentials, syntax, a write in a read transaction), each one line with its fix."""
    plans: list = []
    try:
        rows = (store.run_write if write else store.run_plain_read)(query, values, limit, plans)  # plain: EXPLAINed
    except server_errors() as exc:
        raise _failed(settings, exc, write) from None
    return rows, plans


def _failed(settings: "Settings", exc: BaseException, write: bool) -> CypherFailed:
    """The one line of a driver error (a ServerFault's ``cause``): the server's message for an
    unreachable server or bad credentials, else ``Cypher failed on URI: ...`` (with a hint for a
    refused write). ServiceUnavailable and AuthError are told apart here: this module is on
    ``DRIVER_IMPORTS_ALLOWED`` of ``tests/unit/test_boundary.py``."""
    from neo4j.exceptions import AuthError, ServiceUnavailable

    if isinstance(exc, ServerFault):
        exc = exc.cause
    if isinstance(exc, (ServiceUnavailable, AuthError)):
        return CypherFailed(server_message(settings, exc))
    msg = clean_line(exc, 300) or type(exc).__name__
    hint = " (writes need --write)" if "write" in msg.lower() and not write else ""
    return CypherFailed(f"Cypher failed on {settings.neo4j.uri}: {msg}{hint}")
