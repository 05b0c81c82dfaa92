"""Storing evidence traces after an answer is out: a trace store that cannot be written is a
reason (one line with the fix), not a failure of the answer.

The traces go to the configured backend's trace store (:func:`lit3r.factory.trace_store`:
``traces.sqlite`` in the data folder on the embedded backend, the Neo4j database next to the
corpus on the servers backend) through :func:`lit3r.traces.trace_graph.store_traces`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from graph.sqlite import Error as SQLiteError
from lit3r.errors import Lit3rError, clean_line
from lit3r.present.server_errors import server_errors, server_message
from lit3r.traces.trace_graph import store_traces


def keep_traces(settings: Any, lines: Sequence[dict], run: str,
                graph: Any = None) -> tuple[Optional[dict[str, Any]], Optional[str]]:
    """Store the trace ``lines`` (:func:`lit3r.traces.trace_graph.trace_line` dicts) as run ``run``:
    ``(report, None)`` (the store's report: run, questions, nodes, edges, missing ids), or
    ``(None, why)`` with one line saying why the store could not be written (a Lit3rError, a
    file, SQLite or server error; a server's line names its address, :mod:`lit3r.present.server_errors`).
    ``graph``: an open graph store to reuse (None: opened as configured)."""
    errors: tuple[type[BaseException], ...] = (Lit3rError, OSError, SQLiteError, *server_errors())
    try:
        return store_traces(settings, lines, run, graph), None
    except errors as exc:
        return None, server_message(settings, exc) if isinstance(exc, server_errors()) else clean_line(exc, 300)
