"""Evidence traces: a question's trace dict as its graph, and reading and showing traces
(``trace_graph``); storing the trace lines of ``lit3r ask`` and ``lit3r run`` in the configured
backend's trace store, or the reason they were not stored (``store``)."""
