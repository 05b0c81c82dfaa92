"""One line for every fault of the Neo4j and OpenSearch servers: which server, why, what to do.

The drivers' exceptions (``neo4j.exceptions``: ``ServiceUnavailable``, ``AuthError``, any
``Neo4jError`` / ``DriverError``; ``opensearchpy.exceptions``: ``ConnectionError``,
``ConnectionTimeout``, ``AuthenticationException`` (401), ``AuthorizationException`` (403), any
``TransportError``, ``helpers.BulkIndexError``), which the server stores raise as
:class:`graph.errors.ServerFault` (:mod:`graph.server_faults`), are turned into one sentence by
:func:`server_message`; every command catches :func:`server_errors` once (``lit3r.cli.Lit3rGroup``).
This module is one of the few that tell driver classes apart (``DRIVER_IMPORTS_ALLOWED`` in
``tests/unit/test_boundary.py``).
How fast a fault is reported is set where the clients are made: ``graph.neo4j_store.connect``
(connection timeout and transaction retry time, 5 s each) and ``graph.search.opensearch.make_client``
(4 s to connect, one retry on connection errors, none on read timeouts).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from graph.errors import ServerFault
from graph.server_faults import NEO4J, OPENSEARCH, driver_errors

if TYPE_CHECKING:
    from lit3r.config import Settings


def server_errors() -> tuple[type[BaseException], ...]:
    """:class:`graph.errors.ServerFault` and the exception classes of the Neo4j driver and the
    OpenSearch client (connection, auth, request) it carries, for one ``except``
    (:func:`graph.server_faults.driver_errors`)."""
    return (ServerFault, *driver_errors(NEO4J), *driver_errors(OPENSEARCH))


def server_message(settings: Optional["Settings"], exc: BaseException) -> str:
    """``exc`` (one of :func:`server_errors`; a ServerFault is said by its ``cause``) as one line:
    ``"<server> at <address> <what happened> (<cause>): <fix>"``. ``settings``: for the address
    (None: the server's name alone)."""
    if isinstance(exc, ServerFault):
        exc = exc.cause
    if isinstance(exc, driver_errors(OPENSEARCH)):
        return _opensearch(settings, exc)
    return _neo4j(settings, exc)


def _one_line(text: str, limit: int = 200) -> str:
    text = "".join(ch if ch.isprintable() else "?" for ch in " ".join(str(text).split()))
    return text[:limit] + ("..." if len(text) > limit else "")


def _errno(text: str) -> Optional[str]:
    """The operating system's reason in a driver's message (``[Errno 111] Connection refused``)."""
    m = re.search(r"\[Errno -?\d+\] [^)\]'\"]*", text)
    return m.group(0).strip() if m else None


#: How to start a server, both ways: docker compose, or the no-Docker test servers (Java 17+, Maven).
NO_DOCKER = "without Docker `python -m tests.servers` in the Lit3R repo (Java 17+ and Maven; prints the settings)"


def start_hint(service: str) -> str:
    """``start it (...)``: both ways to start ``service`` ("neo4j" or "opensearch")."""
    return f"start it (`docker compose up -d {service}` in the Lit3R repo, or {NO_DOCKER})"


def _neo4j(settings: Optional["Settings"], exc: BaseException) -> str:
    from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable, SessionExpired

    where = f"Neo4j at {settings.neo4j.uri}" if settings else "Neo4j"
    text = " ".join(str(exc).split())
    if isinstance(exc, AuthError):
        return (f"{where} refused the credentials ({_one_line(getattr(exc, 'message', None) or text)}): set "
                f"neo4j.user and neo4j.password (LIT3R_NEO4J__USER / LIT3R_NEO4J__PASSWORD) to an account of "
                f"that server")
    if isinstance(exc, (ServiceUnavailable, SessionExpired)):
        last = (str(exc).strip().splitlines() or [""])[-1]
        why = _errno(text) or _one_line(last) or type(exc).__name__
        return (f"{where} cannot be reached ({why}): {start_hint('neo4j')} "
                f"or set neo4j.uri / LIT3R_NEO4J__URI to a running server")
    if isinstance(exc, Neo4jError):
        code = getattr(exc, "code", None) or type(exc).__name__
        why = _one_line(getattr(exc, "message", None) or text)
        return f"{where} refused a request ({code}: {why}): `lit3r doctor` checks the server and the loaded corpus"
    return (f"{where} failed ({type(exc).__name__}: {_one_line(text)}): check neo4j.uri / LIT3R_NEO4J__URI; "
            f"`lit3r doctor` checks the server")


def _opensearch(settings: Optional["Settings"], exc: BaseException) -> str:
    from opensearchpy.exceptions import (
        AuthenticationException,
        AuthorizationException,
        ConnectionError,
        ConnectionTimeout,
        ImproperlyConfigured,
        TransportError,
    )
    from opensearchpy.helpers.errors import BulkIndexError

    where = f"OpenSearch at {settings.opensearch.url}" if settings else "OpenSearch"
    prefix = f"{settings.opensearch.index_prefix}-*" if settings else "the Lit3R indices"
    text = " ".join(str(exc).split())
    if isinstance(exc, ConnectionTimeout):
        return (f"{where} did not answer in time ({_errno(text) or 'timed out'}): check that it runs and is not "
                f"overloaded (`lit3r doctor`), or set opensearch.url / LIT3R_OPENSEARCH__URL to a running server")
    if isinstance(exc, ConnectionError):
        why = _errno(text) or ("TLS: " + _one_line(text, 120) if "SSL" in type(exc).__name__ else None) or \
            _one_line(text, 120)
        return (f"{where} cannot be reached ({why}): {start_hint('opensearch')} "
                f"or set opensearch.url / LIT3R_OPENSEARCH__URL to a running server")
    if isinstance(exc, AuthenticationException):
        return (f"{where} refused the credentials (HTTP 401): set opensearch.user and opensearch.password "
                f"(LIT3R_OPENSEARCH__USER / LIT3R_OPENSEARCH__PASSWORD) to an account of that server")
    if isinstance(exc, AuthorizationException):
        return (f"{where} denied the request (HTTP 403: {_reason(exc)}): give the user opensearch.user read and "
                f"write rights on {prefix}, or use another account")
    if isinstance(exc, BulkIndexError):
        errors = exc.errors if isinstance(getattr(exc, "errors", None), list) else []
        first = _one_line(str(errors[0]), 160) if errors else _one_line(text)
        return (f"{where} rejected {len(errors) or 'some'} document(s) of a load ({first}): run the same "
                f"`lit3r ingest` again to finish it; `lit3r doctor` checks the indices")
    if isinstance(exc, TransportError):
        status = exc.status_code if isinstance(exc.status_code, int) else "?"
        return (f"{where} refused a request (HTTP {status}: {_reason(exc)}): `lit3r doctor` checks the server "
                f"and the indices {prefix}")
    if isinstance(exc, ImproperlyConfigured):
        return f"{where} cannot be used ({_one_line(text)}): check opensearch.url, ca_certs and verify_certs"
    return f"{where} failed ({type(exc).__name__}: {_one_line(text)}): `lit3r doctor` checks the server"


def _reason(exc) -> str:
    """The server's error type and reason of a TransportError (its root cause when given)."""
    info = getattr(exc, "info", None)
    err = info.get("error") if isinstance(info, dict) else None
    if isinstance(err, dict):
        root = (err.get("root_cause") or [err])[0]
        caused = err.get("caused_by") or {}
        reason = root.get("reason") or caused.get("reason") or err.get("reason") or ""
        return _one_line(f"{root.get('type') or err.get('type')}: {reason}", 200)
    return _one_line(str(getattr(exc, "error", "") or exc), 200)
