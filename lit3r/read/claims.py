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
from lit3r.read.scoring import NUM, NUMERIC_Q, ask_part, chunk_lines, complexities
from lit3r.read.tables import parse_table

_PARTS = re.compile(r"[a-z]+|[0-9]+(?:\.[0-9]+)?[a-z]*")
_NEGATION = re.compile(r"\b(?:not|without|excluding|except|rather than|instead of|no)\b([^,;:.()?!]*)", re.I)
_NON = re.compile(r"\bnon-([A-Za-z]+)", re.I)  # "non-learned": the one word
_HYPHENATED = re.compile(r"\b[A-Za-z]+(?:-[A-Za-z]+)+\b")
_CAPITAL_RUN = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)+\b")
#: Weight of the chunk's reader score (normalised by the best chunk's) in a unit's relevance.
CHUNK_PRIOR = 0.05
#: Weight of an option's best unit in another chunk (support found in two places counts more).
SECOND_PLACE = 0.5
#: Units stating a claim within this share of the best one's relevance are near ties: the
#: earliest table among them states it (a result is reported first in the main results; ablation
#: and appendix tables repeat it).
NEAR_TIE = 0.85
#: For a value question, a sentence of a summary section (abstract, introduction, conclusion)
#: counts this share of its relevance: the section that reports a figure is cited, not the
#: summary that repeats it.
SUMMARY_SHARE = 0.75
_SUMMARY = re.compile(r"\b(?:abstract|introduction|conclusions?|concluding remarks|summary)\b", re.I)


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


#: A number as written, not the digits of a name ("T5", "GSM8K", "RE2"): no letter just before it.
_NUMBER = re.compile(r"(?<![A-Za-z0-9.])" + NUM.pattern)


def numbers(text: str) -> set[str]:
    """The numbers of a text as written ("80.59", "8.5", the "65" of "65B"); thousands
    separators dropped; digits inside a name ("FLAN-T5", "GSM8K") are not numbers; a big-O
    complexity is one value (:func:`lit3r.read.scoring.complexities`)."""
    return set(_NUMBER.findall(text.replace(",", ""))) | complexities(text)


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
    negated = negated_terms(text)
    acronyms = {"".join(w[0] for w in re.split(r"[- ]+", m.group(0))).lower()
                for rx in (_HYPHENATED, _CAPITAL_RUN) for m in rx.finditer(text)}
    acronyms = {a for a in acronyms if len(a) >= 2}
    # an acronym as written and as a unit's plural of it stems ("maximum-inner-product-search" meets "MIPS")
    return terms(_NON.sub(" ", _NEGATION.sub(" ", text))) | acronyms | {_stem(a) for a in acronyms}, negated


@dataclass
class Unit:
    """One evidence unit: its ``chunk``, display ``text``, matching ``terms`` (a cell's row key,
    group and column label; a line's words), the ``values`` it states (numbers), its ``kind``
    (cell, row, column, line), the chunk's ``prior``, the terms of its values (``value_terms``) and
    its wider ``context`` (a table's caption), which counts half; a cell also keeps its
    ``row_key`` and ``row_group``; a line its ``negated`` terms (those after "not", "non-",
    "without" ... up to the end of the clause: "set and not learned")."""

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
    negated: set[str] = field(default_factory=set)


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
    return [Unit(chunk, ln, t, numbers(ln), "line", prior, t, negated=negated_terms(ln)) for ln in chunk_lines(chunk)
            for t in [terms(ln) | ({"default"} if _DEFAULT.search(ln) else set())]]


#: A default setting stated without the word ("Unless otherwise stated, we use ..."): the term "default".
_DEFAULT = re.compile(r"\bunless (?:otherwise (?:stated|noted|specified|mentioned|indicated)|(?:stated|noted|"
                      r"specified) otherwise)\b", re.I)


