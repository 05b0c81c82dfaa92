"""MinerU adapter: a MinerU ``content_list.json`` -> :class:`ingest.document.ParsedDocument`.

Source of the format: MinerU content_list.json (opendatalab/MinerU, ``make_blocks_to_content_list``):
a JSON list of blocks in reading order, each with ``type`` (text, image, table, equation, discarded;
newer versions also list, code, chart, header, footer, page_number, aside_text, page_footnote),
``page_idx`` (0-based) and ``bbox`` (0-1000 page coordinates). Text blocks carry ``text`` and an
optional ``text_level`` (1 = heading); images ``image_caption``/``image_footnote`` (older versions
``img_caption``/``img_footnote``); tables ``table_caption``, ``table_body`` (HTML),
``table_footnote``; equations ``text`` (LaTeX in ``$$`` fences); lists ``list_items`` (sub_type
``ref_text`` for reference lists); code ``code_caption``/``code_body``.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Optional

from ingest.document import BadInputError, Block, ParsedDocument, RawReference
from ingest.text import clean, join_lines, repair_chars

_SKIP = {"discarded", "header", "footer", "page_number", "aside_text", "page_footnote"}
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
_LABEL = {
    "Table": re.compile(r"^\s*(?:Table|TABLE|Tab\.)\s*([A-Z]?\d+|[IVXLC]+)\b"),
    "Figure": re.compile(r"^\s*(?:Figure|FIGURE|Figs?\.|FIG\.)\s*([A-Z]?\d+|[IVXLC]+)\b"),
    "Algorithm": re.compile(r"^\s*(?:Algorithm|ALGORITHM)\s*(\d+)\b"),
}
_REF_HEAD = re.compile(r"^\s*(?:\d+\.?\s*)?(?:References|REFERENCES|Bibliography|BIBLIOGRAPHY)\s*$")
_REF_PREFIX = re.compile(r"^\s*(?:References|REFERENCES|Bibliography|BIBLIOGRAPHY)[ \t]*\n")
_APPENDIX = re.compile(
    r"^\s*(?:Appendix|APPENDIX|Appendices|Supplementary|Supplemental|(?:NeurIPS )?Paper Checklist|Checklist"
    r"|[A-Z](?:\.\d+)*\.?\s+[A-Z0-9])"
)
_ABSTRACT = re.compile(r"^\s*(?:Abstract|ABSTRACT)\b[\s.:\u2014\u2013-]*")
_ABSTRACT_STOP = re.compile(r"^\s*(?:Keywords|Key words|Index Terms|\u00a9|\$\\copyright\$)", re.I)
_ALGO_LINE = re.compile(r"^\s*(?:Require|Ensure|Input|Output|Initiali[sz]e|Parameters?|Procedure|\d{1,3}\s*:)", re.I)
_YEAR = re.compile(r"(?<![\d.:/\-\u2013])(?:19|20)\d{2}[a-z]?\b(?!\.\d|[\u2013-]\d)")
_PARTICLE = r"(?:(?:[Vv]an|[Vv]on|[Dd]e|[Dd]i|[Dd]u|[Ll]e|[Ll]a|[Dd]el|[Dd]er|[Dd]en|[Dd]os|[Dd]a)\s+)+"
_SURNAME = r"[A-Z][^\s,.;:()\d]*[a-z\u00df-\u024f][^\s,.;:()\d]*"
_INITIALS = r"[A-Z]\.(?:\s?-?[A-Z]\.)*"
# "Surname, X." / "Van Wyk, D.B." / "Surname, Firstname" / "Surname X." at the start of an entry.
_AUTHOR = (rf"(?:{_PARTICLE}{_SURNAME}(?:\s{_SURNAME})?|{_SURNAME})"
           rf"(?:,\s*(?:{_INITIALS}|[A-Z][a-z]+[\s,])|\s{_INITIALS}[,\s])")
_AUTHOR_START = re.compile(_AUTHOR)
_AUTHOR_PAIR = re.compile(rf"{_SURNAME},\s*{_INITIALS}")
_MID_START = re.compile(rf"(?<=[.?!])\s+(?={_AUTHOR})")
_BRACKET = re.compile(r"\[(\d{1,4})\]\s*")
_DOT = re.compile(r"^(\d{1,4})\.\s+(?=\S)")
_HARD_OPEN = re.compile(r"(?:[,;:&(\u2013-]|\b(?:and|in|of|the|for|on|at|to|In|pp\.|vol\.|eds?\.|Proc\.|et al\.))$")
_AFFIL_CUT = re.compile(r"(?:University|Universit\u00e9|Institute|School|Department|Dept\.|Laborator|Faculty|College|Research|Centre|Center)")
_AFFIL_WORDS = {"Sciences", "Science", "Studies", "Lab", "Labs", "Inc", "Inc.", "AI", "Google", "Microsoft", "Meta",
                "DeepMind", "Received", "Revised", "Accepted", "Equal", "Contribution", "Correspondence", "Email"}


def parse_content_list(path: str | Path, *, n_pages: Optional[int] = None, image_root: Optional[Path] = None) -> ParsedDocument:
    """Parse a MinerU ``content_list.json`` into a :class:`ParsedDocument`.

    - ``path``: the JSON file (a list of block dicts, MinerU content_list.json format).
    - ``n_pages``: physical page count when known (from the PDF); else ``max(page_idx) + 1``.
    - ``image_root``: folder (relative to the corpus folder) that MinerU's ``img_path`` values are
      relative to; block images become ``(image_root / img_path)`` as a POSIX string.

    Returns title, best-effort authors, abstract, blocks in reading order (title and abstract
    excluded; headings level 1; tables with ``Table N`` ids and `` | ``-joined rows; figures,
    equations, algorithms), raw reference entries split one per entry, and one-line warnings.
    Raises :class:`BadInputError` for a missing file, invalid JSON, a non-list, or no usable text.
    """
    items = _load(Path(path))
    max_page = max((_int(it.get("page_idx")) for it in items), default=0) + 1
    doc = ParsedDocument(n_pages=n_pages or max_page)
    if max_page > doc.n_pages:
        doc.warnings.append(f"page_idx up to {max_page} exceeds the {doc.n_pages} PDF pages; pages clamped")
    page = lambda it: min(max(_int(it.get("page_idx")) + 1, 1), doc.n_pages)  # noqa: E731
    consumed = _front_matter(items, doc)
    captions = _adopt_captions(items, consumed)
    refs = _RefSplitter()
    mode = "body"  # body -> refs (-> paused after a non-appendix heading) -> after
    for i, it in enumerate(items):
        typ, pg, text = it.get("type"), page(it), it.get("text") or ""
        if i in consumed:
            continue
        if typ in _SKIP:  # headers/footers; but keep a numbered entry MinerU marked discarded
            if mode == "refs" and refs.expects(text):
                refs.feed(text, pg)
                doc.warnings.append(f"recovered reference entry marked discarded by MinerU on page {pg}")
            continue
        if typ in ("table", "image", "chart", "code"):
            block = _object_block(it, pg, captions.get(i), image_root)
            if block:
                doc.blocks.append(block)
        elif typ == "equation":
            latex = re.sub(r"^\s*\$\$?|\$\$?\s*$", "", text).strip()
            m = re.search(r"\\tag\*?\{\s*(\d+)\s*\}", latex) or re.search(
                r"(?:^|\\q?quad|\\hfill|[,.~&])\s*\(\s*(\d+)\s*\)\s*$", latex)
            if latex:
                doc.blocks.append(Block("equation", pg, latex, f"Equation {m.group(1)}" if m else None))
        elif typ == "list":
            lines = [str(x) for x in it.get("list_items") or []]
            if it.get("sub_type") == "ref_text" or mode == "refs":
                mode = "refs" if mode != "after" else mode
                for line in lines:
                    refs.feed(line, pg, new_entry=it.get("sub_type") == "ref_text")
            else:
                doc.blocks.extend(Block("paragraph", pg, _para(x)) for x in lines if _para(x))
        elif typ == "text" and text.strip():
            heading = clean(join_lines(text.split("\n")))
            if it.get("text_level"):
                if _LABEL["Algorithm"].match(heading):
                    doc.blocks.append(_algorithm(items, i, pg, heading, consumed, captions))
                    continue
                if mode == "body" and _REF_HEAD.match(heading):
                    mode = "refs"
                elif mode in ("refs", "paused"):
                    ends = _APPENDIX.match(heading) or heading.lower() == doc.title.lower()
                    mode = "after" if ends else "paused"
                doc.blocks.append(Block("heading", pg, heading, level=1))
            elif mode == "body" and _REF_PREFIX.match(text):
                mode = "refs"
                doc.blocks.append(Block("heading", pg, "References", level=1))
                refs.feed(_REF_PREFIX.sub("", text, count=1), pg)
            elif mode == "refs" or mode == "paused" and _looks_like_ref(text):
                mode = "refs"
                refs.feed(text, pg)
            elif _LABEL["Algorithm"].match(heading):
                oid = f"Algorithm {_LABEL['Algorithm'].match(heading).group(1)}"
                doc.blocks.append(Block("algorithm", pg, clean(text), oid, caption=clean(text).split("\n")[0]))
            elif _para(text):
                doc.blocks.append(Block("paragraph", pg, _para(text)))
    doc.references = refs.entries()
    doc.warnings.extend(refs.warnings + _label_warnings(doc.blocks))
    if not doc.references:
        doc.warnings.append("no reference entries found (no References heading or empty list)")
    return doc


def _load(path: Path) -> list[dict]:
    """Read and check the JSON list; raise BadInputError with what to do."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInputError(f"{path}: file not found; run MinerU and pass its content_list.json") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise BadInputError(f"{path}: not valid JSON ({e}); re-run MinerU to regenerate content_list.json") from None
    if not isinstance(data, list):
        raise BadInputError(f"{path}: expected a JSON list of blocks (MinerU content_list.json), got {type(data).__name__}")
    items = [it for it in data if isinstance(it, dict)]
    if not any(it.get("type") in ("text", "list") and (it.get("text") or it.get("list_items")) for it in items):
        raise BadInputError(f"{path}: no text blocks; pass MinerU's content_list.json (not middle.json or an empty run)")
    return items


