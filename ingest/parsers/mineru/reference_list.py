"""The reference list of a MinerU content list, split into entries one text line at a time
(:class:`RefSplitter`), and the test for text that continues the list (:func:`looks_like_ref`).

Reference text comes from ``list`` blocks (``sub_type`` ``ref_text``), text blocks after a
References heading, and numbered entries MinerU marked discarded; see
:mod:`ingest.parsers.mineru.content_list`.
"""

from __future__ import annotations

import re
from typing import Optional

from ingest.document import RawReference
from ingest.text import join_lines, repair_chars

YEAR = re.compile(r"(?<![\d.:/\-\u2013])(?:19|20)\d{2}[a-z]?\b(?!\.\d|[\u2013-]\d)")
_PARTICLE = r"(?:(?:[Vv]an|[Vv]on|[Dd]e|[Dd]i|[Dd]u|[Ll]e|[Ll]a|[Dd]el|[Dd]er|[Dd]en|[Dd]os|[Dd]a)\s+)+"
_SURNAME = r"[A-Z][^\s,.;:()\d]*[a-z\u00df-\u024f][^\s,.;:()\d]*"
_INITIALS = r"[A-Z]\.(?:\s?-?[A-Z]\.)*"
# An author-year entry start: "Surname, X." / "van der Berg, J.K." / "Surname, Firstname" / "Surname X.".
_AUTHOR = (rf"(?:{_PARTICLE}{_SURNAME}(?:\s{_SURNAME})?|{_SURNAME})"
           rf"(?:,\s*(?:{_INITIALS}|[A-Z][a-z]+[\s,])|\s{_INITIALS}[,\s])")
AUTHOR_START = re.compile(_AUTHOR)
_AUTHOR_PAIR = re.compile(rf"{_SURNAME},\s*{_INITIALS}")
_MID_START = re.compile(rf"(?<=[.?!])\s+(?={_AUTHOR})")
BRACKET = re.compile(r"\[(\d{1,4})\]\s*")
_DOT = re.compile(r"^(\d{1,4})\.\s+(?=\S)")
_OPEN_END = re.compile(r"(?:[,;:&(\u2013-]|\b(?:and|in|of|the|for|on|at|to|In|pp\.|vol\.|eds?\.|Proc\.|et al\.))$")


def looks_like_ref(text: str) -> bool:
    """After a non-appendix heading inside the reference list (e.g. "Impact Statement" placed
    between two columns of references): does this text block continue the list?"""
    head = text.lstrip()
    return bool(BRACKET.match(head) or AUTHOR_START.match(head) and YEAR.search(head)
                or len(text) < 1500 and YEAR.search(text.rstrip()[-40:]))


class RefSplitter:
    """Split reference-list text into single entries, one text line at a time.

    - Numbered lists ("[12] ..." or "12. ..."): an entry starts at a marker that begins a line, or
      at a mid-line "[n]" whose n is the next expected number (RawReference.number = n).
    - Author-year lists: a line starts a new entry unless the open entry is unfinished (ends with
      "," / "and" / "pp." / no final stop) or the line starts lower-case or with a digit; within a
      line, ". " + an author start ("Surname, X.", "van der Berg, J.K.", "Surname, Firstname",
      "Surname X.") splits when the open entry has a year and the text up to the next author
      start has one too (or, at the line end, is an author list that may go on below).
    """

    def __init__(self) -> None:
        self.items: list[list] = []  # [page, text, number]
        self.style: Optional[str] = None  # "bracket", "dot" or "author", fixed by the first line

    def expects(self, text: str) -> bool:
        """Does ``text`` start with the next "[n]" of a numbered list?"""
        m = BRACKET.match(text.lstrip()) if self.style == "bracket" and self.items else None
        return bool(m and self.items[-1][2] is not None and int(m.group(1)) == self.items[-1][2] + 1)

    def feed(self, text: str, page: int, new_entry: bool = False) -> None:
        """Add one block's text (lines separated by newlines) found on ``page``."""
        for k, raw in enumerate(text.split("\n")):
            if line := " ".join(repair_chars(raw).split()):
                self._line(line, page, new_entry and k == 0)

    def _add(self, page: int, text: str, number: Optional[int] = None, new: bool = True) -> None:
        if new or not self.items:
            self.items.append([page, text, number])
        else:  # continuation: join_lines repairs a hyphenated break ("confi-" + "dence")
            self.items[-1][1] = join_lines([self.items[-1][1], text])

    def _line(self, line: str, page: int, force: bool) -> None:
        if self.style is None:
            self.style = "bracket" if BRACKET.match(line) else "dot" if _DOT.match(line) else "author"
        if self.style == "author":
            bounds = [0] + [m.end() for m in _MID_START.finditer(line)] + [len(line)]
            segs = [line[x:y].strip() for x, y in zip(bounds, bounds[1:])]
            self._add(page, segs[0], new=force or not self.items or self._starts_entry(line))
            for k, seg in enumerate(segs[1:], 2):
                open_list = k == len(segs) and len(_AUTHOR_PAIR.findall(seg[:150])) >= 2
                self._add(page, seg, new=bool(YEAR.search(self.items[-1][1]) and (YEAR.search(seg) or open_list)))
            return
        last = self.items[-1][2] if self.items else None
        marks: list[tuple[int, int, int]] = []  # (start, number, end of marker)
        if self.style == "bracket":
            for m in BRACKET.finditer(line):
                n, prev = int(m.group(1)), marks[-1][1] if marks else last
                if m.start() == 0 or line[m.start() - 1] == " " and prev is not None and n == prev + 1:
                    marks.append((m.start(), n, m.end()))
        elif (dot := _DOT.match(line)) and (last is None or int(dot.group(1)) == last + 1):
            marks.append((0, int(dot.group(1)), dot.end()))
        if head := line[: marks[0][0] if marks else len(line)].strip():
            self._add(page, head, new=False)
        for k, (_, n, end) in enumerate(marks):
            self._add(page, line[end: marks[k + 1][0] if k + 1 < len(marks) else len(line)].strip(), n)

    def _starts_entry(self, line: str) -> bool:
        """Does a line (or a block's first line) start a new author-year entry?"""
        cur = self.items[-1][1].rstrip()
        if _OPEN_END.search(cur):
            return False
        done = cur.endswith((".", "?", "!", ")", "]"))
        if AUTHOR_START.match(line) or line[0].isupper() or line[0] in "\u201c\"'":
            return done or bool(AUTHOR_START.match(line) and YEAR.search(cur))
        return bool(line[0].islower() and done and YEAR.search(cur) and _AUTHOR_PAIR.search(line[:80]))

    def entries(self) -> list[RawReference]:
        """Entries as RawReference: page of the block where each starts, number as printed or None."""
        return [RawReference(page=p, raw=t, number=n) for p, t, n in self.items if t.strip()]
