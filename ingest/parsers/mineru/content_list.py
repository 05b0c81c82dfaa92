"""MinerU adapter: a MinerU ``content_list.json`` -> :class:`ingest.document.ParsedDocument`.

Input format (MinerU content_list.json, opendatalab/MinerU ``make_blocks_to_content_list``): a JSON
list of blocks in reading order with ``type`` (text, image, table, equation, discarded; newer
versions also list, code, chart, header, footer, page_number, aside_text, page_footnote),
``page_idx`` (0-based) and ``bbox`` (0-1000 page coordinates). Text blocks have ``text`` and an
optional ``text_level`` (heading); images ``image_caption``/``image_footnote`` (older versions
``img_caption``/``img_footnote``); tables ``table_caption``, ``table_body`` (HTML),
``table_footnote``; equations LaTeX ``text`` in ``$$`` fences; lists ``list_items`` (sub_type
``ref_text`` for a reference list); code ``code_caption``/``code_body`` (sub_type ``algorithm``).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Optional

from ingest.document import BadInputError, Block, ParsedDocument
from ingest.parsers.mineru.reference_list import RefSplitter, looks_like_ref
from ingest.text import clean, join_lines, repair_chars

_SKIP = {"discarded", "header", "footer", "page_number", "aside_text", "page_footnote"}
_LABEL = {
    "Table": re.compile(r"^\s*(?:Table|TABLE|Tab\.)\s*([A-Z]?\d+|[IVXLC]+)\b"),
    "Figure": re.compile(r"^\s*(?:Figure|FIGURE|Figs?\.|FIG\.)\s*([A-Z]?\d+|[IVXLC]+)\b"),
    "Algorithm": re.compile(r"^\s*(?:Algorithm|ALGORITHM)\s*(\d+)\b"),
}
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
_REF_HEAD = re.compile(r"^\s*(?:\d+\.?\s*)?(?:References|REFERENCES|Bibliography|BIBLIOGRAPHY)\s*$")
_REF_PREFIX = re.compile(r"^\s*(?:References|REFERENCES|Bibliography|BIBLIOGRAPHY)[ \t]*\n")
_APPENDIX = re.compile(r"^\s*(?:Appendix|APPENDIX|Appendices|Supplementa|(?:NeurIPS )?Paper Checklist|Checklist"
                       r"|[A-Z](?:\.\d+)*\.?\s+[A-Z0-9])")
_ABSTRACT = re.compile(r"^\s*(?:Abstract|ABSTRACT)\b[\s.:\u2014\u2013-]*")
_ABSTRACT_STOP = re.compile(r"^\s*(?:Keywords|Key words|Index Terms|\u00a9|\$\\copyright\$)", re.I)
_ALGO_LINE = re.compile(r"^\s*(?:(?i:require|ensure|input|output|initiali[sz]e|parameters?|procedure)\b"
                        r"|(?i:data|result)\s*:|\d{1,3}\s*:|\$|(?:end|for|while|if|else|return|repeat|until)\b)"
                        r"|\\gets|\\leftarrow|\u2190")
_AFFIL_CUT = re.compile(r"University|Universit\u00e9|Institute|School|Department|Dept\.|Laborator|Faculty|College"
                        r"|Research|Centre|Center")
_NOT_NAME = {"Sciences", "Science", "Studies", "Lab", "Labs", "Inc", "Inc.", "AI", "Google", "Microsoft", "Meta",
             "DeepMind", "Received", "Revised", "Accepted", "Equal", "Contribution", "Correspondence", "Email"}


def parse_content_list(path: str | Path, *, n_pages: Optional[int] = None,
                       image_root: Optional[Path] = None) -> ParsedDocument:
    """Parse a MinerU ``content_list.json`` (MinerU content_list.json format) into a ParsedDocument.

    - ``n_pages``: physical page count when known (from the PDF); else ``max(page_idx) + 1``.
      Block pages are ``page_idx + 1``, clamped to ``n_pages`` (with a warning).
    - ``image_root``: folder, relative to the corpus folder, that MinerU's ``img_path`` values are
      relative to; a block image is then ``(image_root / img_path)`` as a POSIX string.

    Returns page-1 title, best-effort authors and abstract (their blocks are not repeated as
    paragraphs); blocks in reading order: headings (level 1), paragraphs, tables ("Table N", rows
    with cells joined by " | " then footnotes), figures ("Figure N", text = footnotes), equations
    (LaTeX, "Equation N" when tagged), algorithms ("Algorithm N"); the reference list split into
    one RawReference per entry; one-line warnings on anomalies. Raises :class:`BadInputError`
    for a missing file, invalid JSON, a non-list, or a list without text.
    """
    items = _load(Path(path))
    max_page = max(_int(it.get("page_idx")) for it in items) + 1
    doc = ParsedDocument(n_pages=n_pages or max_page)
    if max_page > doc.n_pages:
        doc.warnings.append(f"page_idx up to {max_page} exceeds the {doc.n_pages} PDF pages; pages clamped")
    used = _front_matter(items, doc)
    reader = _BodyReader(items, doc, used, _adopt_captions(items, used), image_root)
    reader.read()
    reader.finish()
    return doc


def _equation(text: str, pg: int) -> Optional[Block]:
    """An equation block from MinerU's LaTeX (``$$`` fences dropped): "Equation N" when it is
    tagged (``\\tag{N}``) or ends with a "(N)" after a space command or punctuation; None when
    empty."""
    latex = re.sub(r"^\s*\$\$?|\$\$?\s*$", "", text).strip()
    m = re.search(r"\\tag\*?\{\s*(\d+)\s*\}", latex) or re.search(
        r"(?:^|\\q?quad|\\hfill|[,.~&])\s*\(\s*(\d+)\s*\)\s*$", latex)
    return Block("equation", pg, latex, f"Equation {m.group(1)}" if m else None) if latex else None


class _BodyReader:
    """Reads the content-list blocks after the front matter into ``doc.blocks`` and the
    reference list, in order.

    ``mode`` follows the reference list: "body" until a References heading (or a reference
    list block), then "refs"; a heading inside the list pauses it ("paused": text that reads as
    references resumes it, e.g. after an "Impact Statement" set between two columns of
    references) or, for an appendix heading or the paper title repeated, ends it ("after").
    ``used``: indices of blocks already taken (front matter, adopted captions, algorithm
    bodies); ``adopted``: object index -> caption text taken from a neighbouring text block.
    """

    def __init__(self, items: list[dict], doc: ParsedDocument, used: set[int], adopted: dict[int, str],
                 image_root: Optional[Path]) -> None:
        self.items, self.doc, self.used, self.adopted, self.image_root = items, doc, used, adopted, image_root
        self.refs = RefSplitter()
        self.gaps: set[int] = set()  # pages where the list runs on over empty blocks only
        self.mode = "body"

    def read(self) -> None:
        """Read every block not yet used, by type; other types are ignored."""
        for i, it in enumerate(self.items):
            if i in self.used:
                continue
            typ, text = it.get("type"), it.get("text") or ""
            pg = min(_int(it.get("page_idx")) + 1, self.doc.n_pages)
            if typ in _SKIP:
                self._skipped(text, pg)
            elif typ in ("table", "image", "chart", "code"):
                self.doc.blocks.extend(b for b in [_object_block(it, pg, self.adopted.get(i), self.image_root)] if b)
            elif typ == "equation":
                self.doc.blocks.extend(b for b in [_equation(text, pg)] if b)
            elif typ == "list":
                self._list(it, pg)
            elif typ == "text":
                self._text(i, it, text, pg)

    def _skipped(self, text: str, pg: int) -> None:
        """Running headers/footers are dropped, but a numbered entry MinerU discarded inside the
        reference list is kept (with a warning)."""
        if self.mode == "refs" and self.refs.expects(text):
            self.refs.feed(text, pg)
            self.doc.warnings.append(f"recovered a reference entry MinerU marked discarded (page {pg})")

    def _list(self, it: dict, pg: int) -> None:
        """A list: reference entries (a ``ref_text`` list, or any list inside the reference
        list), else one paragraph per item."""
        lines = [str(x) for x in it.get("list_items") or []]
        if it.get("sub_type") == "ref_text" or self.mode == "refs":
            self.mode = "refs"
            for line in lines:
                self.refs.feed(line, pg, new_entry=it.get("sub_type") == "ref_text")
        else:
            self.doc.blocks.extend(Block("paragraph", pg, _para(x)) for x in lines if _para(x))

    def _text(self, i: int, it: dict, text: str, pg: int) -> None:
        """A text block: empty, an algorithm, a heading, the start of the reference list (text
        starting "References"), reference text, or a paragraph (not the title repeated: that is
        a running header)."""
        if not text.strip():  # MinerU leaves empty blocks where it moved the text into an earlier one
            if self.mode == "refs" and self.refs.items and pg > self.refs.items[-1][0]:
                self.gaps.add(pg)
        elif _label("Algorithm", text):
            self.doc.blocks.append(_algorithm(self.items, i, pg, self.used))
        elif it.get("text_level"):
            self._heading(text, pg)
        elif self.mode == "body" and _REF_PREFIX.match(text):
            self.mode = "refs"
            self.doc.blocks.append(Block("heading", pg, "References", level=1))
            self.refs.feed(_REF_PREFIX.sub("", text, count=1), pg)
        elif self.mode == "refs" or self.mode == "paused" and looks_like_ref(text):
            self.mode = "refs"
            self.refs.feed(text, pg)
        elif _para(text) != self.doc.title:
            self.doc.blocks.append(Block("paragraph", pg, _para(text)))

    def _heading(self, text: str, pg: int) -> None:
        """A heading (level 1); it starts, pauses or ends the reference list (see the class doc)."""
        heading = _para(text)
        if self.mode == "body" and _REF_HEAD.match(heading):
            self.mode = "refs"
        elif self.mode in ("refs", "paused"):
            self.mode = "after" if _APPENDIX.match(heading) or heading.lower() == self.doc.title.lower() else "paused"
        self.doc.blocks.append(Block("heading", pg, heading, level=1))

    def finish(self) -> None:
        """Set ``doc.references`` and add the warnings: pages of the list with only empty
        blocks, no reference entries, unlabeled/duplicate/skipped Table and Figure numbers."""
        doc = self.doc
        doc.references = self.refs.entries()
        if self.gaps:
            doc.warnings.append(f"reference list runs onto page(s) {sorted(self.gaps)} where MinerU left only empty "
                                "blocks: entries printed there carry the page of the block that holds them")
        if not doc.references:
            doc.warnings.append("no reference entries found (no References heading or an empty list)")
        doc.warnings.extend(_label_warnings(doc.blocks))


def _load(path: Path) -> list[dict]:
    """Read the JSON list of block dicts; BadInputError (one line, what to do) when unusable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInputError(f"{path}: file not found; run MinerU and pass its content_list.json") from None
    except (ValueError, UnicodeDecodeError) as e:
        msg = " ".join(str(e).split())
        raise BadInputError(f"{path}: not valid JSON ({msg}); re-run MinerU to regenerate content_list.json") from None
    if not isinstance(data, list):
        raise BadInputError(f"{path}: expected a JSON list of blocks (MinerU content_list.json), "
                            f"got a {type(data).__name__}; pass content_list.json, not middle.json")
    items = [it for it in data if isinstance(it, dict)]
    if not any(it.get("type") in ("text", "list") and str(it.get("text") or it.get("list_items") or "").strip()
               for it in items):
        raise BadInputError(f"{path}: no text blocks; check the MinerU run (scanned PDF without OCR?) and re-run it")
    return items