def _int(v) -> int:
    return v if isinstance(v, int) and v >= 0 else 0


def _para(text: str) -> str:
    return join_lines(clean(text).split("\n"))


def _front_matter(items: list[dict], doc: ParsedDocument) -> set[int]:
    """Set title, authors and abstract from page 1; return the indices of the blocks used."""
    texts = [(i, it) for i, it in enumerate(items) if it.get("type") == "text" and (it.get("text") or "").strip()]
    first = [(i, it) for i, it in texts if _int(it.get("page_idx")) == 0]
    t = next(((i, it) for i, it in first if it.get("text_level") == 1), None)
    if t is None:
        doc.warnings.append("no level-1 heading on page 1; title left empty")
    used = {t[0]} if t else set()
    doc.title = _para(t[1]["text"]) if t else ""
    start = t[0] + 1 if t else 0
    a = next(((i, it) for i, it in texts if i >= start and _int(it.get("page_idx")) <= 1
              and _ABSTRACT.match(it["text"]) and (it.get("text_level") or len(it["text"]) > 80)), None)
    if a is None:
        doc.warnings.append("no Abstract heading or paragraph found; abstract left empty")
    end = a[0] if a else next((i for i, it in texts if i >= start and it.get("text_level")), start)
    doc.authors = _authors([it["text"] for i, it in first if start <= i < end and not it.get("text_level")][:8])
    if a is None:
        return used
    used.add(a[0])
    parts = [_ABSTRACT.sub("", a[1]["text"], count=1)] if not a[1].get("text_level") else []
    prev = a[1] if parts else None
    for it in items[a[0] + 1:]:
        text = (it.get("text") or "").strip()
        if it.get("type") in _SKIP or it.get("type") == "text" and not text:
            continue
        if (it.get("type") != "text" or it.get("text_level") or _ABSTRACT_STOP.match(text)
                or prev is not None and not _continues(prev, it, parts)):
            break
        parts.append(text)
        used.add(items.index(it))
        prev = it
    doc.abstract = "\n".join(p for p in (_para(x) for x in parts) if p)
    return used


