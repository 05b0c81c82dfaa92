"""The one JSON Lines splitter of the project: a JSONL text is split on ``"\\n"`` only.

``str.splitlines`` also splits on U+2028, U+2029, U+0085, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``
and a lone ``\\r``, all of which may stand unescaped inside a JSON string; a line holding one
would be cut in two. Every JSONL reader (questions, submissions, traces, gold, metadata,
the LLM cache) goes through :func:`jsonl_lines` (the bytes readers split on ``b"\\n"``).
"""

from __future__ import annotations

from typing import Iterator


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number from 1, line)`` of a JSON Lines ``text``, split on ``"\\n"`` only; a
    ``"\\r"`` before the newline (a file saved with CRLF) is dropped. An empty last line (after
    the final newline) is not yielded."""
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    for no, line in enumerate(parts, start=1):
        yield no, line[:-1] if line.endswith("\r") else line
