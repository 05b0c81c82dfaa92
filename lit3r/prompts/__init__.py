"""Prompt templates (string.Template, ``$name`` placeholders), in the project's own words.

Worked examples (issue 14, item 6): invented examples with realistic values were copied into
outputs by small models (a stage-1 ``supporting`` list, a fact, a subquery). The templates
therefore show the reply's *shape* only, on a line that starts with ``Reply shape``, with every
value a placeholder in angle brackets (``"<passage label>"``), which no passage, id or query can
be mistaken for. :func:`echoes_example` recognises a value copied from that line (or any other
placeholder-shaped value), so that the callers drop it and note it in the trace.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from string import Template

#: A placeholder value: "<passage label>", "[<id>]", "'<value>'".
_PLACEHOLDER = re.compile(r"^[\s\[\]\"'(]*<[^<>]*>[\s\[\]\"')]*$")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"(\s*:)?')  # a JSON string; group 2: it is a key


@functools.lru_cache(maxsize=None)
def template(name: str) -> Template:
    """The template ``lit3r/prompts/<name>.txt``; KeyError for an unknown name."""
    path = resources.files(__name__) / f"{name}.txt"
    if not path.is_file():
        raise KeyError(f"no prompt template named {name!r}")
    return Template(path.read_text(encoding="utf-8"))


def render(name: str, **values: str) -> str:
    """Fill a template; a missing value raises KeyError."""
    return template(name).substitute(**values)


def _norm(value: str) -> str:
    return " ".join(value.lower().split())


@functools.lru_cache(maxsize=None)
def example_values(name: str) -> frozenset[str]:
    """The string values (lower-cased, spaces normalised) of the ``Reply shape`` lines of
    template ``name`` (the line that starts with it and the lines up to the next blank line);
    empty when it has none. KeyError for an unknown template."""
    lines = template(name).template.splitlines()
    out: set[str] = set()
    inside = False
    for line in lines:
        if line.startswith("Reply shape"):
            inside = True
        elif not line.strip():
            inside = False
        if inside:
            out.update(_norm(v) for v, key in _STRING.findall(line) if v.strip() and not key)
    return frozenset(out)


def is_placeholder(value: object) -> bool:
    """``value`` is a string shaped like a prompt placeholder (``"<passage label>"``)."""
    return isinstance(value, str) and bool(_PLACEHOLDER.match(value))


def echoes_example(name: str, value: object) -> bool:
    """``value`` (a string) is a placeholder or equals a value of template ``name``'s reply
    shape: copied from the prompt, not read from the data."""
    if not isinstance(value, str):
        return False
    return is_placeholder(value) or _norm(value.strip().strip("[]\"'")) in example_values(name)