def negated_terms(text: str) -> set[str]:
    """The terms a text negates: those after a negation cue up to the end of the clause
    ("m is set and not learned" -> {"learn"}; "a non-learned penalty" -> {"learn"})."""
    out: set[str] = set()
    for rx in (_NEGATION, _NON):
        for m in rx.finditer(text):
            out |= terms(m.group(1))
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
    """Relevance of units to one question (module docstring), with IDF weights over ``units``.
    ``names``: the names the read papers give their own method or system (:func:`own_names`),
    which count as question terms: a question about "its" results is about the paper's method."""

    def __init__(self, question: str, units: Sequence[Unit], names: Iterable[str] = ()) -> None:
        q0 = Query.of(question)
        self.numeric = bool(NUMERIC_Q.search(ask_part(question)))
        self.query = Query(q0.terms | {t for name in names for t in terms(name)}, q0.negated, q0.asked)
        df = Counter(t for u in units for t in u.terms | u.context)
        n = max(len(units), 1)
        q = self.query
        self.weight = {t: (0.5 + math.log(1 + n / (1 + df.get(t, 0)))) * (2.0 if t in q.asked else 1.0)
                       for t in q.terms | q.negated}
        self.total = math.fsum(self.weight[t] for t in self.query.terms) or 1.0

    def relevance(self, unit: Unit) -> float:
        """In [-1, 1 + CHUNK_PRIOR]: the weighted share of question terms the unit holds, minus its
        negated terms, plus the chunk prior."""
        w, q = self.weight, self.query
        # math.fsum: a sum over a set must not depend on the set's (hash-seeded) iteration order
        hit = (math.fsum(w[t] for t in q.terms & unit.terms)
               + 0.5 * math.fsum(w[t] for t in (q.terms & unit.context) - unit.terms))
        hit += math.fsum(w[t] for t in q.negated & unit.negated)  # "non-learned" meets "not learned"
        hit += math.fsum(w[t] for t in (q.terms & unit.values) - unit.terms)  # "listed at 0.96 bpb"
        neg = math.fsum(w[t] for t in q.negated & (unit.terms | unit.context) - unit.negated)
        share = SUMMARY_SHARE if self.numeric and unit.kind == "line" and _summary(unit.chunk) else 1.0
        return share * (hit - neg) / self.total + CHUNK_PRIOR * unit.prior


def _summary(chunk: Chunk) -> bool:
    """The chunk is a summary: the title and abstract, or a section named abstract, introduction,
    conclusion or summary."""
    return chunk.kind == "title_abstract" or bool(_SUMMARY.search(chunk.section or ""))


_NUM_TOKEN = re.compile(r"\d+(?:\.\d+)?[a-z]{0,2}")
#: Numbers weigh this many times a word in an option's claim (a number is the precise part).
NUMBER_WEIGHT = 2.0


@dataclass(frozen=True)
class Claim:
    """One claim of an option (the option, or one ``;``-separated part of it): its ``words``
    (stemmed terms, no numbers) and ``numbers``, each weighted by how few other options share
    it (``weight``: 1 for one only this option has, 0 for one every option has); ``joined``: pairs
    of adjacent words with the term they make written together ("Big Bird" -> "bigbird");
    ``bound``: for a claim of two numbers or more, each number with the word nearest to it
    ("39.3 opened, 25.8 saved" -> {(39.3, open), (25.8, save)}, :func:`bindings`); ``subject``:
    the terms of the name before a colon that the claim is about ("Multi-LexSum: 5-point Likert")."""

    words: frozenset[str]
    numbers: frozenset[str]
    weight: dict[str, float]
    joined: frozenset[tuple[str, str, str]] = frozenset()
    bound: frozenset[tuple[str, str]] = frozenset()
    subject: frozenset[str] = frozenset()

    @property
    def total(self) -> float:
        return math.fsum(self.weight[t] for t in self.words | self.numbers)


@dataclass
class OptionSupport:
    """The evidence for one option: ``score`` (the higher the better supported), and per claim
    the ``units`` that state it best (None: not found), ``against``, a unit that negates it, and
    ``also``: per other paper, its best unit that states a whole claim again (the corroboration)."""

    score: float = 0.0
    units: list[Optional[Unit]] = field(default_factory=list)
    against: Optional[Unit] = None
    also: list[Unit] = field(default_factory=list)

    def trace(self) -> dict:
        """JSON-ready: score, and the chunk and text of each claim's unit."""
        out: dict = {"support": round(self.score, 4),
                     "evidence": [{"chunk_id": u.chunk.chunk_id, "text": u.text[:200]} if u else None
                                  for u in self.units]}
        if self.against is not None:
            out["against"] = {"chunk_id": self.against.chunk.chunk_id, "text": self.against.text[:200]}
        return out


