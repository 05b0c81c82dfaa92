"""Reference-list entries -> Reference records: title parsing, work ids, resolution to corpus papers.

- :func:`parse_title` reads the title of one entry in the common styles (numbered/IEEE with quoted
  titles, ACL/APA "Authors. Year. Title.", NeurIPS/LNCS "Authors. Title. Venue, year").
- :func:`work_id_for` gives the key two papers citing the same work share: the corpus paper when
  the entry resolves to one, else an arXiv id, a DOI, or the normalised title.
- :class:`TitleResolver` resolves entries to corpus papers by title: the normalised corpus title
  must occur in the normalised raw entry (robust to title-parsing errors), longest title first.

Used by the corpus builder after every paper is parsed (seed paper section 2.2: bibliographic
coupling needs shared work ids; the citation graph needs resolved corpus edges).
"""

from __future__ import annotations

import hashlib
import re
from typing import Iterable, Optional

import ahocorasick

from graph.records import Reference
from ingest.document import RawReference
from ingest.text import normalize_key

_QUOTED = re.compile(r"[\"\u201c\u201d\u201e](.{12,300}?)[,.]?[\"\u201c\u201d]")
_YEAR_DOT = re.compile(r"(?:^|[\s(])((?:19|20)\d\d)[a-z]?\)?[.,:]\s+")
# Sentence-ish segment boundary: a period after two lower-case letters / digit / bracket, after a
# two-letter capitalised word ending an author list ("... and Jimmy Ba. Adam: ..."), or a ?/!.
_SEGMENT = re.compile(r"(?<=[a-z0-9\)\]\}]{2})\.\s+|(?<=\s[A-Z][a-z])(?<!\s(?:Md|Mr|Dr|Ms|St|Jr|No|Eq|Ch|Pp))\.\s+(?=[A-Z])"
                      r"|(?<=[?!])\s+")
_ARXIV = re.compile(r"(?:arxiv[:\s/]*|abs/)(\d{4}\.\d{4,5})", re.I)
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s,;]+[^\s,;.])", re.I)
_AUTHORISH = re.compile(r"^(?:[A-Z][\w'\-]+,?\s+(?:[A-Z]\.\s*)+|(?:[A-Z]\.\s*)+[A-Z][\w'\-]+)")
_VENUE_START = re.compile(r"^(?:In\s|In:|Proceedings\b|Proc\.|arXiv\b|CoRR\b|Advances in\b|Journal\b|Trans(?:actions)?\b|"
                          r"Preprint\b|Technical report\b)", re.I)
_TRAILING_YEAR = re.compile(r"[,.]?\s*(?:19|20)\d\d[a-z]?\W*$")
_VOLUME_PAGES = re.compile(r",\s*[\w()\s:\-\u2013]*\d[\w()\s:\-\u2013]*$")  # ", 1(8):9", ", 7:40707-40718"
_MINOR_WORDS = {"of", "on", "and", "in", "for", "the", "&"}


def _venue_like(segment: str) -> bool:
    """Whether a segment of an entry names a venue, not a title: ``In ...``, ``arXiv ...``,
    ``Preprint ...``, or a year after at most two words ("OpenAI Blog, 2019"), after a volume or
    pages ("Neural computation, 9(8):1735-1780, 1997"), or after a Title-Case name of at most four
    words ("Information Processing & Management, 2021"); "Locally typical sampling, 2023" is a title."""
    seg = segment.strip()
    if _VENUE_START.match(seg):
        return True
    year = _TRAILING_YEAR.search(seg)
    if not year or year.start() == 0:
        return False
    head = seg[:year.start()]
    pages = _VOLUME_PAGES.search(head)
    words = (head[:pages.start()] if pages else head).split()
    if pages:
        return len(words) <= 6
    return len(words) <= 2 or (len(words) <= 4 and all(w[:1].isupper() or w.lower() in _MINOR_WORDS
                                                        for w in words))


