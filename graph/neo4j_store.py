"""The Neo4j graph store (official ``neo4j`` driver): the production GraphStore.

Every statement is a named file of the ``cypher`` package run with parameters only. Writes are
batched ``UNWIND $rows ... MERGE`` (idempotent) in managed write transactions, which the driver
retries on transient errors; reads run in read transactions. Papers and chunks are cached in
memory after :meth:`load`/:meth:`open` (a question touches hundreds of chunks; one round trip
each would dominate latency); citations, coupling and neighbours are queried live.
"""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

from graph.cypher import statement, statements
from graph.records import Chunk, Neighbour, Paper, Reference, Source
from graph.store import RecordCache


class Neo4jGraphStore(RecordCache):
    """GraphStore over a Neo4j 5 database.

    ``uri`` (``bolt://`` or ``neo4j://``), ``user``/``password`` (None: no auth), ``database``
    (None: the server default). Raises ``neo4j.exceptions.ServiceUnavailable`` /
    ``AuthError`` from :meth:`verify` when the server cannot be reached.
    """

    def __init__(self, uri: str, user: Optional[str] = None, password: Optional[str] = None,
                 database: Optional[str] = None, batch_size: int = 2000) -> None:
        import neo4j

        auth = (user, password) if user else None
        self.driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        self.database = database
        self.batch_size = batch_size
        self._cache([], [])

    # -- plumbing --------------------------------------------------------------------------
    def close(self) -> None:
        """Close the driver."""
        self.driver.close()

    def verify(self) -> str:
        """Check connectivity and auth; returns the server agent string (e.g. "Neo4j/5.26.0")."""
        self.driver.verify_connectivity()
        return self.driver.get_server_info().agent

    def _read(self, name: str, **params: Any) -> list[dict]:
        query = statement(name)
        with self.driver.session(database=self.database, default_access_mode="READ") as s:
            return s.execute_read(lambda tx: [r.data() for r in tx.run(query, **params)])

    def _write(self, name: str, rows: list[dict]) -> None:
        query = statement(name)
        with self.driver.session(database=self.database) as s:
            for i in range(0, len(rows), self.batch_size):
                batch = rows[i : i + self.batch_size]
                s.execute_write(lambda tx: tx.run(query, rows=batch).consume())

    def run_read(self, query: str, params: dict[str, Any]) -> list[dict]:
        """Run a user's Cypher in a READ transaction (``lit3r cypher``)."""
        with self.driver.session(database=self.database, default_access_mode="READ") as s:
            return s.execute_read(lambda tx: [r.data() for r in tx.run(query, **params)])

    def run_write(self, query: str, params: dict[str, Any]) -> list[dict]:
        """Run a user's Cypher in a write transaction (``lit3r cypher --write``)."""
        with self.driver.session(database=self.database) as s:
            return s.execute_write(lambda tx: [r.data() for r in tx.run(query, **params)])

    # -- writing ---------------------------------------------------------------------------
    def ensure_schema(self) -> None:
        """Create the constraints and indexes of ``schema.cypher`` (idempotent)."""
        with self.driver.session(database=self.database) as s:
            for q in statements("schema"):
                s.run(q).consume()

    def clear(self) -> int:
        """Delete every Lit3R node in batches; returns how many were deleted."""
        total = 0
        query = statement("clear_batch")
        with self.driver.session(database=self.database) as s:
            while True:
                n = s.execute_write(lambda tx: tx.run(query, batch=10000).single()["deleted"])
                total += n
                if n == 0:
                    return total

    def load(self, papers: Sequence[Paper], chunks: Sequence[Chunk], references: Sequence[Reference],
             neighbours: Sequence[Neighbour]) -> dict[str, float]:
        """Replace the database's corpus with these records. Returns seconds per step and the
        node write rate (``nodes_per_s``)."""
        t0 = time.perf_counter()
        self.ensure_schema()
        self.clear()
        t = time.perf_counter()
        steps: dict[str, float] = {}
        for name, rows in (
            ("load_papers", [{"paper_id": p.paper_id, "title": p.title, "venue": p.venue, "year": p.year,
                              "abstract": p.abstract, "n_pages": p.n_pages, "file": p.source.file,
                              "sha256": p.source.sha256, "parser": p.parser} for p in papers]),
            ("load_authors", [{"paper_id": p.paper_id, "authors": p.authors} for p in papers if p.authors]),
            ("load_chunks", [c.model_dump(mode="json") for c in chunks]),
            ("load_citations", [r.model_dump(mode="json") for r in references]),
            ("load_similar", [n.model_dump(mode="json") for n in neighbours]),
        ):
            ts = time.perf_counter()
            self._write(name, rows)
            steps[name] = time.perf_counter() - ts
        secs = time.perf_counter() - t
        works = len({r.work_id for r in references if not r.cited_paper_id})
        nodes = len(papers) + len(chunks) + works + len({a for p in papers for a in p.authors})
        self._cache(list(papers), list(chunks))
        return {"seconds": time.perf_counter() - t0, "write_seconds": secs, "nodes": nodes,
                "nodes_per_s": nodes / secs if secs else 0.0, "steps": steps}

    # -- reading ---------------------------------------------------------------------------
    @classmethod
    def open(cls, uri: str, user: Optional[str] = None, password: Optional[str] = None,
             database: Optional[str] = None) -> "Neo4jGraphStore":
        """Connect and warm the paper/chunk cache. Raises FileNotFoundError when the database
        holds no Lit3R corpus."""
        store = cls(uri, user, password, database)
        papers = [store._paper_from(r) for r in store._read_all_papers()]
        if not papers:
            raise FileNotFoundError(f"no Lit3R corpus in the Neo4j database at {uri}: run `lit3r ingest PDF_DIR`")
        chunks = [Chunk.model_construct(**r["chunk"]) for r in store._read("all_chunks")]
        store._cache(papers, chunks)
        return store

    def _read_all_papers(self) -> list[dict]:
        return [self._read("paper", paper_id=r["paper_id"])[0] for r in self._read("paper_ids")]

    @staticmethod
    def _paper_from(row: dict) -> Paper:
        p = row["paper"]
        return Paper.model_construct(
            paper_id=p["paper_id"], title=p.get("title") or "", authors=row.get("authors") or [],
            venue=p.get("venue"), year=p.get("year"), abstract=p.get("abstract") or "",
            source=Source.model_construct(file=p.get("file") or "", sha256=p.get("sha256") or "0" * 64),
            n_pages=p.get("n_pages") or 1, parser=p.get("parser") or "pymupdf")

    def similar_papers(self, paper_id: str, limit: int = 10) -> list[tuple[str, float]]:
        self._known(paper_id)
        return [(r["paper_id"], r["score"]) for r in self._read("relate_similar", paper_id=paper_id, limit=limit)]

    def coupled_papers(self, paper_id: str, min_shared: int = 2, limit: int = 50) -> list[tuple[str, float, int]]:
        self._known(paper_id)
        rows = self._read("relate_coupling", paper_id=paper_id, min_shared=min_shared, limit=limit)
        return [(r["paper_id"], r["jaccard"], r["shared"]) for r in rows]

    def cites(self, paper_id: str) -> list[tuple[int, str, Optional[str]]]:
        self._known(paper_id)
        return [(r["number"], r["work_id"], r["cited_paper_id"]) for r in self._read("cites", paper_id=paper_id)]

    def cited_by(self, paper_id: str) -> list[str]:
        self._known(paper_id)
        return [r["paper_id"] for r in self._read("cited_by", paper_id=paper_id)]