def _continues(prev: dict, it: dict, parts: list[str]) -> bool:
    """True when ``it`` continues the abstract: same page, same column below ``prev`` (when bboxes
    exist), not a lowercase fragment of another paragraph, and the abstract still short."""
    if _int(it.get("page_idx")) != _int(prev.get("page_idx")) or sum(map(len, parts)) > 3000:
        return False
    pb, b = prev.get("bbox"), it.get("bbox")
    if pb and b and (abs(b[0] - pb[0]) > 40 or b[1] < pb[1]):
        return False
    return not (it["text"].lstrip()[:1].islower() and parts[-1].rstrip().endswith((".", "!", "?")))


def _math_letters(m: re.Match) -> str:
    body = m.group(1)
    head, sup = body.split("^", 1) if "^" in body else (body, "")
    return re.sub(r"\\[A-Za-z]+|[{}\s~]", "", head) + ("," if sup else "")


def _authors(texts: list[str]) -> list[str]:
    """Best-effort author names from the page-1 blocks between title and abstract: affiliations cut
    at the first affiliation word, markers (digits, symbols, glued letters "Lanea,c"), emails and
    inline math removed, names split on commas/"and"; a candidate must be 2-4 capitalised words."""
    names: list[str] = []
    for text in texts:
        text = re.sub(r"\$([^$]*)\$", _math_letters, repair_chars(text))
        cut = _AFFIL_CUT.search(text)
        text = text[: cut.start()] if cut else text
        text = re.sub(r"\S+\s*@\s*\S+|\{[^}]*\}\S*", ",", text)
        text = re.sub(r"(?<=[a-z])[a-h](?:,[a-h])+(?=[,\s]|$)", ",", text)
        text = re.sub(r"\\\*|[*\u2217\u2020\u2021\u00a7\u00b6#\d]+|\s(?:and|&)\s", ",", text)
        for cand in re.split(r"[,;\n]", text):
            words = cand.split()
            if (2 <= len(words) <= 4 and all(w[0].isupper() and re.fullmatch(r"[^\W\d_][\w.'\u2019-]*", w) for w in words)
                    and not any(w in _AFFIL_WORDS or sum(c.isupper() for c in w[1:]) > 1 and "." not in w for w in words)):
                name = " ".join(words)
                if name not in names:
                    names.append(name)
    return names[:50]


