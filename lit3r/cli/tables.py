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


def column_widths(cols: Sequence[str], cells: Sequence[Sequence[str]], width: int) -> list[int]:
    """Fixed text widths of the columns for a table ``width`` characters wide, used when rich's
    own layout would split a number or drop a column: each column gets its longest number (and at
    least :data:`MIN_COLUMN`), and the rest of the width is shared in proportion to what each
    column's longest line needs beyond that. The sum can exceed ``width``: numbers are not split."""
    texts = [[c, *(row[i] for row in cells)] for i, c in enumerate(cols)]
    natural = [max(len(line) for t in col for line in (t.splitlines() or [""])) for col in texts]
    least = [min(nat, max(number_width(col[1:]), MIN_COLUMN)) for col, nat in zip(texts, natural)]
    spare = max(width - 3 * len(cols) - 1 - sum(least), 0)  # padding each side, a rule between columns, edges
    wants = [nat - low for nat, low in zip(natural, least)]
    total = sum(wants) or 1
    return [low + min(want, spare * want // total) for low, want in zip(least, wants)]


def _visible(texts: Iterable[str]) -> int:
    """Characters of ``texts`` that are not spaces or the table's rule."""
    return sum(len("".join(t.split()).replace("\u2500", "")) for t in texts)


def _table(title: Optional[str], cols: Sequence[str], cells: Sequence[Sequence[str]], width: int,
           fixed: Optional[Sequence[int]] = None) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, show_lines=False, title_justify="left", expand=False)
    for i, c in enumerate(cols):
        table.add_column(c, overflow="fold", width=fixed[i] if fixed else None)
    for row in cells:
        table.add_row(*row)
    out = io.StringIO()
    Console(file=out, width=width, no_color=True, highlight=False, emoji=False, markup=False).print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()).strip("\n")


def render(rows: Sequence[dict], title: Optional[str] = None, columns: Optional[Sequence[str]] = None,
           width: Optional[int] = None) -> str:
    """``rows`` as a table (the columns of the first row unless ``columns``), every value in full:
    rich's layout (long values wrap at spaces, long words fold), unless it would split a number or
    drop a column; then :func:`column_widths`, the table wider than ``width`` if its numbers need it."""
    cols = list(columns or (rows[0] if rows else []))
    cells = [[cell(r.get(c)) for c in cols] for r in rows]
    w = width or (shutil.get_terminal_size((WIDTH, 24)).columns if sys.stdout.isatty()
                  else int(os.environ.get("COLUMNS", "0") or 0) or WIDTH)
    text = _table(title, cols, cells, w)
    words = set(text.split())
    if _visible(text.splitlines()) == _visible([title or "", *cols, *(t for row in cells for t in row)]) and all(
            word in words for row in cells for t in row for word in t.split() if NUMBER.fullmatch(word)):
        return text
    fixed = column_widths(cols, cells, w)
    return _table(title, cols, cells, max(w, sum(fixed) + 3 * len(cols) + 1), fixed)


def echo_table(rows: Sequence[dict], title: Optional[str] = None, columns: Optional[Sequence[str]] = None) -> None:
    """Print :func:`render` of ``rows`` and the row count ("(none)" without rows)."""
    if not rows:
        click.echo(f"{title}: (none)" if title else "(no rows)")
        return
    click.echo(render(rows, title, columns))
    click.echo(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
