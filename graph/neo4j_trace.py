"""The Neo4j trace store: evidence traces (:mod:`graph.trace`) as nodes and edges next to the corpus.

Trace nodes are written with the named ``cypher/trace_*.cypher`` statements, batched
(``UNWIND $rows``), one question's old trace deleted first; edges onto ``Chunk`` and ``Paper``
nodes are matched by id, and ids the corpus lacks are reported, not created. The reads are the
same named statements that Neo4j Browser users run (``trace_evidence_path``,
``trace_why_candidate``, ``trace_supported``, ``trace_question``, ``trace_questions``), so the
CLI and Browser show the same rows.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from graph.cypher import statement, statements
from graph.errors import UnknownIdError
from graph.server_faults import NEO4J, translate_faults
from graph.trace import EDGE_TYPES, LABELS, TraceGraph


@translate_faults(NEO4J)
class Neo4jTraceStore:
    """TraceStore (:class:`graph.trace.TraceStore`) over a Neo4j 5.26+ database (dynamic labels
    and types: ``SET n:$(label)``). ``driver``: a ``neo4j.Driver``; ``database``: None for the
    server default; ``own_driver``: close the driver in :meth:`close`. The driver's errors come out
    as graph.errors.ServerFault (:mod:`graph.server_faults`)."""

    def __init__(self, driver, database: Optional[str] = None, own_driver: bool = True) -> None:
        self.driver = driver
        self.database = database
        self.own_driver = own_driver
        self._schema = False

    def close(self) -> None:
        if self.own_driver:
            self.driver.close()

    def _read(self, name: str, **params: Any) -> list[dict]:
        query = statement(name)
        with self.driver.session(database=self.database, default_access_mode="READ") as s:
            return s.execute_read(lambda tx: [r.data() for r in tx.run(query, **params)])

    def _write(self, name: str, rows: Sequence[Any], key: str = "rows") -> list[dict]:
        query, out = statement(name), []
        with self.driver.session(database=self.database) as s:
            for i in range(0, len(rows), 2000):
                batch = list(rows[i:i + 2000])
                out += s.execute_write(lambda tx, b=batch: [r.data() for r in tx.run(query, **{key: b})])
        return out

    def _ensure_schema(self) -> None:
        if not self._schema:
            with self.driver.session(database=self.database) as s:
                for q in statements("trace_schema"):
                    s.run(q).consume()
            self._schema = True

    # -- writing ---------------------------------------------------------------------------
    def write(self, traces: Sequence[TraceGraph]) -> dict[str, Any]:
        self._ensure_schema()
        for t in traces:  # labels and types are written into Cypher: only the known ones pass
            bad = [n.label for n in t.nodes if n.label not in LABELS] + [e.type for e in t.edges if e.type not in EDGE_TYPES]
            if bad:
                raise ValueError(f"unknown trace label or type {bad[0]!r}")
        self._write("trace_forget", [t.key for t in traces], key="keys")
        self._write("trace_write_nodes", [{"key": n.key, "label": n.label,
                                           "props": {**n.props, "key": n.key, "run": t.run, "query_id": t.query_id,
                                                     "question": t.key}} for t in traces for n in t.nodes])
        missing: set[str] = set()
        n_edges = 0
        for target, name in (("trace", "trace_link_trace"), ("chunk", "trace_link_chunks"), ("paper", "trace_link_papers")):
            rows = [{"src": e.src, "type": e.type, "dst": e.dst, "props": e.props}
                    for t in traces for e in t.edges if e.target == target]
            gone = {r["missing"] for r in self._write(name, rows)}
            missing |= gone
            n_edges += sum(1 for r in rows if r["dst"] not in gone)
        return {"questions": len(traces), "nodes": sum(len(t.nodes) for t in traces), "edges": n_edges,
                "missing": sorted(missing)}

    def delete_run(self, run: str) -> int:
        query = statement("trace_delete_run")
        with self.driver.session(database=self.database) as s:
            return s.execute_write(lambda tx: tx.run(query, run=run).single()["deleted"])

    # -- reading ---------------------------------------------------------------------------
    def questions(self, run: Optional[str] = None) -> list[dict]:
        return self._read("trace_questions", run=run)

    def question(self, query_id: str, run: Optional[str] = None) -> dict:
        rows = self._read("trace_question", query_id=query_id, run=run)
        if not rows:
            raise UnknownIdError("traced question", query_id if run is None else f"{run}/{query_id}",
                                 "`lit3r trace list` lists the stored questions")
        q = rows[0]
        for r in q["rounds"]:
            r["verdict"] = json.loads(r["verdict"]) if r["verdict"] is not None else None
        if q["answer"] is not None:
            q["answer"] = {k: (list(v or []) if k in ("papers", "evidence_chunks", "validation") else v)
                           for k, v in q["answer"].items()}
        return q

    def _known(self, query_id: str, run: Optional[str]) -> None:
        self.question(query_id, run)

    def evidence_path(self, query_id: str, run: Optional[str] = None) -> list[dict]:
        self._known(query_id, run)
        return self._read("trace_evidence_path", query_id=query_id, run=run)

    def candidates(self, query_id: str, run: Optional[str] = None, paper_id: Optional[str] = None) -> list[dict]:
        self._known(query_id, run)
        return self._read("trace_why_candidate", query_id=query_id, run=run, paper_id=paper_id)

    def supported(self, target_id: str) -> list[dict]:
        from graph.trace import supported_rows

        return supported_rows(self._read("trace_supported", id=target_id))
