"""Evidence traces kept as a graph: storing the trace lines of ``lit3r ask`` and ``lit3r run``
in the configured backend's trace store (:func:`lit3r.traces.store.keep_traces`). The graph of one
trace line and its readable view are :mod:`lit3r.trace_graph`."""

from lit3r.traces.store import keep_traces

__all__ = ["keep_traces"]
