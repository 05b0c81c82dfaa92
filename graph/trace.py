"""Evidence traces as a graph: the records, the TraceStore interface and the embedded (SQLite) store.

A question's trace (built by :func:`lit3r.traces.trace_graph.trace_graph` from the trace dict of
``lit3r ask --json`` / ``lit3r run``'s ``*.traces.jsonl``) is a :class:`TraceGraph`: nodes of the
labels :data:`LABELS` and edges of the types :data:`EDGE_TYPES`, some of which end on the
corpus's own ``Chunk`` and ``Paper`` nodes (by ``chunk_id`` / ``paper_id``)::

    (:Question {query_id, run, text})-[:HAS_ROUND]->(:Round {round})-[:HAS_SUBQUERY]->(:Subquery {index, query})
    (:Subquery)-[:POOLED {rank, score}]->(:Chunk)
    (:Question)-[:CANDIDATE {rank, rank_a, score_a, rank_b, sources}]->(:Paper)   # A, B and final ranks
    (:Question)-[:SEED {rank}]->(:Paper)            (:Question)-[:RELATED {source, rank}]->(:Paper)
    (:Question)-[:HAS_ANSWER]->(:Answer)-[:SUPPORTED_BY {rank}]->(:Chunk | :Paper)

Every trace node also carries the label ``Trace`` and the properties ``key`` (unique),
``run``, ``query_id`` and ``question`` (the key of its Question), so that one question's trace
is replaced, and one run's traces deleted, as a whole. Ranks are 1-based; ``rank`` on CANDIDATE
is the final (reader's) candidate rank, None for a paper of Ranking A or B cut from the list.

Two stores answer the :class:`TraceStore` protocol: :class:`EmbeddedTraceStore` (SQLite
tables ``trace_nodes``/``trace_edges`` in its own file, the corpus read through a
:class:`graph.store.GraphStore`) and :class:`graph.neo4j_trace.Neo4jTraceStore` (the named
``cypher/trace_*.cypher`` statements). Their query results are identical (one contract suite,
tests/contract/test_contract_trace.py, checks it); the shapes are documented on the protocol.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Protocol, Sequence

from graph.errors import Lit3rError, UnknownIdError, shown_text
from graph.sqlite import Database
from graph.store import GraphStore

#: Labels of trace nodes (each also labelled ``Trace``).
LABELS = ("Question", "Round", "Subquery", "Answer")
#: Relationship types of a trace.
EDGE_TYPES = ("HAS_ROUND", "HAS_SUBQUERY", "POOLED", "CANDIDATE", "SEED", "RELATED", "HAS_ANSWER", "SUPPORTED_BY")
#: What an edge ends on: another trace node (by key), a corpus chunk or a corpus paper (by id).
TARGETS = ("trace", "chunk", "paper")


@dataclass
class TraceNode:
    """One trace node: ``key`` (unique over all traces), ``label`` (:data:`LABELS`) and
    ``props`` (scalars and lists of scalars only: Neo4j properties; maps go in as JSON text)."""

    key: str
    label: str
    props: dict[str, Any] = field(default_factory=dict)


@dataclass
class TraceEdge:
    """One edge from the trace node ``src`` (a key) of ``type`` (:data:`EDGE_TYPES`) to ``dst``:
    a trace key, a chunk id or a paper id as ``target`` says (:data:`TARGETS`)."""

    src: str
    type: str
    target: str
    dst: str
    props: dict[str, Any] = field(default_factory=dict)


@dataclass
class TraceGraph:
    """The trace of one question of one run: its nodes (the Question first) and edges."""

    run: str
    query_id: str
    nodes: list[TraceNode]
    edges: list[TraceEdge]

    @property
    def key(self) -> str:
        """The Question's key, ``"<run>/<query_id>"``."""
        return question_key(self.run, self.query_id)


def question_key(run: str, query_id: str) -> str:
    """The key of a Question node: ``"<run>/<query_id>"``."""
    return f"{run}/{query_id}"


