"""Table answers of the extractive reader (no LLM): the rows of a table-schema question, read from
the supporting papers' table cells and lines (issue 13; issue 24, item 3). See
:func:`extractive_rows`.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Optional, Sequence

from graph.records import Chunk
from graph.search.tokenize import tokenize
from lit3r.read.claims import Support, Unit, terms
from lit3r.read.scoring import NUM, chunk_lines, overlap, question_entities
from lit3r.read.selection import names_in

_PAPER_COLUMN = re.compile(r"\b(paper|title|work|publication|article|study)\b", re.I)
def extractive_rows(question: str, schema: list[dict], chunks: list[Chunk], titles: dict[str, str],
                    units: Sequence[Unit] = (), own: Optional[dict[str, list[str]]] = None,
                    paper_lines: Optional[dict[str, list[str]]] = None,
                    cited: Optional[list[Chunk]] = None) -> list[dict]:
    """Table rows without an LLM: the row keys are the supporting papers' titles when the key
    column names a paper (or the name the question gives the paper, when it lists the papers by
    their ``own`` names, ``{paper_id: names}``: "TTT-E2E, In-Place TTT, TLM and FOA"), else the
    rows the question lists in brackets (:func:`rows_listed`), else the names the question lists,
    else each supporting paper's short name; a name that is a table section's label reads that
    section's row of the paper's own name. For a named row, a number cell comes from the table cell (``units``,
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
    cells = [u for u in units if u.kind == "cell"]
    if _PAPER_COLUMN.search(key):
        return _paper_rows(question, key, others, by_kind, titles, cells, own or {}, paper_lines or {}, cited)
    names = _row_names(question, schema, cells, others, titles)
    block = _one_block(cells, names, question)
    mine = [n for ns in (own or {}).values() for n in ns]
    return [_named_row(question, key, name, others, by_kind, _cells_of(name, block, cells, mine), cited)
            for name in names]


def _cells_of(name: str, block: Sequence[Unit], cells: Sequence[Unit], own: Sequence[str]) -> list[Unit]:
    """The cells of the row keyed ``name``: in the one table block, else anywhere; a name that is a
    section label ("Tiny") reads that section's row of the supporting paper's own name ("Multi-LexSum
    D ->T" under "Tiny")."""
    named = [u for u in block if _names_row(u, name)] or [u for u in cells if _names_row(u, name)]
    if named:
        return named
    section = [u for u in cells if " ".join(u.row_group.lower().split()) == " ".join(name.lower().split())]
    return [u for u in section if _own_row(u.row_key, own)]


def _row_names(question: str, schema: Sequence[dict], cells: Sequence[Unit], others: Sequence[dict],
               titles: dict[str, str]) -> list[str]:
    """The row keys of a table answer whose key column is not a paper: the rows the question lists
    in brackets, else the names it lists (not the columns' names), else the rows of the table that
    fills most columns, else each supporting paper's short name."""
    listed = [e for e in (rows_listed(question) or question_entities(question))
              if not any(_same(e, c["name"]) for c in schema)]
    return listed or _rows_asked(question, cells, others) or [t.split(":")[0].strip()[:60] for t in titles.values()]


def _paper_rows(question: str, key: str, others: Sequence[dict], chunks: Sequence[Chunk], titles: dict[str, str],
                cells: Sequence[Unit], own: dict[str, list[str]], paper_lines: dict[str, list[str]],
                cited: Optional[list[Chunk]]) -> list[dict]:
    """One row per supporting paper (:func:`extractive_rows`), keyed by the name the question gives
    it or its title."""
    listed = question_entities(question)
    lines = [(ln, c.paper_id) for c in chunks for ln in chunk_lines(c)]
    rows = []
    for pid, title in titles.items():
        names = own.get(pid, [])
        label = next((e for e in listed if any(names_in(e, [n]) for n in names)), title)
        row: dict[str, object] = {key: label}
        best = [ln for ln, p in lines if p == pid]
        mine = [u for u in cells if u.chunk.paper_id == pid]
        for col in others:
            row[col["name"]] = _paper_cell(question, col, others, mine, names, paper_lines.get(pid, best), best, cited)
        rows.append(row)
    return rows


def _named_row(question: str, key: str, name: str, others: Sequence[dict], chunks: Sequence[Chunk],
               named: Sequence[Unit], cited: Optional[list[Chunk]]) -> dict:
    """One row keyed ``name``: each column's cell from the table cells whose row key is the name
    (``named``), else the first value after the name in the line naming it that holds most of the
    column's words (a chunk that names the column). A cell read for one column is never copied into
    another column of the row."""
    row: dict[str, object] = {key: name}
    pat = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.I)
    naming = [(ln, c) for c in chunks for ln in chunk_lines(c) if pat.search(ln)]
    used: set[tuple[str, str]] = set()
    for col in others:
        # a cell under the column's own header words ("de" of EN-DE, not the "en" EN-FR shares)
        free = [u for u in named if (u.chunk.chunk_id, u.text) not in used]  # a cell fills one column only
        found, unit = _table_cell_unit(question, col, [u for u in free if _labelled(u, col, others)]
                                       or _most_labelled(free, col))
        if unit is not None:
            used.add((unit.chunk.chunk_id, unit.text))
            if cited is not None and unit.chunk not in cited:
                cited.append(unit.chunk)
        if found is None:
            found, where = _after_name(pat, col, naming, used)
            if where is not None and cited is not None and where not in cited:
                cited.append(where)  # the chunk whose line states the value
        row[col["name"]] = found
    return row


