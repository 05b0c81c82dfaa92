"""lit3r: the application layer over ``graph`` and ``ingest``: the settings (``config``), the one
factory (``factory``), the encoders and rerankers (``models``), the index build and the servers
load (``build``, ``servers``), the Retrieve-Relate-Read pipeline (``pipeline/``, ``read/``), the LLM
clients (``llm/``), the LitTraceQA formats, validation and metrics (``littraceqa/``), evidence
traces as a graph (``trace_graph``) and the CLI (``cli/``)."""

__version__ = "0.1.0"
