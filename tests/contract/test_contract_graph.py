"""The GraphStore contract: one suite that every implementation passes (the embedded SQLite
store and Neo4j on a real server), in the style of Haystack's shared DocumentStore tests.

Each implementation class provides ``make_store(papers, chunks, refs, neighbours)``: a store that
holds exactly these records, written through the implementation's own ``load``. The expected
answers are computed here from the records themselves (no implementation is the oracle), over
the hand-made corpus of :mod:`tests.contract.corpus` (the ``records`` fixture): seconds for the
embedded store; a real ingest feeds the same stores in tests/integration.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from graph.records import Chunk
from tests.contract.corpus import OnNeo4j

UNKNOWN = "no-such-paper-0000"


def _coupling(refs, seed: str, min_shared: int, limit: int):
    works = defaultdict(set)
    for r in refs:
        works[r.paper_id].add(r.work_id)
    out = []
    for other, ws in works.items():
        if other == seed:
            continue
        shared = len(works[seed] & ws)
        if shared >= min_shared:
            out.append((other, shared / len(works[seed] | ws), shared))
    out.sort(key=lambda t: (-t[1], -t[2], t[0]))
    return out[:limit]


class GraphStoreContract:
    """The shared tests; subclasses implement :meth:`make_store` (module-scoped ``store``)."""

    @classmethod
    def make_store(cls, papers, chunks, refs, neighbours):
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls, records):
        papers, chunks, refs, neighbours, _ = records
        return cls.make_store(papers, chunks, refs, neighbours)

    # -- papers and chunks -------------------------------------------------------------------
    def test_paper_ids_are_the_loaded_papers_sorted(self, store, records):
        assert store.paper_ids() == sorted(p.paper_id for p in records[0])

    def test_paper_returns_the_record(self, store, records):
        for p in records[0]:
            assert store.paper(p.paper_id).model_dump() == p.model_dump()
        with pytest.raises(KeyError):
            store.paper(UNKNOWN)

    def test_chunks_by_id_in_the_asked_order(self, store, records):
        chunks = records[1]
        ids = [c.chunk_id for c in chunks[::7]][::-1]
        by_id = {c.chunk_id: c for c in chunks}
        assert [c.model_dump() for c in store.chunks(ids)] == [by_id[i].model_dump() for i in ids]
        assert store.chunk(ids[0]).model_dump() == by_id[ids[0]].model_dump()
        assert store.chunks([]) == []
        with pytest.raises(KeyError):
            store.chunks([ids[0], f"{UNKNOWN}::c0000"])
        with pytest.raises(KeyError):
            store.chunk(f"{UNKNOWN}::c0000")

    def test_chunks_of_a_paper_in_reading_order(self, store, records):
        papers, chunks = records[0], records[1]
        for p in papers:
            want = sorted((c for c in chunks if c.paper_id == p.paper_id), key=lambda c: c.seq)
            assert [c.model_dump() for c in store.chunks_of(p.paper_id)] == [c.model_dump() for c in want]
        with pytest.raises(KeyError):
            store.chunks_of(UNKNOWN)

    def test_membership_lookups_are_batched_and_ignore_unknown_ids(self, store, records):
        papers, chunks = records[0], records[1]
        assert store.has_papers([papers[0].paper_id, UNKNOWN, papers[1].paper_id]) == {papers[0].paper_id,
                                                                                        papers[1].paper_id}
        assert store.has_papers([]) == set()
        ids = [c.chunk_id for c in chunks[:50]]
        assert store.papers_of([*ids, "nope::c0001"]) == {c.chunk_id: c.paper_id for c in chunks[:50]}

    # -- citations -----------------------------------------------------------------------------
    def test_cites_is_the_reference_list(self, store, records):
        refs = records[2]
        for p in records[0]:
            want = sorted((r.number, r.work_id, r.cited_paper_id) for r in refs if r.paper_id == p.paper_id)
            assert store.cites(p.paper_id) == want
        with pytest.raises(KeyError):
            store.cites(UNKNOWN)

    def test_cited_by_resolves_corpus_citations(self, store, records):
        refs = records[2]
        n = 0
        for p in records[0]:
            want = sorted({r.paper_id for r in refs if r.cited_paper_id == p.paper_id})
            assert store.cited_by(p.paper_id) == want
            n += len(want)
        assert n > 0  # the corpus cites itself: the check is not vacuous
        with pytest.raises(KeyError):
            store.cited_by(UNKNOWN)

    @pytest.mark.parametrize("min_shared,limit", [(2, 50), (1, 3), (5, 10)])
    def test_bibliographic_coupling_by_jaccard(self, store, records, min_shared, limit):
        refs = records[2]
        nonempty = 0
        for p in records[0]:
            want = _coupling(refs, p.paper_id, min_shared, limit)
            got = store.coupled_papers(p.paper_id, min_shared, limit)
            assert [(q, s) for q, _, s in got] == [(q, s) for q, _, s in want]
            assert [j for _, j, _ in got] == pytest.approx([j for _, j, _ in want])
            nonempty += bool(want)
        assert nonempty > 0
        with pytest.raises(KeyError):
            store.coupled_papers(UNKNOWN)

    def test_similar_papers_are_the_neighbour_lists_by_rank(self, store, records):
        neighbours = records[3]
        for p in records[0]:
            want = sorted((n for n in neighbours if n.paper_id == p.paper_id), key=lambda n: n.rank)
            got = store.similar_papers(p.paper_id, 3)
            assert [q for q, _ in got] == [n.neighbour_id for n in want[:3]]
            assert [s for _, s in got] == pytest.approx([n.score for n in want[:3]], abs=1e-6)
        with pytest.raises(KeyError):
            store.similar_papers(UNKNOWN)

    @pytest.mark.parametrize("text", [None, "attention", "SPARSE", "2102.", "lovelace", "no such words"])
    def test_find_papers_by_id_title_or_author(self, store, records, text):
        papers = sorted(records[0], key=lambda p: p.paper_id)
        t = (text or "").lower()
        want = [p.model_dump() for p in papers if t in p.paper_id.lower() or t in p.title.lower()
                or any(t in a.lower() for a in p.authors)]
        assert [p.model_dump() for p in store.find_papers(text)] == want
        assert [p.paper_id for p in store.find_papers(text, limit=2)] == [p["paper_id"] for p in want[:2]]
        if text == "lovelace":
            assert [p["paper_id"] for p in want] == ["2101.00001", "2102.00003"]  # author matches: not vacuous

    def test_citation_links_are_the_cites_pairs_of_works(self, store, records):
        refs = records[2]
        pairs = {(f"paper:{r.paper_id}", r.work_id) for r in refs}
        for p in records[0]:
            me = f"paper:{p.paper_id}"
            assert store.citation_links([me]) == {(a, b) for a, b in pairs if me in (a, b)}
        works = sorted({r.work_id for r in refs if not r.work_id.startswith("paper:")})[:40]
        got = store.citation_links(works + ["paper:" + UNKNOWN, "title:no such work"])
        assert got == {(a, b) for a, b in pairs if b in works} and got
        assert store.citation_links([]) == set()

    def test_snapshot_is_reentrant_and_reads_the_same(self, store, records):
        pid = records[0][0].paper_id
        with store.snapshot():
            first = store.chunks_of(pid)
            with store.snapshot():
                assert [c.model_dump() for c in store.chunks_of(pid)] == [c.model_dump() for c in first]
        assert [c.chunk_id for c in store.chunks_of(pid)] == [c.chunk_id for c in first]

    # -- writes --------------------------------------------------------------------------------
    def test_load_writes_only_changes_and_deletes_the_rest(self, records):
        """A changed chunk text, a dropped paper, then the original records again."""
        papers, chunks, refs, neighbours, _ = records
        gone = papers[-1].paper_id
        changed = papers[0].paper_id
        first = next(c for c in chunks if c.paper_id == changed)
        edited = [Chunk.model_construct(**{**c.model_dump(), "text": "an edited chunk text"}) if c is first else c
                  for c in chunks if c.paper_id != gone]
        kept_refs = [r for r in refs if r.paper_id != gone]
        kept_nbrs = [n for n in neighbours if gone not in (n.paper_id, n.neighbour_id)]
        store = self.make_store([p for p in papers if p.paper_id != gone], edited, kept_refs, kept_nbrs)
        assert gone not in store.paper_ids() and not store.has_papers([gone])
        with pytest.raises(KeyError):
            store.chunks_of(gone)
        assert store.chunk(first.chunk_id).text == "an edited chunk text"
        assert store.papers_of([c.chunk_id for c in chunks if c.paper_id == gone]) == {}
        for p in papers:
            if p.paper_id != gone:
                assert gone not in store.cited_by(p.paper_id) and gone not in [q for q, _ in store.similar_papers(p.paper_id)]
        store = self.make_store(papers, chunks, refs, neighbours)
        assert store.paper_ids() == sorted(p.paper_id for p in papers)
        assert store.chunk(first.chunk_id).text == first.text
        assert len(store.chunks_of(gone)) == sum(c.paper_id == gone for c in chunks)


class TestEmbeddedGraphStore(GraphStoreContract):
    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _folder(cls, tmp_path_factory):
        cls.folder = tmp_path_factory.mktemp("contract-embedded")

    @classmethod
    def make_store(cls, papers, chunks, refs, neighbours):
        from graph.embedded import EmbeddedGraphStore

        path = cls.folder / "graph.sqlite"
        EmbeddedGraphStore(path).load(papers, chunks, refs, neighbours)
        return EmbeddedGraphStore.open(path)


class TestNeo4jGraphStore(OnNeo4j, GraphStoreContract):
    @classmethod
    def make_store(cls, papers, chunks, refs, neighbours):
        from graph.neo4j_store import Neo4jGraphStore, connect

        cls.load_corpus(papers, chunks, refs, neighbours)
        return Neo4jGraphStore.open(connect(cls.uri))

    def test_a_second_identical_load_writes_nothing(self, store, records):
        from graph.neo4j_store import Neo4jGraphStore, connect

        papers, chunks, refs, neighbours, _ = records
        again = Neo4jGraphStore(connect(self.uri))
        report = again.load(papers, chunks, refs, neighbours)
        assert report["written"] == 0 and report["deleted"] == 0
        counts = again.run_read("MATCH (c:Chunk) RETURN count(c) AS n, count(DISTINCT c.chunk_id) AS ids", {})[0]
        assert counts["n"] == counts["ids"] == len(chunks)

    def test_a_repeated_author_or_reference_is_one_edge_as_merge_made_it(self):
        """The load creates a paper's AUTHORED_BY and CITES edges (they were deleted first): an author
        named twice and a reference repeated (same number and work) are one edge each, with the
        last position and the last reference's properties, written twice the same."""
        from graph.neo4j_store import Neo4jGraphStore, connect

        store = Neo4jGraphStore(connect(self.uri))
        paper = {"paper_id": "repeats-1", "title": "Repeats", "authors": ["Ada Lovelace", "Alan Turing", "Ada Lovelace"],
                 "source": {"file": "repeats.pdf", "sha256": "0" * 64}}
        refs = [{"paper_id": "repeats-1", "number": 1, "raw": "first", "title": "W", "work_id": "work:repeats-w1"},
                {"paper_id": "repeats-1", "number": 1, "raw": "again", "title": "W", "work_id": "work:repeats-w1"},
                {"paper_id": "repeats-1", "number": 2, "raw": "other", "title": "V", "work_id": "work:repeats-w2"}]
        try:
            for _ in range(2):
                store.write_papers([paper], [], refs)
                authors = store.run_read("MATCH (:Paper {paper_id: 'repeats-1'})-[r:AUTHORED_BY]->(a) "
                                         "RETURN a.name AS name, r.position AS position ORDER BY position", {})
                assert authors == [{"name": "Alan Turing", "position": 2}, {"name": "Ada Lovelace", "position": 3}]
                cites = store.run_read("MATCH (:Paper {paper_id: 'repeats-1'})-[r:CITES]->(w) "
                                       "RETURN r.number AS n, r.raw AS raw, w.work_id AS w ORDER BY n", {})
                assert cites == [{"n": 1, "raw": "again", "w": "work:repeats-w1"},
                                 {"n": 2, "raw": "other", "w": "work:repeats-w2"}]
        finally:
            store.delete_papers(["repeats-1"])
            store.prune_orphans()
            store.close()
