"""graph: the system of record (records and graph stores). Imports nothing from ingest/lit3r."""

from graph.records import CHUNK_KINDS, MAX_CHUNK_CHARS, Chunk, Neighbour, Paper, Reference, Source, chunk_id_for

__all__ = ["CHUNK_KINDS", "MAX_CHUNK_CHARS", "Chunk", "Neighbour", "Paper", "Reference", "Source", "chunk_id_for"]
