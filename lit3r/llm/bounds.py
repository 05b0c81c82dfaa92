"""Length bounds for LLM reply models (issue 14, item 2).

Every string and list of a reply model is bounded twice: ``Field(max_length=n)`` puts ``maxLength``
/ ``maxItems`` into the JSON schema, so a grammar-constrained backend (llama.cpp) has to stop
there (a small model can otherwise repeat itself until ``llm.max_tokens`` and leave unfinished
JSON), and :func:`cut` cuts a longer value from an endpoint that ignores the schema instead of
refusing it (a refused reply costs a repair call).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

__all__ = ["cut", "text", "items", "Label", "LABEL_CHARS", "ID_CHARS", "GRAMMAR_MAX_CHARS"]

#: The longest ``maxLength`` a reply schema may give a string: llama.cpp (0.3.x) turns it into
#: nested optional rules, and its grammar parser refuses 1,500 ("number of rules that are going
#: to be repeated ... exceeds sane defaults"), after which llama-cpp-python crashes the process.
GRAMMAR_MAX_CHARS = 1000

#: Characters of a passage label (``P3``, ``E12``; a bracketed or longer form is resolved by
#: :mod:`lit3r.llm.labels`).
LABEL_CHARS = 40
#: Characters of a paper id as the model writes it (a whole header is cut, then resolved).
ID_CHARS = 120


def cut(n: int) -> BeforeValidator:
    """Cuts a longer string or list to ``n`` before validation."""
    return BeforeValidator(lambda v: v[:n] if isinstance(v, (str, list)) else v)


def text(n: int) -> Any:
    """A string of at most ``n`` characters (schema ``maxLength``; longer values cut). Raises
    ValueError for ``n`` over :data:`GRAMMAR_MAX_CHARS`."""
    if n > GRAMMAR_MAX_CHARS:
        raise ValueError(f"maxLength {n} > GRAMMAR_MAX_CHARS = {GRAMMAR_MAX_CHARS}: llama.cpp cannot parse the grammar")
    return Annotated[str, Field(max_length=n), cut(n)]


def items(of: Any, n: int, schema_n: int | None = None) -> Any:
    """A list of at most ``n`` ``of`` (schema ``maxItems`` = ``schema_n`` or ``n``; longer lists
    cut). ``schema_n`` below ``n`` asks a grammar-constrained backend for fewer than validation
    accepts from one that ignores the schema."""
    extra: Any = {"maxItems": schema_n} if schema_n is not None else None
    return Annotated[list[of], Field(max_length=n, json_schema_extra=extra), cut(n)]


#: A passage label field (for static model fields; :func:`text` builds the same for dynamic ones).
Label = Annotated[str, Field(max_length=LABEL_CHARS), cut(LABEL_CHARS)]