def _int(v) -> int:
    return v if isinstance(v, int) and v >= 0 else 0


def _para(text: str) -> str:
    """Clean a text block into one paragraph line (ligatures, hyphenated line breaks, spaces)."""
    return join_lines(clean(text).split("\n"))


def _label(kind: str, text: str) -> Optional[str]:
    """``"Table 3"`` from text starting "Table 3"/"TABLE III"/"Tab. 3" (kind Table, Figure or Algorithm)."""
    m = _LABEL[kind].match(text or "")
    if not m:
        return None
    num = m.group(1)
    if re.fullmatch(r"[IVXLC]+", num):
        vals = [_ROMAN[c] for c in num]
        num = str(sum(-v if k + 1 < len(vals) and v < vals[k + 1] else v for k, v in enumerate(vals)))
    return f"{kind} {num}"


def _front_matter(items: list[dict], doc: ParsedDocument) -> set[int]:
    """Set title, authors and abstract from page 1; return the indices of the blocks used."""
    texts = [(i, it) for i, it in enumerate(items) if it.get("type") == "text" and (it.get("text") or "").strip()]
    t = next(((i, it) for i, it in texts if _int(it.get("page_idx")) == 0 and it.get("text_level") == 1), None)
    doc.title = _para(t[1]["text"]) if t else ""
    used, start = ({t[0]}, t[0] + 1) if t else (set(), 0)
    a = next(((i, it) for i, it in texts if i >= start and _int(it.get("page_idx")) <= 1
              and _ABSTRACT.match(it["text"]) and (it.get("text_level") or len(it["text"]) > 80)), None)
    end = a[0] if a else next((i for i, it in texts if i >= start and it.get("text_level")), start)
    doc.authors = _authors([it["text"] for i, it in texts[:40] if start <= i < end and not it.get("text_level")
                            and _int(it.get("page_idx")) == 0][:8])
    if not t:
        doc.warnings.append("no level-1 heading on page 1; title left empty")
    if not a:
        doc.warnings.append("no Abstract heading or paragraph found; abstract left empty")
        return used
    used.add(a[0])
    parts = [] if a[1].get("text_level") else [_ABSTRACT.sub("", a[1]["text"], count=1)]
    prev = a[1] if parts else None
    for j, it in enumerate(items[a[0] + 1:], a[0] + 1):
        text = (it.get("text") or "").strip()
        if it.get("type") in _SKIP or it.get("type") == "text" and not text:
            continue
        if (it.get("type") != "text" or it.get("text_level") or _ABSTRACT_STOP.match(text)
                or prev is not None and not _continues(prev, it, parts)):
            break
        parts.append(text)
        used.add(j)
        prev = it
    doc.abstract = "\n".join(p for p in map(_para, parts) if p)
    return used