class TraceStore(Protocol):
    """Where evidence traces are stored and read. A question is named by ``query_id`` and an
    optional ``run``; without a run (None) the most recently stored question of that id answers.
    Unknown questions raise graph.errors.UnknownIdError.

    Shapes (lists by rank, then id):

    - :meth:`write`: ``{"questions", "nodes", "edges", "missing"}``: counts, and ``missing`` the
      chunk/paper ids the corpus does not hold (their edges are left out).
    - :meth:`questions`: ``[{run, query_id, text, stored_at}]``, newest first.
    - :meth:`evidence_path`: ``[{run, query_id, question, rank, chunk_id, paper_id, candidate_rank,
      pooled_by: [{round, subquery, query, rank, score}]}]``: every evidence chunk of the answer
      (``SUPPORTED_BY``), the paper holding it with its final candidate rank, and the subqueries
      that put it in the pool.
    - :meth:`candidates`: ``[{paper_id, title, rank, rank_a, score_a, rank_b, sources: [{source, rank}],
      seed_rank, similar_to_seeds: [{seed, rank, score}], coupled_seeds: [{seed, shared}],
      pooled_chunks, evidence_chunks}]``: why each paper (or ``paper_id`` alone) is a candidate.
    - :meth:`supported`: ``[{run, query_id, question, via, rank}]``: every question whose answer a
      chunk (``via`` = the chunk id) or a paper (``via`` = the paper id, or one of its chunk ids)
      supported.
    - :meth:`question`: ``{run, query_id, text, stored_at, rounds: [{round, pool_size, verdict,
      subqueries: [{index, query, prf_query, pooled}]}], seeds: [paper_id], answer: {reader, text,
      choice, papers, evidence_chunks, validation}}``.
    """

    def write(self, traces: Sequence[TraceGraph]) -> dict[str, Any]:
        """Store traces, replacing earlier traces of the same run and query id."""

    def delete_run(self, run: str) -> int:
        """Delete every trace node (and edge) of ``run``; returns how many nodes went."""

    def questions(self, run: Optional[str] = None) -> list[dict]:
        """The stored questions (of ``run``)."""

    def question(self, query_id: str, run: Optional[str] = None) -> dict:
        """One question's rounds, subqueries, seeds and answer."""

    def evidence_path(self, query_id: str, run: Optional[str] = None) -> list[dict]:
        """From the Question to every evidence chunk of its answer."""

    def candidates(self, query_id: str, run: Optional[str] = None, paper_id: Optional[str] = None) -> list[dict]:
        """Why each candidate paper (or only ``paper_id``) is one."""

    def supported(self, target_id: str) -> list[dict]:
        """Every question a chunk or paper supported."""

    def close(self) -> None:
        """Release the file or driver."""


class TraceStoreError(Lit3rError):
    """A trace store that cannot be written (a read-only data folder)."""


TRACE_SCHEMA = """
CREATE TABLE IF NOT EXISTS trace_nodes (key TEXT PRIMARY KEY, run TEXT NOT NULL, query_id TEXT NOT NULL,
                                        question TEXT NOT NULL, label TEXT NOT NULL, props TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS trace_nodes_by_run ON trace_nodes(run);
CREATE INDEX IF NOT EXISTS trace_nodes_by_question ON trace_nodes(question);
CREATE TABLE IF NOT EXISTS trace_edges (src TEXT NOT NULL, type TEXT NOT NULL, target TEXT NOT NULL, dst TEXT NOT NULL,
                                        question TEXT NOT NULL, run TEXT NOT NULL, props TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS trace_edges_by_src ON trace_edges(src, type);
CREATE INDEX IF NOT EXISTS trace_edges_by_dst ON trace_edges(target, dst, type);
CREATE INDEX IF NOT EXISTS trace_edges_by_question ON trace_edges(question);
"""


def by_rank(rows: list[dict], *keys: str) -> list[dict]:
    """Rows sorted by ``keys`` with None last (ranks), ties by the later keys."""
    return sorted(rows, key=lambda r: tuple((r.get(k) is None, r.get(k) if r.get(k) is not None else 0) for k in keys))


def _store_error(path: Path, exc: BaseException) -> TraceStoreError:
    """The one-line error of a trace store that cannot be opened: a file that is not (or no
    longer) a SQLite database is damaged, and is moved aside, never deleted, by the fix; else the
    file or its folder is not writable."""
    where = shown_text(path, 200)
    if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
        return TraceStoreError(f"the trace store {where} is damaged ({exc}): move it aside (`mv {where} "
                               f"{where}.bad`); the next `lit3r ask` or `lit3r trace load` starts a new one")
    return TraceStoreError(f"the trace store {where} cannot be written ({exc}): make the data folder writable")


