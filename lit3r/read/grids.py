"""Value grids in a chunk's text: a heat map or a table whose text lost its cell separators
("0k 4k 8k ... 128k Context length ... qa1 100 97 93 66 43 30 24"), read for a multiple-choice
option whose numbers are the cells the question names.

A header is a run of at least ``MIN_COLUMNS`` tokens of one shape that are not numbers but hold
digits (digits and letters in the same pattern: "0k", "4k", "128k") among which the question names at least two; a row is a token the
question names (not a header token) followed by at least as many numbers as the header has tokens.
The cells are the row's numbers at the named columns, in the order the question names them (its
ask part first, :func:`lit3r.read.scoring.ask_part`). An
option whose numbers, in order, are exactly those cells is chosen when it is the only one (over
every grid of the chunks read); otherwise nothing is."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

from graph.records import Chunk
from lit3r.read.scoring import ask_part

#: The fewest tokens of a header run.
MIN_COLUMNS = 3
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.%-]*")
_NUM = re.compile(r"^\d+(?:\.\d+)?%?$")


@dataclass(frozen=True)
class GridPick:
    """The chosen option's ``label``, the ``chunk`` whose grid states it and the ``text`` read."""

    label: str
    chunk: Chunk
    text: str


def _shape(tok: str) -> str:
    return re.sub(r"[a-z]+", "a", re.sub(r"\d+", "9", tok.lower()))


def _value(tok: str) -> Optional[float]:
    return float(tok.rstrip("%")) if _NUM.match(tok) else None


def _header(toks: list[str], asked: list[str]) -> Optional[tuple[int, int]]:
    """``(start, end)`` of the first header run (module docstring), or None."""
    i = 0
    while i < len(toks):
        j = i
        while j < len(toks) and _shape(toks[j]) == _shape(toks[i]) and "9" in _shape(toks[j]) \
                and _value(toks[j]) is None:
            j += 1
        if j - i >= MIN_COLUMNS and sum(t.lower() in asked for t in toks[i:j]) >= 2:
            return i, j
        i = max(j, i + 1)
    return None


def _cells(text: str, asked: list[str]) -> list[list[float]]:
    """The named cells of each named row of the grid in ``text`` (module docstring)."""
    toks = _TOKEN.findall(text)
    span = _header(toks, asked)
    if span is None:
        return []
    head = [t.lower() for t in toks[span[0]: span[1]]]
    cols = [head.index(a) for a in asked if a in head]
    out = []
    for k, t in enumerate(toks):
        if span[0] <= k < span[1] or t.lower() not in asked:
            continue
        vals = [v for x in toks[k + 1: k + 1 + len(head)] if (v := _value(x)) is not None]
        if len(vals) == len(head):  # as many numbers as columns, one after the other
            out.append([vals[c] for c in cols])
    return out


def pick_grid(question: str, options: dict[str, str], chunks: Sequence[Chunk]) -> Optional[GridPick]:
    """The option stated by the named cells of a value grid in ``chunks`` (module docstring), or None."""
    asked = list(dict.fromkeys(t.lower() for t in _TOKEN.findall(f"{ask_part(question)} {question}")))
    wanted = {lab: [float(x) for x in re.findall(r"\d+(?:\.\d+)?", text.replace(",", ""))]
              for lab, text in options.items()}
    found: dict[str, tuple[Chunk, list[float]]] = {}
    for c in chunks:
        for cells in _cells(c.text, asked):
            for lab, nums in wanted.items():
                if len(nums) >= 2 and nums == cells:
                    found.setdefault(lab, (c, cells))
    if len(found) != 1:
        return None
    lab, (chunk, cells) = next(iter(found.items()))
    return GridPick(lab, chunk, f"grid cells {', '.join(f'{v:g}' for v in cells)}: option {lab}")
