"""Every failure of an MCP tool call as one line with its fix, secrets masked: the message of an
MCP tool error (``isError``), never a crash of the server.

The lines are those of the CLI (:class:`lit3r.errors.Lit3rError` messages, the drivers' lines of
:mod:`lit3r.present.server_errors`, a damaged or unreadable index), with the CLI's hints for finding ids
replaced by the tool or resource that finds them. An error Lit3R does not expect is one line
naming its class, marked as a bug, and the server goes on answering.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from graph.errors import first_unreadable, one_line_message
from graph.sqlite import DatabaseError
from lit3r.errors import Lit3rError, PermissionDenied, UnknownIdError, clean_line, shown_id
from lit3r.present.redact import redact
from lit3r.present.server_errors import server_errors, server_message

if TYPE_CHECKING:
    from lit3r.config import Settings

#: Characters of a question, query or statement that a result or an error repeats at most.
ECHO_CHARS = 500

#: How an assistant finds the ids an unknown-id error names.
FIND_IDS = {"paper": "the search_papers tool or the lit3r://papers resource lists paper ids",
            "chunk": "find_evidence and ask return chunk ids; read(paper_id, page) reads a page's chunks"}


def echoed(text: str, limit: int = ECHO_CHARS) -> str:
    """A caller's text as a result repeats it: whole up to ``limit`` characters, else its first
    ``limit`` characters and its length (``... (124,086 characters)``)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def error_line(exc: BaseException, settings: Optional["Settings"], secrets: list[str],
               paper_ids: Optional[Callable[[], Sequence[str]]] = None) -> str:
    """``exc`` as the one line of a tool error (module docstring), secrets masked; ``paper_ids``:
    the corpus's paper ids, for the close ones an unknown paper id gets ("did you mean ...")."""
    return one_line_message(redact(_line(exc, settings, paper_ids), secrets))


def _line(exc: BaseException, settings: Optional["Settings"],
          paper_ids: Optional[Callable[[], Sequence[str]]] = None) -> str:
    if isinstance(exc, UnknownIdError):  # without a hint of its own: the tool that finds ids
        if str(exc) != f"unknown {exc.kind} id {shown_id(exc.ident)}":
            return str(exc)
        close = _close_ids(str(exc.ident), paper_ids) if exc.kind == "paper" else []
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        return f"{exc}{hint}: {FIND_IDS.get(exc.kind, 'check the id')}"
    if isinstance(exc, server_errors()):  # a ServerFault too: its cause, with the configured address
        return server_message(settings, exc)
    if isinstance(exc, Lit3rError):
        return str(exc)
    if isinstance(exc, PermissionError):
        return str(PermissionDenied.of(exc))
    if isinstance(exc, DatabaseError):
        index = settings.index_dir if settings is not None else None
        blocked = first_unreadable(index, index / "lit3r.sqlite") if index is not None else None
        if blocked:
            return str(PermissionDenied(blocked))
        return (f"the index in {index or 'the data folder'} is damaged ({clean_line(exc)}): run `lit3r ingest PDF_DIR "
                f"--rebuild` to rebuild it")
    if isinstance(exc, OSError):
        return f"{exc.filename or 'a file of the data folder'}: {exc.strerror or clean_line(exc)}: check the data folder"
    return (f"unexpected error ({type(exc).__name__}: {clean_line(exc, 200)}): a bug in Lit3R, please report it with "
            f"the tool call; the server goes on answering")


def _close_ids(ident: str, paper_ids: Optional[Callable[[], Sequence[str]]]) -> list[str]:
    """At most three corpus paper ids close to ``ident`` (difflib, as ``lit3r ask --papers``)."""
    if paper_ids is None:
        return []
    try:
        return difflib.get_close_matches(ident[:200], list(paper_ids()), n=3)
    except Exception:  # noqa: BLE001 - the hint is a nicety: the store's error is said already
        return []
