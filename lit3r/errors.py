"""Every error the application raises on purpose, under one root (:class:`Lit3rError`).

Each message is one line: what failed, why, and the fix. The CLI catches :class:`Lit3rError`
once (``lit3r.cli``) and prints the message; anything else is a bug and keeps its traceback.
The root and the storage errors come from :mod:`graph.errors` (the lowest layer); this
module re-exports those it imports (:data:`__all__`: ``Lit3rError``, ``NotBuiltError``,
``PermissionDenied``, ``IndexDamaged``, ``BackendUnavailable``, ``UnknownIdError``,
``CypherRefused``) beside the application's own. Errors of the layers
below that it does not re-export are imported from their own modules: ingestion's
``BadInputError``, ``MetadataError`` and ``CorpusOrderError`` (:mod:`ingest.document`,
:mod:`ingest.metadata`, :mod:`ingest.corpus`), ``graph.trace.TraceStoreError``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from graph.errors import (
    SHOWN_ID_CHARS,
    BackendUnavailable,
    CypherRefused,
    IndexDamaged,
    Lit3rError,
    NotBuiltError,
    PermissionDenied,
    UnknownIdError,
    shown_id,
)


class ConfigError(Lit3rError, ValueError):
    """A setting (TOML file, ``LIT3R_*`` variable or override) is invalid or unknown."""


class BadQuestion(Lit3rError, ValueError):
    """A question cannot be asked as given (empty, bad options, unknown paper ids)."""


class InputError(Lit3rError, ValueError):
    """An input file (questions, gold answers, a submission) is malformed; the message names the line."""


class ModelError(Lit3rError):
    """A model cannot be resolved or loaded, or does not match the index it must read."""


class LLMError(Lit3rError):
    """An LLM call that failed for good (after retries and one repair). ``kind``: the fault class
    (:mod:`lit3r.llm.faults`: auth, quota, bad_request, rate_limit, server, timeout, connection,
    overflow, length, refusal, invalid, budget, circuit_open); callers fall back on it."""

    kind: str = "invalid"

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind


class TransientLLMError(LLMError):
    """An LLM failure worth retrying: rate limit, timeout, connection error, 5xx. ``retry_after``:
    the seconds the server asked to wait (its ``retry-after`` header), None when it said nothing."""

    kind = "server"

    def __init__(self, message: str, *, kind: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(message, kind=kind)
        self.retry_after = retry_after


class FatalLLMError(LLMError):
    """An LLM failure no retry can fix: ``kind`` auth (401/403), quota (429 insufficient_quota)
    or bad_request (400/404/422); the message names the setting to fix."""

    kind = "bad_request"


class ContextOverflow(LLMError):
    """The prompt does not fit the model's context window: ``requested`` / ``limit`` in tokens
    (None when the server did not say)."""

    kind = "overflow"

    def __init__(self, message: str, *, requested: int | None = None, limit: int | None = None) -> None:
        super().__init__(message)
        self.requested, self.limit = requested, limit


class LLMRefusal(LLMError):
    """The model refused to answer (an OpenAI ``refusal``); not retried, not repaired."""

    kind = "refusal"


class Locked(Lit3rError):
    """Another process holds what this one must hold alone: the data folder for an ingest or a
    build, or the servers' load lease (:mod:`lit3r.index.lock`)."""


class ServersMismatch(Lit3rError):
    """The Neo4j database holds the corpus of other OpenSearch indices (or the servers disagree)."""


class CypherFailed(Lit3rError):
    """A Cypher statement could not run (`lit3r cypher`, the MCP ``cypher`` tool): Neo4j is not
    the backend or not reachable, an unknown statement, missing parameters, a syntax error."""


class Interrupted(Lit3rError):
    """A run stopped by Ctrl-C: the message says what is kept and how to resume; the CLI exits
    130 (the shell's code for SIGINT) after it."""


def clean_line(exc: BaseException, limit: int = 120) -> str:
    """An exception's message as one printable line of at most ``limit`` characters (damaged
    files and servers can put raw bytes and newlines in it)."""
    text = "".join(ch if ch.isprintable() else "?" for ch in str(exc).replace("\n", " "))
    return text[:limit] + ("..." if len(text) > limit else "")


__all__ = ["Lit3rError", "NotBuiltError", "PermissionDenied", "IndexDamaged", "BackendUnavailable", "UnknownIdError", "ConfigError",
           "BadQuestion", "InputError", "ModelError", "LLMError", "TransientLLMError", "FatalLLMError",
           "ContextOverflow", "LLMRefusal", "Locked", "ServersMismatch", "CypherFailed", "Interrupted",
           "clean_line",
           "CypherRefused", "shown_id", "SHOWN_ID_CHARS"]


def install_extra(extra: str) -> str:
    """The command that installs the extra ``extra`` into the running Python: from the source tree
    when Lit3R runs from a clone (``<python> -m pip install -e '<clone>[<extra>]'``: Lit3R is not on
    PyPI), else ``<python> -m pip install 'lit3r[<extra>]'``; the interpreter is named so that the
    command installs into this environment, not whichever ``pip`` is first on PATH."""
    root = Path(__file__).resolve().parents[1]
    if (root / "pyproject.toml").is_file():
        return f"{sys.executable} -m pip install -e '{root}[{extra}]'"
    return f"{sys.executable} -m pip install 'lit3r[{extra}]'"