def _words(text: str) -> set[str]:
    return {t for t in terms(text) if not _NUM_TOKEN.fullmatch(t)}


def claims_of(options: dict[str, str]) -> dict[str, list[Claim]]:
    """The claims of each option: the ``;``-separated parts of an option that has several (a
    multi-paper option: "Big Bird; 46.63; Terraformer 45.40"), else the whole option, with
    weights ``(n - df) / (n - 1)`` over the ``n`` options (``df``: the options that have the
    term), numbers times ``NUMBER_WEIGHT``."""
    whole = {lab: _words(text) | numbers(text) for lab, text in options.items()}
    n = len(options)
    df = Counter(t for ts in whole.values() for t in ts)
    out: dict[str, list[Claim]] = {}
    for lab, text in options.items():
        parts = [p for p in re.split(r"\s*;\s*", text) if p.strip()] or [text]
        claims = []
        for part in parts:
            words, nums = frozenset(_words(part)), frozenset(numbers(part))
            weight = {t: (n - df[t]) / (n - 1) if n > 1 else 1.0 for t in words | nums}
            weight.update({t: NUMBER_WEIGHT * weight[t] for t in nums})
            toks = re.findall(r"[A-Za-z]+", part)
            joined = frozenset((_stem(a.lower()), _stem(b.lower()), _stem((a + b).lower())) for a, b in zip(toks, toks[1:]))
            bound = frozenset(bindings(part, nums, words).items()) if len(nums) >= 2 else frozenset()
            head = _SUBJECT.match(part)
            subject = frozenset(terms(head.group(1) or head.group(2))) if head else frozenset()
            claims.append(Claim(words, nums, weight, joined, bound, subject))
        out[lab] = claims
    return out


_TOKEN = re.compile(r"\d+(?:\.\d+)?|[A-Za-z]+")
#: The name a claim is about: "Multi-LexSum: 5-point Likert" (a short name before a colon), "BTX 14.7"
#: (a name before its number).
_SUBJECT = re.compile(r"^\s*([A-Z][^:;,]{0,40}?)\s*:\s*\S|^\s*([A-Z][\w+-]*[A-Za-z](?:\s+[A-Z0-9][\w+.-]*)?)\s+[-+~]?\d")
#: The share of a claim's subject terms a unit must hold when its paper is another one.
SUBJECT_SHARE = 0.5


def bindings(text: str, nums: Iterable[str], words: Iterable[str]) -> dict[str, str]:
    """``{number: word}``: each of ``nums`` in ``text`` with the nearest of ``words`` (stemmed
    terms) by token distance (ties: the word after it: "39.3 opened, 25.8 saved"); a number the
    text lacks is left out."""
    toks = _TOKEN.findall(text.replace(",", ""))
    wanted = set(words)
    at = [(i, _stem(t.lower())) for i, t in enumerate(toks) if t.isalpha() and _stem(t.lower()) in wanted]
    out = {}
    for num in nums:
        where = [i for i, t in enumerate(toks) if t == num]
        if where and at:
            out[num] = min(((abs(i - j), j < i, w) for i in where for j, w in at))[2]
    return out


def _bound_elsewhere(claim: Claim, unit: Unit) -> bool:
    """The unit states the claim's bound numbers and words, but binds a number to another of the
    claim's words ("25.8 opened" against "39.3 opened, 25.8 saved")."""
    nums = {n for n, _ in claim.bound}
    words = {w for _, w in claim.bound}
    if len(words) < 2 or not nums <= unit.values:
        return False
    said = bindings(unit.text, nums, words)
    return len(said) == len(nums) and any(said[n] != w for n, w in claim.bound)


def claim_match(claim: Claim, unit: Unit) -> tuple[float, float]:
    """``(match, contradiction)``, each in [0, 1]: the weighted share of the claim's words and
    numbers the unit states (a word the unit negates does not count), and the weighted share of
    its words the unit negates ("set and not learned" against "learned per head"). The match is
    0 when the claim has numbers no other option has and the unit states none of them (the
    numbers it shares with other options do not tell them apart), and when the unit binds the
    claim's numbers to other words of the claim than the claim does (:func:`bindings`)."""
    total = claim.total
    if total <= 0:
        return 0.0, 0.0
    w = claim.weight
    own = {t for t in claim.numbers if w[t] >= NUMBER_WEIGHT}  # numbers no other option has
    if own and not own & unit.values or claim.bound and _bound_elsewhere(claim, unit):
        return 0.0, 0.0
    said = (unit.value_terms | unit.terms) - unit.negated
    found = claim.words & said
    found |= {t for a, b, ab in claim.joined if ab in said for t in (a, b) if t in claim.words}
    hit = math.fsum(w[t] for t in found) + math.fsum(w[t] for t in claim.numbers & unit.values)
    against = math.fsum(w[t] for t in claim.words & unit.negated)
    return hit / total, against / total


