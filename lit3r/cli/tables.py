"""The one table printer of the ``lit3r`` commands (``eval``, a table answer of ``ask``, ``graph``,
``trace``, ``cypher``): rich tables whose cells wrap and fold long values (titles, work keys) onto
more lines, never cut them; a number (a score, an id such as 1706.03762, 12,345.5%) is never
split: its column is at least as wide as it, and the table runs wider than the terminal when the
numbers need it. The width is the terminal's, or ``COLUMNS``, or :data:`WIDTH` when the output is
not a terminal."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
from typing import Any, Iterable, Optional, Sequence

import click

#: Table width when stdout is not a terminal (a pipe, a file, a test) and ``COLUMNS`` is not set.
WIDTH = 160
#: Narrowest a column of words is made before the table runs wider than the terminal.
MIN_COLUMN = 4
#: A number as a cell shows it: sign, digits with thousands separators, decimals, exponent, percent.
NUMBER = re.compile(r"[-+\u2212]?(?:\d[\d,]*)?\.?\d+(?:[eE][-+]?\d+)?%?")


def cell(v: Any) -> str:
    """A value as table text: strings as they are, None as "-", lists joined by ", ", the rest as JSON."""
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v):
        return ", ".join(str(x) for x in v)
    return json.dumps(v, ensure_ascii=False, default=str)


def number_width(texts: Iterable[str]) -> int:
    """The length of the longest number (:data:`NUMBER`) among the words of ``texts``; 0 for none."""
    return max((len(word) for text in texts for word in text.split() if NUMBER.fullmatch(word)), default=0)


def column_widths(cols: Sequence[str], cells: Sequence[Sequence[str]], width: int) -> list[Optional[int]]:
    """The text width of each column for a table ``width`` characters wide: None each (rich's own
    layout) when every value fits on one line; else each column gets its longest number (and at
    least :data:`MIN_COLUMN`), and the rest of the width is shared in proportion to what each
    column's longest line needs beyond that. The sum can exceed ``width``: numbers are not split."""
    lines = [[len(line) for text in (c, *(row[i] for row in cells)) for line in (text.splitlines() or [""])]
             for i, c in enumerate(cols)]
    natural = [max(n) for n in lines]
    overhead = 3 * len(cols) + 1  # a space of padding each side, a rule between columns, the edges
    if sum(natural) + overhead <= width:
        return [None] * len(cols)
    least = [min(nat, max(number_width(row[i] for row in cells), MIN_COLUMN)) for i, nat in enumerate(natural)]
    spare = max(width - overhead - sum(least), 0)
    wants = [nat - low for nat, low in zip(natural, least)]
    total = sum(wants) or 1
    return [low + min(want, spare * want // total) for low, want in zip(least, wants)]


def render(rows: Sequence[dict], title: Optional[str] = None, columns: Optional[Sequence[str]] = None,
           width: Optional[int] = None) -> str:
    """``rows`` as a table (the columns of the first row unless ``columns``), every value in full,
    no number split (:func:`column_widths`)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    cols = list(columns or (rows[0] if rows else []))
    cells = [[cell(r.get(c)) for c in cols] for r in rows]
    w = width or (shutil.get_terminal_size((WIDTH, 24)).columns if sys.stdout.isatty()
                  else int(os.environ.get("COLUMNS", "0") or 0) or WIDTH)
    widths = column_widths(cols, cells, w)
    table = Table(title=title, box=box.SIMPLE_HEAD, show_lines=False, title_justify="left", expand=False)
    for c, fixed in zip(cols, widths):
        table.add_column(c, overflow="fold", width=fixed)
    for row in cells:
        table.add_row(*row)
    if None not in widths:  # the fixed widths may need more than the terminal: rich would drop columns
        w = max(w, sum(x for x in widths if x is not None) + 3 * len(cols) + 1)
    out = io.StringIO()
    Console(file=out, width=w, no_color=True, highlight=False, emoji=False, markup=False).print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()).strip("\n")


def echo_table(rows: Sequence[dict], title: Optional[str] = None, columns: Optional[Sequence[str]] = None) -> None:
    """Print :func:`render` of ``rows`` and the row count ("(none)" without rows)."""
    if not rows:
        click.echo(f"{title}: (none)" if title else "(no rows)")
        return
    click.echo(render(rows, title, columns))
    click.echo(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
