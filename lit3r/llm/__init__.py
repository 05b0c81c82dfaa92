"""The LLM layer: :mod:`lit3r.llm.client` (the Chat seam, StructuredLLM, Usage) and
:mod:`lit3r.llm.providers` (OpenAI-compatible endpoints, llama.cpp in process).
"""
