"""The offline extractive reader (no LLM): candidates -> supporting papers, evidence, answer.

For the top ``read.papers`` candidates, every chunk is scored against the question:

    score = cosine(question, chunk) + 0.5 * token overlap + 0.3 / (1 + candidate rank)
            + 0.1 if the chunk is in the Retrieve pool

(token overlap = share of the question's tokens that occur in the chunk; reference-list entries
count half unless the question is about citations). Supporting papers: as many as the question
needs (:mod:`lit3r.read.selection`: the papers it names, the count it states, the papers a paper
cites, else the best paper and those within ``support_ratio`` of it); evidence: the best chunk of
each (at least ``max_evidence``). A multiple-choice question takes the option its evidence
units state best (:mod:`lit3r.read.claims`: per-option support in the trace, no letter on a
tie); a free-text answer is the best evidence unit (a cell, row or sentence), and its chunk is
always cited first; the reader abstains below ``abstain_cosine``.
This is a transparent baseline for the LLM reader of the seed paper (section 2.3).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from graph.records import Chunk
from graph.search.protocol import SearchIndex
from graph.search.tokenize import tokenize
from graph.store import GraphStore
from lit3r.config import ReadParams
from lit3r.read.base import ReadRequest, ReadResult
from lit3r.read.citations import asks_citing, pick_listed, reference_chunk
from lit3r.read.claims import Support, Unit, choose_option, own_names, terms, units_of
from lit3r.read.ratios import pick_factor
from lit3r.read.scoring import CITE_Q, NUM, NUMERIC_Q, ask_part, chunk_lines, named_objects, overlap, question_entities
from lit3r.read.selection import names_in, select_papers


@dataclass
class ScoredChunks:
    """The chunks read for one question: ``items`` ``[(score, chunk)]``, best first, and
    ``closeness``, the mean cosine of the question with its ``read.abstain_chunks`` closest
    chunks (-1 when nothing was read); the reader abstains when it is below
    ``read.abstain_cosine`` (calibrated on questions_dev and off-topic questions)."""

    items: list[tuple[float, Chunk]]
    closeness: float


class ExtractiveReader:
    """See the module docstring. Reads chunks from ``graph`` and their vectors from ``index``."""

    def __init__(self, graph: GraphStore, index: SearchIndex, params: ReadParams) -> None:
        self.graph = graph
        self.index = index
        self.params = params

    def _names(self, paper_id: str) -> list[str]:
        """The paper's own names, as the question would name it (no frequency-coined ones), and its
        full title (of three words or more)."""
        paper = self.graph.paper(paper_id)
        title = [paper.title] if len(paper.title.split()) >= 3 else []
        return own_names(paper.title, paper.abstract or "", frequent=False) + title

    def _cited(self, paper_id: str) -> list[str]:
        """The corpus papers ``paper_id`` cites (the citation graph)."""
        return [target for _, _, target in self.graph.cites(paper_id) if target]

    def _citing(self, target: str, lead: Chunk, options: Optional[dict[str, str]]) -> ReadResult:
        """The answer to "which corpus papers cite ``target``" (:mod:`lit3r.read.citations`):
        ``target`` and its citing corpus papers, ``lead`` (its best chunk) and each citing paper's
        reference entry as evidence, the option that lists the citing papers best."""
        citing = [pid for pid in self.graph.cited_by(target) if pid != target]
        evidence = [lead]
        for pid in citing:
            numbers = [n for n, _, cited in self.graph.cites(pid) if cited == target]
            entry = reference_chunk(self.graph.chunks_of(pid), numbers)
            if entry is not None:
                evidence.append(entry)
        papers = [target, *citing]
        titles = [self.graph.paper(pid).title for pid in citing]
        result = ReadResult(papers, evidence, freeform=("Cited by: " + "; ".join(titles))[:400] if titles else
                            "no corpus paper cites it", notes=[f"citing papers from the citation graph: {len(citing)}"])
        if options:
            corpus = [self.graph.paper(pid) for pid in self.graph.paper_ids()]
            result.choice, f1 = pick_listed(options, set(citing), corpus)
            result.option_scores = {lab: round(v, 4) for lab, v in f1.items()}
        result.supporting = {pid: [c.chunk_id for c in evidence if c.paper_id == pid] for pid in papers}
        return result

    def score_chunks(self, question: str, qvecs: np.ndarray, candidates: Sequence[str], *,
                     pooled: Optional[frozenset[str]] = None, limit: Optional[int] = None) -> ScoredChunks:
        """Every chunk of the first ``limit`` (default ``read.papers``) candidates with its score
        (module docstring), best first, and the question's closeness to them (for abstention).
        ``qvecs``: the question's and its ask part's query vectors, ``(2, dim)``; ``pooled``: the
        chunk ids of the Retrieve pool (those get the pool bonus)."""
        ask = ask_part(question)
        qtok, atok = set(tokenize(question)), set(tokenize(ask))
        cite_q = bool(CITE_Q.search(question))
        numeric_q = bool(NUMERIC_Q.search(ask))
        named = named_objects(question)
        scored: list[tuple[float, Chunk]] = []
        cosines: list[np.ndarray] = []
        for rank, pid in enumerate(candidates[: limit or self.params.papers]):
            chunks = self.graph.chunks_of(pid)
            if not chunks:
                continue
            vecs = self.index.vectors_of([c.chunk_id for c in chunks])
            cos_q, cos_a = vecs @ qvecs[0], vecs @ qvecs[1]
            cosines.append(cos_q)
            for c, sq, sa in zip(chunks, cos_q, cos_a):
                ctok = set(tokenize(c.text))
                s = (float(sq) + float(sa) + 0.5 * overlap(qtok, ctok) + 0.5 * overlap(atok, ctok)
                     + 0.3 / (1 + rank))
                if pooled is not None and c.chunk_id in pooled:
                    s += 0.1
                if numeric_q and c.kind == "table":
                    s += 0.15
                if c.kind == "title_abstract":
                    s -= 0.1
                if c.object_id and c.object_id.startswith("Citation") and not cite_q:
                    s *= 0.5
                if c.object_id in named:
                    s += 1.0  # the question names this object: "Figure 1 of ...", "reference [57]"
                scored.append((s, c))
        # ties: candidate rank, then the chunk's place in its paper (the list is built in that order;
        # Python's sort is stable), never a hash-seeded set order
        scored.sort(key=lambda sc: -sc[0])
        closest = np.sort(np.concatenate(cosines))[::-1][: self.params.abstain_chunks] if cosines else np.zeros(0)
        return ScoredChunks(scored, float(closest.mean()) if len(closest) else -1.0)

    def read(self, request: ReadRequest, scored: Optional[ScoredChunks] = None) -> ReadResult:
        """Answer ``request`` from its candidates. Every answer type is produced (the validator
        keeps the requested ones); ``scored``: the output of :meth:`score_chunks` when the caller
        already has it (chunks beyond the first ``read.papers`` candidates are ignored)."""
        question, candidates = request.question, request.candidates
        options, schema = request.options, request.schema
        if not candidates:
            return ReadResult([], [])
        ask = ask_part(question)
        numeric_q = bool(NUMERIC_Q.search(ask))
        given = scored if scored is not None else self.score_chunks(question, request.qvecs, candidates,
                                                                         pooled=request.pooled)
        first = set(candidates[: self.params.papers])
        read = [sc for sc in given.items if sc[1].paper_id in first]
        if not read or given.closeness < self.params.abstain_cosine:  # far from everything read
            asked = " ".join(question.split())
            asked = asked if len(asked) <= _ECHO_CHARS else asked[:_ECHO_CHARS].rstrip() + "..."
            return ReadResult([], [], freeform=f"no supporting evidence in this corpus for: {asked}",
                              notes=["abstained: no read chunk is close enough to the question (read.abstain_cosine)"])
        best: dict[str, tuple[float, Chunk]] = {}
        for s, c in read:
            best.setdefault(c.paper_id, (s, c))
        ranked = sorted(best.items(), key=lambda kv: -kv[1][0])  # ties: candidate rank (stable sort)
        if not ranked:
            return ReadResult([], [])
        top = ranked[0][1][0]
        chosen = select_papers(question, [(pid, s) for pid, (s, _) in ranked], self.params.support_ratio,
                               names_of=self._names, cited_by=self._cited)
        if asks_citing(question) and not schema:  # "which corpus papers cite ...": the citation graph answers
            return self._citing(chosen[0], best[chosen[0]][1], options)
        limit = max(self.params.max_evidence, len(chosen))  # each supporting paper with its evidence
        evidence = [best[pid][1] for pid in chosen][:limit]
        if numeric_q and evidence[0].kind not in ("table", "figure"):
            # a value question: also cite the top paper's best-matching table or figure
            obj = next((c for _, c in read if c.paper_id == chosen[0] and c.kind in ("table", "figure")), None)
            if obj is not None:
                evidence.insert(1, obj)
                evidence = evidence[:limit]
        result = ReadResult(chosen, evidence, paper_scores={pid: s for pid, (s, _) in ranked})
        units = [u for s, c in read if c.paper_id in chosen for u in units_of(c, max(s, 0.0) / top if top > 0 else 0.0)]
        papers = {pid: self.graph.paper(pid) for pid in chosen}
        support = Support(question, units, [n for p in papers.values() for n in own_names(p.title, p.abstract or "")])
        answer_unit, stating = None, []
        if options:
            result.choice, per_option = choose_option(options, units, support)
            result.option_scores = {lab: sup.score for lab, sup in per_option.items()}
            result.option_support = {lab: sup.trace() for lab, sup in per_option.items()}
            if result.choice is None:
                result.notes.append("no option is supported more than the others by the evidence: no letter given")
            else:
                won = per_option[result.choice]
                stating = [u.chunk for u in won.units if u is not None]
                # a claim stated again by another supporting paper: that paper's statement is its evidence
                # (a sentence does not displace a paper's best chunk when that is a table or figure)
                objects = {c.paper_id for c in result.evidence if c.kind in ("table", "figure")}
                stating += [u.chunk for u in won.also if u.chunk.paper_id in chosen
                            and all(c.paper_id != u.chunk.paper_id for c in stating)
                            and (u.kind != "line" or u.chunk.paper_id not in objects)]
                answer_unit = next((u for u in per_option[result.choice].units if u is not None), None)
            factor = pick_factor(question, options, [c for _, c in read if c.paper_id in chosen])
            if factor is not None:  # "by what factor ...": the quotient of two table cells states the option
                result.choice, stating = factor.label, []
                answer_unit = Unit(factor.chunk, factor.text, set(), set(), "row")
                result.notes.append(f"factor option {factor.label}: {factor.text}")
        if answer_unit is None and units:
            how = bool(_HOW_Q.search(ask)) and not numeric_q
            # a mechanism is the first supporting paper's: its own sentences answer "how"
            own = [u for u in units if u.chunk.paper_id == chosen[0]] if how else []
            answer_unit = max(own or units, key=lambda u: support.relevance(u) * (_how_share(u) if how else 1.0)
                              + (0.2 if numeric_q and u.values else 0.0))
        if answer_unit is not None:
            result.freeform = answer_unit.text[:400]
            result.evidence = _cite_first(answer_unit.chunk, result.evidence, limit, stating,
                                          single=len(chosen) == 1)
            for c in reversed(result.evidence):
                if c.paper_id not in result.papers:
                    result.papers.insert(0, c.paper_id)
        if schema:
            cited: list[Chunk] = []
            result.rows = extractive_rows(question, schema, [c for _, c in read if c.paper_id in chosen][:30],
                                          {pid: p.title for pid, p in papers.items()}, units,
                                          {pid: self._names(pid) for pid in papers},
                                          {pid: [ln for c in self.graph.chunks_of(pid) for ln in chunk_lines(c)]
                                           for pid in papers}, cited)
            if cited:  # a table answer read from table cells cites those tables first
                result.evidence = _cite_first(cited[0], result.evidence, max(limit, len(cited)), cited[1:])
        result.supporting = {pid: [c.chunk_id for c in result.evidence if c.paper_id == pid] for pid in result.papers}
        return result


#: A question about a mechanism: "How does X build / bias / route ...?", "In what way ...".
_HOW_Q = re.compile(r"^\s*(?:how (?:does|do|is|are|can|did)\b|in what way\b|by what (?:means|mechanism)\b)", re.I)
#: A sentence that reports an experiment rather than states a mechanism.
_EVALUATION = re.compile(r"\b(?:experiments?|evaluat\w*|we (?:test|conduct|measure|report|observe|compare)\w*|results?|"
                         r"performance|performed|outperforms?|accuracy|baselines?|ablation|Table \d+|Figure \d+)\b", re.I)
#: A sentence that states how something is done.
_MECHANISM = re.compile(r"\b(?:by|via|using|instead of|consists? of|is computed|computes?|we (?:propose|introduce|use|apply|"
                        r"construct|build|define)|first\b.*\bthen|recursively|each)\b", re.I)
#: The share of its relevance an evaluation sentence keeps for a mechanism question, and the
#: factor a sentence that states a mechanism gets (item 3: the sentence that answers "how").
EVALUATION_SHARE, MECHANISM_FACTOR = 0.6, 1.25


def _how_share(unit: Unit) -> float:
    """The factor of a unit's relevance for a "how" question (``EVALUATION_SHARE``,
    ``MECHANISM_FACTOR``): table cells and rows state results, not mechanisms."""
    if unit.kind != "line":
        return EVALUATION_SHARE
    share = EVALUATION_SHARE if _EVALUATION.search(unit.text) or _EVALUATION.search(unit.chunk.section or "") else 1.0
    return share * (MECHANISM_FACTOR if _MECHANISM.search(unit.text) else 1.0)


#: How much of the question an abstention repeats.
_ECHO_CHARS = 200


def _cite_first(chunk: Chunk, evidence: list[Chunk], limit: int, stating: Sequence[Chunk] = (),
                single: bool = False) -> list[Chunk]:
    """The evidence of an answer: ``chunk`` (the answer unit's) first, then the chunks that state
    the chosen option's other parts (``stating``), then the rest of ``evidence``, at most
    ``limit``, without repeats. A chunk of the answer's paper that answers nothing more (that
    paper's best-scored chunk) is dropped, and so is another table or figure of a paper whose
    answer a table or figure already states; for an answer from one paper (``single``) only the
    chunks that state the answer are kept."""
    first: dict[str, Chunk] = {}
    for c in [chunk, *stating]:
        first.setdefault(c.chunk_id, c)
    lead = list(first.values())
    rest = [c for c in evidence if all(c.chunk_id != d.chunk_id for d in lead)]
    if single:
        return lead[:limit]
    answered = {c.paper_id for c in lead}
    objects = {c.paper_id for c in lead if c.kind in ("table", "figure")}
    rest = [c for c in rest if c.paper_id not in answered or (c.kind in ("table", "figure") and c.paper_id not in objects)]
    return [*lead, *rest][:limit]


_PAPER_COLUMN = re.compile(r"\b(paper|title|work|publication|article|study)\b", re.I)
def extractive_rows(question: str, schema: list[dict], chunks: list[Chunk], titles: dict[str, str],
                    units: Sequence[Unit] = (), own: Optional[dict[str, list[str]]] = None,
                    paper_lines: Optional[dict[str, list[str]]] = None,
                    cited: Optional[list[Chunk]] = None) -> list[dict]:
    """Table rows without an LLM: the row keys are the supporting papers' titles when the key
    column names a paper (or the name the question gives the paper, when it lists the papers by
    their ``own`` names, ``{paper_id: names}``: "TTT-E2E, In-Place TTT, TLM and FOA"), else the names the question lists, else each supporting paper's short
    name. For a named row, a number cell comes from the table cell (``units``,
    :mod:`lit3r.read.claims`) whose row key is the name, in the one table block that names most of
    the rows, and whose column label matches the column's name and the question best; otherwise
    from the first number after the name in the best-scored ``chunks`` (tables first). For a paper
    row: its best result when the question asks for one (:func:`_best_result`), else the cell
    under the column's header that matches the question best, else a name the paper states as
    the column's ("NAME as the base model", in any of its lines, ``paper_lines``
    ``{paper_id: lines}``), else the paper's line that matches the column's name best, else its
    best table cell. A string cell is otherwise the rest of the best line. ``cited``: when
    given, the table chunks the named rows' values were read from are appended to it. A value that is not found stays empty:
    nothing is invented."""
    keys = [c for c in schema if c.get("is_row_key")] or schema[:1]
    others = [c for c in schema if c not in keys]
    key = keys[0]["name"]
    by_kind = sorted(chunks, key=lambda c: c.kind != "table")
    lines = [(ln, c.paper_id) for c in by_kind for ln in chunk_lines(c)]
    cells = [u for u in units if u.kind == "cell"]
    rows: list[dict] = []
    if _PAPER_COLUMN.search(key):
        listed = question_entities(question)
        for pid, title in titles.items():
            label = next((e for e in listed if any(names_in(e, [n]) for n in (own or {}).get(pid, []))), title)
            row: dict[str, object] = {key: label}
            best = [ln for ln, p in lines if p == pid]
            for col in others:
                mine = [u for u in cells if u.chunk.paper_id == pid]
                # a table cell under a header that names the column; else the paper's best line; else
                # its best table cell
                labelled = [u for u in mine if _labelled(u, col, others)]
                found, unit = _best_result_unit(question, col, labelled, (own or {}).get(pid, []))
                if found is None:
                    found, unit = _table_cell_unit(question, col, labelled)
                if unit is not None and cited is not None and unit.chunk not in cited:
                    cited.append(unit.chunk)  # the table a paper row's value was read from
                if found is None:
                    found = _named_as((paper_lines or {}).get(pid, best), col)
                if found is None:
                    found = _cell_near(_best_line(best, col["name"]), col, others)
                if found is None:
                    found = _table_cell(question, col, mine)
                row[col["name"]] = found
            rows.append(row)
        return rows
    listed = [e for e in question_entities(question) if not any(_same(e, c["name"]) for c in schema)]
    names = listed or _rows_asked(question, cells, others) or [t.split(":")[0].strip()[:60] for t in titles.values()]
    block = _one_block(cells, names)
    for name in names:
        row = {key: name}
        pat = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.I)
        hit, where = next(((ln, c) for c in by_kind for ln in chunk_lines(c) if pat.search(ln)), ("", None))
        rest = pat.split(hit, maxsplit=1)[-1] if hit else ""
        named = [u for u in block if _names_row(u, name)] or [u for u in cells if _names_row(u, name)]
        for col in others:
            # a cell under the column's own header words ("de" of EN-DE, not the "en" EN-FR shares)
            found, unit = _table_cell_unit(question, col, [u for u in named if _labelled(u, col, others)] or named)
            if unit is not None and cited is not None and unit.chunk not in cited:
                cited.append(unit.chunk)
            if found is None and where is not None and _about(col, terms(where.text)):  # the chunk names the column
                found = _cell(rest, col)
            row[col["name"]] = found
        rows.append(row)
    return rows


def _same(a: str, b: str) -> bool:
    """Two names are the same, case, spacing and punctuation aside ("EN-DE" and "en de")."""
    return tokenize(a) == tokenize(b)


#: At most this many rows are read from a table when the question names none.
_MAX_ASKED_ROWS = 10


def _rows_asked(question: str, cells: Sequence[Unit], columns: Sequence[dict]) -> list[str]:
    """Row keys for a question that lists the columns but not the rows ("the BLEU of the base
    and big Transformer on EN-DE and EN-FR"): in the table whose cells fill most of the
    ``columns``, the rows whose key shares a word with the question (other than the columns'
    words), in table order. Empty when no table has such rows."""
    asked = terms(question) - {t for c in columns for t in terms(c["name"])}
    by_chunk: dict[str, tuple[set[str], list[str]]] = {}
    for u in cells:
        if not u.row_key or not any(_about(c, u.terms | u.context) for c in columns):
            continue
        filled, keys = by_chunk.setdefault(u.chunk.chunk_id, (set(), []))
        filled.update(c["name"] for c in columns if _about(c, u.terms | u.context))
        if u.row_key not in keys and terms(u.row_key) & asked:
            keys.append(u.row_key)
    ranked = sorted(by_chunk.values(), key=lambda fk: (-len(fk[0]), -len(fk[1])))
    return next((keys[:_MAX_ASKED_ROWS] for _, keys in ranked if keys), [])


def _best_line(lines: Sequence[str], name: str) -> str:
    """The line that holds most of the tokens of ``name`` ("" when there is none)."""
    want = set(tokenize(name))
    best = max(lines, key=lambda x: overlap(want, set(tokenize(x))), default="")
    return best if best and overlap(want, set(tokenize(best))) > 0 else ""


def _names_row(unit: Unit, name: str) -> bool:
    """The cell's row key is ``name``, case and spacing aside."""
    return " ".join(unit.row_key.lower().split()) == " ".join(name.lower().split())


def _one_block(cells: Sequence[Unit], names: Sequence[str]) -> list[Unit]:
    """The cells of the one table block (chunk and row group) that names the most of ``names``
    (ties: the earlier block), so that a table answer reads one comparison, not a mix."""
    blocks: dict[tuple[str, str], set[str]] = {}
    for u in cells:
        for name in names:
            if _names_row(u, name):
                blocks.setdefault((u.chunk.chunk_id, u.row_group), set()).add(name)
    if not blocks:
        return []
    best = max(blocks, key=lambda b: len(blocks[b]))
    return [u for u in cells if (u.chunk.chunk_id, u.row_group) == best]


def _about(col: dict, said: set[str]) -> bool:
    """``said`` (a unit's or line's terms) holds a word of the column's name: a value is only
    read for a column the evidence names."""
    return bool({t for t in terms(col["name"]) if not NUM.fullmatch(t)} & said)


def _table_cell(question: str, col: dict, cells: Sequence[Unit]) -> Optional[object]:
    """The value of the cell among ``cells`` whose context matches the column's name (twice) and
    the question best, cast to the column's type, among the cells whose row, column or caption
    name the column; None when no such cell has a value of that type."""
    return _table_cell_unit(question, col, cells)[0]


def _table_cell_unit(question: str, col: dict, cells: Sequence[Unit]) -> tuple[Optional[object], Optional[Unit]]:
    """:func:`_table_cell` with the cell it read: ``(value, unit)``, ``(None, None)`` when none."""
    cells = [u for u in cells if _about(col, u.terms | u.context)]  # a column the table does not have stays empty
    if col.get("type") != "number" or not cells:
        return None, None
    support = Support(f"{col['name']} {col['name']}. {question}", cells)
    for u in sorted(cells, key=lambda u: -support.relevance(u)):
        value = _cell(u.text.rsplit(":", 1)[-1], col)
        if value is not None:
            return value, u
    return None, None


#: The question asks for a paper's best result ("its best RL-trained model", "the highest score").
_SUPERLATIVE = re.compile(r"\b(?:best|highest|strongest|top|lowest|state-of-the-art)\b", re.I)
#: Column names whose figures are better when smaller.
_LOWER_BETTER = re.compile(r"\b(?:error|loss|perplexity|ppl|bpb|bpc|wer|cer|latency|time|fid|mae|mse|rmse)\b", re.I)
_OURS = re.compile(r"\(ours\)|\bours\b", re.I)
#: A model size the question names ("7B models", "a 350M model").
_SIZE = re.compile(r"\b\d+(?:\.\d+)?[BM]\b")


def _best_result(question: str, col: dict, cells: Sequence[Unit], names: Sequence[str]) -> Optional[object]:
    """The value of :func:`_best_result_unit`."""
    return _best_result_unit(question, col, cells, names)[0]


def _best_result_unit(question: str, col: dict, cells: Sequence[Unit],
                      names: Sequence[str]) -> tuple[Optional[object], Optional[Unit]]:
    """For a question that asks for a paper's best result (``_SUPERLATIVE``), the best value of
    ``col`` among the ``cells`` (those under the column's header) of the paper's own rows: a row
    key or group that holds one of the paper's ``names`` or says "(Ours)", leaving out cells
    whose row, column or caption hold a term the question excludes ("without majority voting"),
    and keeping only the cells of a model size the question names ("7B") when some have it.
    Best = largest, or smallest for a column whose name is an error, loss, perplexity or time.
    None when the question does not ask for a best result or no own row has a value."""
    if col.get("type") != "number" or not _SUPERLATIVE.search(question):
        return None, None
    excluded = Support(question, cells).query.negated
    sizes = {s.lower() for s in _SIZE.findall(question)}
    sized = [u for u in cells if sizes & (u.terms | u.context)]  # "7B models": rows or tables of that size
    values = []
    for u in sized or cells:
        row = f"{u.row_group} {u.row_key}"
        if not (_OURS.search(row) or _own_row(row, names)) or excluded & (u.terms | u.context):
            continue
        value = _cell(u.text.rsplit(":", 1)[-1], col)
        if isinstance(value, (int, float)):
            values.append((value, u))
    if not values:
        return None, None
    pick = min if _LOWER_BETTER.search(col["name"]) else max
    return pick(values, key=lambda vu: vu[0])


#: A name as papers write one: a capitalised token with digits, dots, pluses or hyphens
#: ("Qwen-2.5-Math-7B", "CodeLLAMA", "DeepSeek-V3-Base").
_NAME_TOKEN = r"([A-Z][A-Za-z0-9.+]*(?:-[A-Za-z0-9.+]+)*)"


def _own_row(row: str, names: Sequence[str]) -> bool:
    """A row label starts a word with one of the paper's ``names``: "Satori-Qwen-7B (Round 2)"
    and "CodeLLAMA + ReFT" are rows of Satori and ReFT; "ReFTs" and "PreFT" are not."""
    return any(len(n) >= 3 and re.search(rf"(?<![\w-]){re.escape(n)}(?![a-z0-9])", row, 0 if n.isupper() else re.I)
               for n in names)


def _named_as(lines: Sequence[str], col: dict) -> Optional[str]:
    """A string cell stated as a naming phrase of the column's name in the paper's ``lines``:
    "we use NAME as the base model", "the base model (NAME)", "base model: NAME" for a column
    "Base model". The name stated most often wins (ties: the first). None for a number column
    or when no line names one."""
    if col.get("type") == "number":
        return None
    words = [re.escape(w) for w in re.findall(r"[A-Za-z]+", col["name"])]
    if not words or len(words) > 4:
        return None
    phrase = r"\s+".join(words) + "s?"
    forms = [re.compile(_NAME_TOKEN + r"\s+as\s+(?:the\s+|our\s+|its\s+|a\s+|an\s+)?" + phrase + r"\b", re.I),
             re.compile(r"\b" + phrase + r"\s*(?:\(|:\s*|is\s+|was\s+)" + _NAME_TOKEN)]
    said: Counter = Counter()
    for line in lines:
        for rx in forms:
            for m in rx.finditer(line):
                name = m.group(1).rstrip(".")
                if name[:1].isupper() and len(name) > 1 and name.lower() not in _NOT_NAMES:
                    said[name] += 1
    return said.most_common(1)[0][0] if said else None


#: Capitalised words that start a sentence rather than name something.
_NOT_NAMES = {"we", "our", "the", "this", "it", "they", "these", "a", "an", "in", "for", "as", "and"}


def _labelled(unit: Unit, col: dict, columns: Sequence[dict]) -> bool:
    """The cell's row, column and caption hold the words of ``col``'s name that the other
    ``columns`` lack ("GSM8K (%)" -> a cell under a "GSM8K" header)."""
    shared = {t for c in columns if c is not col for t in terms(c["name"])}
    own = {t for t in terms(col["name"]) if not NUM.fullmatch(t)} - shared
    return bool(own) and own <= unit.terms | unit.context


def _cell_near(line: str, col: dict, columns: Sequence[dict]) -> object:
    """A cell of ``col`` read from a line of text. For a number column whose name has a word the
    other number ``columns`` lack (LUAD / LUSC), the numbers near those words are paired with the
    columns in the order both appear ("507 slides ... (LUAD) and 486 ... (LUSC)": LUAD -> 507),
    or when they do not pair up, the number nearest to the column's word; else :func:`_cell`."""
    numeric = [c for c in columns if c.get("type") == "number"]
    if col.get("type") != "number" or not line or col not in numeric:
        return _cell(line, col)
    spots = {c["name"]: _spots(line, c, numeric) for c in numeric}
    if not spots[col["name"]]:
        return _cell(line, col)
    near = [m for m in _VALUE.finditer(line) if not _year(m.group(0))
            and any(abs(m.start() - p) <= _NEAR_CHARS for ps in spots.values() for p in ps)]
    placed = sorted((ps[0], name) for name, ps in spots.items() if ps)
    if near and len(near) == len(placed):
        num = near[[name for _, name in placed].index(col["name"])].group(0)
    elif near:
        num = min(near, key=lambda m: min(abs(m.start() - p) for p in spots[col["name"]])).group(0)
    else:
        return None
    return _number(num)


#: Numbers this many characters from a column's word belong to it (``_cell_near``).
_NEAR_CHARS = 60


def _spots(line: str, col: dict, columns: Sequence[dict]) -> list[int]:
    """Where the words of ``col``'s name that no other column shares occur in ``line``."""
    shared = {t for c in columns if c is not col for t in tokenize(c["name"])}
    own = [t for t in tokenize(col["name"]) if t not in shared]
    return sorted(m.start() for t in own for m in re.finditer(rf"(?<![\w-]){re.escape(t)}(?![\w-])", line, re.I))


#: A number standing on its own (not the "8" of "GSM8K" or the "7" of "7B"), with its thousands
#: separators ("1,603" is one number, not 1 and 603).
_VALUE = re.compile(r"(?<![A-Za-z0-9_.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![A-Za-z0-9_]|[.,]\d)")


def _number(text: str) -> float | int:
    """A matched :data:`_VALUE` as a number, thousands separators dropped."""
    plain = text.replace(",", "")
    return float(plain) if "." in plain else int(plain)


def _year(text: str) -> bool:
    """A four-digit integer of 1900-2100 written without a separator: a year, not a result."""
    return text.isdigit() and 1900 <= int(text) <= 2100


def _cell(text: str, col: dict) -> object:
    if col.get("type") == "number":
        for m in _VALUE.finditer(text):
            if _year(m.group(0)):
                continue  # a year ("Gu et al., 2023"), not a result
            return _number(m.group(0))
        return None
    return " ".join(text.split()).strip(" |:")[:80]