def _continues(prev: dict, it: dict, parts: list[str]) -> bool:
    """Does ``it`` continue the abstract? Same page, same column just below ``prev`` (when bboxes
    exist), not a lower-case fragment of another paragraph, and the abstract still short."""
    if _int(it.get("page_idx")) != _int(prev.get("page_idx")) or sum(map(len, parts)) > 3000:
        return False
    pb, b = prev.get("bbox"), it.get("bbox")
    if pb and b and (abs(b[0] - pb[0]) > 40 or b[1] < pb[1]):
        return False
    return not (it["text"].lstrip()[:1].islower() and parts[-1].rstrip().endswith((".", "!", "?")))


def _math_letters(m: re.Match) -> str:
    head, sup = (m.group(1).split("^", 1) + [""])[:2]
    return re.sub(r"\\[A-Za-z]+|[{}\s~]", "", head) + ("," if sup else "")


def _authors(texts: list[str]) -> list[str]:
    """Best effort: cut each block at its first affiliation word, drop inline math superscripts,
    emails, markers (digits, *, daggers, glued letters as in "Smitha,b"), split on commas/"and",
    keep candidates of 2-4 capitalised words that are not affiliation words or acronyms."""
    names: list[str] = []
    for text in texts:
        text = re.sub(r"\$([^$]*)\$", _math_letters, repair_chars(text))
        text = text[: m.start()] if (m := _AFFIL_CUT.search(text)) else text
        text = re.sub(r"\S+\s*@\s*\S+|\{[^}]*\}\S*", ",", text)
        text = re.sub(r"(?<=[a-z])[a-h](?:,[a-h])+(?=[,\s]|$)", ",", text)
        text = re.sub(r"\\\*|[*\u2217\u2020\u2021\u00a7\u00b6#\d]+|\s(?:and|&)\s", ",", text)
        for words in (c.split() for c in re.split(r"[,;\n]", text)):
            if (2 <= len(words) <= 4 and " ".join(words) not in names
                    and all(w[0].isupper() and re.fullmatch(r"[^\W\d_][\w.'\u2019-]*", w) for w in words)
                    and not any(w in _NOT_NAME or sum(c.isupper() for c in w[1:]) > 1 and "." not in w for w in words)):
                names.append(" ".join(words))
    return names


