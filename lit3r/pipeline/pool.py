"""The shared evidence pool of one question (seed paper section 2.1, step 5), and Ranking A read
from it (step 7).

:class:`Pool` maps chunk ids to scores and knows each chunk's paper through ``paper_of`` (a
mapping chunk id -> paper id; in the pipeline a :class:`PaperOf` over the graph store, in tests
a plain dict). A paper's score is its best pooled chunk's.

Anchoring (issue 14, item 8): the chunks the question itself pooled are *anchored*. Ranking A
lists the papers of anchored chunks first, in the order the question alone gives them, and only
then the papers that LLM subqueries alone found. Decomposition therefore adds papers and
chunks but never pushes the question's own best papers down: without an LLM (the question is
the only query) nothing changes, and with one, recall@k of Ranking A can only grow.
"""

from __future__ import annotations

from typing import Iterable, Iterator, Mapping

from graph.errors import UnknownIdError
from graph.store import GraphStore


class PaperOf(Mapping[str, str]):
    """chunk id -> paper id, read from the graph store in batches and remembered (up to
    ``size`` ids; the whole corpus is never loaded). An unknown chunk id raises
    :class:`graph.errors.UnknownIdError` (a KeyError)."""

    def __init__(self, graph: GraphStore, size: int = 200_000) -> None:
        self.graph = graph
        self.size = size
        self._m: dict[str, str] = {}

    def prefetch(self, chunk_ids: Iterable[str]) -> None:
        """Read the paper ids of these chunks in one batched query."""
        missing = [c for c in dict.fromkeys(chunk_ids) if c not in self._m]
        if missing:
            if len(self._m) + len(missing) > self.size:
                self._m = {}
            self._m.update(self.graph.papers_of(missing))

    def __getitem__(self, chunk_id: str) -> str:
        pid = self._m.get(chunk_id)
        if pid is None:
            pid = self.graph.papers_of([chunk_id]).get(chunk_id)
            if pid is None:
                raise UnknownIdError("chunk", chunk_id)
            self._m[chunk_id] = pid
        return pid

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._m))

    def __len__(self) -> int:
        return len(self._m)


class Pool:
    """The shared evidence pool across subqueries and rounds: each chunk keeps the MAX score
    it ever received (seed paper 2.1, step 5). ``paper_of``: chunk id -> paper id."""

    def __init__(self, paper_of: Mapping[str, str]) -> None:
        self.paper_of = paper_of
        self.scores: dict[str, float] = {}
        self.anchored: dict[str, float] = {}  # chunk id -> the question's own score for it

    def add(self, scored: Iterable[tuple[str, float]], anchor: bool = False) -> int:
        """Add ``(chunk_id, score)`` pairs; returns how many chunks were new. ``anchor``: the
        pairs are the question's own (see the module docstring)."""
        new = 0
        for cid, s in scored:
            if anchor and s > self.anchored.get(cid, float("-inf")):
                self.anchored[cid] = s
            if cid not in self.scores:
                new += 1
                self.scores[cid] = s
            elif s > self.scores[cid]:
                self.scores[cid] = s
        return new

    def __len__(self) -> int:
        return len(self.scores)

    def ranking_a(self) -> list[tuple[str, float]]:
        """Ranking A: ``[(paper_id, best pooled chunk score)]`` (step 7): the papers of anchored
        chunks first, by their best anchored score, then the others by their best score; ties
        by id. With no anchored chunk (a pool filled by :meth:`add` alone), simply by best score."""
        best: dict[str, float] = {}
        for cid, s in self.scores.items():
            pid = self.paper_of[cid]
            if s > best.get(pid, float("-inf")):
                best[pid] = s
        own: dict[str, float] = {}
        for cid, s in self.anchored.items():
            pid = self.paper_of[cid]
            if s > own.get(pid, float("-inf")):
                own[pid] = s
        return sorted(best.items(), key=lambda ps: (ps[0] not in own, -own.get(ps[0], ps[1]), ps[0]))

    def own_papers(self) -> set[str]:
        """The papers of the anchored chunks (those the question itself found)."""
        return {self.paper_of[c] for c in self.anchored}

    def chunks_of(self, paper_id: str) -> list[tuple[str, float]]:
        """``[(chunk_id, score)]`` of one paper's pooled chunks, best first."""
        return sorted(((c, s) for c, s in self.scores.items() if self.paper_of[c] == paper_id), key=lambda cs: -cs[1])
