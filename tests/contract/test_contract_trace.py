"""The TraceStore contract (:class:`graph.trace.TraceStore`): one suite that the embedded SQLite
store (:class:`graph.trace.EmbeddedTraceStore`) and Neo4j on a real server
(:class:`graph.neo4j_trace.Neo4jTraceStore`) pass.

Each implementation class provides ``make_store(papers, chunks, refs, neighbours)``: a trace
store over a corpus holding these records (the hand-made corpus of
:mod:`tests.contract.corpus`). The traces are hand-made trace lines turned into graphs by the one
builder, :func:`lit3r.traces.trace_graph.trace_graph`; every expected row is written out here from the
lines and the records, not from either store.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from graph.errors import UnknownIdError
from lit3r.traces.trace_graph import trace_graph
from tests.contract.corpus import OnNeo4j

RUN1, RUN2 = "first", "second"


def _c(pid: str, seq: int) -> str:
    return f"{pid}::c{seq:04d}"


def _line(ids: list[str], query_id: str, question: str, unknown: bool = False) -> dict:
    """A trace line as ``lit3r run`` writes it: two rounds, the seed ``ids[0]``, Ranking A
    ``ids[0], ids[1]``, Ranking B ``ids[0], ids[2]`` (``ids[2]`` brought by similar and coupling),
    final candidates ``ids[0], ids[2], ids[1]``, evidence ``c3`` and ``c5`` of ``ids[0]``."""
    a, b, c = ids[0], ids[1], ids[2]
    pooled_extra = [["nowhere::c0001", 0.1]] if unknown else []
    return {"query_id": query_id, "candidates": [a, c, b], "trace": {
        "question": question,
        "rounds": [{"round": 1, "subqueries": ["linear attention", "sparse blocks"], "verdict": {"sufficient": False},
                    "pool_size": 3},
                   {"round": 2, "subqueries": ["linear attention"], "verdict": {"sufficient": True}, "pool_size": 4}],
        "subqueries": [{"query": "linear attention", "prf_query": "linear attention more",
                        "pooled_chunks": [[_c(a, 3), 0.9], [_c(b, 2), 0.5], *pooled_extra]},
                       {"query": "sparse blocks", "prf_query": "", "pooled_chunks": [[_c(a, 3), 0.75], [_c(c, 4), 0.25]]},
                       {"query": "linear attention", "prf_query": "again", "pooled_chunks": [[_c(a, 5), 0.125]]}],
        "ranking_a": [[a, 2.0], [b, 1.0]], "ranking_b": [a, c],
        "relate_sources": {"similar": [c], "coupling": [b, c], "paper_bm25": []}, "seeds": [a],
        "answer": {"query_id": query_id, "gold_papers": [{"paper_id": a}],
                   "answer": {"freeform": {"text": "Linear attention."}, "multiple_choice": {"choice": "B"}}},
        "evidence_chunks": [_c(a, 3), _c(a, 5), _c(a, 3)], "reader": {"name": "extractive"},
        "validation": ["kept"]}}


class TraceStoreContract:
    """The shared tests; subclasses implement :meth:`make_store` (a store over the corpus; the tests
    delete the runs they write first, so a server's other traces do not matter)."""

    @classmethod
    def make_store(cls, papers, chunks, refs, neighbours):
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def stored(cls, records):
        """``(store, write report of RUN1, ids)``: RUN1 holds q1 (with one unknown chunk) and q2,
        RUN2 a later q1."""
        papers, chunks, refs, neighbours, _ = records
        ids = [p.paper_id for p in papers]
        store = cls.make_store(papers, chunks, refs, neighbours)
        for run in (RUN1, RUN2):  # a server may keep an earlier session's traces
            store.delete_run(run)
        report = store.write([trace_graph(_line(ids, "q1", "Which paper is linear?", unknown=True), RUN1,
                                          "2026-01-01T00:00:01.000000Z"),
                              trace_graph(_line(ids[3:], "q2", "Which one is sparse?"), RUN1,
                                          "2026-01-01T00:00:02.000000Z")])
        store.write([trace_graph(_line(ids[1:], "q1", "Which paper is linear, again?"), RUN2,
                                 "2026-01-01T00:00:03.000000Z")])
        yield store, report, ids
        store.close()

    def test_write_counts_and_reports_ids_the_corpus_lacks(self, stored):
        _, report, _ = stored
        assert report["questions"] == 2 and report["missing"] == ["nowhere::c0001"]
        # per question: Question, 2 rounds, 3 subqueries, Answer; edges: 2 HAS_ROUND, 3 HAS_SUBQUERY,
        # 5 POOLED (q1's sixth, onto the unknown chunk, is left out), 3 CANDIDATE, 2 RELATED (ids[2] by
        # similar and coupling; ids[1] is in the coupling list but not in Ranking B), 1 SEED, 1 HAS_ANSWER,
        # 3 SUPPORTED_BY (2 chunks, the repeated one once, and 1 paper)
        assert report["nodes"] == 2 * 7
        assert report["edges"] == 2 * (2 + 3 + 5 + 3 + 2 + 1 + 1 + 3)

    def test_questions_newest_first_and_by_run(self, stored):
        store, _, _ = stored
        assert [(q["run"], q["query_id"], q["text"]) for q in store.questions() if q["run"] in (RUN1, RUN2)] == [
            (RUN2, "q1", "Which paper is linear, again?"), (RUN1, "q2", "Which one is sparse?"),
            (RUN1, "q1", "Which paper is linear?")]
        assert [q["query_id"] for q in store.questions(RUN1)] == ["q2", "q1"]
        assert store.questions("no-such-run") == []

    def test_question_without_a_run_is_the_newest(self, stored):
        store, _, ids = stored
        q = store.question("q1")
        assert (q["run"], q["text"], q["stored_at"]) == (RUN2, "Which paper is linear, again?", "2026-01-01T00:00:03.000000Z")
        assert q["seeds"] == [ids[1]]
        assert store.question("q1", RUN1)["seeds"] == [ids[0]]

    def test_question_rounds_subqueries_and_answer(self, stored):
        store, _, ids = stored
        q = store.question("q1", RUN1)
        assert q["rounds"] == [
            {"round": 1, "pool_size": 3, "verdict": {"sufficient": False},
             "subqueries": [{"index": 1, "query": "linear attention", "prf_query": "linear attention more", "pooled": 3},
                            {"index": 2, "query": "sparse blocks", "prf_query": "", "pooled": 2}]},
            {"round": 2, "pool_size": 4, "verdict": {"sufficient": True},
             "subqueries": [{"index": 1, "query": "linear attention", "prf_query": "again", "pooled": 1}]}]
        assert q["answer"] == {"reader": "extractive", "text": "Linear attention.", "choice": "B", "papers": [ids[0]],
                               "evidence_chunks": [_c(ids[0], 3), _c(ids[0], 5)], "validation": ["kept"]}

    def test_evidence_path_reaches_every_evidence_chunk_with_its_pooling(self, stored):
        store, _, ids = stored
        a = ids[0]
        assert store.evidence_path("q1", RUN1) == [
            {"run": RUN1, "query_id": "q1", "question": "Which paper is linear?", "rank": 1, "chunk_id": _c(a, 3),
             "paper_id": a, "candidate_rank": 1,
             "pooled_by": [{"round": 1, "subquery": 1, "query": "linear attention", "rank": 1, "score": 0.9},
                           {"round": 1, "subquery": 2, "query": "sparse blocks", "rank": 1, "score": 0.75}]},
            {"run": RUN1, "query_id": "q1", "question": "Which paper is linear?", "rank": 2, "chunk_id": _c(a, 5),
             "paper_id": a, "candidate_rank": 1,
             "pooled_by": [{"round": 2, "subquery": 1, "query": "linear attention", "rank": 1, "score": 0.125}]}]

    def test_candidates_say_why_each_paper_is_one(self, stored, records):
        store, _, ids = stored
        refs, neighbours = records[2], records[3]
        a, b, c = ids[:3]
        similar = {n.neighbour_id: (n.rank, n.score) for n in neighbours if n.paper_id == a}
        works = defaultdict(set)
        for r in refs:
            works[r.paper_id].add(r.work_id)
        titles = {p.paper_id: p.title for p in records[0]}

        def row(pid, rank, rank_a, score_a, rank_b, sources, seed_rank, pooled, evidence):
            shared = len(works[a] & works[pid]) if pid != a else 0
            return {"paper_id": pid, "title": titles[pid], "rank": rank, "rank_a": rank_a, "score_a": score_a,
                    "rank_b": rank_b, "sources": sources, "seed_rank": seed_rank,
                    "similar_to_seeds": [{"seed": a, "rank": similar[pid][0], "score": similar[pid][1]}]
                    if pid in similar else [],
                    "coupled_seeds": [{"seed": a, "shared": shared}] if shared else [],
                    "pooled_chunks": pooled, "evidence_chunks": evidence}

        got = store.candidates("q1", RUN1)
        for g in got:
            for s in g["similar_to_seeds"]:
                s["score"] = pytest.approx(s["score"], abs=1e-6)
        assert got == [row(a, 1, 1, 2.0, 1, [], 1, 2, 2),
                       row(c, 2, None, None, 2, [{"source": "coupling", "rank": 2}, {"source": "similar", "rank": 1}],
                           None, 1, 0),
                       row(b, 3, 2, 1.0, None, [], None, 1, 0)]
        assert [r["paper_id"] for r in store.candidates("q1", RUN1, paper_id=c)] == [c]
        assert store.candidates("q1", RUN1, paper_id="not-a-candidate") == []

    def test_supported_by_chunk_and_by_paper(self, stored):
        store, _, ids = stored
        a, b = ids[0], ids[1]
        assert store.supported(_c(a, 5)) == [{"run": RUN1, "query_id": "q1", "question": "Which paper is linear?",
                                              "via": _c(a, 5), "rank": 2}]
        # a paper: the answers that name it, and those citing one of its chunks (best rank per way)
        assert [(r["run"], r["query_id"], r["via"], r["rank"]) for r in store.supported(a)] == [
            (RUN1, "q1", a, 1), (RUN1, "q1", _c(a, 3), 1), (RUN1, "q1", _c(a, 5), 2)]
        assert [(r["run"], r["query_id"], r["via"]) for r in store.supported(b)] == [
            (RUN2, "q1", b), (RUN2, "q1", _c(b, 3)), (RUN2, "q1", _c(b, 5))]
        assert store.supported(ids[2]) == [] and store.supported("nowhere::c0001") == []

    def test_unknown_questions_raise_unknown_id(self, stored):
        store, _, _ = stored
        for call in (lambda: store.question("q9"), lambda: store.evidence_path("q1", "no-such-run"),
                     lambda: store.candidates("q9")):
            with pytest.raises(UnknownIdError):
                call()

    def test_a_rewrite_replaces_and_delete_run_removes_a_whole_run(self, records):
        papers, chunks, refs, neighbours, _ = records
        ids = [p.paper_id for p in papers]
        store = self.make_store(papers, chunks, refs, neighbours)
        try:
            store.delete_run("gone")
            store.write([trace_graph(_line(ids, "q1", "old text"), "gone", "2026-01-01T00:00:01.000000Z")])
            store.write([trace_graph(_line(ids[2:], "q1", "new text"), "gone", "2026-01-01T00:00:02.000000Z")])
            assert [q["text"] for q in store.questions("gone")] == ["new text"]
            assert store.question("q1", "gone")["seeds"] == [ids[2]]
            assert all(r["run"] != "gone" for r in store.supported(_c(ids[0], 3)))  # the old trace's evidence
            assert store.delete_run("gone") == 7
            assert store.questions("gone") == [] and store.delete_run("gone") == 0
            with pytest.raises(UnknownIdError):
                store.question("q1", "gone")
        finally:
            store.close()


class TestEmbeddedTraceStore(TraceStoreContract):
    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _folder(cls, tmp_path_factory):
        cls.factory = tmp_path_factory

    @classmethod
    def make_store(cls, papers, chunks, refs, neighbours):
        from graph.embedded import EmbeddedGraphStore
        from graph.trace import EmbeddedTraceStore

        folder = cls.factory.mktemp("contract-traces")
        EmbeddedGraphStore(folder / "graph.sqlite").load(papers, chunks, refs, neighbours)
        return EmbeddedTraceStore(folder / "traces.sqlite", EmbeddedGraphStore.open(folder / "graph.sqlite"),
                                  own_corpus=True)


class TestNeo4jTraceStore(OnNeo4j, TraceStoreContract):
    @classmethod
    def make_store(cls, papers, chunks, refs, neighbours):
        from graph.neo4j_store import connect
        from graph.neo4j_trace import Neo4jTraceStore

        cls.load_corpus(papers, chunks, refs, neighbours)
        return Neo4jTraceStore(connect(cls.uri))
