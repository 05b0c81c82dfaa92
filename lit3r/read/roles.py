"""Roles of an option's numbers: a tie-break between multiple-choice options that state the same
numbers in another order ("4772 vs 5000" against "5000 vs 4772").

A comparison question names two roles, the thing asked about and what it is "compared with"
(the head and the tail of its ask part, :func:`lit3r.read.scoring.ask_part`). An option of the
form "a vs b" gives ``a`` to the head and ``b`` to the tail. Each number is looked up in the table
cells that state it; a cell's labels (row key and column label: the cell's text without its
values) count for the option by the terms they share with the number's role minus those they share
with the other role, where "w/o" and "without" mark an ablated variant (a cell "Ours (w/o SEL)"
belongs to "the variant without ..."). The option with the highest count wins; none when the best
two are equal. Used only when :func:`lit3r.read.claims.choose_option` gives no letter.
"""

from __future__ import annotations

import math
import re
from typing import Optional, Sequence

from lit3r.read.claims import Unit, numbers, terms
from lit3r.read.scoring import ask_part

#: What a comparison question's tail starts with.
_COMPARED = re.compile(r"\b(?:compared (?:with|to)|versus|vs\.?|relative to)\s", re.I)
#: What separates the two parts of a comparison option.
_OPTION_SPLIT = re.compile(r"\s+(?:vs\.?|versus|compared (?:with|to))\s+", re.I)
_WITHOUT = re.compile(r"\bw/o\b|\bwithout\b", re.I)
_NUMBERS = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?%?")
#: The marker term of an ablated variant ("w/o", "without").
ABLATED = "<without>"


def _role_terms(text: str) -> set[str]:
    """The matching terms of a role or a cell label, with :data:`ABLATED` when it names an ablated
    variant."""
    out = terms(_NUMBERS.sub(" ", _WITHOUT.sub(" ", text)))
    return out | {ABLATED} if _WITHOUT.search(text) else out


def role_choice(question: str, options: dict[str, str], tied: Sequence[str], units: Sequence[Unit]) -> Optional[str]:
    """The label among ``tied`` (options of equal support) whose numbers sit in table cells that
    name their roles (module docstring), or None: the question compares nothing, an option is not
    of the form "a vs b", or the best two are equal."""
    ask = ask_part(question)
    m = _COMPARED.search(ask)
    if m is None or len(tied) < 2:
        return None
    roles = (_role_terms(ask[: m.start()]), _role_terms(ask[m.end():]))
    cells = [(u.values, _role_terms(u.text)) for u in units if u.kind == "cell"]
    score: dict[str, float] = {}
    for lab in tied:
        parts = _OPTION_SPLIT.split(options[lab])
        if len(parts) != 2:
            return None
        score[lab] = math.fsum(len(label & role) - len(label & other)
                               for part, role, other in zip(parts, roles, roles[::-1])
                               for values, label in cells if (nums := numbers(part)) and nums <= values)
    ranked = sorted(tied, key=lambda lab: (-score[lab], lab))
    return ranked[0] if score[ranked[0]] > score[ranked[1]] else None