class EmbeddedTraceStore:
    """TraceStore over the SQLite file ``path`` (created on the first write); ``corpus``: the
    graph store of the corpus the traces point into (chunk -> paper, titles, SIMILAR_TO and
    coupling for :meth:`candidates`), closed with this store when ``own_corpus``. Raises TraceStoreError when the file cannot be written."""

    def __init__(self, path: Path, corpus: GraphStore, own_corpus: bool = False) -> None:
        self.path = Path(path)
        self.corpus = corpus
        self.own_corpus = own_corpus
        self._db: Optional[Database] = None

    # -- plumbing --------------------------------------------------------------------------
    def _open(self, write: bool) -> Optional[Database]:
        if self._db is None or (write and self._db.readonly):
            if not write and not self.path.is_file():
                return None
            if self._db is not None:
                self._db.close()
            self._db = Database(self.path, readonly=not write)
            try:
                con = self._db.connect()
                if write:
                    con.executescript(TRACE_SCHEMA)
            except (sqlite3.Error, OSError) as exc:  # a read-only folder or file, or a damaged file
                self._db = None
                raise _store_error(self.path, exc) from None
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        if self.own_corpus:
            self.corpus.close()

    def _rows(self, sql: str, params: Sequence = ()) -> list[tuple]:
        db = self._open(write=False)
        try:
            return db.execute(sql, params).fetchall() if db is not None else []
        except sqlite3.DatabaseError as exc:  # a damaged file: name it, not the corpus index
            if isinstance(exc, sqlite3.OperationalError):
                raise
            raise _store_error(self.path, exc) from None

    # -- writing ---------------------------------------------------------------------------
    def write(self, traces: Sequence[TraceGraph]) -> dict[str, Any]:
        db = self._open(write=True)
        assert db is not None
        chunk_ids = [e.dst for t in traces for e in t.edges if e.target == "chunk"]
        paper_ids = [e.dst for t in traces for e in t.edges if e.target == "paper"]
        known_chunks = set(self.corpus.papers_of(chunk_ids)) if chunk_ids else set()
        known_papers = self.corpus.has_papers(paper_ids) if paper_ids else set()
        missing: set[str] = set()
        con = db.connect()
        n_nodes = n_edges = 0
        con.execute("BEGIN IMMEDIATE")
        try:
            for t in traces:
                qkey = t.key
                con.execute("DELETE FROM trace_nodes WHERE question = ?", (qkey,))
                con.execute("DELETE FROM trace_edges WHERE question = ?", (qkey,))
                con.executemany("INSERT INTO trace_nodes VALUES (?, ?, ?, ?, ?, ?)",
                                [(n.key, t.run, t.query_id, qkey, n.label, json.dumps(n.props, ensure_ascii=False))
                                 for n in t.nodes])
                keep = []
                for e in t.edges:
                    known = known_chunks if e.target == "chunk" else known_papers if e.target == "paper" else None
                    if known is not None and e.dst not in known:
                        missing.add(e.dst)
                        continue
                    keep.append((e.src, e.type, e.target, e.dst, qkey, t.run, json.dumps(e.props, ensure_ascii=False)))
                con.executemany("INSERT INTO trace_edges VALUES (?, ?, ?, ?, ?, ?, ?)", keep)
                n_nodes, n_edges = n_nodes + len(t.nodes), n_edges + len(keep)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return {"questions": len(traces), "nodes": n_nodes, "edges": n_edges, "missing": sorted(missing)}

    def delete_run(self, run: str) -> int:
        if not self.path.is_file():
            return 0
        db = self._open(write=True)
        assert db is not None
        con = db.connect()
        con.execute("BEGIN IMMEDIATE")
        n = con.execute("DELETE FROM trace_nodes WHERE run = ?", (run,)).rowcount
        con.execute("DELETE FROM trace_edges WHERE run = ?", (run,))
        con.execute("COMMIT")
        return n

    # -- reading ---------------------------------------------------------------------------
    def questions(self, run: Optional[str] = None) -> list[dict]:
        rows = self._rows("SELECT run, query_id, props FROM trace_nodes WHERE label = 'Question' "
                          "AND (? IS NULL OR run = ?)", (run, run))
        out = [{"run": r, "query_id": q, "text": json.loads(p)["text"], "stored_at": json.loads(p)["stored_at"]}
               for r, q, p in rows]
        return sorted(out, key=lambda d: (d["stored_at"], d["run"], d["query_id"]), reverse=True)

    def _question(self, query_id: str, run: Optional[str]) -> tuple[str, dict]:
        """``(question key, Question props)`` of the newest matching question."""
        rows = self._rows("SELECT key, props FROM trace_nodes WHERE label = 'Question' AND query_id = ? "
                          "AND (? IS NULL OR run = ?)", (query_id, run, run))
        if not rows:
            raise UnknownIdError("traced question", query_id if run is None else f"{run}/{query_id}",
                                 "`lit3r trace list` lists the stored questions")
        key, props = max(((k, json.loads(p)) for k, p in rows), key=lambda t: (t[1]["stored_at"], t[0]))
        return key, props

    def _edges(self, qkey: str, type_: str) -> list[tuple[str, str, dict]]:
        """``[(src, dst, props)]`` of one question's edges of a type."""
        return [(s, d, json.loads(p)) for s, d, p in self._rows(
            "SELECT src, dst, props FROM trace_edges WHERE question = ? AND type = ?", (qkey, type_))]

    def _nodes(self, qkey: str, label: str) -> dict[str, dict]:
        return {k: json.loads(p) for k, p in self._rows(
            "SELECT key, props FROM trace_nodes WHERE question = ? AND label = ?", (qkey, label))}

    def question(self, query_id: str, run: Optional[str] = None) -> dict:
        qkey, q = self._question(query_id, run)
        rounds = self._nodes(qkey, "Round")
        subs = self._nodes(qkey, "Subquery")
        by_round: dict[str, list[dict]] = {k: [] for k in rounds}
        for src, dst, _ in self._edges(qkey, "HAS_SUBQUERY"):
            s = subs[dst]
            by_round[src].append({"index": s["index"], "query": s["query"], "prf_query": s["prf_query"],
                                  "pooled": s["pooled"]})
        out_rounds = [{"round": r["round"], "pool_size": r["pool_size"], "verdict": json.loads(r["verdict"]),
                       "subqueries": sorted(by_round[k], key=lambda s: s["index"])} for k, r in rounds.items()]
        seeds = [d for _, d, p in sorted(self._edges(qkey, "SEED"), key=lambda t: (t[2]["rank"], t[1]))]
        answers = list(self._nodes(qkey, "Answer").values())
        return {"run": q["run"], "query_id": q["query_id"], "text": q["text"], "stored_at": q["stored_at"],
                "rounds": sorted(out_rounds, key=lambda r: r["round"]), "seeds": seeds,
                "answer": answer_view(answers[0]) if answers else None}

    def evidence_path(self, query_id: str, run: Optional[str] = None) -> list[dict]:
        qkey, q = self._question(query_id, run)
        evidence = [(d, p["rank"]) for _, d, p in self._edges(qkey, "SUPPORTED_BY") if p.get("kind") == "chunk"]
        paper_of = self.corpus.papers_of([c for c, _ in evidence])
        rank_of = {d: p.get("rank") for _, d, p in self._edges(qkey, "CANDIDATE")}
        subs = self._nodes(qkey, "Subquery")
        pooled: dict[str, list[dict]] = {}
        for src, dst, p in self._edges(qkey, "POOLED"):
            s = subs[src]
            pooled.setdefault(dst, []).append({"round": s["round"], "subquery": s["index"], "query": s["query"],
                                               "rank": p["rank"], "score": p["score"]})
        rows = []
        for chunk_id, rank in evidence:
            pid = paper_of.get(chunk_id)
            rows.append({"run": q["run"], "query_id": q["query_id"], "question": q["text"], "rank": rank,
                         "chunk_id": chunk_id, "paper_id": pid, "candidate_rank": rank_of.get(pid) if pid else None,
                         "pooled_by": by_rank(pooled.get(chunk_id, []), "round", "subquery")})
        return by_rank(rows, "rank", "chunk_id")

    def candidates(self, query_id: str, run: Optional[str] = None, paper_id: Optional[str] = None) -> list[dict]:
        qkey, _ = self._question(query_id, run)
        cands = {d: p for _, d, p in self._edges(qkey, "CANDIDATE") if paper_id is None or d == paper_id}
        seeds = {d: p["rank"] for _, d, p in self._edges(qkey, "SEED")}
        sources: dict[str, list[dict]] = {}
        for _, d, p in self._edges(qkey, "RELATED"):
            sources.setdefault(d, []).append({"source": p["source"], "rank": p["rank"]})
        chunk_ids = [d for _, d, _ in self._edges(qkey, "POOLED")]
        evidence_ids = [d for _, d, p in self._edges(qkey, "SUPPORTED_BY") if p.get("kind") == "chunk"]
        paper_of = self.corpus.papers_of([*chunk_ids, *evidence_ids])
        similar = {s: {p: (i, sc) for i, (p, sc) in enumerate(self.corpus.similar_papers(s, 10 ** 6), 1)}
                   for s in seeds}
        coupled = {s: {p: n for p, _, n in self.corpus.coupled_papers(s, 1, 10 ** 6)} for s in seeds}
        rows = []
        for pid, c in cands.items():
            rows.append({
                "paper_id": pid, "title": self.corpus.paper(pid).title, "rank": c.get("rank"),
                "rank_a": c.get("rank_a"), "score_a": c.get("score_a"), "rank_b": c.get("rank_b"),
                "sources": sorted(sources.get(pid, []), key=lambda s: s["source"]),
                "seed_rank": seeds.get(pid),
                "similar_to_seeds": sorted(({"seed": s, "rank": similar[s][pid][0], "score": similar[s][pid][1]}
                                            for s in seeds if pid in similar[s]), key=lambda d: str(d["seed"])),
                "coupled_seeds": sorted(({"seed": s, "shared": coupled[s][pid]} for s in seeds if pid in coupled[s]),
                                        key=lambda d: str(d["seed"])),
                "pooled_chunks": len({x for x in chunk_ids if paper_of.get(x) == pid}),
                "evidence_chunks": len({x for x in evidence_ids if paper_of.get(x) == pid}),
            })
        return by_rank(rows, "rank", "rank_a", "rank_b", "paper_id")

    def supported(self, target_id: str) -> list[dict]:
        chunk_ids = [target_id]
        if self.corpus.has_papers([target_id]):
            chunk_ids = [c.chunk_id for c in self.corpus.chunks_of(target_id)]
        sql = ("SELECT e.dst, e.props, n.props FROM trace_edges e JOIN trace_nodes n ON n.key = e.question "
               "WHERE e.type = 'SUPPORTED_BY' AND e.target = ? AND e.dst IN ({marks})")
        found = self._rows(sql.format(marks="?"), ("paper", target_id))
        for i in range(0, len(chunk_ids), 500):
            part = chunk_ids[i:i + 500]
            found += self._rows(sql.format(marks=",".join("?" * len(part))), ("chunk", *part))
        rows = []
        for via, eprops, qprops in found:
            q = json.loads(qprops)
            rows.append({"run": q["run"], "query_id": q["query_id"], "question": q["text"], "via": via,
                         "rank": json.loads(eprops)["rank"]})
        return supported_rows(rows)


def supported_rows(rows: list[dict]) -> list[dict]:
    """``supported`` rows, one per (run, query_id, via) with its best (lowest) rank, in the order
    run, query_id, rank, via: the same on both backends."""
    best: dict[tuple, dict] = {}
    for r in rows:
        k = (r["run"], r["query_id"], r["via"])
        if k not in best or (r["rank"] if r["rank"] is not None else 10**9) < (best[k]["rank"] if best[k]["rank"] is not None else 10**9):
            best[k] = r
    return by_rank(list(best.values()), "run", "query_id", "rank", "via")


def answer_view(props: dict) -> dict:
    """The Answer node's properties as :meth:`TraceStore.question` returns them."""
    return {"reader": props.get("reader"), "text": props.get("text"), "choice": props.get("choice"),
            "papers": list(props.get("papers") or []), "evidence_chunks": list(props.get("evidence_chunks") or []),
            "validation": list(props.get("validation") or [])}
