""""What is X?" and "How does X work?" answered by the defining or mechanism sentence of the paper
that introduces X (issue 24, item 3), never by a reference entry, a caption or a result.

1. *The subject*: "What is (the) X?" asks for X; "How does X work / reduce ...?" for the name run X
   (capitalised words: "the Feedback Transformer's feedback memory" -> "Feedback Transformer") and
   the aspect after it ("feedback memory", "reduce the cost of self-attention").
2. *The introducing paper*: among the read papers, best first, the first that gives X as its own
   name (:func:`lit3r.read.claims.own_names`) or has it in its title, else the first whose abstract
   names X.
3. *The sentence*: every sentence of that paper's text chunks (the abstract without the title line,
   and the body; no table, figure or reference entry) is scored by :func:`sentence_score`: a definition pattern ("X is a
   ...", "X, a ...", "we propose X", "... (X)", "called X"), a mechanism cue for a "how" question
   ("by using", "via", "consists of", "works by"), the share of the aspect's terms it holds, the mention
   of X, minus a reported result ("outperforms", "accuracy", "Table 2"); ties: the earlier chunk,
   then the earlier sentence (the abstract and introduction define first).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from graph.records import Chunk
from lit3r.read.claims import terms
from lit3r.read.scoring import chunk_lines

_WHAT = re.compile(r"^\s*what\s+(?:is|are|was|were)\s+(?:the\s+|an?\s+)?(?P<x>[^?.;]{2,60}?)\s*\??\s*$", re.I)
_HOW = re.compile(r"^\s*how\s+(?:does|do|did|can|is|are)\s+(?P<rest>[^?]{2,160}?)\s*\??\s*$", re.I)
_NAME_RUN = re.compile(r"[A-Z][\w+-]*(?:\s+[A-Z][\w+-]*)*")
#: The name a "how" question is about ends at a possessive ("the Feedback Transformer's memory").
_POSSESSIVE = re.compile(r"['\u2019]s\b")
#: Words of an aspect that say nothing about it.
_HOW_FILLER = {"work", "works", "function", "operate", "the", "a", "an", "of", "its", "it", "in", "to", "and", "when",
               "what", "which", "how", "why", "for", "on", "with", "is", "are", "be", "does", "do"}
#: Capitalised words that open a "how" question's rest without naming anything.
_NOT_NAMES = {"i", "we", "you", "they", "he", "she", "it", "my", "our", "your", "their", "this", "these", "those", "one"}
#: Invisible format characters (bidi marks, zero-width joiners) a pasted name may carry.
_FORMAT_MARKS = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
#: Sentence features: a report of an experiment, a statement of a mechanism.
_EVALUATION = re.compile(r"\b(?:experiments?|evaluat\w*|results?|outperforms?|accuracy|baselines?|ablations?|"
                         r"Table \d+|Figure \d+|state-of-the-art|we (?:test|measure|report|observe|compare)\w*)\b", re.I)
_MECHANISM = re.compile(r"\b(?:by \w+ing|via|through|using|instead of|consists? of|composed of|works? by|is computed|computes?|"
                        r"replaces?|projects?|maps?|stores?|exposes?|first\b.*\bthen|each)\b", re.I)
#: Weights of the features in :func:`sentence_score`.
DEFINES, MECHANISM, ASPECT, MENTION, EVALUATION = 2.0, 1.0, 2.0, 1.0, 1.0
#: A sentence shorter than this many words defines nothing ("We analyze TOVA.").
MIN_WORDS = 8


@dataclass(frozen=True)
class Ask:
    """A definition or mechanism question: its ``subject`` (the name asked about), ``how`` (a
    mechanism question) and the ``aspect`` terms a "how" question asks about."""

    subject: str
    how: bool
    aspect: frozenset[str]


def definition_ask(question: str) -> Optional[Ask]:
    """The :class:`Ask` of "What is X?" / "How does X work?" (one sentence; X of at most six
    words), else None."""
    q = " ".join(_FORMAT_MARKS.sub("", question).split())
    m = _WHAT.match(q)
    if m:
        subject = m.group("x").strip()
        if all(w.lower() in _NOT_NAMES or w.lower() in _HOW_FILLER for w in subject.split()):
            return None  # "What is it?", "What is the?" name nothing
        return Ask(subject, False, frozenset()) if len(subject.split()) <= 6 else None
    m = _HOW.match(q)
    if not m:
        return None
    rest = re.sub(r"^(?:the|an?)\s+", "", m.group("rest"), flags=re.I)
    run = _NAME_RUN.match(rest)
    if not run:
        return None
    subject = _POSSESSIVE.split(run.group(0))[0].strip()
    if len(subject) < 2 or subject.split()[0].lower() in _NOT_NAMES:  # "How do I bake bread?" names nothing
        return None
    aspect = rest[len(subject):]
    words = [w for w in re.findall(r"[\w-]+", _POSSESSIVE.sub(" ", aspect)) if w.lower() not in _HOW_FILLER]
    return Ask(subject, True, frozenset(terms(" ".join(words)))) if len(subject.split()) <= 6 else None


def mentions(text: str, subject: str) -> bool:
    """``subject`` occurs in ``text`` as whole words (case ignored)."""
    return bool(re.search(rf"(?<![\w-]){re.escape(subject)}(?![\w-])", text, re.I))


def introducing_paper(subject: str, papers: Sequence[str], names_of: Callable[[str], Sequence[str]],
                      title_abstract: Callable[[str], tuple[str, str]]) -> Optional[str]:
    """The paper of ``papers`` (best first) that introduces ``subject``: the first that gives it as
    its own name or has it in its title, else the first whose abstract names it; None if none."""
    for pid in papers:
        title, _ = title_abstract(pid)
        if any(n.lower() == subject.lower() for n in names_of(pid)) or mentions(title, subject):
            return pid
    return next((pid for pid in papers if mentions(title_abstract(pid)[1], subject)), None)


def _defines(sentence: str, subject: str) -> bool:
    """The sentence defines ``subject``: "X is/are a ...", "X, a ...", "X (...) is", "we propose
    / introduce / present ... X", "called / named / dubbed X", "a long form (X)"."""
    x = re.escape(subject)
    pats = (rf"(?<![\w-]){x}(?:\s*\([^)]*\))?\s*(?:[,\u2013\u2014]\s*(?:a|an|the|which)\b|\s-+\s*(?:a|an)\b|(?:is|are)\s+(?:a|an|the|our|simple|novel|"
            rf"\w+ly)\b)",
            rf"\b(?:we|this (?:paper|work))\s+(?:\w+\s+){{0,2}}(?:propose|introduce|present|develop|call)\w*\b.{{0,120}}"
            rf"(?<![\w-]){x}(?![\w-])",
            rf"\b(?:called|named|dubbed|termed|coined)\s+(?:the\s+)?{x}(?![\w-])",
            rf"\(\s*{x}\s*\)")
    return any(re.search(p, sentence, re.I) for p in pats)


