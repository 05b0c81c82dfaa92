"""The error root of Lit3R and the errors of the storage layer.

Every error Lit3R raises on purpose is a :class:`Lit3rError`; its message is one line that says
what failed, why, and what to do (the CLI prints it as is, without a traceback). The root lives
in the lowest layer (graph/) so that graph/, ingest/ and lit3r/ all raise from it; the
application's own errors are in :mod:`lit3r.errors`, which re-exports these.
"""

from __future__ import annotations

#: Characters of a user-given id (paper, chunk, query, run) an error message echoes at most.
SHOWN_ID_CHARS = 80


def shown_id(ident: object, limit: int = SHOWN_ID_CHARS) -> str:
    """``repr`` of a user-given id for an error message, cut to ``limit`` characters with its
    length said when longer: ``'xxxx...'... (100,000 characters)``, so a pasted blob never
    floods the one error line."""
    text = str(ident)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit - 3]!r}... ({len(text):,} characters)"


class Lit3rError(Exception):
    """Root of every error Lit3R raises on purpose: ``str(exc)`` = what, why, the fix."""


class NotBuiltError(Lit3rError):
    """The corpus, its index or its server load does not exist yet (or was interrupted before it
    was published): the fix is ``lit3r ingest``."""


class IndexDamaged(Lit3rError):
    """A store's files are damaged or cut short (the fix is ``lit3r ingest PDF_DIR --rebuild``)."""


class BackendUnavailable(Lit3rError):
    """A server the configuration names cannot be reached or refuses the request."""


class UnknownIdError(Lit3rError, KeyError):
    """An id (a paper, a chunk) the store does not hold. A KeyError too, so the stores' id
    lookups keep the Mapping protocol (``paper_of[chunk_id]``). ``ident`` keeps the whole id; the
    message shows at most :data:`SHOWN_ID_CHARS` characters of it (:func:`shown_id`)."""

    def __init__(self, kind: str, ident: str, hint: str = "") -> None:
        self.kind, self.ident = kind, ident
        super().__init__(f"unknown {kind} id {shown_id(ident)}" + (f": {hint}" if hint else ""))

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0])


class CypherRefused(Lit3rError):
    """A user's Cypher that is not a plain read, run without ``--write``
    (:mod:`graph.cypher_guard`); the message says what it would do and to pass ``--write``."""