def _label(kind: str, text: str) -> Optional[str]:
    """``"Table 3"`` from a caption starting "Table 3"/"TABLE III"/"Tab. 3" (kind Table/Figure/Algorithm)."""
    m = _LABEL[kind].match(text or "")
    if not m:
        return None
    num = m.group(1)
    if re.fullmatch(r"[IVXLC]+", num):
        vals = [_ROMAN[c] for c in num]
        num = str(sum(-v if k + 1 < len(vals) and v < vals[k + 1] else v for k, v in enumerate(vals)))
    return f"{kind} {num}"


def _adopt_captions(items: list[dict], consumed: set[int]) -> dict[int, str]:
    """Map object index -> caption text taken from a neighbouring text block (a caption MinerU
    left as plain text just before/after a table or image without a label); marks it consumed."""
    kinds = {"table": "Table", "image": "Figure", "chart": "Figure"}
    have = {_label(kinds[it["type"]], " ".join(_caption_parts(it)[0])) for it in items if it.get("type") in kinds}
    out: dict[int, str] = {}
    for i, it in enumerate(items):
        kind = kinds.get(it.get("type"))
        if not kind or any(_label(kind, c) for part in _caption_parts(it) for c in part):
            continue
        for j in (i - 1, i + 1):
            nb = items[j] if 0 <= j < len(items) else {}
            lab = _label(kind, nb.get("text") or "") if nb.get("type") == "text" and not nb.get("text_level") else None
            if lab and lab not in have and j not in consumed:
                out[i], have = nb["text"], have | {lab}
                consumed.add(j)
                break
    return out


def _caption_parts(it: dict) -> tuple[list[str], list[str]]:
    t = it.get("type")
    pre = {"table": "table", "image": "image", "chart": "chart", "code": "code"}.get(t, "image")
    cap = it.get(f"{pre}_caption") or it.get("img_caption") or []
    foot = it.get(f"{pre}_footnote") or it.get("img_footnote") or []
    return [str(c) for c in cap], [str(f) for f in foot]


