"""Prompt templates (string.Template, ``$name`` placeholders), in the project's own words."""

from __future__ import annotations

import functools
from importlib import resources
from string import Template


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
