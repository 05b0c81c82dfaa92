"""The SearchIndex contract: one suite that the embedded index and OpenSearch (a real server)
both pass. Each implementation class provides ``make_index(chunks, vectors)``: an index that
holds exactly these chunks (written through the implementation's own load path). Expectations
come from the records and vectors of the hand-made corpus (:mod:`tests.contract.corpus`: hashing
encoder vectors), not from either implementation.
"""

from __future__ import annotations

import numpy as np
import pytest

from graph.search.tokenize import tokenize

K1, B = 1.2, 0.75


def _distinctive(chunks, n=6):
    """Chunks whose text is long and unique enough to be found by its own words."""
    seen, out = set(), []
    for c in chunks:
        key = " ".join(tokenize(c.text)[:40])
        if c.kind == "text" and len(tokenize(c.text)) >= 60 and key not in seen:
            seen.add(key)
            out.append(c)
    step = max(1, len(out) // n)
    return out[::step][:n]


class SearchIndexContract:
    """The shared tests; subclasses implement :meth:`make_index`."""

    @classmethod
    def make_index(cls, chunks, vectors):
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def index(cls, records):
        _, chunks, _, _, vectors = records
        return cls.make_index(chunks, vectors)

    def test_dimension(self, index, records):
        assert index.dim == records[4].shape[1]

    def test_chunk_bm25_finds_a_chunk_by_its_own_words(self, index, records):
        for c in _distinctive(records[1]):
            hits = index.chunk_bm25(" ".join(tokenize(c.text)[:40]), 10)
            assert hits and hits[0][0] == c.chunk_id
            scores = [s for _, s in hits]
            assert scores == sorted(scores, reverse=True) and len(hits) <= 10

    def test_bm25_of_a_query_without_terms_is_empty(self, index):
        assert index.chunk_bm25("", 10) == [] and index.chunk_bm25("the of and", 10) == []
        assert index.paper_bm25("", 10) == []

    def test_bm25_respects_k(self, index):
        assert len(index.chunk_bm25("attention model", 3)) == 3
        assert len(index.paper_bm25("attention model", 2)) == 2

    def test_paper_bm25_ranks_the_paper_of_the_words_first(self, index, records):
        papers = {c.paper_id for c in records[1]}
        for c in _distinctive(records[1]):
            hits = index.paper_bm25(" ".join(tokenize(c.text)[:40]), 5)
            assert hits[0][0] == c.paper_id and {p for p, _ in hits} <= papers

    def test_dense_search_finds_a_chunk_by_its_vector(self, index, records):
        chunks, vectors = records[1], records[4]
        for i in range(0, len(chunks), max(1, len(chunks) // 8)):
            hits = index.chunk_dense(vectors[i], 5)
            ids = [h for h, _ in hits]
            # duplicated texts (e.g. repeated headers) share a vector: the chunk is among the ties
            assert chunks[i].chunk_id in ids or np.isclose(hits[0][1], 1.0, atol=1e-3)
            assert hits[0][1] == pytest.approx(1.0, abs=1e-3)

    def test_dense_many_equals_one_by_one(self, index, records):
        vectors = records[4][::97][:5]
        many = index.chunk_dense_many(vectors, 7)
        assert len(many) == len(vectors)
        for v, hits in zip(vectors, many):
            one = index.chunk_dense(v, 7)
            assert [h for h, _ in hits] == [h for h, _ in one]
            assert [s for _, s in hits] == pytest.approx([s for _, s in one], abs=1e-5)
        assert index.chunk_dense_many(vectors[:0], 7) == []

    def test_vectors_by_id_in_the_asked_order(self, index, records):
        chunks, vectors = records[1], records[4]
        pick = list(range(0, len(chunks), 13))[::-1]
        got = index.vectors_of([chunks[i].chunk_id for i in pick])
        assert got.dtype == np.float32 and got.shape == (len(pick), vectors.shape[1])
        assert np.array_equal(got, vectors[pick])
        assert index.vectors_of([]).shape[0] == 0
        with pytest.raises(KeyError):
            index.vectors_of([chunks[0].chunk_id, "nope::c0000"])

    def test_paper_head_is_the_start_of_the_paper_text(self, index, records):
        chunks = records[1]
        pid = chunks[0].paper_id
        text = "\n".join(c.text for c in sorted((c for c in chunks if c.paper_id == pid), key=lambda c: c.seq))
        assert index.paper_head(pid, 300) == text[:300]
        with pytest.raises(KeyError):
            index.paper_head("no-such-paper", 100)

    def test_snapshot_is_reentrant(self, index, records):
        v = records[4][0]
        with index.snapshot():
            with index.snapshot():
                a = index.chunk_dense(v, 3)
            b = index.chunk_dense(v, 3)
        assert [h for h, _ in a] == [h for h, _ in b]

    def test_reloading_without_a_paper_removes_its_chunks(self, records):
        chunks, vectors = records[1], records[4]
        gone = chunks[-1].paper_id
        keep = [i for i, c in enumerate(chunks) if c.paper_id != gone]
        index = self.make_index([chunks[i] for i in keep], vectors[keep])
        mine = next(i for i, c in enumerate(chunks) if c.paper_id == gone)
        assert all(h != chunks[mine].chunk_id for h, _ in index.chunk_dense(vectors[mine], 20))
        assert gone not in {p for p, _ in index.paper_bm25(chunks[mine].text, 10)}
        with pytest.raises(KeyError):
            index.vectors_of([chunks[mine].chunk_id])
        with pytest.raises(KeyError):
            index.paper_head(gone, 10)
        index = self.make_index(chunks, vectors)
        assert index.vectors_of([chunks[mine].chunk_id]).shape == (1, vectors.shape[1])


class TestEmbeddedSearchIndex(SearchIndexContract):
    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _folder(cls, tmp_path_factory):
        cls.factory = tmp_path_factory

    @classmethod
    def make_index(cls, chunks, vectors):
        from graph.search.embedded_writer import build_index

        folder = cls.factory.mktemp("contract-index")
        return build_index(folder, [c.chunk_id for c in chunks], [c.text for c in chunks],
                           [c.paper_id for c in chunks], vectors, k1=K1, b=B)


class TestOpenSearchIndex(SearchIndexContract):
    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _server(cls, servers):
        cls.url = servers[1].url

    @classmethod
    def make_index(cls, chunks, vectors):
        from graph.search.opensearch import OpenSearchIndex, make_client

        OpenSearchIndex(make_client(cls.url), "contract").load(chunks, vectors, K1, B, encoder="test-encoder")
        return OpenSearchIndex.open(make_client(cls.url), "contract")

    def test_the_encoder_is_recorded_with_the_index(self, index):
        assert index.encoder == "test-encoder"

    def test_a_reload_leaves_no_duplicate_documents(self, index, records):
        chunks = records[1]
        self.make_index(chunks, records[4])
        assert index.count() == {"chunks": len(chunks), "papers": len({c.paper_id for c in chunks})}