def _object_block(it: dict, pg: int, adopted: Optional[str], image_root: Optional[Path]) -> Optional[Block]:
    """Table/figure/chart/code block -> Block with object id from the caption (or a footnote or an
    adopted neighbouring text block that starts with the label)."""
    typ = it["type"]
    caps, foots = _caption_parts(it)
    caption = clean(" ".join(caps))
    kind = {"table": "Table", "code": "Algorithm"}.get(typ, "Figure")
    oid = _label(kind, caption) or _label("Algorithm", caption)
    if oid is None:
        hit = next((f for f in foots if _label(kind, f)), None)
        if hit is not None:
            foots.remove(hit)
            caption, oid = clean(hit), _label(kind, hit)
    if oid is None and adopted:
        caption = _para(adopted)
        oid = _label(kind, caption)
    notes = [clean(f) for f in foots if f.strip()]
    img = it.get("img_path") or None
    img = (Path(image_root) / img).as_posix() if img and image_root is not None else img
    if typ == "code":
        body = clean(it.get("code_body") or "")
        if oid or it.get("sub_type") == "algorithm":
            return Block("algorithm", pg, body, oid, caption=caption)
        return Block("paragraph", pg, _para(body)) if body else None
    if typ == "table":
        rows = _table_rows(it.get("table_body") or "")
        if not (rows or caption or notes):
            return None
        kind_ = "algorithm" if oid and oid.startswith("Algorithm") else "table"
        return Block(kind_, pg, "\n".join(rows + notes), oid, caption=caption, image=img)
    return Block("figure", pg, "\n".join(notes), oid if oid and oid.startswith("Figure") else None, caption=caption, image=img)


