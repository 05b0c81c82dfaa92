"""Secrets out of everything Lit3R prints or writes: the one place that knows what a secret is.

A secret is the value of a ``password`` or ``api_key`` setting (any section), of
``OPENAI_API_KEY`` (the OpenAI provider reads it) or of a ``LIT3R_*__PASSWORD`` /
``LIT3R_*__API_KEY`` variable, and the ``user:password@`` part of any URL. :func:`masked` shows
a configuration dump with them as ``***`` (``lit3r config show``, ``lit3r doctor``);
:func:`redact` replaces them inside any text (error messages, check details, notes, a server's
reply quoted in one) and :func:`redact_data` inside JSON-like data (``ask --json``, traces, the
LLM cache); :func:`logger` gives a logger whose records are redacted before any handler sees them.
Values shorter than :data:`MIN_SECRET` characters are not searched for inside text (they would cut
ordinary words); the setting itself is masked whatever its length.

Secrets are found three ways, so that a server's echo is caught wherever it comes from: by value
(the settings, the environment, and every key a provider was given: :func:`remember`), by shape
(``Bearer <token>``, ``sk-<20+ characters>``, ``api_key=<value>``, ``Authorization: <value>``) and
in URLs (``user:password@``, ``?api-key=``). An API key is shown as its prefix and last four
characters (``sk-...abcd``, the form key dashboards use, so a user can tell which key was meant)
when it has :data:`MIN_KEY_SHOWN` characters or more, otherwise as ``***``; passwords and URL
credentials always as ``***``.
"""

from __future__ import annotations

import logging
import os
import re
import threading
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
#: Characters an API key needs before its prefix and last four are shown (``sk-...abcd``).
MIN_KEY_SHOWN = 16

#: API keys this process was given (a provider's ``api_key``): masked in every text from then on.
_REMEMBERED: set[str] = set()
_REMEMBERED_LOCK = threading.Lock()

_URL_USERINFO = re.compile(r"(?<=://)[^/@\s'\"]+@")
_URL_QUERY_SECRET = re.compile(r"(?i)([?&](?:api[-_]?key|access[-_]?token|token|password|secret|sig)=)[^&#\s'\"]+")
_BEARER = re.compile(r"(?i)\b(bearer\s+)(?![\w-]*\.\.\.)([\w~+/-]+(?:\.[\w~+/-]+)*=*)")
#: Key shapes of the common providers (OpenAI ``sk-``/``sk-proj-``, Anthropic ``sk-ant-``,
#: Hugging Face ``hf_``, GitHub ``ghp_``/``github_pat_``, Google ``AIza``) and named key fields.
_KEY_SHAPES = re.compile(r"\b(?:sk-[\w-]{20,}|hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
                         r"|AIza[\w-]{30,})")
_NAMED_KEY = re.compile(r"(?i)(\b(?:api[-_ ]?key|x-api-key|authorization|access[-_]?token|secret)[\"']?\s*[:=]\s*[\"']?)"
                        r"(?!bearer\b)([^\s\"',;&}]{%d,})" % MIN_SECRET)


def remember(*keys: Optional[str]) -> None:
    """Keep ``keys`` (a provider's API key) as secrets of this process: :func:`redact` masks them
    in every text from now on, wherever the text comes from (a server that echoes the key)."""
    with _REMEMBERED_LOCK:
        _REMEMBERED.update(k for k in keys if k and len(k) >= MIN_SECRET)


def key_mask(value: str) -> str:
    """``value`` (an API key or token) as ``prefix...abcd`` (its ``sk-``-like prefix and last
    four characters) when it has :data:`MIN_KEY_SHOWN` characters or more, else ``***``."""
    if len(value) < MIN_KEY_SHOWN:
        return MASK
    prefix = re.match(r"[A-Za-z]{2,8}[-_]", value)
    return f"{prefix.group(0) if prefix else ''}...{value[-4:]}"


def _masked_token(value: str) -> str:
    """A token already masked stays as it is; any other is :func:`key_mask`-ed."""
    return value if value == MASK or "..." in value else key_mask(value)


