"""lit3r: the application layer over ``graph`` and ``ingest``: the settings (``config/``), the
one factory (``factory``), the encoders and rerankers (``models``, ``encoders/``), the storage
backends (``backends/``), the index build and the servers load (``index/``), the
Retrieve-Relate-Read pipeline (``pipeline/``, ``read/``), the LLM clients (``llm/``), the
LitTraceQA formats, validation, metrics and batch runner (``littraceqa/``), evidence traces
(``traces/``), what is shown to a person (``present/``), the MCP server (``serve/``) and the CLI
(``cli/``)."""

__version__ = "0.1.0"
