"""Readable tables for the exploration commands (``lit3r graph``, ``lit3r cypher --list``): rich
tables whose cells wrap and fold long values (ids, work keys) onto more lines, never cut them.
The width is the terminal's, or ``COLUMNS``, or :data:`WIDTH` when the output is not a terminal."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from typing import Any, Optional, Sequence

import click

#: Table width when stdout is not a terminal (a pipe, a file, a test) and ``COLUMNS`` is not set.
WIDTH = 160


def cell(v: Any) -> str:
    """A value as table text: strings as they are, None as "-", lists joined by ", ", the rest as JSON."""
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v):
        return ", ".join(str(x) for x in v)
    return json.dumps(v, ensure_ascii=False, default=str)


def render(rows: Sequence[dict], title: Optional[str] = None, columns: Optional[Sequence[str]] = None,
           width: Optional[int] = None) -> str:
    """``rows`` as a table (the columns of the first row unless ``columns``), every value in full."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    cols = list(columns or (rows[0] if rows else []))
    table = Table(title=title, box=box.SIMPLE_HEAD, show_lines=False, title_justify="left", expand=False)
    for c in cols:
        table.add_column(c, overflow="fold")
    for r in rows:
        table.add_row(*(cell(r.get(c)) for c in cols))
    out = io.StringIO()
    w = width or (shutil.get_terminal_size((WIDTH, 24)).columns if sys.stdout.isatty()
                  else int(os.environ.get("COLUMNS", "0") or 0) or WIDTH)
    Console(file=out, width=w, no_color=True, highlight=False, emoji=False, markup=False).print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()).strip("\n")


def echo_table(rows: Sequence[dict], title: Optional[str] = None, columns: Optional[Sequence[str]] = None) -> None:
    """Print :func:`render` of ``rows`` and the row count ("(none)" without rows)."""
    if not rows:
        click.echo(f"{title}: (none)" if title else "(no rows)")
        return
    click.echo(render(rows, title, columns))
    click.echo(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
