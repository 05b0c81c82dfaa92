"""The embedded graph store: papers, chunks, CITES and SIMILAR_TO in SQLite, read by id on demand.

Nothing is loaded at open: a question reads the few hundred chunks it needs in batched ``IN``
queries, so opening costs the same for 60 papers and for the seed's 27,487 (2.56M chunks).
Bibliographic coupling is one self-join of the distinct (work, paper) CITES pairs on the work,
counted per paper, Jaccard from the stored cited-work set sizes (seed paper section 2.2); the
answers equal the Neo4j store's (the shared backend tests check it).

Writes are staged: :class:`GraphWriter` adds each new or changed paper to ``st_*`` tables (a
build commits them batch by batch, so an interrupted build resumes), and :meth:`GraphWriter.publish`
swaps them in and deletes removed papers in the caller's transaction, together with the
search index's rows (one database, :mod:`graph.sqlite`).

Tables: ``papers(paper_id, record, n_works, hash)``, ``chunks(chunk_id, paper_id, seq, record)``,
``refs(paper_id, number, work_id, cited_paper_id, record)``, ``cites(work_id, paper_id)``
(distinct pairs), ``neighbours(paper_id, rank, neighbour_id, score)``; records are the JSON of
:mod:`graph.records`.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Iterable, Optional, Sequence

from graph.errors import NotBuiltError, UnknownIdError
from graph.records import Chunk, Neighbour, Paper, Reference, Source
from graph.sqlite import Database, batched_in

SCHEMA = """
CREATE TABLE IF NOT EXISTS papers (paper_id TEXT PRIMARY KEY, record TEXT NOT NULL, n_works INTEGER NOT NULL DEFAULT 0,
                                   hash TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS chunks (chunk_id TEXT NOT NULL UNIQUE, paper_id TEXT NOT NULL, seq INTEGER NOT NULL,
                                   record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_paper ON chunks(paper_id, seq);
CREATE TABLE IF NOT EXISTS refs (paper_id TEXT NOT NULL, number INTEGER NOT NULL, work_id TEXT NOT NULL,
                                 cited_paper_id TEXT, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS refs_by_paper ON refs(paper_id, number);
CREATE INDEX IF NOT EXISTS refs_by_cited ON refs(cited_paper_id) WHERE cited_paper_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS cites (work_id TEXT NOT NULL, paper_id TEXT NOT NULL, PRIMARY KEY (work_id, paper_id))
    WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cites_by_paper ON cites(paper_id);
CREATE TABLE IF NOT EXISTS neighbours (paper_id TEXT NOT NULL, rank INTEGER NOT NULL, neighbour_id TEXT NOT NULL,
                                       score REAL NOT NULL, PRIMARY KEY (paper_id, rank)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS st_papers (paper_id TEXT PRIMARY KEY, record TEXT NOT NULL, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS st_chunks (chunk_id TEXT NOT NULL, paper_id TEXT NOT NULL, seq INTEGER NOT NULL,
                                      record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS st_chunks_by_paper ON st_chunks(paper_id);
CREATE TABLE IF NOT EXISTS st_refs (paper_id TEXT NOT NULL, number INTEGER NOT NULL, work_id TEXT NOT NULL,
                                    cited_paper_id TEXT, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS st_refs_by_paper ON st_refs(paper_id);
"""


def paper_from_json(text: str) -> Paper:
    """A stored paper record (trusted: validated when it was ingested)."""
    d = json.loads(text)
    return Paper.model_construct(**{**d, "source": Source.model_construct(**d["source"])})


def chunk_from_json(text: str) -> Chunk:
    """A stored chunk record (trusted)."""
    return Chunk.model_construct(**json.loads(text))


class GraphWriter:
    """Stages papers into a writable connection and publishes them (module docstring). The
    caller owns the transactions (``BEGIN`` / ``COMMIT`` on ``con``). ``direct``: write into
    the live tables at once (a new index that nobody reads before it is swapped in)."""

    def __init__(self, con: sqlite3.Connection, direct: bool = False) -> None:
        self.con = con
        self.direct = direct
        con.executescript(SCHEMA)

    def live_hashes(self) -> dict[str, str]:
        """``{paper_id: content hash}`` of the published papers."""
        return dict(self.con.execute("SELECT paper_id, hash FROM papers"))

    def staged_hashes(self) -> dict[str, str]:
        """``{paper_id: content hash}`` of papers staged by an earlier, unfinished build."""
        return dict(self.con.execute("SELECT paper_id, hash FROM st_papers"))

    def unstage(self, paper_ids: Sequence[str]) -> None:
        """Drop staged papers (their content changed since they were staged)."""
        for t in ("st_papers", "st_chunks", "st_refs"):
            self.con.executemany(f"DELETE FROM {t} WHERE paper_id = ?", [(p,) for p in paper_ids])

    def stage(self, paper: dict, chunks: Sequence[dict], refs: Sequence[dict], content_hash: str,
              lines: Optional[dict] = None) -> None:
        """Stage one paper with its chunks and references (records as JSON-ready dicts;
        ``lines``: their JSON text when the caller has it, ``{"paper": str, "chunks": [str],
        "references": [str]}``)."""
        pid = paper["paper_id"]
        dump = lambda r: json.dumps(r, ensure_ascii=False)  # noqa: E731
        ptext = lines["paper"] if lines else dump(paper)
        ctext = lines["chunks"] if lines else [dump(c) for c in chunks]
        rtext = lines["references"] if lines else [dump(r) for r in refs]
        if self.direct:
            for table in ("papers", "chunks", "refs", "cites"):
                self.con.execute(f"DELETE FROM {table} WHERE paper_id = ?", (pid,))
            works = {r["work_id"] for r in refs}
            self.con.execute("INSERT INTO papers VALUES (?, ?, ?, ?)", (pid, ptext, len(works), content_hash))
            self.con.executemany("INSERT OR IGNORE INTO cites VALUES (?, ?)", [(w, pid) for w in works])
            prefix = ""
        else:
            self.con.execute("INSERT OR REPLACE INTO st_papers VALUES (?, ?, ?)", (pid, ptext, content_hash))
            prefix = "st_"
        self.con.executemany(f"INSERT INTO {prefix}chunks VALUES (?, ?, ?, ?)",
                             [(c["chunk_id"], pid, c["seq"], t) for c, t in zip(chunks, ctext)])
        self.con.executemany(f"INSERT INTO {prefix}refs VALUES (?, ?, ?, ?, ?)",
                             [(pid, r["number"], r["work_id"], r.get("cited_paper_id"), t) for r, t in zip(refs, rtext)])

    def publish(self, removed: Iterable[str]) -> int:
        """Replace the live records of every staged paper, delete ``removed`` papers, clear the
        stage. Returns how many papers were published."""
        con = self.con
        con.execute("CREATE TEMP TABLE IF NOT EXISTS gone (paper_id TEXT PRIMARY KEY)")
        con.execute("DELETE FROM gone")
        con.executemany("INSERT OR IGNORE INTO gone VALUES (?)", [(p,) for p in removed])
        con.execute("INSERT OR IGNORE INTO gone SELECT paper_id FROM st_papers")
        for table in ("papers", "chunks", "refs", "cites", "neighbours"):
            con.execute(f"DELETE FROM {table} WHERE paper_id IN (SELECT paper_id FROM gone)")
        con.execute("INSERT INTO papers (paper_id, record, hash) SELECT paper_id, record, hash FROM st_papers")
        con.execute("INSERT INTO chunks SELECT * FROM st_chunks")
        con.execute("INSERT INTO refs SELECT * FROM st_refs")
        con.execute("INSERT OR IGNORE INTO cites SELECT work_id, paper_id FROM st_refs")
        con.execute("UPDATE papers SET n_works = (SELECT COUNT(*) FROM cites WHERE cites.paper_id = papers.paper_id) "
                    "WHERE paper_id IN (SELECT paper_id FROM st_papers)")
        n = con.execute("SELECT COUNT(*) FROM st_papers").fetchone()[0]
        for t in ("st_papers", "st_chunks", "st_refs"):
            con.execute(f"DELETE FROM {t}")
        return n

    def neighbour_lists(self) -> dict[str, list[tuple[str, float]]]:
        """Every stored SIMILAR_TO list ``{paper_id: [(neighbour_id, score)]}`` by rank."""
        out: dict[str, list[tuple[str, float]]] = {}
        for pid, nid, score in self.con.execute("SELECT paper_id, neighbour_id, score FROM neighbours "
                                                "ORDER BY paper_id, rank"):
            out.setdefault(pid, []).append((nid, score))
        return out

    def replace_neighbours(self, paper_ids: Iterable[str], neighbours: Iterable[Neighbour]) -> None:
        """Replace the SIMILAR_TO lists of ``paper_ids`` by ``neighbours``."""
        self.con.executemany("DELETE FROM neighbours WHERE paper_id = ?", [(p,) for p in paper_ids])
        self.con.executemany("INSERT INTO neighbours VALUES (?, ?, ?, ?)",
                             ((n.paper_id, n.rank, n.neighbour_id, n.score) for n in neighbours))

    def set_neighbours(self, neighbours: Iterable[Neighbour]) -> None:
        """Replace every SIMILAR_TO edge."""
        self.con.execute("DELETE FROM neighbours")
        self.con.executemany("INSERT INTO neighbours VALUES (?, ?, ?, ?)",
                             ((n.paper_id, n.rank, n.neighbour_id, n.score) for n in neighbours))


class EmbeddedGraphStore:
    """GraphStore (see :mod:`graph.store`) over the SQLite file ``path``. Unknown ids raise graph.errors.UnknownIdError (a KeyError).

    Raises NotBuiltError from :meth:`open` when no store was built there.
    """

    def __init__(self, path: Path, db: Optional[Database] = None) -> None:
        self.path = Path(path)
        self.db = db or Database(self.path, readonly=True)

    # -- writing ---------------------------------------------------------------------------
    def load(self, papers: Sequence[Paper], chunks: Sequence[Chunk], references: Sequence[Reference],
             neighbours: Sequence[Neighbour]) -> None:
        """Replace the store's content with these records (one transaction)."""
        writer_db = Database(self.path, readonly=False)
        con = writer_db.connect()
        w = GraphWriter(con)
        by_paper: dict[str, tuple[list, list]] = {p.paper_id: ([], []) for p in papers}
        for c in chunks:
            by_paper[c.paper_id][0].append(c.model_dump(mode="json"))
        for r in references:
            by_paper[r.paper_id][1].append(r.model_dump(mode="json"))
        con.execute("BEGIN")
        old = [r[0] for r in con.execute("SELECT paper_id FROM papers")]
        for p in papers:
            cs, rs = by_paper[p.paper_id]
            w.stage(p.model_dump(mode="json"), cs, rs, "")
        w.publish(old)
        w.set_neighbours(neighbours)
        con.execute("COMMIT")
        writer_db.close()

    # -- reading ---------------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path, db: Optional[Database] = None) -> "EmbeddedGraphStore":
        """Open a built store (nothing is read until asked); ``db``: a connection shared with
        the search index (one snapshot for both, see :meth:`snapshot`)."""
        path = Path(path)
        if not path.is_file():
            raise NotBuiltError(f"no graph store at {path}: run `lit3r ingest PDF_DIR` first")
        return cls(path, db)

    def chunks_per_paper(self) -> dict[str, int]:
        """``{paper_id: chunks}`` of the published papers (papers without chunks left out)."""
        return dict(self.db.execute("SELECT paper_id, COUNT(*) FROM chunks GROUP BY paper_id"))

    def snapshot(self):
        """Context manager: every read inside sees one committed version of the store."""
        return self.db.snapshot()

    def _known(self, paper_id: str) -> None:
        if self.db.execute("SELECT 1 FROM papers WHERE paper_id = ?", (paper_id,)).fetchone() is None:
            raise UnknownIdError("paper", paper_id)

    def paper(self, paper_id: str) -> Paper:
        """One paper (UnknownIdError when unknown)."""
        row = self.db.execute("SELECT record FROM papers WHERE paper_id = ?", (paper_id,)).fetchone()
        if row is None:
            raise UnknownIdError("paper", paper_id)
        return paper_from_json(row[0])

    def paper_ids(self) -> list[str]:
        """All paper ids, sorted."""
        return [r[0] for r in self.db.execute("SELECT paper_id FROM papers ORDER BY paper_id")]

    def has_papers(self, paper_ids: Sequence[str]) -> set[str]:
        """The subset of ``paper_ids`` that the store holds (one batched query)."""
        return {r[0] for r in batched_in(self.db, "SELECT paper_id FROM papers WHERE paper_id IN ({in_})",
                                          list(dict.fromkeys(paper_ids)))}

    def papers_of(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """``{chunk_id: paper_id}`` for the known ids among ``chunk_ids`` (batched)."""
        return dict(batched_in(self.db, "SELECT chunk_id, paper_id FROM chunks WHERE chunk_id IN ({in_})",
                               list(dict.fromkeys(chunk_ids))))

    def chunk(self, chunk_id: str) -> Chunk:
        """One chunk (UnknownIdError when unknown)."""
        row = self.db.execute("SELECT record FROM chunks WHERE chunk_id = ?", (chunk_id,)).fetchone()
        if row is None:
            raise UnknownIdError("chunk", chunk_id)
        return chunk_from_json(row[0])

    def chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks of ``chunk_ids`` in that order (UnknownIdError for any unknown id)."""
        found = {r[0]: r[1] for r in batched_in(self.db, "SELECT chunk_id, record FROM chunks WHERE chunk_id IN ({in_})",
                                                 list(dict.fromkeys(chunk_ids)))}
        missing = [c for c in chunk_ids if c not in found]
        if missing:
            raise UnknownIdError("chunk", missing[0])
        return [chunk_from_json(found[c]) for c in chunk_ids]

    def chunks_of(self, paper_id: str) -> list[Chunk]:
        """The chunks of a paper in ``seq`` order (UnknownIdError for an unknown paper)."""
        rows = self.db.execute("SELECT record FROM chunks WHERE paper_id = ? ORDER BY seq", (paper_id,)).fetchall()
        if not rows:
            self._known(paper_id)
        return [chunk_from_json(r[0]) for r in rows]

    def similar_papers(self, paper_id: str, limit: int = 10) -> list[tuple[str, float]]:
        self._known(paper_id)
        return [(r[0], r[1]) for r in self.db.execute(
            "SELECT neighbour_id, score FROM neighbours WHERE paper_id = ? ORDER BY rank LIMIT ?", (paper_id, limit))]

    def neighbours_of(self, paper_id: str) -> list[Neighbour]:
        """The stored SIMILAR_TO edges of a paper, by rank (for loading a server)."""
        return [Neighbour.model_construct(paper_id=paper_id, neighbour_id=r[0], score=r[1], rank=r[2])
                for r in self.db.execute("SELECT neighbour_id, score, rank FROM neighbours WHERE paper_id = ? "
                                         "ORDER BY rank", (paper_id,))]

    def coupled_papers(self, paper_id: str, min_shared: int = 2, limit: int = 50) -> list[tuple[str, float, int]]:
        row = self.db.execute("SELECT n_works FROM papers WHERE paper_id = ?", (paper_id,)).fetchone()
        if row is None:
            raise UnknownIdError("paper", paper_id)
        n_seed = row[0]
        rows = self.db.execute(
            "SELECT o.paper_id, COUNT(*) AS shared, p.n_works FROM cites s JOIN cites o ON o.work_id = s.work_id "
            "JOIN papers p ON p.paper_id = o.paper_id WHERE s.paper_id = ? AND o.paper_id != ? "
            "GROUP BY o.paper_id HAVING COUNT(*) >= ?", (paper_id, paper_id, min_shared)).fetchall()
        out = [(pid, shared / (n_seed + n - shared), shared) for pid, shared, n in rows]
        out.sort(key=lambda t: (-t[1], -t[2], t[0]))
        return out[:limit]

    def cites(self, paper_id: str) -> list[tuple[int, str, Optional[str]]]:
        self._known(paper_id)
        return [(r[0], r[1], r[2]) for r in self.db.execute(
            "SELECT number, work_id, cited_paper_id FROM refs WHERE paper_id = ? ORDER BY number", (paper_id,))]

    def cited_by(self, paper_id: str) -> list[str]:
        self._known(paper_id)
        return [r[0] for r in self.db.execute(
            "SELECT DISTINCT paper_id FROM refs WHERE cited_paper_id = ? ORDER BY paper_id", (paper_id,))]

    def find_papers(self, text: Optional[str] = None, limit: Optional[int] = None) -> list[Paper]:
        """Papers by id whose id, title or an author contains ``text`` (case-insensitive; None:
        every paper); at most ``limit``. The test is Python's, on the stored records (SQLite's
        LIKE folds ASCII only), as ``cypher/find_papers.cypher`` does it on Neo4j."""
        needle = text.lower() if text is not None else None
        out: list[Paper] = []
        for (record,) in self.db.execute("SELECT record FROM papers ORDER BY paper_id"):
            p = paper_from_json(record)
            if needle is None or needle in p.paper_id.lower() or needle in (p.title or "").lower() or any(
                    needle in a.lower() for a in p.authors):
                out.append(p)
                if limit is not None and len(out) >= limit:
                    break
        return out

    def work_titles(self, work_ids: Sequence[str]) -> dict[str, str]:
        """``{work_id: title}`` from the first reference (by citing paper, number) with a title."""
        out: dict[str, str] = {}
        rows = batched_in(self.db, "SELECT work_id, record FROM refs WHERE work_id IN ({in_}) "
                          "ORDER BY paper_id, number", list(dict.fromkeys(work_ids)))
        for work_id, record in rows:
            if work_id not in out and (title := json.loads(record).get("title")):
                out[work_id] = title
        return out

    def citation_links(self, work_ids: Sequence[str]) -> set[tuple[str, str]]:
        """``(citing work id, cited work id)`` of the CITES pairs touching ``work_ids`` (a corpus
        paper is the work ``"paper:<id>"``; batched reads of the ``cites`` table)."""
        ids = list(dict.fromkeys(work_ids))
        out = {(f"paper:{pid}", w) for w, pid in batched_in(
            self.db, "SELECT work_id, paper_id FROM cites WHERE work_id IN ({in_})", ids)}
        papers = [w[len("paper:"):] for w in ids if w.startswith("paper:")]
        out |= {(f"paper:{pid}", w) for w, pid in batched_in(
            self.db, "SELECT work_id, paper_id FROM cites WHERE paper_id IN ({in_})", papers)}
        return out

    # -- the records of papers, for loading another store ------------------------------------
    def content_hashes(self) -> dict[str, str]:
        """``{paper_id: content hash}`` of every paper (the build's digest of its lines)."""
        return dict(self.db.execute("SELECT paper_id, hash FROM papers"))

    def records(self, paper_ids: Sequence[str]) -> list[tuple[dict, list[dict], list[dict]]]:
        """``[(paper, chunks by seq, references by number)]`` as JSON-ready dicts, in the order of
        ``paper_ids`` (batched reads; UnknownIdError for an unknown paper)."""
        ids = list(dict.fromkeys(paper_ids))
        papers = dict(batched_in(self.db, "SELECT paper_id, record FROM papers WHERE paper_id IN ({in_})", ids))
        chunks: dict[str, list] = {p: [] for p in ids}
        refs: dict[str, list] = {p: [] for p in ids}
        for pid, seq, rec in batched_in(self.db, "SELECT paper_id, seq, record FROM chunks WHERE paper_id IN ({in_})", ids):
            chunks[pid].append((seq, rec))
        for pid, num, rec in batched_in(self.db, "SELECT paper_id, number, record FROM refs WHERE paper_id IN ({in_})", ids):
            refs[pid].append((num, rec))
        missing = [p for p in paper_ids if p not in papers]
        if missing:
            raise UnknownIdError("paper", missing[0])
        return [(json.loads(papers[p]), [json.loads(r) for _, r in sorted(chunks[p])],
                 [json.loads(r) for _, r in sorted(refs[p], key=lambda t: t[0])]) for p in paper_ids]

    def neighbour_lists(self) -> dict[str, list[tuple[str, float]]]:
        """Every SIMILAR_TO list ``{paper_id: [(neighbour_id, score)]}`` by rank (papers without
        neighbours map to [])."""
        out: dict[str, list[tuple[str, float]]] = {p: [] for p in self.paper_ids()}
        for pid, nid, score in self.db.execute("SELECT paper_id, neighbour_id, score FROM neighbours "
                                               "ORDER BY paper_id, rank"):
            out.setdefault(pid, []).append((nid, score))
        return out

    def close(self) -> None:
        self.db.close()
