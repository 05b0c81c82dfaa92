"""Evidence traces: a question's trace dict as its graph, and reading, storing and showing
traces (``trace_graph``)."""
