"""The LLM reader's grounding check (issue 13, item 7): a number the answer states must occur in
the cited evidence, or be the result of an arithmetic step of the stated calculation whose
operands occur there ("80.59 - 78.77 = 1.82"). Otherwise the answer is flagged and the
extractive answer is used instead (:mod:`lit3r.read.llm`).

Numbers are compared as written, thousands separators dropped ("1,053" = "1053"), and a
trailing zero does not matter ("45.40" = "45.4"). Small integers (below ``MIN_CHECKED``) are
not checked: they count things ("2 papers", "3 heads") more often than they report results.
"""

from __future__ import annotations

import re
from typing import Iterable

from lit3r.read.scoring import NUM

#: Integers below this are not checked.
MIN_CHECKED = 10
#: Relative tolerance of an arithmetic step ("31.4 - 29.9 = 1.5").
TOLERANCE = 0.01
_STEP = re.compile(r"(-?\d+(?:\.\d+)?)\s*([-+*/x×÷])\s*(-?\d+(?:\.\d+)?)\s*=\s*(-?\d+(?:\.\d+)?)")


def _norm(num: str) -> str:
    num = num.replace(",", "")
    return num.rstrip("0").rstrip(".") if "." in num else num


def numbers_of(text: str) -> set[str]:
    """The numbers of a text, normalised (module docstring)."""
    return {_norm(n) for n in NUM.findall(text.replace(",", ""))}


def _checked(num: str) -> bool:
    return "." in num or int(num) >= MIN_CHECKED


def _apply(a: float, op: str, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op in "*x×":
        return a * b
    return a / b if b else float("nan")


def computed(calculation: str, known: set[str]) -> set[str]:
    """The results of the calculation's arithmetic steps that hold and whose operands are
    ``known`` (or results of earlier steps)."""
    out: set[str] = set()
    for m in _STEP.finditer(calculation.replace(",", "")):
        a, op, b, c = m.groups()
        if {_norm(a.lstrip("-")), _norm(b.lstrip("-"))} <= known | out:
            value, stated = _apply(float(a), op, float(b)), float(c)
            if abs(value - stated) <= TOLERANCE * max(1.0, abs(stated)):
                out.add(_norm(c.lstrip("-")))
    return out


def ungrounded(answer: str, calculation: str, evidence: Iterable[str]) -> list[str]:
    """The numbers of ``answer`` that are neither in the ``evidence`` texts nor computed from
    them by the ``calculation`` (sorted; empty when the answer is grounded)."""
    known = set().union(*(numbers_of(t) for t in evidence))
    known |= computed(calculation or "", known)
    return sorted(n for n in numbers_of(answer) if _checked(n) and n not in known)