def sentence_score(sentence: str, ask: Ask) -> float:
    """How well ``sentence`` answers ``ask`` (module docstring, step 3): ``DEFINES`` for a definition
    pattern (half of it for a "how" question: the mechanism is asked, not the name), ``MECHANISM`` for a mechanism cue (a "how" question), ``ASPECT`` times the share of the
    aspect's terms it holds, ``MENTION`` when it names the subject (half for a "how" question), minus ``EVALUATION`` for a
    reported result."""
    score = (DEFINES / 2 if ask.how else DEFINES) if _defines(sentence, ask.subject) else 0.0
    score += (MENTION / 2 if ask.how else MENTION) if mentions(sentence, ask.subject) else 0.0
    if ask.how:
        score += MECHANISM if _MECHANISM.search(sentence) else 0.0
        if ask.aspect:
            score += ASPECT * len(ask.aspect & terms(sentence)) / len(ask.aspect)
    return score - (EVALUATION if _EVALUATION.search(sentence) else 0.0)


def defining_sentence(ask: Ask, chunks: Sequence[Chunk]) -> Optional[tuple[Chunk, str]]:
    """The sentence of ``chunks`` (one paper's, in order) that answers ``ask`` best, with its
    chunk: text and abstract chunks only, sentences of ``MIN_WORDS`` words or more, never a
    question; ties: the earlier chunk, then the earlier sentence. None when no sentence scores
    above zero."""
    best: Optional[tuple[float, Chunk, str]] = None
    for chunk in chunks:
        if chunk.kind not in ("text", "title_abstract") or (chunk.object_id or "").startswith("Citation"):
            continue
        lines = chunk_lines(chunk)
        for line in lines[1:] if chunk.kind == "title_abstract" else lines:  # its first line is the title
            if len(line.split()) < MIN_WORDS or line.rstrip().endswith("?"):
                continue
            s = sentence_score(line, ask)
            if s > 0 and (best is None or s > best[0]):
                best = (s, chunk, line)
    return (best[1], best[2]) if best else None
