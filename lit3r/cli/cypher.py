"""``lit3r cypher``: run Cypher on the Neo4j store (a query, a .cypher file or a named statement
of ``cypher/``), list the named statements, fail fast and in one line when Neo4j is not there.
The running and its guard are :mod:`lit3r.backends.cypher_run` (shared with ``lit3r mcp``); this module
parses the options and prints.

- On the embedded backend it stops at once: Cypher needs the Neo4j backend (the message says
  how to start one); ``lit3r graph`` answers the exploration questions on both backends.
- The server is reached once (``verify_connectivity``, :data:`lit3r.backends.cypher_run.CONNECT_TIMEOUT` s at most)
  before any query, so an unreachable server is one line, not the driver's transaction retries.
- A named statement takes the defaults of its header (``$limit=25``; :func:`graph.cypher.info`);
  one whose required parameters are missing is refused before anything is sent; a word that is
  no statement name is "unknown statement NAME; did you mean ...", not a Cypher syntax error.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import click

from graph.cypher_guard import split_mode
from lit3r.backends.cypher_run import NEEDS_NEO4J, connect, resolve, run_cypher, runs_cypher, statement_list
from lit3r.cli.params import CYPHER_PARAM, OneLineUsageError
from lit3r.cli.tables import echo_table
from lit3r.errors import CypherFailed


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
    from lit3r.cli.common import settings_of

    if list_:
        rows = statement_list()
        click.echo(json.dumps(rows, indent=2)) if as_json else echo_table(rows)
        return
    if query_or_file is None or not query_or_file.strip():
        raise OneLineUsageError("the query is empty: pass Cypher, a .cypher file or a statement name "
                                "(`lit3r cypher --list` lists the statements)")
    settings = settings_of(ctx)
    if not runs_cypher(settings):
        raise CypherFailed(NEEDS_NEO4J)
    query, values = resolve(query_or_file, dict(params))  # refused before anything is sent
    store = connect(settings)
    try:
        rows, plans = run_cypher(store, settings, query, values, limit + 1, write)
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
