"""Evidence traces: storing the trace lines of ``lit3r ask`` and ``lit3r run`` in the configured
backend's trace store, or the reason they were not stored (:mod:`lit3r.traces.store`)."""
