"""Citation questions answered from the citation graph (issue 24, item 3): "Which corpus papers cite
the paper that ...?".

The cited paper is the one the question names, else the best read paper; the citing papers are
every corpus paper whose reference list resolves to it (:meth:`graph.store.GraphStore.cited_by`,
by id), whether or not retrieval found them; each citing paper's evidence is its reference entry
for the cited paper (the chunk ``Citation N``).

A multiple-choice option that lists papers ("Lightning Attention-2, Transformers are Multi-State
RNNs (TOVA), and Training-Free Long-Context Scaling") is read as a set of corpus papers: each
listed name is the corpus paper whose title (or own name) holds at least ``NAME_SHARE`` of the
name's terms, most first; a name no paper matches counts as a wrong paper. The option whose set
matches the citing papers best (F1) wins; no letter when the best two are equal.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from graph.records import Chunk, Paper
from lit3r.read.claims import own_names, terms
from lit3r.read.scoring import overlap

#: A question that asks which papers cite a paper (not which papers a paper cites).
CITING_Q = re.compile(r"\b(?:which|what)\s+(?:other\s+)?(?:corpus\s+)?(?:papers|works)\s+(?:in\s+(?:the|this)\s+corpus\s+)?"
                      r"(?:cite|have cited|build on)\b|\b(?:papers|works)\s+(?:that\s+)?(?:cite|citing)\s+(?:the|this)\b",
                      re.I)
#: The share of a listed name's terms a paper's title or own names must hold to be that paper.
NAME_SHARE = 0.6
_SPLIT = re.compile(r"\s*(?:;|,\s*(?:and\s+)?|\s+and\s+)\s*")
_ONLY = re.compile(r"\b(?:only|both|all)\b", re.I)


def asks_citing(question: str) -> bool:
    """The question asks which corpus papers cite a paper (``CITING_Q``)."""
    return bool(CITING_Q.search(question))


def reference_chunk(chunks: Sequence[Chunk], numbers: Sequence[int]) -> Optional[Chunk]:
    """The reference entry chunk (``Citation N``) of one of ``numbers`` among a paper's ``chunks``."""
    wanted = {f"Citation {n}" for n in numbers}
    return next((c for c in chunks if c.object_id in wanted), None)


def listed_papers(text: str, papers: Sequence[Paper]) -> list[Optional[str]]:
    """The corpus papers an option lists, one per listed name (None: no corpus paper matches)."""
    names = [n for n in _SPLIT.split(_ONLY.sub(" ", text)) if n.strip()]
    known = [(p.paper_id, terms(p.title) | {t for n in own_names(p.title, p.abstract or "") for t in terms(n)})
             for p in papers]
    out: list[Optional[str]] = []
    for name in names:
        main = terms(re.sub(r"\([^()]*\)", " ", name)) or terms(name)
        alias = {t for m in re.findall(r"\(([^()]*)\)", name) for t in terms(m)}
        best = max(known, key=lambda pk: (overlap(main, pk[1]), overlap(alias, pk[1])), default=None)
        ok = best is not None and (overlap(main, best[1]) >= NAME_SHARE or (alias and alias <= best[1]))
        out.append(best[0] if ok and best is not None else None)
    return out


def pick_listed(options: dict[str, str], want: set[str], papers: Sequence[Paper]) -> tuple[Optional[str], dict]:
    """``(label or None, {label: F1})``: the option whose listed papers match ``want`` best."""
    scores = {}
    for lab, text in options.items():
        listed = listed_papers(text, papers)
        hit = len({p for p in listed if p} & want)
        prec, rec = (hit / len(listed) if listed else 0.0), (hit / len(want) if want else 0.0)
        scores[lab] = 2 * prec * rec / (prec + rec) if hit else 0.0
    ranked = sorted(scores, key=lambda lab: (-scores[lab], lab))
    if not ranked or scores[ranked[0]] <= 0 or (len(ranked) > 1 and scores[ranked[0]] == scores[ranked[1]]):
        return None, scores
    return ranked[0], scores
