"""Ids and labels an LLM writes back, matched to the ones its prompt listed (issue 14, item 3).

Prompts show paper ids and passage labels in brackets ("[2007.14062] Big Bird: ...", "[E1]"),
and models copy them with the brackets, with the whole header, or with one character wrong
("2501.02508" for "2502.02508"). :func:`resolve` maps such a value to the listed id it means:

1. the value as written, then without brackets, quotes and surrounding space;
2. the first bracketed or leading token of a header ("[2007.14062] Big Bird ..." -> "2007.14062");
3. a near miss: the one listed id at edit distance 1 (none when two are that close), reported.

Anything else is not resolved (the caller drops it and says so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

_TOKEN = re.compile(r"^\s*[\[(\"']*\s*([^\]\)\"'\s,;]+)")


def _distance_one(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one substitution, insertion or deletion."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


@dataclass
class Resolver:
    """Resolves values against ``known`` ids (module docstring); ``notes`` says what was
    resolved by a near miss and what was dropped."""

    known: Sequence[str]
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lower = {k.lower(): k for k in self.known}

    def resolve(self, value: object) -> Optional[str]:
        """The listed id ``value`` means, or None."""
        if not isinstance(value, str):
            return None
        text = value.strip()
        for cand in (text, text.strip("[]()\"' ")):
            if cand.lower() in self._lower:
                return self._lower[cand.lower()]
        m = _TOKEN.match(text)
        token = m.group(1) if m else ""
        if token.lower() in self._lower:
            return self._lower[token.lower()]
        close = [k for k in self.known if _distance_one(token.lower(), k.lower())] if len(token) >= 4 else []
        if len(close) == 1:
            self.notes.append(f"{value!r} read as {close[0]!r} (one character apart)")
            return close[0]
        self.notes.append(f"{value!r} is not one of the listed ids: dropped")
        return None

    def resolve_all(self, values: Iterable[object]) -> list[str]:
        """The resolved ids of ``values``, in order, without repeats."""
        out = [r for r in (self.resolve(v) for v in values) if r is not None]
        return list(dict.fromkeys(out))
