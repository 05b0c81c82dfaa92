"""Every error the application raises on purpose, under one root (:class:`Lit3rError`).

Each message is one line: what failed, why, and the fix. The CLI catches :class:`Lit3rError`
once (``lit3r.cli``) and prints the message; anything else is a bug and keeps its traceback.
The root and the storage errors come from :mod:`graph.errors` (the lowest layer), the
ingestion errors from :mod:`ingest.document`; this module re-exports them beside the
application's own, so callers import every error from here.
"""

from __future__ import annotations

from graph.errors import BackendUnavailable, CypherRefused, IndexDamaged, Lit3rError, NotBuiltError, UnknownIdError


class ConfigError(Lit3rError, ValueError):
    """A setting (TOML file, ``LIT3R_*`` variable or override) is invalid or unknown."""


class BadQuestion(Lit3rError, ValueError):
    """A question cannot be asked as given (empty, bad options, unknown paper ids)."""


class InputError(Lit3rError, ValueError):
    """An input file (questions, gold answers, a submission) is malformed; the message names the line."""


class ModelError(Lit3rError):
    """A model cannot be resolved or loaded, or does not match the index it must read."""


class LLMError(Lit3rError):
    """An LLM call that failed for good (after retries and one repair)."""


class TransientLLMError(LLMError):
    """An LLM failure worth retrying: rate limit, timeout, connection error, 5xx."""


class BuildLocked(Lit3rError):
    """Another build of the same data folder is running."""


class ServersMismatch(Lit3rError):
    """The Neo4j database holds the corpus of other OpenSearch indices (or the servers disagree)."""


__all__ = ["Lit3rError", "NotBuiltError", "IndexDamaged", "BackendUnavailable", "UnknownIdError", "ConfigError",
           "BadQuestion", "InputError", "ModelError", "LLMError", "TransientLLMError", "BuildLocked", "ServersMismatch",
           "CypherRefused"]
