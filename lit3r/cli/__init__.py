"""The ``lit3r`` command line (click): the group, its ``--home`` option and the commands'
registrations. Each command is its own module (``ask``, ``run``, ``ingest``, ``eval``,
``configure``: ``config show`` and ``doctor``, ``cypher``, ``graph``, ``trace``, ``browser``,
``mcp``): it parses its options, calls the library and prints (:mod:`lit3r.cli.render`, one table
printer :mod:`lit3r.cli.tables`). What they share is :mod:`lit3r.cli.common` (the settings of a
run, the secrets to mask). Errors are one sentence plus the fix, never a traceback: the errors
Lit3R expects are turned into one line once, in :class:`lit3r.cli.errors.Lit3rGroup`, which also
takes every secret out of the message (:mod:`lit3r.present.redact`). Commands never change the settings
they load: options become overrides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from lit3r.cli.ask import ask
from lit3r.cli.browser import browser
from lit3r.cli.configure import config, doctor
from lit3r.cli.cypher import cypher
from lit3r.cli.errors import Lit3rGroup
from lit3r.cli.eval import eval_cmd
from lit3r.cli.graph import graph
from lit3r.cli.ingest import ingest
from lit3r.cli.mcp import mcp
from lit3r.cli.params import OneLineUsageError
from lit3r.cli.run import run
from lit3r.cli.trace import graph_trace, trace


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


main.add_command(ask)  # lit3r/cli/ask.py
main.add_command(run)  # lit3r/cli/run.py (the batch: lit3r/littraceqa/batch.py)
main.add_command(ingest)  # lit3r/cli/ingest.py (the run: lit3r/index/ingest_run.py)
main.add_command(eval_cmd)  # lit3r/cli/eval.py (the scores: lit3r/littraceqa/metrics.py)
main.add_command(cypher)  # lit3r/cli/cypher.py
main.add_command(config)  # lit3r/cli/configure.py: `lit3r config show`
main.add_command(doctor)  # lit3r/cli/configure.py (the checks: lit3r/cli/doctor.py)
main.add_command(graph)  # lit3r/cli/graph.py: the `lit3r graph` group
main.add_command(trace)  # lit3r/cli/trace.py: `lit3r trace load|list|show|candidates|supported|delete`
graph.add_command(graph_trace)  # `lit3r graph trace QUERY_ID`
main.add_command(browser)  # lit3r/cli/browser.py
main.add_command(mcp)  # lit3r/cli/mcp.py: the MCP server (lit3r/serve/)
