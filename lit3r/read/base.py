"""The Read step's seam: what a reader is given (:class:`ReadRequest`), what it returns
(:class:`ReadResult`), and the :class:`Reader` protocol both readers implement (seed paper
section 2.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Protocol, Sequence

import numpy as np

from graph.progress import SILENT, Reporter
from graph.records import Chunk


@dataclass(frozen=True)
class ReadRequest:
    """One question for a reader.

    ``question``: its text; ``qvecs``: float32 ``(2, dim)`` unit rows, the question's and its
    ask part's (:func:`lit3r.read.scoring.ask_part`) query vectors, encoded once by the engine;
    ``candidates``: paper ids, best first; ``pooled``: the chunk ids of the Retrieve pool (None
    when the papers were fixed by the user: no pool was built); ``options``: multiple-choice
    ``{label: text}``; ``schema``: table columns
    ``[{name, type, is_row_key}]``; ``answer_types``: the LitTraceQA answer types asked for;
    ``progress``: where a slow reader reports its progress (:mod:`graph.progress`)."""

    question: str
    qvecs: np.ndarray
    candidates: Sequence[str]
    pooled: Optional[frozenset[str]] = None
    options: Optional[dict[str, str]] = None
    schema: Optional[list[dict]] = None
    answer_types: tuple[str, ...] = ("freeform",)
    progress: Reporter = SILENT


@dataclass
class ReadResult:
    """Reader output: supporting ``papers`` (best first), ``evidence`` chunks, the answers
    (``freeform`` text, MC ``choice`` letter, table ``rows``), ``paper_scores`` (best chunk score
    per read paper), ``option_scores`` and ``option_support`` (per option: its score and the
    units that state or contradict it, for the trace), ``supporting`` chunk ids per paper, ``facts`` (LLM reader: value, unit,
    paper, chunk), which ``reader`` answered and its ``notes`` (stage failures, fallbacks)."""

    papers: list[str]
    evidence: list[Chunk]
    freeform: Optional[str] = None
    choice: Optional[str] = None
    paper_scores: dict[str, float] = field(default_factory=dict)
    option_scores: dict[str, float] = field(default_factory=dict)
    option_support: dict[str, dict] = field(default_factory=dict)
    rows: Optional[list[dict]] = None
    supporting: dict[str, list[str]] = field(default_factory=dict)
    facts: list[dict] = field(default_factory=list)
    reader: str = "extractive"
    notes: list[str] = field(default_factory=list)


class Reader(Protocol):
    """Answers a :class:`ReadRequest` from the stored chunks of its candidates. Never raises for
    content (an LLM failure falls back to the extractive answer); store errors propagate."""

    def read(self, request: ReadRequest) -> ReadResult:
        ...
