"""Text features of questions and chunks shared by the readers (seed paper section 2.3; the
extractive reader's formulas are in :mod:`lit3r.read.extractive`).

Token sets come from :func:`graph.search.tokenize.tokenize` (the BM25 tokenizer), so a word
counts the same in search and in reading.
"""

from __future__ import annotations

import re

from graph.records import Chunk

CITE_Q = re.compile(r"\b(cite[sd]?|citation|reference[sd]?|bibliograph)", re.I)
NUM = re.compile(r"\d+(?:\.\d+)?")
NUMERIC_Q = re.compile(r"\b(how (?:many|much|long|large|fast)|what (?:is|was|are|were) the (?:\w+ )?(?:accuracy|score|"
                        r"number|value|size|rate|time|f1|recall|precision|perplexity)|accuracy|score|reported|"
                        r"parameters|how much)\b", re.I)

_LIST_SPAN = re.compile(r"((?:[^,?;:]{1,60},\s*){1,}(?:and\s+|or\s+)?[^,?;:]{1,60})")
_LEAD = re.compile(r"^.*\b(?:for|of|on|in|between|from|among|to)\s+", re.I)
_TRAIL = re.compile(r"\s+(?:as|given|with|under|when|reported|respectively|in|on|at|using)\b.*$", re.I)


#: Two names joined by and/or/vs after a preposition: "of CoT and CoT+RE2", "between A and B".
_PAIR = re.compile(r"\b(?:of|for|between|on|with)\s+[^\s,?;:]{1,40}(?:\s+[^\s,?;:]{1,40}){0,2}?\s+(?:and|or|vs\.?|versus)"
                   r"\s+[^\s,?;:]{1,40}(?:\s+[^\s,?;:]{1,40}){0,2}?(?=[?.,;:]|\s+(?:on|in|with|for|at|under)\b|$)", re.I)
_NOT_NAME = re.compile(r"\b(what|which|each|it|all|who|how|the|their|they|this|these)\b", re.I)


_NAMED = re.compile(r"\b(Table|Figure|Fig\.|Equation|Eq\.|Algorithm)\s*\(?(\d{1,3})\)?")
_NAMED_REF = re.compile(r"\b(?:reference|ref\.|citation)\s*\[?(\d{1,4})\]?", re.I)
_LABEL = {"Fig.": "Figure", "Eq.": "Equation"}


def named_objects(question: str) -> set[str]:
    """Object ids a question names: "Figure 1 of ..." -> {"Figure 1"}; "reference [57]" ->
    {"Citation 57"}."""
    found = {f"{_LABEL.get(m.group(1), m.group(1))} {m.group(2)}" for m in _NAMED.finditer(question)}
    found |= {f"Citation {m.group(1)}" for m in _NAMED_REF.finditer(question)}
    return found


def ask_part(question: str) -> str:
    """The part of a question that asks (its last sentence), when it has several sentences."""
    parts = [p for p in re.split(r"(?<=[.?!])\s+", question.strip()) if p]
    return parts[-1] if len(parts) > 1 else question


def overlap(q: set[str], t: set[str]) -> float:
    """Share of the tokens ``q`` that occur in ``t`` (0 when ``q`` is empty)."""
    return len(q & t) / len(q) if q else 0.0


def chunk_lines(chunk: Chunk) -> list[str]:
    """Table rows (with the header row prefixed) or sentences of a chunk."""
    if chunk.kind == "table":
        rows = [r for r in chunk.text.splitlines() if r.strip()]
        head = " ".join(rows[1:3]) if len(rows) > 2 else ""
        return [f"{r} ({head})" if head and "|" in r else r for r in rows]
    return [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n", chunk.text) if len(p.strip()) > 3] or [chunk.text]


def question_entities(question: str) -> list[str]:
    """The names a question lists: "... on CIFAR-10 for TCM, sCT, ECM-XL (100k iterations), and
    IMM?" -> ["TCM", "sCT", "ECM-XL", "IMM"]; "accuracies of CoT and CoT+RE2?" -> ["CoT",
    "CoT+RE2"]. Empty when the question lists nothing."""
    best: list[str] = []
    text = re.sub(r"\s*\([^()]*\)", "", question)
    spans = [m.group(1) for m in _LIST_SPAN.finditer(text)] + [m.group(0) for m in _PAIR.finditer(text)]
    for span in spans:
        parts = [p.strip() for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or|vs\.?|versus)\s+", span) if p.strip()]
        if len(parts) < 2:
            continue
        parts[0] = _LEAD.sub("", parts[0])
        parts[-1] = _TRAIL.sub("", parts[-1]).rstrip("?.! ")
        names = [n for n in parts if 0 < len(n) <= 40 and len(n.split()) <= 4 and re.search(r"[A-Z0-9]", n)
                 and not _NOT_NAME.search(n)]
        if len(names) >= 2 and len(names) > len(best):
            best = names
    return best


#: A complexity in big-O notation: "O(n^2 · d)", "O(n log(n))", "O(N*d/eps^2)" (one level of inner brackets).
_BIG_O = re.compile(r"\bO\s*\(((?:[^()]|\([^()]*\))+)\)")


def complexities(text: str) -> set[str]:
    """The big-O expressions of a text in one written form, so that a table's "O(n^2 · d)" and an
    option's "O(n^2*d)" meet: "o:" + the expression lowercased without spaces, brackets and
    multiplication signs ("O(n log(n))" and "O(n log n)" -> "o:nlogn")."""
    return {"o:" + re.sub(r"[\s()*·×⋅]", "", m.group(1)).lower() for m in _BIG_O.finditer(text)}
