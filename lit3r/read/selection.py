"""How many papers an answer needs, and which (issue 13, item 5; seed paper section 2.3).

The extractive reader scores every read paper by its best chunk; this module turns those scores
into the supporting papers of the answer:

1. *named papers*: a read paper whose own name (:func:`lit3r.read.claims.own_names`: "PaSa",
   "TTT-E2E", the title's prefix before a colon) occurs in the question as a whole word is
   selected, whatever its score;
2. *a stated count*: "Two corpus papers on ...", "Four corpus papers adapt ..." selects that
   many papers, named ones first, then by score;
3. *a citation list*: "Which corpus papers does it cite?" selects the best paper and the corpus
   papers it cites (the citation graph, :meth:`graph.store.GraphStore.cites`) among those read;
4. otherwise the best paper and those within ``read.support_ratio`` of its score, at most
   ``MAX_SUPPORTING`` (``MAX_MULTI`` for a question that asks about several papers: "which
   corpus papers ...", "for each ...", with the ratio relaxed by ``MULTI_RATIO``); with named
   papers, those and at most one more; a question about "another corpus paper" has two at least.
"""

from __future__ import annotations

import re
from typing import Callable, Optional, Sequence

#: Supporting papers of rule 4, at most, for a question about one paper and about several.
MAX_SUPPORTING, MAX_MULTI = 3, 5
#: Rule 4 for a question about several papers: the support ratio times this factor.
MULTI_RATIO = 0.7

_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "both": 2}
_COUNT = re.compile(r"\b(two|three|four|five|six|[2-6])\s+(?:\w+\s+){0,2}?(?:corpus\s+)?papers\b", re.I)
_BOTH = re.compile(r"\bboth\s+(?:corpus\s+)?papers\b", re.I)
_MULTI = re.compile(r"\b(?:which|what|all|the)\s+(?:\w+\s+)?(?:corpus\s+)?papers\b|\bfor each\b|\beach (?:paper|of)\b",
                    re.I)
_ANOTHER = re.compile(r"\b(?:another|other|a second)\s+(?:corpus\s+)?paper\b", re.I)
_CITED_LIST = re.compile(r"\b(?:which|what)\s+(?:other\s+)?(?:corpus\s+)?(?:papers|works)\s+(?:does|do)\s+"
                         r"(?:it|they|this paper|the paper|\w+)\s+cite\b|\bcites other (?:corpus )?papers\b", re.I)


def stated_count(question: str) -> Optional[int]:
    """The number of papers a question says it is about ("Two corpus papers ..." -> 2), or None."""
    m = _COUNT.search(question)
    if m:
        word = m.group(1).lower()
        return int(word) if word.isdigit() else _COUNTS[word]
    return 2 if _BOTH.search(question) else None


def names_in(question: str, names: Sequence[str]) -> bool:
    """One of ``names`` occurs in the question as a whole word (case kept for acronyms)."""
    for name in names:
        if len(name) < 3:
            continue
        flags = 0 if name.isupper() else re.I
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", question, flags):
            return True
    return False


#: A venue and year as a question states them: "A NeurIPS 2024 paper ...".
_VENUE_YEAR = re.compile(r"\b([A-Z][A-Za-z-]{1,15})\s+((?:19|20)\d\d)\b")


def states_venue(question: str, venue: Optional[str], year: Optional[int]) -> bool:
    """The question states this venue and year ("A NeurIPS 2024 paper": venue "NeurIPS", 2024)."""
    if not venue or not year:
        return False
    return any(m.group(1).lower() == venue.lower() and int(m.group(2)) == year for m in _VENUE_YEAR.finditer(question))


def select_papers(question: str, ranked: Sequence[tuple[str, float]], support_ratio: float, *,
                  names_of: Callable[[str], Sequence[str]],
                  cited_by: Callable[[str], Sequence[str]],
                  venue_of: Callable[[str], tuple[Optional[str], Optional[int]]] = lambda pid: (None, None)
                  ) -> list[str]:
    """The supporting papers (module docstring), best first.

    ``ranked``: ``[(paper_id, best chunk score)]`` of the read papers, best first;
    ``names_of(paper_id)``: the paper's own names; ``cited_by(paper_id)``: the corpus papers it
    cites (ids); ``venue_of(paper_id)``: its ``(venue, year)``. With no named paper, the best read
    paper whose venue and year the question states counts as named (:func:`states_venue`).
    Returns at least one paper when ``ranked`` is not empty."""
    if not ranked:
        return []
    order = [pid for pid, _ in ranked]
    named = [pid for pid in order if names_in(question, names_of(pid))]
    if not named:
        named = [pid for pid in order if states_venue(question, *venue_of(pid))][:1]
    count = stated_count(question)
    if _CITED_LIST.search(question):
        citing = named[0] if named else order[0]
        cited = set(cited_by(citing))
        return [citing] + [pid for pid in order if pid in cited]
    if count:
        return (named + [pid for pid in order if pid not in named])[:count]
    return _by_score(question, ranked, named, support_ratio)


def _by_score(question: str, ranked: Sequence[tuple[str, float]], named: list[str], support_ratio: float) -> list[str]:
    """Rule 4 of the module docstring: the ``named`` papers and those within the support ratio of
    the best score."""
    order = [pid for pid, _ in ranked]
    top = ranked[0][1]
    multi = bool(_MULTI.search(question)) or len(named) >= 2
    ratio = support_ratio * (MULTI_RATIO if multi else 1.0)
    by_score = [pid for pid, s in ranked if s >= ratio * top and pid not in named]
    if named:  # the named papers and at most one more ("... as described by another corpus paper")
        chosen = (named + by_score)[: max(MAX_SUPPORTING, len(named) + 1)]
    else:
        chosen = by_score[: MAX_MULTI if multi else MAX_SUPPORTING]
    if _ANOTHER.search(question) and len(chosen) < 2:  # "compares with a model from another corpus paper"
        chosen += [pid for pid in order if pid not in chosen][:1]
    return chosen
