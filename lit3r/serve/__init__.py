"""``lit3r mcp``: Lit3R as a Model Context Protocol server over stdio, for AI assistants (docs/MCP.md).

- :mod:`lit3r.serve.session`: what stays open between calls (stores, models, the trace run);
- :mod:`lit3r.serve.server`: the MCP tools, their schemas and the paper resources;
- :mod:`lit3r.serve.corpus`: search_papers, find_evidence, read, paper metadata;
- :mod:`lit3r.serve.answers`: ask and trace;
- :mod:`lit3r.serve.graphs`: citations and cypher;
- :mod:`lit3r.serve.errors`: every failure as one line with its fix, secrets masked.
"""