def _captions(it: dict) -> tuple[list[str], list[str]]:
    """(caption parts, footnotes) of a table/image/chart/code block, old and new key names."""
    pre = it.get("type") if it.get("type") in ("table", "chart", "code") else "image"
    return ([str(c) for c in it.get(f"{pre}_caption") or it.get("img_caption") or []],
            [str(f) for f in it.get(f"{pre}_footnote") or it.get("img_footnote") or []])


def _adopt_captions(items: list[dict], used: set[int]) -> dict[int, str]:
    """Map object index -> caption text of a neighbouring plain text block that starts with the
    label the object lacks (MinerU sometimes leaves a caption as text); the block is marked used."""
    kinds = {"table": "Table", "image": "Figure", "chart": "Figure"}
    have = {_label(kinds[it["type"]], " ".join(_captions(it)[0])) for it in items if it.get("type") in kinds}
    out: dict[int, str] = {}
    for i, it in enumerate(items):
        kind = kinds.get(str(it.get("type")))
        if not kind or any(_label(kind, c) for part in _captions(it) for c in part):
            continue
        for j in (i - 1, i + 1):
            nb = items[j] if 0 <= j < len(items) else {}
            lab = _label(kind, nb.get("text") or "") if nb.get("type") == "text" and not nb.get("text_level") else None
            if lab and lab not in have and j not in used:
                out[i], have = nb["text"], have | {lab}
                used.add(j)
                break
    return out


