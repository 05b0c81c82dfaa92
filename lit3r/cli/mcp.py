"""``lit3r mcp``: serve Lit3R's tools to an AI assistant over MCP (stdio); the server is
:mod:`lit3r.serve`, this module only loads the settings and starts it."""

from __future__ import annotations

import sys

import click


@click.command("mcp")
@click.option("--warm/--no-warm", default=True, show_default=True,
              help="Load the stores and models at start (else on the first tool call).")
@click.pass_context
def mcp(ctx: click.Context, warm: bool) -> None:
    """Serve the corpus to an AI assistant (Claude Desktop, VS Code, Cursor) over the Model Context
    Protocol on stdin/stdout: tools search_papers, find_evidence, ask, read, citations, cypher and
    trace, and the papers as resources (docs/MCP.md shows how to register it).

    The stores and models stay open between calls; a new build of the index is picked up by the
    next call. Logs and warnings go to stderr."""
    from lit3r.cli.common import settings_of
    from lit3r.serve.server import serve
    from lit3r.serve.session import Session

    settings = settings_of(ctx.find_root())
    announce = None
    if sys.stdin.isatty():  # run by hand: say what it is (an assistant reads stdout only)
        announce = (f"lit3r mcp: serving {settings.home} ({settings.backend} backend) to an MCP client on "
                    f"stdin/stdout; register it in an assistant (docs/MCP.md); Ctrl-D or Ctrl-C stops")
    serve(Session(settings), warm=warm, announce=announce)