def _most_labelled(cells: Sequence[Unit], col: dict) -> list[Unit]:
    """The cells whose row and column labels hold the most of the column's words ("Target Words"
    for "Avg. target words", over "Source Words"); all of them when none holds one."""
    want = {t for t in terms(col["name"]) if not NUM.fullmatch(t)}
    held = {id(u): len(want & u.terms) for u in cells}
    top = max(held.values(), default=0)
    return [u for u in cells if held[id(u)] == top] if top else list(cells)


def _after_name(pat: re.Pattern, col: dict, naming: Sequence[tuple[str, Chunk]],
                used: set) -> tuple[object, Optional[Chunk]]:
    """``(value, chunk)``: the first value after the name in the lines naming it (``naming``:
    ``(line, chunk)``), the lines that hold most of the column's words first (ties: reading order),
    in chunks that name the column; a line already read for another column is skipped.
    ``(None, None)`` when no line gives one."""
    want = terms(col["name"])
    for hit, where in sorted(naming, key=lambda lc: -overlap(want, terms(lc[0]))):
        if (where.chunk_id, hit) in used or not _about(col, terms(where.text)):
            continue
        found = _cell(pat.split(hit, maxsplit=1)[-1], col)
        if found is not None and found != "":
            used.add((where.chunk_id, hit))
            return found, where
    return None, None


#: Rows the question lists in brackets: "one row per granularity (Tiny, Short, Long)", "[M0, M1, M2]".
_ROW_LIST = re.compile(r"\b(?:one|a|each)\s+row\s+(?:per|for(?:\s+each)?)\s+[^()\[\]]{1,40}?\s*[(\[]([^()\[\]]+)[)\]]"
                       r"|\[([^\[\]]+(?:,[^\[\]]+)+)\]", re.I)


def rows_listed(question: str) -> list[str]:
    """The row keys a question lists in brackets (``_ROW_LIST``), as listed; empty when none."""
    m = _ROW_LIST.search(question)
    if not m:
        return []
    parts = re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", m.group(1) or m.group(2))
    return [p.strip(" .") for p in parts if p.strip(" .")]


def _paper_cell(question: str, col: dict, others: Sequence[dict], mine: Sequence[Unit], names: Sequence[str],
                all_lines: Sequence[str], best: Sequence[str], cited: Optional[list[Chunk]]) -> object:
    """One cell of a paper row (:func:`extractive_rows`): the paper's best result, else a table
    cell under a header that names the column, else a name the paper states as the column's, else
    the paper's best line, else its best table cell. ``mine``: the paper's cells; ``names``: its
    own names; ``all_lines``/``best``: all its lines and those of its best-scored chunks."""
    labelled = [u for u in mine if _labelled(u, col, others)]
    found, unit = _best_result_unit(question, col, labelled, names)
    if found is None:
        found, unit = _table_cell_unit(question, col, labelled)
    if unit is not None and cited is not None and unit.chunk not in cited:
        cited.append(unit.chunk)  # the table a paper row's value was read from
    if found is None:
        found = _named_as(all_lines, col)
    if found is None:
        found = _cell_near(_best_line(best, col["name"]), col, others)
    if found is None:
        found = _table_cell(question, col, mine)
    return found


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


def _one_block(cells: Sequence[Unit], names: Sequence[str], question: str = "") -> list[Unit]:
    """The cells of the one table block (chunk and row group) that names the most of ``names``
    (ties: a block whose group label the ``question`` names, "... on StrategyQA"; then the earlier
    block), so that a table answer reads one comparison, not a mix."""
    blocks: dict[tuple[str, str], set[str]] = {}
    for u in cells:
        for name in names:
            if _names_row(u, name):
                blocks.setdefault((u.chunk.chunk_id, u.row_group), set()).add(name)
    if not blocks:
        return []
    asked = terms(question)
    best = max(blocks, key=lambda b: (len(blocks[b]), bool(b[1]) and terms(b[1]) <= asked))  # max: the first of ties
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