def _object_block(it: dict, pg: int, adopted: Optional[str], image_root: Optional[Path]) -> Optional[Block]:
    """Table/image/chart/code block -> Block. The id comes from the caption label, else from a
    footnote that starts with one (MinerU files captions below a table as footnotes), else from
    an adopted neighbouring caption; "Algorithm N" captions make an algorithm block."""
    typ = it["type"]
    caps, foots = _captions(it)
    caption = _para(" ".join(caps))
    kind = {"table": "Table", "code": "Algorithm"}.get(typ, "Figure")
    oid = _label(kind, caption) or _label("Algorithm", caption)
    if oid is None and (hit := next((f for f in foots if _label(kind, f)), None)) is not None:
        foots.remove(hit)
        caption, oid = _para(hit), _label(kind, hit)
    if oid is None and adopted:
        caption, oid = _para(adopted), _label(kind, adopted)
    notes = [_para(f) for f in foots if f.strip()]
    img = it.get("img_path") or None
    img = (Path(image_root) / img).as_posix() if img and image_root is not None else img
    body = "\n".join((_table_rows(it.get("table_body") or "") if typ == "table" else []) + notes)
    if typ == "code":
        body = clean(it.get("code_body") or "")
        if not (oid or it.get("sub_type") == "algorithm"):
            return Block("paragraph", pg, _para(body)) if body else None
    bbox = it.get("bbox")
    region = tuple(min(1.0, max(0.0, v / 1000)) for v in bbox) if bbox and len(bbox) == 4 else None
    if typ == "code" or oid and oid.startswith("Algorithm"):
        return Block("algorithm", pg, body, oid, caption=caption, image=img, region=region)
    if not (body or caption):
        return None
    return Block("table" if typ == "table" else "figure", pg, body, oid, caption=caption, image=img, region=region)


class _Rows(HTMLParser):
    """Cell texts of each ``<tr>`` of an HTML table (stdlib html.parser; spans not expanded)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.cell: Optional[list[str]] = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "br" and self.cell is not None:
            self.cell.append(" ")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None and self.rows:
            self.rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def _table_rows(html: str) -> list[str]:
    """HTML table -> one string per non-empty row, cells joined by " | "."""
    parser = _Rows()
    parser.feed(html)
    parser.close()
    return [repair_chars(" | ".join(r)) for r in parser.rows if any(r)]


def _algorithm(items: list[dict], i: int, pg: int, used: set[int]) -> Block:
    """A block starting "Algorithm N" (heading or text): caption = its lines up to the first
    algorithm line; body = its other lines, then a following caption-less table/code block or the
    following text blocks that read as algorithm lines ("Require:", "1:", "end", LaTeX, arrows);
    those blocks are marked used."""
    lines = clean(items[i]["text"]).split("\n")
    k = next((k for k in range(1, len(lines)) if _ALGO_LINE.search(lines[k])), len(lines))
    head, body = join_lines(lines[:k]), ["\n".join(lines[k:])] if lines[k:] else []
    for j in range(i + 1, len(items) if len(head) < 160 else i):  # a long first line is prose: no body
        nb, text = items[j], items[j].get("text") or ""
        if nb.get("type") in _SKIP or nb.get("type") == "text" and not text.strip():
            continue
        if not body and nb.get("type") in ("table", "code") and not any(_label("Table", c) for c in sum(_captions(nb), [])):
            body.append("\n".join(_table_rows(nb.get("table_body") or "")) or clean(nb.get("code_body") or ""))
        elif nb.get("type") != "text" or nb.get("text_level") or _label("Algorithm", text) or not _ALGO_LINE.search(text):
            break
        else:
            body.append(clean(text))
        used.add(j)
    return Block("algorithm", pg, "\n".join(b for b in body if b), _label("Algorithm", head), caption=head)


def _label_warnings(blocks: list[Block]) -> list[str]:
    """One-line warnings on unlabeled, duplicate and skipped Table/Figure numbers."""
    out = []
    for kind in ("Table", "Figure"):
        ids = [b.object_id for b in blocks if b.kind == kind.lower()]
        nums = [int(x.split()[1]) for x in ids if x and x.split()[1].isdigit()]
        dup = sorted({n for n in nums if nums.count(n) > 1})
        gaps = sorted(set(range(1, max(nums, default=0) + 1)) - set(nums))
        if None in ids:
            out.append(f"{ids.count(None)} {kind.lower()} blocks without a '{kind} N' label")
        if dup:
            out.append(f"duplicate labels: {', '.join(f'{kind} {n}' for n in dup)}")
        if gaps:
            out.append(f"{kind.lower()} numbering skips {', '.join(f'{kind} {n}' for n in gaps)}")
    return out
