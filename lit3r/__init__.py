"""lit3r: the application layer (CLI now; retrieval, relate, read and evaluation to come)."""

__version__ = "0.1.0"