def secret_values(settings: Optional["Settings"] = None) -> list[str]:
    """The secret values in force, longest first: the ``password`` / ``api_key`` settings of
    ``settings``, the passwords in their URLs, :data:`SECRET_ENV` and the ``LIT3R_*__PASSWORD``
    / ``LIT3R_*__API_KEY`` variables (these also when the settings could not be loaded), and the
    keys given to :func:`remember`."""
    with _REMEMBERED_LOCK:
        found: set[str] = set(_REMEMBERED)
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


def _is_key(value: str, env_keys: set[str]) -> bool:
    """Whether a secret value is an API key (shown as ``sk-...abcd``) rather than a password."""
    with _REMEMBERED_LOCK:
        if value in _REMEMBERED:
            return True
    return value in env_keys or bool(_KEY_SHAPES.fullmatch(value))


def _pairs(secrets: Optional[Sequence[str]]) -> list[tuple[str, str]]:
    """``(value, how it is shown)`` of every secret in force and of ``secrets``, longest first."""
    values = set(secret_values(None)) | {s for s in secrets or () if s and len(s) >= MIN_SECRET}
    env_keys = {v for n, v in os.environ.items() if n.upper().endswith("API_KEY")}
    return [(v, key_mask(v) if _is_key(v, env_keys) else MASK) for v in sorted(values, key=lambda v: (-len(v), v))]


def _redact(text: str, pairs: list[tuple[str, str]]) -> str:
    for value, shown in pairs:
        for form in {value, quote(value, safe="")}:
            text = text.replace(form, shown)
    text = _URL_USERINFO.sub(MASK + "@", text)
    text = _URL_QUERY_SECRET.sub(lambda m: m.group(1) + MASK, text)
    text = _BEARER.sub(lambda m: m.group(1) + _masked_token(m.group(2)), text)
    text = _KEY_SHAPES.sub(lambda m: key_mask(m.group(0)), text)
    return _NAMED_KEY.sub(lambda m: m.group(1) + _masked_token(m.group(2)), text)


def redact(text: str, secrets: Optional[Sequence[str]] = None) -> str:
    """``text`` with every secret masked (module docstring): the values of ``secrets`` and of
    :func:`secret_values` (the environment, the remembered keys), also URL-encoded; URL
    credentials (``user:pw@``) and secret URL query parameters (``?api-key=``) as ``***``; bearer
    tokens, key shapes and named key fields (``api_key: ...``) as :func:`key_mask`."""
    return _redact(text, _pairs(secrets))


def redact_data(data: Any, secrets: Optional[Sequence[str]] = None) -> Any:
    """``data`` (dicts, lists, strings, numbers) with :func:`redact` applied to every string,
    keys included; a new object, ``data`` is not changed."""
    return _redact_data(data, _pairs(secrets))


def _redact_data(data: Any, pairs: list[tuple[str, str]]) -> Any:
    if isinstance(data, str):
        return _redact(data, pairs)
    if isinstance(data, dict):
        return {_redact_data(k, pairs): _redact_data(v, pairs) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_redact_data(v, pairs) for v in data]
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


class RedactFilter(logging.Filter):
    """A logging filter that replaces a record's message by its :func:`redact`-ed text (the
    record itself is changed, so every handler, stderr's or a test's, sees the masked text)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format: keep what the record holds, masked
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message), None
        return True


_FILTER = RedactFilter()


def logger(name: str) -> logging.Logger:
    """The logger ``name`` with :class:`RedactFilter` attached (once): what Lit3R logs goes
    through it, so no record carries a key, a token or a password."""
    log = logging.getLogger(name)
    if _FILTER not in log.filters:
        log.addFilter(_FILTER)
    return log


__all__ = ["MASK", "SECRET_FIELDS", "SECRET_ENV", "MIN_SECRET", "MIN_KEY_SHOWN", "secret_values", "redact",
           "redact_data", "masked", "remember", "key_mask", "logger", "RedactFilter"]