def _other_subject(claim: Claim, unit: Unit, papers: dict[str, set[str]]) -> bool:
    """The claim is about a supporting paper (its subject's terms are in that paper's names,
    ``papers`` ``{paper_id: name terms}``) other than the unit's, and the unit does not name the
    subject either: "Multi-LexSum: 5-point Likert" is not stated by the LongEval paper's sentence."""
    if not claim.subject or not papers:
        return False
    about = {pid for pid, names in papers.items() if claim.subject <= names}
    if not about or unit.chunk.paper_id in about:
        return False
    return len(claim.subject & (unit.terms | unit.context)) < SUBJECT_SHARE * len(claim.subject)


def choose_option(options: dict[str, str], units: Sequence[Unit], support: Support,
                  papers: Optional[dict[str, set[str]]] = None) -> tuple[Optional[str], dict[str, OptionSupport]]:
    """``(label or None, {label: OptionSupport})``.

    Per claim of an option: its best unit's relevance times the claim's match there, times the
    claim's share of that unit among the options (a unit that states every option tells none
    apart), plus ``SECOND_PLACE`` times its best unit in another chunk that states all of it, minus the relevance of the
    unit that contradicts it most; an option's score is the sum over its telling claims (a part
    not found adds nothing). A claim about a supporting paper ("Multi-LexSum: ...") is stated only
    by that paper's units or by units that name it (``papers``: ``{paper_id: terms of its title and
    own names}``; :func:`_other_subject`). The best-scored option wins; none wins when the best two
    are equal or nothing supports any."""
    claims = claims_of(options)
    found, against = _claim_hits(claims, units, support, papers or {})
    result: dict[str, OptionSupport] = {}
    for lab, cs in claims.items():
        sup = OptionSupport()
        scores = []
        for i, c in enumerate(cs):
            hits = sorted(found[(lab, i)], key=lambda su: -su[0])  # ties: unit order (score, then rank)
            top, top_unit = (hits[0][0], _first_statement(hits)) if hits else (0.0, None)
            second = _corroborate(sup, hits, top_unit)
            neg, neg_unit = against.get((lab, i), (0.0, None))
            sup.units.append(top_unit)
            if neg_unit is not None and (sup.against is None or neg > 0):
                sup.against = neg_unit
            if c.total > 0:
                scores.append(top + SECOND_PLACE * second - neg)
        sup.score = math.fsum(scores)
        result[lab] = sup
    ranked = sorted(options, key=lambda lab: (-result[lab].score, lab))
    if not ranked or result[ranked[0]].score <= 0 or (len(ranked) > 1 and result[ranked[0]].score == result[ranked[1]].score):
        return None, result
    return ranked[0], result


def _claim_hits(claims: dict[str, list[Claim]], units: Sequence[Unit], support: Support,
                papers: dict[str, set[str]]):
    """``(found, against)``: per claim ``(label, i)``, the ``(score, match, unit)`` of every unit
    that states it (relevance times match times its share among the options), and the unit that
    contradicts it most ``(relevance * contradiction, unit)``."""
    found: dict[tuple[str, int], list[tuple[float, float, Unit]]] = {(lab, i): [] for lab in claims
                                                                     for i in range(len(claims[lab]))}
    against: dict[tuple[str, int], tuple[float, Optional[Unit]]] = {}
    for u in units:
        matches = {(lab, i): (0.0, 0.0) if _other_subject(c, u, papers) else claim_match(c, u)
                   for lab, cs in claims.items() for i, c in enumerate(cs)}
        if not any(m or a for m, a in matches.values()):
            continue
        rel = support.relevance(u)
        if rel <= 0:
            continue
        best_of = {lab: max(matches[(lab, i)][0] for i in range(len(claims[lab]))) for lab in claims}
        for (lab, i), (m, a) in matches.items():
            if m:
                others = math.fsum(v for k, v in best_of.items() if k != lab)
                found[(lab, i)].append((rel * m * m / (m + others), m, u))
            if a and rel * a > against.get((lab, i), (0.0, None))[0]:
                against[(lab, i)] = (rel * a, u)
    return found, against


