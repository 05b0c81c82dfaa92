"""Evidence units and the support they give to a question and its options (the extractive
reader's answers; issue 13).

A *unit* is the smallest piece of a stored chunk that can answer: a table cell (with its row key,
row group, column label and caption as context), a table row, a sentence or line of text, or a
whole reference entry. Each unit keeps its chunk, so an answer drawn from it always cites it.

Matching works on *terms*: BM25 tokens (:func:`graph.search.tokenize.tokenize`), Snowball-stemmed
("participants" and "participated" meet), plus the letter and digit parts of mixed tokens ("re2"
-> "re", "2"; "gsm8k" -> "gsm", "8k"). A question also contributes the acronyms of its hyphenated
words and capitalised runs ("chain-of-thought" -> "cot", "Test-Time Training" -> "ttt"), and
the terms that follow a negation ("not", "without", "excluding", "rather than", "instead of",
"except") up to the end of the clause count against a unit instead of for it.

relevance(unit) = (sum of the weights of the question terms in the unit - sum of the weights of
the negated terms in it) / (sum of the weights of all question terms), with inverse document
frequency weights over the units being read (plus one half, so that a term every unit shares
still counts), plus a small prior from the chunk's reader score.

An option is supported by a unit in proportion to the share of its values (numbers) found in the
unit's values, or of its distinctive terms (terms no other option has) found in the unit
(:func:`option_match`); a unit that holds several options splits its support among them. An
option's support is its best unit's relevance times that share, plus half of its best unit in
another chunk; the best-supported option wins, and none wins when the best two are equal.
Tables give three kinds of unit: cells, rows and columns (a column of a transposed table
states one method's figures).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from graph.records import Chunk
from graph.search.tokenize import tokenize
from lit3r.read.scoring import NUM, ask_part, chunk_lines
from lit3r.read.tables import parse_table

_PARTS = re.compile(r"[a-z]+|[0-9]+(?:\.[0-9]+)?[a-z]*")
_NEGATION = re.compile(r"\b(?:not|without|excluding|except|rather than|instead of|no)\b([^,;:.()?!]*)", re.I)
_HYPHENATED = re.compile(r"\b[A-Za-z]+(?:-[A-Za-z]+)+\b")
_CAPITAL_RUN = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)+\b")
#: Weight of the chunk's reader score (normalised by the best chunk's) in a unit's relevance.
CHUNK_PRIOR = 0.05
#: Weight of an option's best unit in another chunk (support found in two places counts more).
SECOND_PLACE = 0.5


@functools.lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=200_000)
def _stem(token: str) -> str:
    return _stemmer().stemWord(token)


def terms(text: str) -> set[str]:
    """The matching terms of a text (module docstring): stemmed tokens and their parts."""
    out = set()
    for tok in tokenize(text):
        out.add(_stem(tok))
        parts = _PARTS.findall(tok)
        if len(parts) > 1:
            out.update(_stem(p) for p in parts)
    return out


def numbers(text: str) -> set[str]:
    """The numbers of a text as written ("80.59", "8.5"); thousands separators dropped."""
    return set(NUM.findall(text.replace(",", "")))


@dataclass(frozen=True)
class Query:
    """A question's ``terms`` (with the acronyms of its words), its ``negated`` terms and the
    terms of its ask part (its last sentence, :func:`lit3r.read.scoring.ask_part`), which count
    twice: the sentences before it usually describe the paper, the last one asks."""

    terms: frozenset[str]
    negated: frozenset[str]
    asked: frozenset[str] = frozenset()

    @classmethod
    def of(cls, question: str) -> "Query":
        base, negated = _query_terms(question)
        asked, _ = _query_terms(ask_part(question))
        return cls(frozenset(base - negated), frozenset(negated - base), frozenset(asked & (base - negated)))


def _query_terms(text: str) -> tuple[set[str], set[str]]:
    """``(terms and acronyms, negated terms)`` of a question text."""
    negated: set[str] = set()
    for m in _NEGATION.finditer(text):
        negated |= terms(m.group(1))
    acronyms = {"".join(w[0] for w in re.split(r"[- ]+", m.group(0))).lower()
                for rx in (_HYPHENATED, _CAPITAL_RUN) for m in rx.finditer(text)}
    return terms(_NEGATION.sub(" ", text)) | {a for a in acronyms if len(a) >= 2}, negated


@dataclass
class Unit:
    """One evidence unit: its ``chunk``, display ``text``, matching ``terms`` (a cell's row key,
    group and column label; a line's words), the ``values`` it states (numbers), its ``kind``
    (cell, row, column, line), the chunk's ``prior``, the terms of its values (``value_terms``) and
    its wider ``context`` (a table's caption), which counts half; a cell also keeps its
    ``row_key`` and ``row_group``."""

    chunk: Chunk
    text: str
    terms: set[str]
    values: set[str]
    kind: str
    prior: float = 0.0
    value_terms: set[str] = field(default_factory=set)
    context: set[str] = field(default_factory=set)
    row_key: str = ""
    row_group: str = ""


def units_of(chunk: Chunk, prior: float = 0.0) -> list[Unit]:
    """The units of one chunk: cells and rows of a table chunk whose rows can be read (see
    :mod:`lit3r.read.tables`), else its lines (:func:`lit3r.read.scoring.chunk_lines`); a
    reference entry is one unit."""
    if chunk.kind == "table":
        table = parse_table(chunk.text)
        if table.rows:
            return list(_table_units(chunk, table, prior))
    if chunk.object_id and chunk.object_id.startswith("Citation"):
        t = terms(chunk.text)
        return [Unit(chunk, chunk.text, t, numbers(chunk.text), "line", prior, t)]
    out = []
    for ln in chunk_lines(chunk):
        t = terms(ln)
        out.append(Unit(chunk, ln, t, numbers(ln), "line", prior, t))
    return out


def _table_units(chunk: Chunk, table, prior: float) -> Iterable[Unit]:
    caption = terms(f"{table.caption} {chunk.section or ''}")  # a header line can land in the section
    for row in table.rows:
        row_terms = terms(f"{row.group} {row.key}")
        labelled = []
        for j, cell in enumerate(row.cells):
            col = table.columns[j] if j < len(table.columns) else ""
            labelled.append(f"{col}: {cell}" if col else cell)
            vals = numbers(cell)
            if vals:
                yield Unit(chunk, f"{' '.join(x for x in (row.group, row.key) if x)}, {col or 'value'}: {cell}",
                           row_terms | terms(col), vals, "cell", prior, terms(cell), caption, row.key, row.group)
        text = f"{' '.join(x for x in (row.group, row.key) if x)}: {'; '.join(labelled)}"
        yield Unit(chunk, text, row_terms, numbers(" ".join(row.cells)), "row", prior,
                   terms(" ".join(row.cells)) | terms(row.key), caption)
    for j, col in enumerate(table.columns):
        cells = [(row, row.cells[j]) for row in table.rows if j < len(row.cells)]
        if col and cells:
            body = "; ".join(f"{row.key} {cell}" for row, cell in cells)
            yield Unit(chunk, f"{col}: {body}", terms(col), numbers(" ".join(c for _, c in cells)), "column", prior,
                       terms(body), caption)


class Support:
    """Relevance of units to one question (module docstring), with IDF weights over ``units``."""

    def __init__(self, question: str, units: Sequence[Unit]) -> None:
        self.query = Query.of(question)
        df = Counter(t for u in units for t in u.terms | u.context)
        n = max(len(units), 1)
        q = self.query
        self.weight = {t: (0.5 + math.log(1 + n / (1 + df.get(t, 0)))) * (2.0 if t in q.asked else 1.0)
                       for t in q.terms | q.negated}
        self.total = sum(self.weight[t] for t in self.query.terms) or 1.0

    def relevance(self, unit: Unit) -> float:
        """In [-1, 1 + CHUNK_PRIOR]: the weighted share of question terms the unit holds, minus its
        negated terms, plus the chunk prior."""
        w, q = self.weight, self.query
        hit = sum(w[t] for t in q.terms & unit.terms) + 0.5 * sum(w[t] for t in (q.terms & unit.context) - unit.terms)
        neg = sum(w[t] for t in q.negated & (unit.terms | unit.context))
        return (hit - neg) / self.total + CHUNK_PRIOR * unit.prior



def option_match(option: str, unit: Unit, distinctive: set[str]) -> float:
    """How much of an option the unit states, in [0, 1]: the share of the option's numbers among
    the unit's values for a numeric option (its words are all among its numbers' units, or it has
    no distinctive word), the share of its ``distinctive`` terms among the unit's terms for a
    textual one, and the mean of both for an option with numbers and words; 0 when nothing of it
    is there, or when the unit holds none of the numbers only this option has."""
    nums = numbers(option)
    words = {w for w in distinctive if not NUM.fullmatch(w)}
    own = {w for w in distinctive if NUM.fullmatch(w)} & nums  # numbers no other option has
    if own and not own & unit.values:
        return 0.0  # only the numbers the option shares with others: it does not tell them apart
    num_share = len(nums & unit.values) / len(nums) if nums else 0.0
    word_share = len(words & (unit.value_terms | unit.terms)) / len(words) if words else 0.0
    if nums and (len(words) <= len(nums) or not words):
        return num_share
    if nums:
        return (num_share + word_share) / 2 if num_share else 0.0
    return word_share


def choose_option(options: dict[str, str], units: Sequence[Unit],
                  support: Support) -> tuple[Optional[str], dict[str, float], Optional[Unit]]:
    """``(label or None, {label: support}, the winning unit)`` (module docstring)."""
    opt_terms = {lab: terms(text) | numbers(text) for lab, text in options.items()}
    distinctive = {lab: t - set().union(*(o for k, o in opt_terms.items() if k != lab)) for lab, t in opt_terms.items()}
    found: dict[str, list[tuple[float, Unit]]] = {lab: [] for lab in options}
    for u in units:
        matches = {lab: option_match(text, u, distinctive[lab]) for lab, text in options.items()}
        total = sum(matches.values())
        if not total:
            continue
        rel = support.relevance(u)
        if rel <= 0:
            continue
        for lab, m in matches.items():
            if m:
                found[lab].append((rel * m * (m / total), u))
    best: dict[str, tuple[float, Optional[Unit]]] = {}
    for lab, hits in found.items():
        hits.sort(key=lambda su: -su[0])
        second = next((s for s, u in hits[1:] if u.chunk.chunk_id != hits[0][1].chunk.chunk_id), 0.0)
        best[lab] = (hits[0][0] + SECOND_PLACE * second, hits[0][1]) if hits else (0.0, None)
    scores = {lab: s for lab, (s, _) in best.items()}
    ranked = sorted(options, key=lambda lab: -scores[lab])
    if not ranked or scores[ranked[0]] <= 0 or (len(ranked) > 1 and scores[ranked[0]] == scores[ranked[1]]):
        return None, scores, None
    return ranked[0], scores, best[ranked[0]][1]
