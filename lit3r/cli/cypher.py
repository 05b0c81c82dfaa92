"""``lit3r cypher``: run Cypher on the Neo4j store (a query, a .cypher file or a named statement
of ``cypher/``), list the named statements, fail fast and in one line when Neo4j is not there.

- On the embedded backend it stops at once: Cypher needs the Neo4j backend (the message says
  how to start one); ``lit3r graph`` answers the exploration questions on both backends.
- The server is reached once (``verify_connectivity``, :data:`CONNECT_TIMEOUT` seconds at most)
  before any query, so an unreachable server is one line, not the driver's transaction retries.
- A named statement takes the defaults of its header (``$limit=25``; :func:`graph.cypher.info`);
  one whose required parameters are missing is refused before anything is sent; a word that is
  no statement name is "unknown statement NAME; did you mean ...", not a Cypher syntax error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional

import click

from graph.cypher_guard import split_mode
from lit3r.cli.params import CYPHER_PARAM, OneLineUsageError
from lit3r.cli.tables import echo_table
from lit3r.server_errors import NO_DOCKER, start_hint

#: Seconds to wait for the Neo4j server to answer the first connection.
CONNECT_TIMEOUT = 4.0

#: What ``lit3r cypher`` says on the embedded backend.
NEEDS_NEO4J = ("Cypher needs the Neo4j backend, and this configuration uses the embedded one (use `lit3r graph` "
               "to explore it): start Neo4j and OpenSearch with `NEO4J_PASSWORD=... docker compose up -d` in the "
               "Lit3R repo (docker-compose.yml) or " + NO_DOCKER + ", set backend = \"neo4j+opensearch\" and "
               "neo4j.uri / user / password "
               "(or LIT3R_BACKEND=neo4j+opensearch LIT3R_NEO4J__URI=bolt://localhost:7687 LIT3R_NEO4J__USER=neo4j "
               "LIT3R_NEO4J__PASSWORD=...), then load it with `lit3r ingest PDF_DIR`")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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


def plan_rows(plan: dict[str, Any], depth: int = 0) -> list[dict[str, Any]]:
    """An EXPLAIN or PROFILE plan (the driver's ``{"operatorType", "args", "children", ...}``)
    as table rows, depth first, each operator indented two spaces per level: ``{"operator",
    "details", "estimated rows", "rows", "db hits"}`` (the last two None for EXPLAIN)."""
    args = plan.get("args") or {}
    est = args.get("EstimatedRows")
    row = {"operator": "  " * depth + str(plan.get("operatorType", "")).split("@", 1)[0],
           "details": args.get("Details", ""), "estimated rows": round(est) if isinstance(est, (int, float)) else est,
           "rows": plan.get("rows", args.get("Rows")), "db hits": plan.get("dbHits", args.get("DbHits"))}
    return [row, *(r for child in plan.get("children") or [] for r in plan_rows(child, depth + 1))]


def resolve(query_or_file: str, values: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(query, parameters)`` for the argument of ``lit3r cypher``: a .cypher file's text, a
    named statement with its header defaults under ``values``, or the Cypher itself. Raises
    ClickException for an unreadable file, an unknown name, or missing parameters."""
    from graph.cypher import info, names, statement, suggestions

    path = Path(query_or_file)
    if path.suffix == ".cypher":
        try:
            return path.read_text(encoding="utf-8"), values
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise click.ClickException(f"{path}: cannot be read ({why}): pass a UTF-8 .cypher file") from None
    name = query_or_file.strip()
    if name in names():
        i = info(name)
        missing = [k for k in i.required if k not in values]
        if missing:
            how = " ".join(f"--param {k}=VALUE" for k in missing)
            raise click.ClickException(f"statement {name} needs {', '.join('$' + k for k in missing)}: pass {how} "
                                       f"(`lit3r cypher --list` shows every statement's parameters)")
        return statement(name), {**i.defaults(), **values}
    if _NAME.fullmatch(name):
        close = suggestions(name)
        hint = f"; did you mean {', '.join(close)}?" if close else ": no statement has a name like it"
        raise click.ClickException(f"unknown statement {name}{hint} (`lit3r cypher --list` lists them)")
    return query_or_file, values


@click.command()
@click.argument("query_or_file", required=False)
@click.option("--param", "params", type=CYPHER_PARAM, multiple=True,
              help="A query parameter ($KEY): integers, true/false/null and JSON lists/maps are parsed; "
                   "anything else (paper ids such as 2007.14062 too) stays a string.")
@click.option("--write", is_flag=True, help="Run it in a write transaction, unchecked. Without it only a plain read "
              "runs: the query is EXPLAINed first, and writes, LOAD CSV, procedures other than read-only ones "
              "(db.labels, ...) and plugin functions are refused (graph/cypher_guard.py).")
@click.option("--json", "as_json", is_flag=True, help="Print rows as JSON (for EXPLAIN / PROFILE: {rows, plan}).")
@click.option("--limit", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Print at most this many rows (the rest are not read from the server).")
@click.option("--list", "list_", is_flag=True, help="List the named statements with their parameters (defaults "
              "after =) and purpose, and exit.")
@click.pass_context
def cypher(ctx: click.Context, query_or_file: Optional[str], params: tuple[tuple[str, Any], ...], write: bool,
           as_json: bool, limit: int, list_: bool) -> None:
    """Run Cypher on the Neo4j store: a query, a .cypher file, or the name of a statement in the
    cypher/ folder (e.g. explore_neighbourhood --param paper_id=2007.14062; --list shows them)."""
    from lit3r.cli import _clean, _server_errors, _server_message, _settings

    if list_:
        rows = statement_list()
        click.echo(json.dumps(rows, indent=2)) if as_json else echo_table(rows)
        return
    if query_or_file is None or not query_or_file.strip():
        raise OneLineUsageError("the query is empty: pass Cypher, a .cypher file or a statement name "
                                "(`lit3r cypher --list` lists the statements)")
    settings = _settings(ctx)
    if "neo4j" not in settings.backend:
        raise click.ClickException(NEEDS_NEO4J)
    query, values = resolve(query_or_file, dict(params))
    from neo4j.exceptions import AuthError, ServiceUnavailable

    from lit3r.factory import neo4j_store

    store = neo4j_store(settings, connection_timeout=CONNECT_TIMEOUT)
    try:
        try:
            store.driver.verify_connectivity()  # one attempt: no transaction retries against a missing server
        except ServiceUnavailable as exc:
            raise click.ClickException(unreachable(settings.neo4j.uri, exc)) from None
        plans: list = []  # the plan of an EXPLAIN or PROFILE query
        rows = (store.run_write if write else store.run_plain_read)(query, values, limit + 1, plans)  # plain: EXPLAINed
    except _server_errors() as exc:  # credentials, syntax, a write in a read transaction
        if isinstance(exc, (ServiceUnavailable, AuthError)):
            raise click.ClickException(_server_message(settings, exc)) from None
        msg = _clean(exc, 300) or type(exc).__name__
        hint = " (writes need --write)" if "write" in msg.lower() and not write else ""
        raise click.ClickException(f"Cypher failed on {settings.neo4j.uri}: {msg}{hint}") from None
    finally:
        store.close()
    more = len(rows) > limit
    rows = rows[:limit]
    mode = split_mode(query)[0]
    if as_json:
        out: Any = {"rows": rows, "plan": plans[0] if plans else None} if mode else rows
        click.echo(json.dumps(out, indent=2, ensure_ascii=False, default=str))
    else:
        if mode != "EXPLAIN":  # EXPLAIN plans without running: no rows
            echo_table(rows)
        if plans:
            echo_table(plan_rows(plans[0]), f"{mode} plan" + (" (rows and db hits as run)" if mode == "PROFILE" else ""))
    if more:
        click.echo(f"(more than {limit} rows: only the first {limit} are shown; pass --limit N for more)", err=True)
