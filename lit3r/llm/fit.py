"""Prompts fitted to a context window: drop the lowest-ranked passages (issue 14, item 1).

The prompt builders (:mod:`lit3r.read.llm`, :mod:`lit3r.pipeline.retrieve`) list passages best
first, one per line start: ``[P1] (text, page 3) ...`` (stage-1 reading), ``  [E1] (...)``
(synthesis, under ``[paper_id] title`` headers, which go with their first passage, and with
``fact:`` lines) and ``  (text, page 3) ...`` (verification). :func:`shrink_text` drops whole passages from the end of that list (the lowest
ranked, so the labels the reply may cite stay those the caller mapped) until the text fits a
character target; the one passage left is cut when it is still too long. The end of the last
passage is where the template's own text resumes (read from ``lit3r/prompts/*.txt``).
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Optional

_UNIT = re.compile(r"^(?:\[[PE]\d+\] |[ \t]+\[[PE]\d+\] |[ \t]+\()", re.M)
_BLOCKS = ("passages", "evidence", "papers")


@functools.lru_cache(maxsize=None)
def _tails() -> tuple[str, ...]:
    """The template text that follows each passage block: its leading newlines and first line
    ("\\n\\nReport:")."""
    out = []
    for path in resources.files("lit3r.prompts").iterdir():
        if not path.name.endswith(".txt"):
            continue
        text = path.read_text(encoding="utf-8")
        for var in _BLOCKS:
            at = text.find(f"${var}")
            if at < 0:
                continue
            tail = text[at + len(var) + 1:].split("$", 1)[0]
            rest = tail.lstrip("\n")
            first = rest.split("\n", 1)[0]
            if first.strip():
                out.append(tail[: len(tail) - len(rest)] + first)
    return tuple(out)


def _with_header(text: str, at: int) -> int:
    """``at``, or the start of the paper header line right above it (``[paper_id] title`` after a
    blank line): a paper's header goes with its first passage."""
    prev_end = text.rfind("\n", 0, at)
    if prev_end <= 0:
        return at
    prev_start = text.rfind("\n", 0, prev_end) + 1
    if text.startswith("[", prev_start) and text[max(0, prev_start - 2):prev_start] == "\n\n":
        return prev_start
    return at


def passage_spans(text: str) -> list[tuple[int, int]]:
    """``[(start, end)]`` of the passages listed in ``text``, in order (module docstring)."""
    starts = [_with_header(text, m.start()) for m in _UNIT.finditer(text)]
    if not starts:
        return []
    end = len(text)
    for tail in _tails():
        at = text.find(tail, starts[-1])
        if at >= 0:
            end = min(end, at)
    return list(zip(starts, starts[1:] + [end]))


def shrink_text(text: str, target_chars: int) -> Optional[tuple[str, int, int]]:
    """``(shorter text, passages dropped, passages listed)``: passages dropped from the end until
    ``text`` is at most ``target_chars`` long (the first one is kept, and cut when it alone is
    still too long); None when ``text`` lists no passage."""
    spans = passage_spans(text)
    if not spans:
        return None
    n, last_end = len(spans), spans[-1][1]

    def length(kept: int) -> int:  # of the text with the first ``kept`` passages only
        return len(text) if kept == n else len(text) - (last_end - spans[kept][0])

    keep = n
    while keep > 1 and length(keep) > target_chars:
        keep -= 1
    head = text[: spans[keep][0]].rstrip() if keep < n else text[:last_end]
    tail = text[last_end:]
    out = head + tail
    if len(out) > target_chars and keep == 1:  # one passage left, still too long: cut its text
        s = spans[0][0]
        room = max(200, len(head) - s - (len(out) - target_chars))
        out = head[: s + room].rstrip() + " ..." + tail
    return out, n - keep, n


def shrink_messages(messages: list[dict], keep: float) -> Optional[tuple[list[dict], str]]:
    """``messages`` with the last passage-listing user message cut to about ``keep`` (0-1) of its
    length (images dropped: they cost many tokens), and a note saying what was dropped; None
    when no message lists passages."""
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        content = msg.get("content")
        text = content if isinstance(content, str) else next(
            (p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text"), "")
        if msg.get("role") != "user" or not text:
            continue
        shrunk = shrink_text(text, int(len(text) * keep))
        if shrunk is None:
            continue
        new_text, dropped, listed = shrunk
        images = 0 if isinstance(content, str) else sum(1 for p in content or [] if p.get("type") != "text")
        note = f"{dropped} of {listed} passage(s) dropped" + (f", {images} image(s)" if images else "")
        if len(new_text) < len(text) and not dropped:
            note += ", the passage kept was cut"
        return messages[:i] + [{**msg, "content": new_text}] + messages[i + 1:], note
    return None
