"""Driver errors of the server stores as :class:`graph.errors.ServerFault`, in one place.

The Neo4j graph and trace stores (:mod:`graph.neo4j_store`, :mod:`graph.neo4j_trace`) and the
OpenSearch index (:mod:`graph.search.opensearch`) are decorated with :func:`translate_faults`:
every exception of the ``neo4j`` driver (``DriverError``, ``Neo4jError``) or of the
``opensearch-py`` client (``OpenSearchException``, ``ImproperlyConfigured``; ``BulkIndexError``
is one) that a public method (or property, or context manager) raises comes out as a
``ServerFault`` carrying it as ``.cause``, with ``.down`` set for the errors that make the server
unusable for every request (:func:`is_down`). Nothing above ``graph/`` catches a driver class.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from typing import Any, Callable, TypeVar

from graph.errors import ServerFault

T = TypeVar("T")

#: The server names :func:`translate_faults` takes, as ``ServerFault.server`` says them.
NEO4J, OPENSEARCH = "Neo4j", "OpenSearch"


def driver_errors(server: str) -> tuple[type[BaseException], ...]:
    """The exception classes of the driver or client of ``server`` (for one ``except``)."""
    if server == NEO4J:
        from neo4j.exceptions import DriverError, Neo4jError

        return (DriverError, Neo4jError)
    from opensearchpy.exceptions import ImproperlyConfigured, OpenSearchException

    return (OpenSearchException, ImproperlyConfigured)


def down_errors(server: str) -> tuple[type[BaseException], ...]:
    """The driver errors after which no request of ``server`` can succeed: unreachable (refused,
    timed out, session expired) or the credentials or rights refused."""
    if server == NEO4J:
        from neo4j.exceptions import AuthError, ServiceUnavailable, SessionExpired

        return (ServiceUnavailable, SessionExpired, AuthError)
    from opensearchpy.exceptions import AuthenticationException, AuthorizationException, ConnectionError

    return (ConnectionError, AuthenticationException, AuthorizationException)


def is_down(server: str, exc: BaseException) -> bool:
    """Whether ``exc`` (a driver error of ``server``) leaves the server unusable (:func:`down_errors`)."""
    return isinstance(exc, down_errors(server))


def fault(server: str, exc: BaseException) -> ServerFault:
    """``exc``, a driver error of ``server``, as a ServerFault."""
    return ServerFault(server, exc, is_down(server, exc))


def _wrap(server: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` raising its driver errors as ServerFault; a ``@contextmanager`` function's body
    (its ``__enter__`` and ``__exit__``) too."""
    if inspect.isgeneratorfunction(getattr(fn, "__wrapped__", None)):  # a @contextlib.contextmanager
        @functools.wraps(fn)
        @contextlib.contextmanager
        def managed(*args: Any, **kwargs: Any):
            try:
                with fn(*args, **kwargs) as value:
                    yield value
            except driver_errors(server) as exc:
                raise fault(server, exc) from exc
        return managed

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except driver_errors(server) as exc:
            raise fault(server, exc) from exc
    return wrapped


def translate_faults(server: str) -> Callable[[T], T]:
    """Decorator of a server store class (every public method, classmethod, staticmethod and
    property of its own) or of one function: the driver errors of ``server`` (:data:`NEO4J` or
    :data:`OPENSEARCH`) come out as :class:`graph.errors.ServerFault` (``from`` the driver's
    exception); every other exception passes unchanged."""
    def decorate(target: T) -> T:
        if not inspect.isclass(target):
            return _wrap(server, target)  # type: ignore[arg-type,return-value]
        for name, attr in list(vars(target).items()):
            if name.startswith("_"):
                continue
            if isinstance(attr, (classmethod, staticmethod)):
                setattr(target, name, type(attr)(_wrap(server, attr.__func__)))
            elif isinstance(attr, property):
                setattr(target, name, property(_wrap(server, attr.fget) if attr.fget else None, attr.fset, attr.fdel,
                                               attr.__doc__))
            elif inspect.isfunction(attr):
                setattr(target, name, _wrap(server, attr))
        return target
    return decorate
