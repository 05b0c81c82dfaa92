"""The LLM layer: :mod:`lit3r.llm.client` (the Chat seam, StructuredLLM, Usage),
:mod:`lit3r.llm.providers` (OpenAI-compatible endpoints, llama.cpp in process),
:mod:`lit3r.llm.faults` (fault classes, waits, the circuit breaker), :mod:`lit3r.llm.wire`
(the reply body a server must send, checked), :mod:`lit3r.llm.fit`
(prompts fitted to a context window) and :mod:`lit3r.llm.labels` (ids and labels written back).
"""
