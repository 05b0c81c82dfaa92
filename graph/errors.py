"""The error root of Lit3R and the errors of the storage layer.

Every error Lit3R raises on purpose is a :class:`Lit3rError`; its message is one line that says
what failed, why, and what to do (the CLI prints it as is, without a traceback). The root lives
in the lowest layer (graph/) so that graph/, ingest/ and lit3r/ all raise from it; the
application's own errors are in :mod:`lit3r.errors`, which re-exports these.
"""

from __future__ import annotations

import os
from typing import Optional, Union

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


def escaped(text: object) -> str:
    """``text`` with every control character written as its escape (``\\n``, ``\\x07``), so an
    echoed path or id never splits or rings the one error line; a file name's bytes that are not
    UTF-8 are written as ``\\xNN`` (:func:`_escape`)."""
    return "".join(ch if ch.isprintable() or ch == " " else _escape(ch) for ch in str(text))


def _escape(ch: str) -> str:
    """One unprintable character as its escape; a byte that a file name held but that is not
    UTF-8 (Python keeps it as a lone surrogate U+DC80-U+DCFF, ``surrogateescape``) is written as
    that byte, ``\\xff``, the way ``ls -b`` shows it."""
    if "\udc80" <= ch <= "\udcff":
        return f"\\x{ord(ch) - 0xDC00:02x}"
    return ch.encode("unicode_escape").decode("ascii")


def shown_text(text: object, limit: int = SHOWN_ID_CHARS) -> str:
    """A user-given text (a path, an option) for an error message, unquoted: control characters
    escaped (:func:`escaped`), cut to ``limit`` characters with its length said when longer."""
    raw = str(text)
    if len(raw) <= limit:
        return escaped(raw)
    return f"{escaped(raw[:limit - 3])}... ({len(raw):,} characters)"


#: A word (a run without spaces) longer than this in an error line is cut by :func:`one_line_message`.
LONG_WORD_CHARS = 2 * SHOWN_ID_CHARS


def one_line_message(text: object) -> str:
    """The last guard of every error line the CLI prints: control characters escaped (a newline
    in an echoed path becomes ``\\n``) and each word longer than :data:`LONG_WORD_CHARS` cut to
    :data:`SHOWN_ID_CHARS` with its length said, so pasted input never floods the line."""
    return " ".join(w if len(w) <= LONG_WORD_CHARS else shown_text(w) for w in escaped(text).split(" "))


class Lit3rError(Exception):
    """Root of every error Lit3R raises on purpose: ``str(exc)`` = what, why, the fix."""


class PermissionDenied(Lit3rError):
    """A file or folder Lit3R must read is not readable by this user: the fix is its
    permissions, never a rebuild (which would fail the same way, or lose the data)."""

    def __init__(self, path: object) -> None:
        self.path = path
        super().__init__(f"{shown_text(path, 200)} cannot be read (permission denied): fix its permissions "
                         f"(chmod/chown)")

    @classmethod
    def of(cls, exc: PermissionError, default: object = "a file of the data folder") -> "PermissionDenied":
        """The error for ``exc``, naming its file, or the folder above it when that is the one
        this user may not read."""
        if exc.filename is None:
            return cls(default)
        name = os.fspath(exc.filename)
        return cls(first_unreadable(os.path.dirname(name) or ".", name) or name)


def first_unreadable(*paths: Union[str, "os.PathLike[str]"]) -> Optional[str]:
    """The first of ``paths`` (files or folders; a missing one is skipped) that this user may
    not read (``PermissionError`` on opening or listing it), or None: tells "permission
    denied" from a damaged file where a library (SQLite) says only "unable to open"."""
    for p in paths:
        try:
            if os.path.isdir(p):
                os.listdir(p)
            else:
                os.close(os.open(p, os.O_RDONLY))
        except PermissionError:
            return str(p)
        except OSError:
            continue
    return None


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


class ServerFault(BackendUnavailable):
    """A Neo4j or OpenSearch driver error raised by a server store (:mod:`graph.server_faults`),
    so that the layers above know only the Lit3rError family.

    ``server``: "Neo4j" or "OpenSearch"; ``cause``: the driver's exception (kept whole: the
    application writes its one line from it, with the configured address:
    ``lit3r.present.server_errors.server_message``); ``down``: True when the server cannot be used at all
    (unreachable, timed out, credentials or rights refused), False for one request's failure (a
    Cypher error, a rejected document). ``str()`` is a one-line fallback without the address."""

    def __init__(self, server: str, cause: BaseException, down: bool) -> None:
        self.server, self.cause, self.down = server, cause, down
        text = " ".join(str(cause).split())[:200]
        super().__init__(f"{server} failed ({type(cause).__name__}: {text}): `lit3r doctor` checks the server")
