"""Secrets out of everything Lit3R prints or writes: the one place that knows what a secret is.

A secret is the value of a ``password`` or ``api_key`` setting (any section), of
``OPENAI_API_KEY`` (the OpenAI provider reads it) or of a ``LIT3R_*__PASSWORD`` /
``LIT3R_*__API_KEY`` variable, and the ``user:password@`` part of any URL. :func:`masked` shows
a configuration dump with them as ``***`` (``lit3r config show``, ``lit3r doctor``);
:func:`redact` replaces them inside any text (error messages, check details, notes) and
:func:`redact_data` inside JSON-like data (``ask --json``). Values shorter than
:data:`MIN_SECRET` characters are not searched for inside text (they would cut ordinary words);
the setting itself is masked whatever its length.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence
from urllib.parse import quote

if TYPE_CHECKING:
    from lit3r.config import Settings

MASK = "***"
#: Setting names whose values are secrets, in every section.
SECRET_FIELDS = frozenset({"password", "api_key"})
#: Environment variables (other than ``LIT3R_*``) that hold a secret.
SECRET_ENV = ("OPENAI_API_KEY",)
#: Characters: shorter secret values are masked as settings but not searched for in text.
MIN_SECRET = 4

_URL_USERINFO = re.compile(r"(?<=://)[^/@\s'\"]+@")
_URL_QUERY_SECRET = re.compile(r"(?i)([?&](?:api[-_]?key|access[-_]?token|token|password|secret|sig)=)[^&#\s'\"]+")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[\w.~+/=-]+")


def secret_values(settings: Optional["Settings"] = None) -> list[str]:
    """The secret values in force, longest first: the ``password`` / ``api_key`` settings of
    ``settings``, the passwords in their URLs, :data:`SECRET_ENV` and the ``LIT3R_*__PASSWORD``
    / ``LIT3R_*__API_KEY`` variables (these also when the settings could not be loaded)."""
    found: set[str] = set()
    if settings is not None:
        for section in settings.model_dump(mode="json").values():
            if not isinstance(section, dict):
                continue
            for key, value in section.items():
                if key in SECRET_FIELDS and isinstance(value, str):
                    found.add(value)
                elif isinstance(value, str):
                    found.update(m.group(1) for m in re.finditer(r"://[^/@\s:]*:([^/@\s]+)@", value))
    for name, value in os.environ.items():
        upper = name.upper()
        if upper in SECRET_ENV or (upper.startswith("LIT3R_") and upper.endswith(("__PASSWORD", "__API_KEY"))):
            found.add(value)
    return sorted((v for v in found if len(v) >= MIN_SECRET), key=lambda v: (-len(v), v))


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` with every value of ``secrets`` (also URL-encoded), URL credentials
    (``user:pw@``), secret URL query parameters (``?api-key=``) and bearer tokens as ``***``."""
    for value in secrets:
        for form in {value, quote(value, safe="")}:
            text = text.replace(form, MASK)
    text = _URL_USERINFO.sub(MASK + "@", text)
    text = _URL_QUERY_SECRET.sub(lambda m: m.group(1) + MASK, text)
    return _BEARER.sub(lambda m: m.group(1) + MASK, text)


def redact_data(data: Any, secrets: Sequence[str] = ()) -> Any:
    """``data`` (dicts, lists, strings, numbers) with :func:`redact` applied to every string,
    keys included; a new object, ``data`` is not changed."""
    if isinstance(data, str):
        return redact(data, secrets)
    if isinstance(data, dict):
        return {redact_data(k, secrets): redact_data(v, secrets) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_data(v, secrets) for v in data]
    return data


def masked(config: dict, secrets: Iterable[str] = ()) -> dict:
    """A configuration dump (``Settings.model_dump(mode="json")``) with the values of
    :data:`SECRET_FIELDS` as ``***`` and :func:`redact` applied to every other string."""
    values = tuple(secrets)

    def one(key: str, value: Any) -> Any:
        if isinstance(value, dict):
            return masked(value, values)
        if value and key in SECRET_FIELDS:
            return MASK
        return redact_data(value, values)

    return {k: one(k, v) for k, v in config.items()}


__all__ = ["MASK", "SECRET_FIELDS", "SECRET_ENV", "MIN_SECRET", "secret_values", "redact", "redact_data", "masked"]