class _Rows(HTMLParser):
    """Collect the cell texts of each ``<tr>`` of an HTML table (stdlib html.parser)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.row: Optional[list[str]] = None
        self.cell: Optional[list[str]] = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "br" and self.cell is not None:
            self.cell.append(" ")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            if self.row is not None:
                self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if any(self.row):
                self.rows.append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def _table_rows(html: str) -> list[str]:
    """HTML table -> one line per row, cells joined by `` | `` (colspan/rowspan not expanded)."""
    parser = _Rows()
    parser.feed(html)
    parser.close()
    return [repair_chars(" | ".join(r)) for r in parser.rows]


def _algorithm(items: list[dict], i: int, pg: int, heading: str, consumed: set[int], captions: dict) -> Block:
    """An "Algorithm N ..." heading plus its body: the following caption-less table/code block, or
    the following text blocks that read as algorithm lines ("Require:", "1:", ...)."""
    body: list[str] = []
    for j in range(i + 1, len(items)):
        nb = items[j]
        typ, text = nb.get("type"), nb.get("text") or ""
        if typ in _SKIP or typ == "text" and not text.strip():
            continue
        caps, foots = _caption_parts(nb)
        if not body and typ in ("table", "code") and not any(_label("Table", c) for c in caps + foots):
            body.append("\n".join(_table_rows(nb.get("table_body") or "")) or clean(nb.get("code_body") or ""))
        elif typ == "text" and not nb.get("text_level") and _ALGO_LINE.match(text):
            body.append(clean(text))
        else:
            break
        consumed.add(j)
    return Block("algorithm", pg, "\n".join(b for b in body if b), _label("Algorithm", heading), caption=heading)


def _looks_like_ref(text: str) -> bool:
    """After a non-appendix heading inside the reference list: does this block continue the list?"""
    head = text.lstrip()
    return bool(_BRACKET.match(head) or _AUTHOR_START.match(head) and _YEAR.search(head)
                or _YEAR.search(text.rstrip()[-40:]) and len(text) < 1500)


def _label_warnings(blocks: list[Block]) -> list[str]:
    """One-line warnings on unlabeled, duplicate and skipped Table/Figure numbers."""
    out = []
    for kind, bk in (("Table", "table"), ("Figure", "figure")):
        ids = [b.object_id for b in blocks if b.kind == bk]
        if ids.count(None):
            out.append(f"{ids.count(None)} {bk} blocks without a '{kind} N' label")
        nums = [int(x.split()[1]) for x in ids if x and x.split()[1].isdigit()]
        dup = sorted({n for n in nums if nums.count(n) > 1})
        gaps = sorted(set(range(1, max(nums, default=0) + 1)) - set(nums))
        if dup:
            out.append(f"duplicate {kind.lower()} labels: " + ", ".join(f"{kind} {n}" for n in dup))
        if gaps:
            out.append(f"{kind.lower()} numbering skips: " + ", ".join(f"{kind} {n}" for n in gaps))
    return out


class _RefSplitter:
    """Split reference-list text into single entries.

    Numbered lists ("[12] ..." or "12. ..."): a new entry starts at a marker at a line start, or at
    a mid-line "[n]" whose n is the next expected number. Author-year lists: a line starts a new
    entry unless the open entry is unfinished (ends with "," / "and" / "pp." ...) or the line
    starts lower-case/with a digit; within a line, ". " followed by an author start ("Surname, X.",
    "Van Wyk, D.B.", "Surname, Firstname", "Surname X.") splits when both the open entry and the
    text up to the next such start contain a year (19xx/20xx).
    """

    def __init__(self) -> None:
        self.items: list[list] = []  # [page, text, number]
        self.style: Optional[str] = None  # "bracket", "dot" or "author"
        self.pages: dict[int, int] = {}  # page of a packed block -> entries started in it
        self.warnings: list[str] = []

    def expects(self, text: str) -> bool:
        """True when ``text`` starts with the next number of a numbered list (recovery of
        entries MinerU marked discarded)."""
        m = _BRACKET.match(text.lstrip()) if self.style == "bracket" else None
        return bool(m and self.items and self.items[-1][2] is not None and int(m.group(1)) == self.items[-1][2] + 1)

    def feed(self, text: str, page: int, new_entry: bool = False) -> None:
        """Add one block's text (lines separated by newlines) found on ``page``."""
        before = len(self.items)
        for k, raw in enumerate(text.split("\n")):
            line = " ".join(repair_chars(raw).split())
            if line:
                self._line(line, page, new_entry and k == 0)
        if len(self.items) - before > 15:
            self.warnings.append(f"one MinerU block on page {page} holds {len(self.items) - before} reference "
                                 f"entries; all get page {page} though the list may run onto later pages")

    def _line(self, line: str, page: int, force: bool) -> None:
        if self.style is None:
            self.style = "bracket" if _BRACKET.match(line) else "dot" if _DOT.match(line) else "author"
        if self.style == "author":
            bounds = [0] + [m.end() for m in _MID_START.finditer(line)] + [len(line)]
            segs = [line[x:y].strip() for x, y in zip(bounds, bounds[1:])]
            if force or not self.items or self._starts_entry(line):
                self.items.append([page, segs[0], None])
            else:
                self.items[-1][1] += " " + segs[0]
            for k, seg in enumerate(segs[1:], 2):
                last_open = k == len(segs) and len(_AUTHOR_PAIR.findall(seg[:150])) >= 2  # may go on next line
                if _YEAR.search(self.items[-1][1]) and (_YEAR.search(seg) or last_open):
                    self.items.append([page, seg, None])
                else:
                    self.items[-1][1] += " " + seg
            return
        if self.style == "bracket":
            marks = []
            for m in _BRACKET.finditer(line):
                n = int(m.group(1))
                last = marks[-1][1] if marks else (self.items[-1][2] if self.items else None)
                if m.start() == 0 or line[m.start() - 1] == " " and last is not None and n == last + 1:
                    marks.append((m.start(), n, m.end()))
        else:
            m = _DOT.match(line)
            last = self.items[-1][2] if self.items else None
            marks = [(0, int(m.group(1)), m.end())] if m and (last is None or int(m.group(1)) == last + 1) else []
        head = line[: marks[0][0]].strip() if marks else line
        if head:
            if self.items:
                self.items[-1][1] += " " + head
            else:
                self.items.append([page, head, None])
        for k, (pos, n, end) in enumerate(marks):
            stop = marks[k + 1][0] if k + 1 < len(marks) else len(line)
            self.items.append([page, line[end:stop].strip(), n])

    def _starts_entry(self, line: str) -> bool:
        """Does a line (or block) start a new author-year entry, given the open entry?"""
        cur = self.items[-1][1].rstrip()
        if _HARD_OPEN.search(cur):
            return False
        done = cur.endswith((".", "?", "!", ")", "]"))
        if _AUTHOR_START.match(line) or line[0].isupper() or line[0] in "\u201c\"'":
            return done or bool(_AUTHOR_START.match(line) and _YEAR.search(cur))
        return bool(line[0].islower() and done and _YEAR.search(cur) and _AUTHOR_PAIR.search(line[:80]))

    def entries(self) -> list[RawReference]:
        """The entries as RawReference (number = printed number for numbered lists, else None)."""
        return [RawReference(page=p, raw=t, number=n) for p, t, n in self.items if t.strip()]
