"""The per-question read cache of the server stores (Neo4j, OpenSearch).

A server answers live, so there is no snapshot to hold; what a question reads by id (papers,
chunks, vectors) is kept for the question instead, since its stages read the same records
again. :meth:`QuestionCache.scope` is re-entrant (the engine nests it); the maps exist only
inside the outermost scope, so nothing outlives a question and a load that commits meanwhile is
seen by the next one.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator, Optional


class QuestionCache:
    """Named maps that live while a scope is open. ``names``: the maps (e.g. "papers")."""

    def __init__(self, *names: str) -> None:
        self._names = names
        self._lock = threading.Lock()
        self._depth = 0
        self._maps: Optional[dict[str, dict]] = None

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """Open (or re-enter) the question's scope."""
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                self._maps = {n: {} for n in self._names}
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    self._maps = None

    def get(self, name: str) -> Optional[dict]:
        """The map ``name`` of the open scope, None outside one."""
        maps = self._maps
        return None if maps is None else maps[name]
