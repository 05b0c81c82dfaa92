"""The Neo4j graph store (official ``neo4j`` driver): the GraphStore of the servers backend.

Neo4j is the system of record there: nothing is loaded at open (one round trip checks that a
corpus is there), and every read is a named statement of the ``cypher`` package run with
parameters, batched over ids (``UNWIND $ids``), so a question costs a few round trips whatever
the corpus size. Inside :meth:`snapshot` (one question) papers and chunks already read are kept
in memory; outside it every call reads the server.

Writes are incremental (:meth:`write_papers`, :meth:`mark_loaded`, :meth:`delete_papers`,
:meth:`write_neighbours`): a paper is first *forgotten* (content hash removed, its chunks and
edges deleted), then its nodes are written in batched ``UNWIND $rows`` transactions, and its
content hash is set last, once every store holds it. A load killed at any point leaves papers
without a hash, which the next load writes again from scratch; nodes are merged on their
unique ids, so nothing is duplicated. Managed write transactions retry transient errors.

Every driver error of the store's public methods, and of :func:`connect`, comes out as a
:class:`graph.errors.ServerFault` (:mod:`graph.server_faults`).
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any, Iterable, Optional, Sequence

from graph.cypher import statement, statements
from graph.cypher_guard import refusal, split_mode
from graph.errors import CypherRefused, NotBuiltError, UnknownIdError
from graph.question_cache import QuestionCache
from graph.records import Chunk, Neighbour, Paper, Reference, Source
from graph.server_faults import NEO4J, translate_faults

#: Seconds to open one connection, and to retry a transaction on transient errors (a server that
#: is down or restarting): a fault ends in one line within about 5-10 s (README, Neo4j section).
CONNECTION_TIMEOUT_S = 5.0
RETRY_TIME_S = 5.0
#: Seconds to get a usable connection, the Bolt handshake included: a port that accepts but never
#: answers (a hung server, or not a Bolt server) fails within this instead of the driver's 60 s.
ACQUISITION_TIMEOUT_S = 10.0


@translate_faults(NEO4J)
def connect(uri: str, user: Optional[str] = None, password: Optional[str] = None, **config: Any):
    """A ``neo4j.Driver`` for ``uri`` (``bolt://``, ``neo4j://``, ``neo4j+s://`` for TLS);
    ``user`` None connects without auth. Extra ``config`` goes to the driver (e.g.
    ``max_connection_pool_size``). Raises ServerFault for a URI the driver refuses."""
    import neo4j

    config.setdefault("notifications_min_severity", "OFF")  # the server's notices are never shown to users
    config.setdefault("connection_timeout", CONNECTION_TIMEOUT_S)  # an unreachable server fails fast
    config.setdefault("max_transaction_retry_time", RETRY_TIME_S)  # a stopped one too (retries of a transaction)
    config.setdefault("connection_acquisition_timeout", ACQUISITION_TIMEOUT_S)  # and a silent one
    return neo4j.GraphDatabase.driver(uri, auth=(user, password or "") if user else None, **config)


def paper_rows(papers: Iterable[Paper | dict]) -> list[dict]:
    """Paper records as rows of ``load_papers``."""
    out = []
    for p in papers:
        d = p.model_dump(mode="json") if isinstance(p, Paper) else p
        out.append({"paper_id": d["paper_id"], "title": d.get("title", ""), "venue": d.get("venue"),
                    "year": d.get("year"), "abstract": d.get("abstract", ""), "n_pages": d.get("n_pages", 1),
                    "file": d["source"]["file"], "sha256": d["source"]["sha256"], "parser": d.get("parser", "pymupdf"),
                    "authors": d.get("authors") or []})
    return out


def records_hash(paper: dict, chunks: Sequence[dict], refs: Sequence[dict]) -> str:
    """A content hash of one paper's records (JSON-ready dicts), for :meth:`Neo4jGraphStore.load`."""
    h = hashlib.sha256()
    for part in (paper, *chunks, *refs):
        h.update(json.dumps(part, sort_keys=True, ensure_ascii=False).encode())
        h.update(b"\0")
    return h.hexdigest()


def neighbours_hash(neighbours: Sequence[tuple[str, float]]) -> str:
    """A hash of one SIMILAR_TO list ``[(neighbour_id, score)]`` by rank."""
    return hashlib.sha256(json.dumps([[n, round(float(s), 6)] for n, s in neighbours]).encode()).hexdigest()


@translate_faults(NEO4J)
class Neo4jGraphStore:
    """GraphStore over a Neo4j 5 database (see the module docstring).

    ``driver``: a ``neo4j.Driver`` (:func:`connect`); ``database``: None for the server default;
    ``batch_size``: rows per write transaction. Unknown ids raise graph.errors.UnknownIdError (a KeyError); the
    driver's errors (``ServiceUnavailable``, ``AuthError``, a Cypher error) come out as graph.errors.ServerFault
    (``.down`` for an unreachable server or refused credentials).
    """

    def __init__(self, driver, database: Optional[str] = None, batch_size: int = 5000) -> None:
        self.driver = driver
        self.database = database
        self.batch_size = batch_size
        self._cache = QuestionCache("papers", "chunks")

    _papers = property(lambda self: self._cache.get("papers"))
    _chunks = property(lambda self: self._cache.get("chunks"))

    @classmethod
    def open(cls, driver, database: Optional[str] = None, reach: bool = False) -> "Neo4jGraphStore":
        """A store over a database that holds a corpus (one round trip; ``reach``: one connection
        attempt first, :meth:`reach`). Raises graph.errors.NotBuiltError when it holds none."""
        store = cls(driver, database)
        if reach:
            store.reach()
        if not store._read("corpus_present"):
            raise NotBuiltError("no Lit3R corpus in the Neo4j database: run `lit3r ingest PDF_DIR` "
                                    "with the servers backend")
        return store

    # -- plumbing --------------------------------------------------------------------------
    def close(self) -> None:
        """Close the driver."""
        self.driver.close()

    def reach(self) -> None:
        """One connection attempt (the driver's ``connection_timeout``), not the retries of a
        transaction: a server that is down is a ServerFault at once."""
        self.driver.verify_connectivity()

    def verify(self) -> str:
        """Check connectivity and auth; returns the server agent string (e.g. "Neo4j/5.26.0")."""
        self.driver.verify_connectivity()
        return self.driver.get_server_info().agent

    def _read(self, name: str, **params: Any) -> list[dict]:
        return self.run_read(statement(name), params)

    def _write(self, name: str, rows: Sequence[Any], key: str = "rows") -> None:
        query = statement(name)
        with self.driver.session(database=self.database) as s:
            for i in range(0, len(rows), self.batch_size):
                batch = rows[i : i + self.batch_size]
                s.execute_write(lambda tx, batch=batch: tx.run(query, **{key: batch}).consume())

    def _write_grouped(self, name: str, rows: list[dict], inner: str) -> None:
        """Like :meth:`_write` for rows that carry a list each: batches of about ``batch_size``
        inner items."""
        batch, n = [], 0
        for row in rows:
            batch.append(row)
            n += len(row[inner])
            if n >= self.batch_size:
                self._write(name, batch)
                batch, n = [], 0
        if batch:
            self._write(name, batch)

    @staticmethod
    def _rows(result, limit: Optional[int], plans: Optional[list] = None) -> list[dict]:
        # records stream in: stop reading at the limit; consume() runs the statement to its end
        # on the server without sending the rest
        out = []
        for r in result:
            out.append(r.data())
            if limit is not None and len(out) >= limit:
                break
        summary = result.consume()
        if plans is not None and (summary.profile or summary.plan):  # an EXPLAIN or PROFILE query's plan
            plans.append(summary.profile or summary.plan)
        return out

    def run_read(self, query: str, params: dict[str, Any], limit: Optional[int] = None) -> list[dict]:
        """Run a Cypher query of Lit3R's in a READ transaction; at most ``limit`` rows."""
        with self.driver.session(database=self.database, default_access_mode="READ") as s:
            return s.execute_read(lambda tx: self._rows(tx.run(query, **params), limit))

    def run_plain_read(self, query: str, params: dict[str, Any], limit: Optional[int] = None,
                       plans: Optional[list] = None) -> list[dict]:
        """Run a user's Cypher (``lit3r cypher`` without ``--write``) only when it is a plain read:
        in one READ transaction it is EXPLAINed (a leading EXPLAIN or PROFILE taken off first,
        :func:`graph.cypher_guard.split_mode`), checked by :func:`graph.cypher_guard.refusal`
        against the plan and the server's plugin functions, then run as given; at most ``limit``
        rows. ``plans``: receives the plan dict (``{"operatorType", "args", "children", ...}``;
        with rows and db hits for PROFILE) of an EXPLAIN or PROFILE query. Raises CypherRefused
        (nothing of it ran) otherwise."""
        def work(tx) -> tuple[list[dict], list]:
            summary = tx.run("EXPLAIN " + split_mode(query)[1], **params).consume()
            why = refusal(query, summary.query_type, summary.plan)
            if why is None:  # (after an administration command the transaction takes no other query)
                plugins = [r["name"] for r in tx.run(statement("plugin_functions"))]
                why = refusal(query, summary.query_type, summary.plan, plugins)
            if why:
                raise CypherRefused(why)
            got: list = []  # a retried transaction keeps only its last try's plan
            return self._rows(tx.run(query, **params), limit, got), got

        with self.driver.session(database=self.database, default_access_mode="READ") as s:
            rows, got = s.execute_read(work)
        if plans is not None:
            plans.extend(got)
        return rows

    def run_write(self, query: str, params: dict[str, Any], limit: Optional[int] = None,
                  plans: Optional[list] = None) -> list[dict]:
        """Run a user's Cypher in a write transaction (``lit3r cypher --write``); at most ``limit`` rows
        are returned (the whole statement runs). ``plans``: as for :meth:`run_plain_read`."""
        def work(tx) -> tuple[list[dict], list]:
            got: list = []
            return self._rows(tx.run(query, **params), limit, got), got

        with self.driver.session(database=self.database) as s:
            rows, got = s.execute_write(work)
        if plans is not None:
            plans.extend(got)
        return rows

    # -- the per-question cache --------------------------------------------------------------
    def snapshot(self):
        """Context manager for one question: papers and chunks read inside it are kept until
        the outermost one exits (:mod:`graph.question_cache`)."""
        return self._cache.scope()

    # -- writing ---------------------------------------------------------------------------
    def ensure_schema(self) -> None:
        """Create the constraints and indexes of ``schema.cypher`` (idempotent)."""
        with self.driver.session(database=self.database) as s:
            for q in statements("schema"):
                s.run(q).consume()

    def corpus_prefix(self) -> Optional[str]:
        """The OpenSearch index prefix recorded with this database's corpus (None: none)."""
        rows = self._read("corpus_marker")
        return rows[0]["index_prefix"] if rows else None

    def set_corpus_prefix(self, prefix: str) -> None:
        """Record the OpenSearch index prefix of this database's corpus."""
        self.run_write(statement("set_corpus_marker"), {"index_prefix": prefix})

    def stored_hashes(self) -> dict[str, tuple[Optional[str], Optional[str]]]:
        """``{paper_id: (content hash, SIMILAR_TO list hash)}``; a None content hash marks a
        paper whose last write did not finish."""
        return {r["paper_id"]: (r["hash"], r["neighbours_hash"]) for r in self._read("stored_hashes")}

    def chunks_per_paper(self) -> dict[str, int]:
        """``{paper_id: chunk nodes}`` (papers without chunks left out)."""
        return {r["paper_id"]: r["n"] for r in self._read("chunks_per_paper")}

    def paper_counts(self) -> dict[str, int]:
        """``{"n": papers, "done": papers whose load finished (content hash set)}``."""
        return self._read("paper_counts")[0]

    def constraint_names(self) -> set[str]:
        """The names of the database's constraints."""
        return {r["name"] for r in self._read("constraint_names")}

    # -- the servers' load lease (lit3r/index/lock.py) -------------------------------------
    def claim_load_lease(self, owner: str, who: str, lease_ms: int) -> dict:
        """Claim the one load lease for ``owner`` (``who``: a line naming the process): taken when
        free, already ``owner``'s, or not renewed for ``lease_ms`` ms. Returns ``{"mine", "who",
        "age_s"}`` (the holder and how long ago it renewed when it is not ``owner``'s)."""
        return self.run_write(statement("load_lease_claim"), {"owner": owner, "who": who, "lease_ms": lease_ms})[0]

    def renew_load_lease(self, owner: str) -> int:
        """Renew ``owner``'s load lease; returns 1, or 0 when ``owner`` holds none."""
        return self.run_write(statement("load_lease_renew"), {"owner": owner})[0]["n"]

    def release_load_lease(self, owner: str) -> None:
        """Release ``owner``'s load lease (nothing when ``owner`` holds none)."""
        self.run_write(statement("load_lease_release"), {"owner": owner})

    def write_papers(self, papers: Sequence[dict], chunks: Sequence[dict], refs: Sequence[dict]) -> int:
        """Write papers with their chunks, authors and citations (JSON-ready record dicts),
        replacing whatever the database held for them; their content hash stays unset until
        :meth:`mark_loaded`. Returns the number of nodes written."""
        ids = [p["paper_id"] for p in papers]
        self._write("forget_papers", ids, key="ids")
        rows = paper_rows(papers)
        self._write("load_papers", rows)
        self._write("load_authors", [{"paper_id": r["paper_id"], "authors": [
            {"name": a, "position": i} for a, i in {a: i for i, a in enumerate(r["authors"], 1)}.items()]}
            for r in rows if r["authors"]])
        by_paper: dict[str, list[dict]] = {}
        for c in chunks:
            by_paper.setdefault(c["paper_id"], []).append(
                {"chunk_id": c["chunk_id"], "kind": c["kind"], "page": c["page"], "section": c.get("section"),
                 "object_id": c.get("object_id"), "text": c["text"], "seq": c["seq"], "image": c.get("image")})
        self._write_grouped("load_chunks", [{"paper_id": p, "chunks": cs} for p, cs in by_paper.items()], "chunks")
        cites = {(r["paper_id"], r["number"], r["work_id"]): {
            "paper_id": r["paper_id"], "number": r["number"], "page": r.get("page"), "raw": r["raw"],
            "title": r.get("title"), "work_id": r["work_id"], "cited_paper_id": r.get("cited_paper_id")} for r in refs}
        self._write("load_citations", list(cites.values()))
        return len(papers) + len(chunks) + len({r["work_id"] for r in refs}) + len({a for r in rows for a in r["authors"]})

    def mark_loaded(self, hashes: dict[str, str]) -> None:
        """Set the content hashes of written papers: the last step of their load."""
        self._write("mark_loaded", [{"paper_id": p, "hash": h} for p, h in hashes.items()])

    def delete_papers(self, paper_ids: Sequence[str]) -> None:
        """Delete papers with their chunks and edges (CITES onto them go too: the citing
        papers' references change with them and are written again)."""
        self._write("delete_papers", list(paper_ids), key="ids")

    def write_neighbours(self, lists: dict[str, Sequence[tuple[str, float]]]) -> None:
        """Replace the SIMILAR_TO lists ``{paper_id: [(neighbour_id, score)] by rank}``; each
        paper's list hash is stored with it (:meth:`stored_hashes`)."""
        self._write("load_similar", [
            {"paper_id": p, "neighbours_hash": neighbours_hash(ns),
             "neighbours": [{"neighbour_id": n, "score": float(s), "rank": i} for i, (n, s) in enumerate(ns, 1)]}
            for p, ns in lists.items()])

    def _until_zero(self, name: str, key: str) -> int:
        total, query = 0, statement(name)
        with self.driver.session(database=self.database) as s:
            while True:
                n = s.execute_write(lambda tx: tx.run(query, batch=20000).single()[key])
                total += n
                if n == 0:
                    return total

    def prune_orphans(self) -> int:
        """Delete works no paper cites any more and authors of no paper; returns how many."""
        return self._until_zero("prune_orphans", "deleted")

    def clear_hashes(self) -> int:
        """Mark every paper unfinished (its content hash removed): all must be written again."""
        return self._until_zero("clear_hashes", "cleared")

    def load(self, papers: Sequence[Paper], chunks: Sequence[Chunk], references: Sequence[Reference],
             neighbours: Sequence[Neighbour]) -> dict[str, float]:
        """Make the database hold exactly these records, writing only papers whose records
        changed (by content hash) and deleting the others. Returns ``{"seconds", "nodes",
        "nodes_per_s", "written", "deleted"}``."""
        t0 = time.perf_counter()
        self.ensure_schema()
        cs: dict[str, list[dict]] = {p.paper_id: [] for p in papers}
        rs: dict[str, list[dict]] = {p.paper_id: [] for p in papers}
        for c in chunks:
            cs[c.paper_id].append(c.model_dump(mode="json"))
        for r in references:
            rs[r.paper_id].append(r.model_dump(mode="json"))
        pd = {p.paper_id: p.model_dump(mode="json") for p in papers}
        want = {pid: records_hash(pd[pid], cs[pid], rs[pid]) for pid in pd}
        stored = self.stored_hashes()
        gone = sorted(set(stored) - set(want))
        todo = [pid for pid in want if stored.get(pid, (None, None))[0] != want[pid]]
        self.delete_papers(gone)
        t = time.perf_counter()
        nodes = self.write_papers([pd[p] for p in todo], [c for p in todo for c in cs[p]], [r for p in todo for r in rs[p]])
        secs = time.perf_counter() - t
        self.mark_loaded({p: want[p] for p in todo})
        lists: dict[str, list[tuple[str, float]]] = {p: [] for p in pd}
        for n in sorted(neighbours, key=lambda n: (n.paper_id, n.rank)):
            lists[n.paper_id].append((n.neighbour_id, n.score))
        self.write_neighbours({p: ns for p, ns in lists.items()
                               if p in todo or stored.get(p, (None, None))[1] != neighbours_hash(ns)})
        if gone or todo:
            self.prune_orphans()
        return {"seconds": time.perf_counter() - t0, "nodes": nodes, "nodes_per_s": nodes / secs if secs else 0.0,
                "written": len(todo), "deleted": len(gone)}

    # -- reading ---------------------------------------------------------------------------
    @staticmethod
    def _paper_from(row: dict) -> Paper:
        p = row["paper"]
        return Paper.model_construct(
            paper_id=p["paper_id"], title=p.get("title") or "", authors=row.get("authors") or [],
            venue=p.get("venue"), year=p.get("year"), abstract=p.get("abstract") or "",
            source=Source.model_construct(file=p.get("file") or "", sha256=p.get("sha256") or "0" * 64),
            n_pages=p.get("n_pages") if p.get("n_pages") is not None else 1, parser=p.get("parser") or "pymupdf")

    @staticmethod
    def _chunk_from(row: dict) -> Chunk:
        c = row["chunk"]
        return Chunk.model_construct(**{k: c.get(k) for k in Chunk.model_fields})

    def _papers_by_id(self, paper_ids: Sequence[str]) -> dict[str, Paper]:
        cache = self._papers
        want = [p for p in dict.fromkeys(paper_ids) if cache is None or p not in cache]
        found = {r["paper"]["paper_id"]: self._paper_from(r) for r in self._read("papers", ids=want)} if want else {}
        if cache is not None:
            cache.update(found)
            return {p: cache[p] for p in paper_ids if p in cache}
        return found

    def paper(self, paper_id: str) -> Paper:
        """One paper (UnknownIdError when unknown)."""
        found = self._papers_by_id([paper_id])
        if paper_id not in found:
            raise UnknownIdError("paper", paper_id)
        return found[paper_id]

    def _known(self, paper_id: str) -> None:
        self.paper(paper_id)

    def paper_ids(self) -> list[str]:
        """All paper ids, sorted."""
        return [r["paper_id"] for r in self._read("paper_ids")]

    def has_papers(self, paper_ids: Sequence[str]) -> set[str]:
        """The subset of ``paper_ids`` the database holds (one query)."""
        ids = list(dict.fromkeys(paper_ids))
        return {r["paper_id"] for r in self._read("has_papers", ids=ids)} if ids else set()

    def papers_of(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """``{chunk_id: paper_id}`` for the known ids among ``chunk_ids`` (one query, or none
        for chunks already read in this snapshot)."""
        cache = self._chunks
        out = {c: cache[c].paper_id for c in chunk_ids if cache is not None and c in cache}
        want = [c for c in dict.fromkeys(chunk_ids) if c not in out]
        if want:
            out.update({r["chunk_id"]: r["paper_id"] for r in self._read("papers_of", ids=want)})
        return out

    def chunk(self, chunk_id: str) -> Chunk:
        """One chunk (UnknownIdError when unknown)."""
        return self.chunks([chunk_id])[0]

    def chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks of ``chunk_ids`` in that order (one query; UnknownIdError for an unknown id)."""
        cache = self._chunks
        want = [c for c in dict.fromkeys(chunk_ids) if cache is None or c not in cache]
        found = {r["chunk"]["chunk_id"]: self._chunk_from(r) for r in self._read("chunks", ids=want)} if want else {}
        if cache is not None:
            cache.update(found)
            found = cache
        missing = [c for c in chunk_ids if c not in found]
        if missing:
            raise UnknownIdError("chunk", missing[0])
        return [found[c] for c in chunk_ids]

    def chunks_of(self, paper_id: str) -> list[Chunk]:
        """The chunks of a paper in ``seq`` order (UnknownIdError for an unknown paper)."""
        rows = self._read("chunks_of", paper_id=paper_id)
        if not rows:
            self._known(paper_id)
        out = [self._chunk_from(r) for r in rows]
        if self._chunks is not None:
            self._chunks.update({c.chunk_id: c for c in out})
        return out

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

    def find_papers(self, text: Optional[str] = None, limit: Optional[int] = None) -> list[Paper]:
        """Papers by id whose id, title or an author contains ``text`` (``find_papers.cypher``)."""
        rows = self._read("find_papers", text=text, limit=limit if limit is not None else 2**62)
        return [self._paper_from(r) for r in rows]

    def work_titles(self, work_ids: Sequence[str]) -> dict[str, str]:
        """``{work_id: title}`` of the Work nodes (``work_titles.cypher``, batched)."""
        ids, out = list(dict.fromkeys(work_ids)), {}
        for i in range(0, len(ids), self.batch_size):
            out.update({r["work_id"]: r["title"] for r in self._read("work_titles", ids=ids[i:i + self.batch_size])})
        return out

    def citation_links(self, work_ids: Sequence[str]) -> set[tuple[str, str]]:
        """``(citing work id, cited work id)`` of the CITES edges touching ``work_ids``
        (``citation_links.cypher``, batched)."""
        ids, out = list(dict.fromkeys(work_ids)), set()
        for i in range(0, len(ids), self.batch_size):
            out |= {(r["citing"], r["cited"]) for r in self._read("citation_links", ids=ids[i:i + self.batch_size])}
        return out
