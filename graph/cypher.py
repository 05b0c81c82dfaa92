"""Named Cypher statements, loaded from the ``cypher`` package's ``.cypher`` files.

Statements are only ever run with parameters: no Cypher is built from user input by string
concatenation. A file may hold several statements separated by ``;`` (``schema.cypher``).
"""

from __future__ import annotations

import functools
import re
from importlib import resources

from graph.errors import UnknownIdError


@functools.lru_cache(maxsize=None)
def statement(name: str) -> str:
    """The text of ``cypher/<name>.cypher`` without ``//`` comment lines. Raises UnknownIdError for an
    unknown name."""
    path = resources.files("cypher") / f"{name}.cypher"
    if not path.is_file():
        raise UnknownIdError("Cypher statement", name, f"the statements are {', '.join(names())}")
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if not ln.lstrip().startswith("//")]
    return "\n".join(lines).strip()


def statements(name: str) -> list[str]:
    """The statements of a multi-statement file, split at ``;`` line ends."""
    return [s.strip() for s in re.split(r";\s*(?:\n|$)", statement(name)) if s.strip()]


def names() -> list[str]:
    """All statement names, sorted."""
    return sorted(p.name[: -len(".cypher")] for p in resources.files("cypher").iterdir() if p.name.endswith(".cypher"))


#: A parameter a statement needs from its caller (no default in its header).
REQUIRED = object()

_PARAM = re.compile(r"\$`?([A-Za-z_]\w*)`?")
_DEFAULT = re.compile(r"\$([A-Za-z_]\w*)=(\"[^\"]*\"|'[^']*'|[^\s,;)]+)")


class StatementInfo:
    """What ``lit3r cypher --list`` shows of a named statement: ``name``; ``purpose``, the first
    sentence of its ``//`` header; ``params``, ``{name: default or REQUIRED}`` in order of first
    use. Parameters are those the statement's code uses (``$name``); a default is written in the
    header as ``$name=VALUE`` (JSON: ``$limit=25``, ``$kind="text"``)."""

    def __init__(self, name: str, purpose: str, params: dict[str, object]) -> None:
        self.name, self.purpose, self.params = name, purpose, params

    @property
    def required(self) -> list[str]:
        """The parameters without a default."""
        return [k for k, v in self.params.items() if v is REQUIRED]

    def defaults(self) -> dict[str, object]:
        """``{name: default}`` of the parameters that have one."""
        return {k: v for k, v in self.params.items() if v is not REQUIRED}


def header(name: str) -> str:
    """The ``//`` comment lines at the top of ``cypher/<name>.cypher`` as one line of text
    (UnknownIdError for an unknown name)."""
    statement(name)  # the unknown-name error
    out = []
    for ln in (resources.files("cypher") / f"{name}.cypher").read_text(encoding="utf-8").splitlines():
        s = ln.strip()
        if not s.startswith("//"):
            break
        out.append(s[2:].strip())
    return " ".join(x for x in out if x)


@functools.lru_cache(maxsize=None)
def info(name: str) -> StatementInfo:
    """The :class:`StatementInfo` of a named statement (UnknownIdError for an unknown name)."""
    import json

    code = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "''", statement(name))
    head = header(name)
    defaults: dict[str, object] = {}
    for m in _DEFAULT.finditer(head):
        raw = m.group(2)
        try:
            defaults[m.group(1)] = json.loads(raw.replace("'", '"') if raw.startswith("'") else raw)
        except json.JSONDecodeError:
            defaults[m.group(1)] = raw
    params = {p: defaults.get(p, REQUIRED) for p in dict.fromkeys(_PARAM.findall(code))}
    text = re.sub(r"(\s*\$\w+(=\S+?)?,?)+\s*$", "", head)  # the trailing parameter list
    text = re.sub(r"\bNo parameters\.\s*$", "", text).strip()
    first = re.split(r"(?<=[.])\s+(?=[A-Z$(])", text, maxsplit=1)[0]
    return StatementInfo(name, first.rstrip(), params)


def suggestions(name: str, n: int = 3) -> list[str]:
    """Statement names close to ``name`` (a mistyped name), best first."""
    import difflib

    all_names = names()
    close = difflib.get_close_matches(name, all_names, n=n, cutoff=0.5)
    part = [x for x in all_names if name.lower() in x.lower() and x not in close]
    return (close + part)[:n]