_INITIAL = re.compile(r"\b[A-Z]\.(?:\s*-?[A-Z]\.)*[,:]?\s+(?:and\s+|&\s+)?")
_ET_AL = re.compile(r"\bet al\.?[,:]?\s+", re.I)


def _clean_title(title: str) -> str:
    title = re.sub(r",\s*(?:19|20)\d\d[a-z]?$", "", title.strip().rstrip(". "))  # "..., 2020."
    title = title.strip().strip(".,;: ").strip("\"\u201c\u201d'")
    return re.sub(r"\s+", " ", title)


def _strip_authors(seg: str) -> str:
    """Drop a leading author list that the segment split left on a title
    ("Kingma, D. P. and Ba, J. Adam: A method ..." -> "Adam: A method ...")."""
    cut = 0
    for m in _ET_AL.finditer(seg):
        cut = max(cut, m.end())
    inits = list(_INITIAL.finditer(seg))
    if len(inits) >= 2 or (inits and seg[: inits[0].start()].rstrip().endswith(",")):
        cut = max(cut, inits[-1].end())
    rest = seg[cut:]
    return rest if cut and len(rest) >= 12 else seg


def parse_title(raw: str) -> Optional[str]:
    """Best-effort title of one reference entry, or None.

    ``raw`` is one entry without its leading number. Rules, in order: a quoted title; the
    segment after a "Year." (ACL/APA/Elsevier); the segment after the author segment.
    """
    text = re.sub(r"^\s*(\[\d+\]|\d{1,3}\.)\s*", "", raw).strip()
    m = _QUOTED.search(text)
    if m:
        return _clean_title(m.group(1))
    m = _YEAR_DOT.search(text[:400])
    if m and m.start() < 300:
        rest = text[m.end():]
        seg = _strip_authors(_SEGMENT.split(rest, maxsplit=1)[0])
        if len(seg) >= 12 and not _venue_like(seg):
            return _clean_title(seg)
    segs = [s for s in _SEGMENT.split(text) if s.strip()]
    if len(segs) >= 2:
        cand = segs[1]
        if _venue_like(cand):
            first = _strip_authors(segs[0])
            # "Authors, I. Title. Venue, year": the title ends the first segment, after the authors;
            # "Title. In Proc. ...": the first segment is the title
            if len(first) >= 12 and (first != segs[0] or _VENUE_START.match(cand.strip())):
                cand = first
        cand = _strip_authors(cand)
        if len(cand) >= 12:
            return _clean_title(cand)
    return None


def work_id_for(raw: str, title: Optional[str], cited_paper_id: Optional[str]) -> str:
    """Normalised work key of one entry.

    ``"paper:<id>"`` when resolved to a corpus paper; else ``"title:<normalised title>"`` when a
    title of >= 12 normalised chars was parsed; else ``"arxiv:<id>"``/``"doi:<doi>"``; else
    ``"raw:<sha1 of the normalised entry, 16 hex>"``. The title comes before identifiers because
    two papers citing the same work more often agree on its title than on its arXiv/DOI form.
    """
    if cited_paper_id:
        return f"paper:{cited_paper_id}"
    key = normalize_key(title or "")
    if len(key) >= 12:
        return f"title:{key[:120]}"
    m = _ARXIV.search(raw)
    if m:
        return f"arxiv:{m.group(1)}"
    m = _DOI.search(raw)
    if m:
        return f"doi:{m.group(1).lower()}"
    return "raw:" + hashlib.sha1(normalize_key(raw).encode()).hexdigest()[:16]


