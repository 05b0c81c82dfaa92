"""Factor options: "by roughly what factor does A exceed B?" with options "about 9.5x" (issue 24,
item 3: an option is scored by the evidence that states what tells it apart).

A factor is rarely printed; it is the quotient of two cells of one table: two rows of one column
("TNL-LA2" over "LLaMA-FA2" in the "94208" column) or two columns of one row. For every such pair
of positive numbers in the supporting papers' tables (:mod:`lit3r.read.tables`), the quotient
(larger over smaller) states an option when it lies within ``TOLERANCE`` of the option's factor.
A pair is scored by the terms of the question's ask part (:func:`lit3r.read.scoring.ask_part`,
numbers with their thousands separators dropped) that its labels hold: the two row keys (and
their groups and non-numeric cells: "0.4B") and the column label, or the row and the two column
labels; each term weighs its inverse document frequency over the table's pairs, so a label
every row shares tells little, and the score is the share of the weight of the question's terms
that the table's labels hold at all (comparable between tables). Among the pairs within ``claims.NEAR_TIE`` of the best score, the
earliest table states the option (page, then its place among the chunks read: an appendix table
repeats the main one), then the better score, then the option's label. No option wins when no
pair states one, or when no pair's labels hold a term of the question.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

from graph.records import Chunk
from lit3r.read.claims import NEAR_TIE, numbers, terms
from lit3r.read.scoring import ask_part
from lit3r.read.tables import parse_table

#: Relative distance of a quotient from an option's factor that still states it.
TOLERANCE = 0.03
#: A question that asks for a factor.
_FACTOR_Q = re.compile(r"\b(?:what|which)\s+factor\b|\bhow many times\b|\bby (?:roughly |about |approximately )?what "
                       r"(?:factor|multiple)\b|\bspeed-?up\b", re.I)
#: An option that states a factor: "about 9.5x", "~1,190×", "3.75 times".
_FACTOR_OPTION = re.compile(r"^\s*(?:about|roughly|approximately|approx\.|around|~|\u2248)?\s*"
                            r"(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*(?:x|\u00d7|times)\s*\.?\s*$", re.I)
_NUMBER = re.compile(r"^[-+~\u2248(]*(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\)?%?$")


@dataclass(frozen=True)
class FactorPick:
    """The winning option's ``label``, the ``chunk`` of the table whose cells state it, and the
    ``text`` of the pair ("TNL-LA2 / LLaMA-FA2, 94208: 38596 / 4078 = 9.46")."""

    label: str
    chunk: Chunk
    text: str


def factor_options(options: dict[str, str]) -> dict[str, float]:
    """``{label: factor}`` of the options that state a positive factor (empty unless at least
    two do)."""
    out = {}
    for lab, text in options.items():
        m = _FACTOR_OPTION.match(text)
        if m:
            value = float(m.group(1).replace(",", "") + (m.group(2) or ""))
            if value > 0:
                out[lab] = value
    return out if len(out) >= 2 else {}


def asks_factor(question: str) -> bool:
    """The question asks for a factor (``_FACTOR_Q``)."""
    return bool(_FACTOR_Q.search(question))


def _value(cell: str) -> Optional[float]:
    m = _NUMBER.match(cell.strip())
    if not m:
        return None
    value = float(m.group(1).replace(",", "") + (m.group(2) or ""))
    return value if value > 0 else None


def _pairs(chunk: Chunk):
    """``(row labels a, row labels b, column labels, text, quotient)`` of every pair of positive
    cells of one column or one row of the chunk's table; labels are term sets."""
    table = parse_table(chunk.text)
    rows = []
    for row in table.rows:
        words = " ".join(c for c in row.cells if _value(c) is None)  # "0.4B", "OOM"
        rows.append((terms(f"{row.group} {row.key} {words}"), row))
    cols = [terms(c) | numbers(c) for c in table.columns]
    for j, col in enumerate(table.columns):
        cells = [(t, r, v) for t, r in rows if j < len(r.cells) for v in [_value(r.cells[j])] if v is not None]
        for i, (ta, ra, va) in enumerate(cells):
            for tb, rb, vb in cells[i + 1:]:
                (hi, th, rh), (lo, tl, rl) = sorted([(va, ta, ra), (vb, tb, rb)], key=lambda x: -x[0])
                yield th, tl, cols[j], f"{rh.key} / {rl.key}, {col}: {hi:g} / {lo:g} = {hi / lo:.3g}", hi / lo
    for t, row in rows:
        vals = [(j, v) for j, c in enumerate(row.cells) if j < len(cols) for v in [_value(c)] if v is not None]
        for i, (ja, va) in enumerate(vals):
            for jb, vb in vals[i + 1:]:
                (hi, jh), (lo, jl) = sorted([(va, ja), (vb, jb)], key=lambda x: -x[0])
                label = f"{row.key}, {table.columns[jh]} / {table.columns[jl]}"
                yield t, cols[jh], cols[jl], f"{label}: {hi:g} / {lo:g} = {hi / lo:.3g}", hi / lo


def _stated(chunk: Chunk, place: int, asked: set[str], factors: dict[str, float]):
    """``(score, order key, FactorPick)`` for every pair of the chunk's table whose quotient states
    an option (module docstring); ``place``: the chunk's place among the tables read."""
    pairs = list(_pairs(chunk))
    df = Counter(t for a, b, c, _, _ in pairs for t in a | b | c)
    weight = {t: math.log(1 + len(pairs) / (1 + df[t])) for t in asked if df[t]}
    total = math.fsum(weight.values())
    for a, b, c, text, quotient in pairs:
        score = math.fsum(weight[t] for t in asked & (a | b | c)) / total if total else 0.0
        if score <= 0:
            continue
        for lab, factor in factors.items():
            if abs(quotient - factor) <= TOLERANCE * factor:
                yield score, (chunk.page, place, -score, lab), FactorPick(lab, chunk, text)


def pick_factor(question: str, options: dict[str, str], chunks: Sequence[Chunk]) -> Optional[FactorPick]:
    """The option a table pair states best (module docstring), or None. ``chunks``: the
    supporting papers' chunks in reading order (only table chunks are used)."""
    factors = factor_options(options)
    if not factors or not asks_factor(question):
        return None
    ask = ask_part(question)
    asked = terms(ask) | numbers(ask)
    found = [f for place, chunk in enumerate(c for c in chunks if c.kind == "table")
             for f in _stated(chunk, place, asked, factors)]
    if not found:
        return None
    top = max(score for score, _, _ in found)
    return min((f for f in found if f[0] >= NEAR_TIE * top), key=lambda f: f[1])[2]
