"""The ``lit3r`` command line (click). Errors are one sentence plus the fix, never a traceback:
every :class:`lit3r.errors.Lit3rError`, and the drivers' and SQLite's errors, are caught once,
in :class:`Lit3rGroup`, which also takes every secret out of the message (:mod:`lit3r.redact`).
Commands never change the settings they load: options become overrides.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import click

from lit3r.cli.ask import ask
from lit3r.cli.browser import browser
from lit3r.cli.common import secrets_of, settings_of
from lit3r.cli.cypher import cypher
from lit3r.cli.errors import Lit3rGroup
from lit3r.cli.eval import eval_cmd
from lit3r.cli.graph import graph
from lit3r.cli.ingest import ingest
from lit3r.cli.mcp import mcp
from lit3r.cli.params import OneLineUsageError
from lit3r.cli.render import toml
from lit3r.cli.run import run
from lit3r.cli.trace import graph_trace, trace
from lit3r.redact import masked


@click.group(cls=Lit3rGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lit3r")
@click.option("--home", type=click.Path(), default=None, envvar="LIT3R_HOME",
              help="Data folder: the corpus and its index (default: LIT3R_HOME or the per-user data folder).")
@click.pass_context
def main(ctx: click.Context, home: Optional[str]) -> None:
    """Lit3R: question answering over research papers, with evidence traces."""
    import logging

    if home is not None and not home.strip():
        raise OneLineUsageError("the data folder is empty (--home \"\" or LIT3R_HOME=): name a folder or unset it")
    for name in ("neo4j", "opensearch"):  # the drivers' retry chatter; failures come out as one line
        logging.getLogger(name).setLevel(logging.CRITICAL)
    ctx.obj = {"home": Path(home) if home is not None else None}


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Print the effective configuration and check each component."""
    from lit3r.cli.doctor import run_checks

    settings = settings_of(ctx)
    checks = run_checks(settings)  # details with secrets masked
    config = masked(settings.model_dump(mode="json"), secrets_of(ctx))
    if as_json:
        click.echo(json.dumps({"config": config, "checks": checks}, indent=2))
    else:
        click.echo(f"# effective configuration\n{toml(config)}\n# checks")
        for c in checks:
            click.echo(f"[{'ok' if c['ok'] else 'FAIL'}] {c['name']}: {c['detail']}")
    if not all(c["ok"] for c in checks):
        sys.exit(1)


@main.group()
def config() -> None:
    """The effective configuration (defaults, the TOML file, LIT3R_* variables)."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON.")
@click.option("--changed", is_flag=True, help="Only the settings that differ from the defaults.")
@click.pass_context
def config_show(ctx: click.Context, as_json: bool, changed: bool) -> None:
    """Print the effective configuration with each setting's description, secrets masked
    (`lit3r doctor` checks it)."""
    from lit3r.config import config_file, descriptions

    settings = settings_of(ctx.find_root())
    data = settings.model_dump(mode="json", exclude_defaults=changed)
    path = config_file(settings.home)
    data = masked(data, secrets_of(ctx))
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"# configuration file: {path or 'none'}; LIT3R_* variables override it\n"
               f"{toml(data, notes=descriptions())}")


main.add_command(ask)  # lit3r/cli/ask.py
main.add_command(run)  # lit3r/cli/run.py (the batch: lit3r/littraceqa/batch.py)
main.add_command(ingest)  # lit3r/cli/ingest.py (the run: lit3r/ingest_run.py)
main.add_command(eval_cmd)  # lit3r/cli/eval.py (the scores: lit3r/littraceqa/metrics.py)
main.add_command(cypher)  # lit3r/cli/cypher.py
main.add_command(graph)  # lit3r/cli/graph.py: the `lit3r graph` group
main.add_command(trace)  # lit3r/cli/trace.py: `lit3r trace load|list|show|candidates|supported|delete`
graph.add_command(graph_trace)  # `lit3r graph trace QUERY_ID`
main.add_command(browser)  # lit3r/cli/browser.py
main.add_command(mcp)  # lit3r/cli/mcp.py: the MCP server (lit3r/serve/)