class TitleResolver:
    """Resolves reference entries to corpus papers by title containment.

    Built from ``{paper_id: title}``; titles whose normalised key is shorter than ``min_key``
    characters are ignored (too ambiguous). :meth:`resolve` returns the paper id whose normalised
    title occurs in the normalised entry (longest match wins), or None. A paper never resolves
    a reference to itself.
    """

    def __init__(self, titles: dict[str, str], min_key: int = 16) -> None:
        self._keys = sorted(
            ((normalize_key(t), pid) for pid, t in titles.items() if len(normalize_key(t)) >= min_key),
            key=lambda kp: -len(kp[0]),
        )

    def resolve(self, raw: str, title: Optional[str] = None, citing: Optional[str] = None) -> Optional[str]:
        """Corpus paper id cited by this entry, or None."""
        hay = normalize_key(raw)
        tkey = normalize_key(title or "")
        for key, pid in self._keys:
            if pid == citing:
                continue
            if key in hay or (len(tkey) >= 16 and tkey == key):
                return pid
        return None


def build_references(
    paper_id: str, raws: Iterable[RawReference], resolver: Optional[TitleResolver] = None
) -> list[Reference]:
    """Parse raw entries into Reference records, numbered 1..n in list order.

    A printed number is used when the list is numbered consistently (strictly increasing);
    otherwise entries are numbered by position (author-year styles).
    """
    raws = [r for r in raws if r.raw.strip()]
    printed = [r.number for r in raws]
    use_printed = all(n is not None for n in printed) and all(
        a < b for a, b in zip(printed, printed[1:])  # type: ignore[operator]
    )
    refs = []
    for i, r in enumerate(raws, start=1):
        title = parse_title(r.raw)
        cited = resolver.resolve(r.raw, title, citing=paper_id) if resolver else None
        refs.append(
            Reference(
                paper_id=paper_id,
                number=r.number if use_printed else i,
                page=r.page,
                raw=r.raw.strip(),
                title=title,
                work_id=work_id_for(r.raw, title, cited),
                cited_paper_id=cited,
            )
        )
    return refs


def consolidate_work_ids(refs: list[Reference], min_key: int = 16) -> list[Reference]:
    """Give every entry that cites the same work the same ``title:`` work id, corpus-wide.

    Title parsing differs between citation styles, so a work's title is looked up in the raw
    text instead: the candidate keys are the normalised parsed titles (>= ``min_key`` chars); a
    key that occurs in three or more entries of one citing paper, or in two entries of each of
    two papers, is a venue or series name, not a title, and is dropped; each unresolved entry takes the longest key its raw text contains.
    Entries resolved to corpus papers keep ``paper:`` ids. Aho-Corasick keeps this linear in the
    corpus size. Returns new records in the same order.
    """
    keys = {normalize_key(r.title or "") for r in refs if r.cited_paper_id is None}
    keys = {k[:120] for k in keys if len(k) >= min_key}
    if not keys:
        return refs
    auto = ahocorasick.Automaton()
    for k in keys:
        auto.add_word(k, k)
    auto.make_automaton()
    hays = [normalize_key(r.raw) for r in refs]
    found: list[set[str]] = [{k for _, k in auto.iter(h)} for h in hays]
    per_paper: dict[tuple[str, str], int] = {}
    for r, ks in zip(refs, found):
        for k in ks:
            per_paper[(r.paper_id, k)] = per_paper.get((r.paper_id, k), 0) + 1
    multi: dict[str, int] = {}
    bad = set()
    for (_, k), n in per_paper.items():
        if n >= 3:
            bad.add(k)
        elif n == 2:
            multi[k] = multi.get(k, 0) + 1
    bad |= {k for k, n in multi.items() if n >= 2}
    out = []
    for r, ks in zip(refs, found):
        if r.cited_paper_id is None:
            good = sorted((k for k in ks if k not in bad), key=len, reverse=True)
            if good:
                r = r.model_copy(update={"work_id": f"title:{good[0]}"})
            elif r.work_id.startswith("title:") and r.work_id[6:] in bad:  # a venue parsed as title
                r = r.model_copy(update={"work_id": work_id_for(r.raw, None, None)})
        out.append(r)
    return out