def _corroborate(sup: OptionSupport, hits: Sequence[tuple[float, float, Unit]], top_unit: Optional[Unit]) -> float:
    """The score of the best unit in another chunk that states the whole claim again (0 when
    none); the best such statement of each other paper joins ``sup.also``."""
    again = [(sc, u) for sc, m, u in hits if m >= 1.0 and top_unit is not None
             and u.chunk.chunk_id != top_unit.chunk.chunk_id]
    seen = {top_unit.chunk.paper_id} if top_unit is not None else set()
    for _, u in again:  # the best whole statement of each other paper
        if u.chunk.paper_id not in seen:
            seen.add(u.chunk.paper_id)
            sup.also.append(u)
    return again[0][0] if again else 0.0


def _first_statement(hits: Sequence[tuple[float, float, Unit]]) -> Unit:
    """The unit that states a claim, from ``hits`` ``[(score, match, unit)]`` best first: the
    best, unless a table of the same paper that states as much of the claim scores within
    ``NEAR_TIE`` of it on an earlier page (the main results table over the ablation or
    appendix table that repeats the figure)."""
    score, match, unit = hits[0]
    if unit.kind not in ("cell", "row", "column"):
        return unit
    ties = [(u.chunk.page, rank, u) for rank, (s, m, u) in enumerate(hits) if s >= NEAR_TIE * score
            and m >= match and u.kind == unit.kind and u.chunk.paper_id == unit.chunk.paper_id]
    return min(ties, key=lambda t: t[:2])[2]


_NAME = r"([A-Z][A-Za-z0-9]*(?:[-+][A-Za-z0-9]+)*)"
_TITLE_NAME = re.compile(r"^\s*" + _NAME + r"\s*:")
#: A coined name the abstract uses at least this many times is the paper's own.
_COINED_TIMES = 3
_INTRODUCED = re.compile(r"\b(?:called|named|dubbed|termed|namely|coined|we propose|we introduce|we present|"
                         r"(?:method|model|framework|approach|system|technique|architecture),)\s+"
                         r"(?:a |an |the )?" + _NAME + r"(?=[\s,.;:)])", re.I)
_ACRONYM = re.compile(r"\(([A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9-]*)\)")
_OWN_SENTENCE = re.compile(r"\b(?:we propose|we introduce|we present|dubbed|called|named|namely|our (?:method|model|approach|framework|system))\b", re.I)


def _telling(name: str) -> bool:
    """A coined name: an inner capital or digit ("PaSa", "OSEDiff", "TTT-E2E"), or all capitals."""
    return bool(re.search(r"[a-z0-9][A-Z]|[0-9]|^[A-Z]{2,}", name)) or "-" in name and name[0].isupper()


def own_names(title: str, abstract: str = "", *, frequent: bool = True) -> list[str]:
    """The names a paper gives its own method or system: the title's prefix before a colon
    ("PaSa: An LLM Agent ..."), a coined name after "called", "dubbed", "we propose", "method," ...,
    a parenthesised acronym (not a plural: "LLMs") in a sentence that introduces the paper's own
    method, and (``frequent``) the coined names the abstract uses ``_COINED_TIMES`` times or more
    (those may be a metric or a baseline as well: "BLEU")."""
    found = [m.group(1) for m in _TITLE_NAME.finditer(title)]
    for sentence in re.split(r"(?<=[.!?])\s+", f"{title}. {abstract}"):
        found += [m.group(1) for m in _INTRODUCED.finditer(sentence) if _telling(m.group(1))]
        if _OWN_SENTENCE.search(sentence):
            found += [m.group(1) for m in _ACRONYM.finditer(sentence) if not re.fullmatch(r"[A-Z]+s", m.group(1))]
    coined = Counter(w for w in re.findall(r"\b[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*\b", abstract)
                     if _telling(w) and not re.fullmatch(r"[A-Z]+s", w))
    if frequent:
        found += [w for w, n in coined.most_common(2) if n >= _COINED_TIMES]
    return list(dict.fromkeys(found))
