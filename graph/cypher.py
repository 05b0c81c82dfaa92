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
