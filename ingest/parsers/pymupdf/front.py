"""Page-1 front matter for the PyMuPDF parser: title, authors, abstract, venue and year.

- Title: the first group of adjacent lines in the largest font of the top of page 1 (when that
  font is clearly larger than the body font), else the PDF's metadata title.
- Abstract: the blocks after an "Abstract" label, in reading order, up to the next heading,
  caption or "1 Introduction" line (footnotes in a smaller font skipped).
- Authors: best-effort names from the lines right under the title.
- Venue and year: :func:`ingest.metadata.venue_year_from_text` on the text of page 1.

:func:`read_front_matter` returns a :class:`FrontMatter`; the page flow then leaves out the
blocks it used (title, authors and affiliations above the abstract, the abstract itself).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Optional

from ingest.metadata import venue_year_from_text
from ingest.parsers.pymupdf.layout import CAPTION, heading_text, order
from ingest.parsers.pymupdf.pages import Line, PageLines, PBlock
from ingest.text import clean, join_lines

#: The title is looked for in the top fraction of page 1 ...
_TITLE_ZONE = 0.45
#: ... among lines within this many points of the largest font there ...
_TITLE_SIZE_TOL = 0.5
#: ... which must be at least this many points larger than the body font ...
_TITLE_SIZE_STEP = 1.5
#: ... with lines of the title at most this many font sizes apart, and 5..300 characters long.
_TITLE_LINE_GAP = 1.2
_TITLE_CHARS = (5, 300)
#: An abstract block in a font this many points smaller than the abstract's first block is a footnote.
_FOOTNOTE_SIZE_STEP = 0.9
#: Blocks shorter than this many characters before the abstract's first block are labels.
_ABSTRACT_MIN_BLOCK = 30
#: The abstract stops after this many characters.
_ABSTRACT_MAX_CHARS = 2500
#: At most this many author names.
_MAX_AUTHORS = 30
_ABSTRACT_LABEL = re.compile(r"^\s*a\s?b\s?s\s?t\s?r\s?a\s?c\s?t\s*[.:\u2014\u2013-]?\s*", re.I)
_FIRST_SECTION = re.compile(r"^(1\.?|I\.)\s+[A-Z]")
#: Superscript digits: the parser writes footnote and affiliation marks so (pages.py).
_SUP = "\u00b9\u00b2\u00b3\u2070\u2074-\u2079"
_FOOTNOTE = re.compile(rf"^[*\u2217\u2020\u2021\d{_SUP}]\s*\S")
_AUTHOR_STOP = re.compile(r"^\s*(abstract|\d\s+introduction)", re.I)
_AUTHOR_SPLIT = re.compile(rf",|\band\b|\u00b7|;|[\d*\u2020\u2021\u00a7\u00b6\u2217#\u2022{_SUP}]+|\s{{2,}}")
_NAME = re.compile(r"[A-Z][\w'\-.]+(?:\s+[A-Z][\w'\-.]*){1,3}")
#: An affiliation or footnote mark glued to the end of a name's word: Greek letters, symbols or
#: superscript digits ("Kyle Loα", "Jane Doe♠"), or one capital after a lower-case letter ("Yossi AdiH").
_NAME_MARK = re.compile(r"(?<=[a-z\u00df-\u024f])(?:[A-Z]|[\u0370-\u03ff\u00b2\u00b3\u00b9\u2070-\u209f"
                        r"\u2020-\u2022\u2217\u22c6\u2605\u2606\u2660-\u2667\u00a7\u00b6*]+)$")
_NOT_A_NAME = re.compile(r"universit|institut|research|lab|school|college|department|google|microsoft|"
                         r"inc\b|ai\b|language|model|learning|network", re.I)


@dataclass
class FrontMatter:
    """What page 1 gives: ``title``, ``authors``, ``abstract`` (one string), ``venue`` and
    ``year`` (None when not printed), ``bottom``: the top (points) of the highest block used by
    the abstract (0.0 when none; non-prose blocks above it are front matter), and
    ``abstract_blocks``: the texts of the blocks used for the abstract (empty without one)."""

    title: str = ""
    authors: list[str] = field(default_factory=list)
    abstract: str = ""
    venue: Optional[str] = None
    year: Optional[int] = None
    bottom: float = 0.0
    abstract_blocks: set[str] = field(default_factory=set)


def title_from_fonts(first: PageLines, height: float, body_size: float) -> str:
    """The title set in the largest font of the top of page 1 (``first``: its blocks of lines;
    ``height``: its height, points; ``body_size``: body font, points), or "" when that font is
    not clearly larger than the body font or the text is too short or too long."""
    lines = [ln for b in first for ln in b if ln.y0 < _TITLE_ZONE * height]
    if not lines:
        return ""
    big = max(ln.size for ln in lines)
    title_lines = [ln for ln in lines if ln.size >= big - _TITLE_SIZE_TOL and len(ln.text) > 1]
    title_lines.sort(key=lambda ln: (ln.y0, ln.x0))
    # keep the first group of adjacent big lines
    group = [title_lines[0]]
    for ln in title_lines[1:]:
        if ln.y0 - group[-1].y1 < _TITLE_LINE_GAP * ln.size:
            group.append(ln)
    title = join_lines([ln.text for ln in group])
    if big >= body_size + _TITLE_SIZE_STEP and _TITLE_CHARS[0] <= len(title) <= _TITLE_CHARS[1]:
        return title
    return ""


def _ends_abstract(b: PBlock, body_size: float) -> bool:
    """A heading, a caption or a "1 Introduction" line ends the abstract."""
    return bool(heading_text(b, body_size) or CAPTION.match(b.text) or _FIRST_SECTION.match(b.text))


def read_abstract(ordered: list[PBlock], body_size: float) -> list[str]:
    """The abstract's parts: the text after an "Abstract" label (also "A B S T R A C T") and the
    blocks after it up to :func:`_ends_abstract` or 2500 characters, skipping short label blocks
    before the first part and footnotes (a smaller font, or a leading "*", dagger or digit).
    Blocks used (the label's too) are marked consumed. ``ordered``: page-1 blocks in reading
    order; ``body_size``: the body font (points)."""
    abstract: list[str] = []
    abs_size = body_size
    started = False
    for b in ordered:
        text = b.text
        if not started:
            m = _ABSTRACT_LABEL.match(text)
            if m:
                b.consumed = True
                rest = text[m.end():].strip()
                if rest:
                    abstract.append(rest)
                started = True
            continue
        if _ends_abstract(b, body_size):
            break
        if len(text) < _ABSTRACT_MIN_BLOCK and not abstract:
            continue
        size = statistics.median(ln.size for ln in b.lines)
        if abstract and (size < abs_size - _FOOTNOTE_SIZE_STEP or _FOOTNOTE.match(text)):
            continue  # a footnote ("*Equal contribution", "31st Conference ...")
        if not abstract:
            abs_size = size
        abstract.append(text)
        b.consumed = True
        if sum(len(a) for a in abstract) > _ABSTRACT_MAX_CHARS:
            break
    return abstract


def authors_after_title(first: PageLines, title: str) -> list[str]:
    """Best-effort author names (at most 30) from the lines right under the title on page 1:
    parts of 2-4 capitalised words between separators (commas, "and", markers), not emails or
    affiliation words; reading stops at "Abstract", "1 Introduction" or a long line."""
    if not title:
        return []
    lines = sorted((ln for b in first for ln in b), key=lambda ln: (ln.y0, ln.x0))
    names: list[str] = []
    after = False
    for ln in lines:
        if ln.text and (ln.text in title or title.endswith(ln.text[-20:])) and len(ln.text) > 3:
            after = True  # still inside the title
            continue
        if not after:
            continue
        if _AUTHOR_STOP.match(ln.text) or len(names) >= _MAX_AUTHORS:
            break
        names.extend(_names_in(ln))
        if len(ln.text) > 200:
            break
    return names[:_MAX_AUTHORS]


def _unmarked(part: str) -> list[str]:
    """``part`` without the marks glued to its words, split after each marked word (a mark ends a
    name: "Lauren Yuβ Nathan Dahlbergγ" -> ["Lauren Yu", "Nathan Dahlberg"])."""
    names: list[str] = []
    words: list[str] = []
    for word in part.split():
        bare = _NAME_MARK.sub("", word)
        words.append(bare)
        if bare != word:
            names.append(" ".join(words))
            words = []
    return names + ([" ".join(words)] if words else [])


def _names_in(ln: Line) -> list[str]:
    """The parts of one line under the title that read as person names, without the affiliation
    marks glued to their words (:data:`_NAME_MARK`)."""
    names = []
    for part in (name for raw in _AUTHOR_SPLIT.split(ln.text) for name in _unmarked(raw)):
        if _NAME.fullmatch(part) and "@" not in part and not _NOT_A_NAME.search(part):
            names.append(part)
    return names


def read_front_matter(doc, first: PageLines, body_size: float) -> FrontMatter:
    """Title, authors, abstract, venue and year of ``doc`` (a pymupdf.Document) from ``first``
    (page 1 after margin removal) and the body font ``body_size`` (points); see the module doc."""
    page = doc[0]
    front = FrontMatter(title=title_from_fonts(first, page.rect.height, body_size))
    meta = doc.metadata or {}
    if not front.title and (meta.get("title") or "").strip():
        front.title = clean(meta["title"])
    ordered = order([PBlock(b) for b in first], page.rect.width)
    front.abstract = " ".join(read_abstract(ordered, body_size)).strip()
    used = [b.y0 for b in ordered if b.consumed]
    front.bottom = min(used) if used else 0.0
    if front.abstract:
        front.abstract_blocks = {b.text for b in ordered if b.consumed}
    front.venue, front.year = venue_year_from_text(page.get_text())
    front.authors = authors_after_title(first, front.title)
    return front
