"""Embedded graph store and search index on small hand-made records."""

import numpy as np
import pytest

from graph.embedded import EmbeddedGraphStore
from graph.records import Chunk, Paper, Reference, Source
from graph.search.embedded import EmbeddedSearchIndex
from graph.search.embedded_writer import build_index
from graph.search.tokenize import tokenize
from lit3r.index.neighbours import top_k_neighbours
from lit3r.littraceqa.format import evidence_item, source_type
from lit3r.read.scoring import ask_part, named_objects

SRC = Source(file="x.pdf", sha256="0" * 64)


def _refs(pid, works):
    return [Reference(paper_id=pid, number=i, raw=w, work_id=w, cited_paper_id=None) for i, w in enumerate(works, 1)]


@pytest.fixture()
def store(tmp_path):
    papers = [Paper(paper_id=p, title=p, source=SRC, n_pages=1) for p in ("A", "B", "C", "D")]
    chunks = [Chunk(chunk_id=f"{p}::c0000", paper_id=p, kind="title_abstract", page=1, text=f"paper {p}", seq=0)
              for p in "ABCD"]
    refs = _refs("A", ["w1", "w2", "w3", "w4"]) + _refs("B", ["w1", "w2", "w3"]) + _refs("C", ["w1", "w9"]) \
        + _refs("D", ["w2", "w4", "w5", "w6", "w7", "w8"])
    refs.append(Reference(paper_id="D", number=7, raw="A", work_id="paper:A", cited_paper_id="A"))
    vecs = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.6, 0.8]], dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    neighbours = top_k_neighbours(["A", "B", "C", "D"], vecs, 2)
    EmbeddedGraphStore(tmp_path / "g.sqlite").load(papers, chunks, refs, neighbours)
    return EmbeddedGraphStore.open(tmp_path / "g.sqlite")


def test_bibliographic_coupling_by_hand(store):
    # A={w1..w4}; B={w1,w2,w3}: shared 3, Jaccard 3/4; D={w2,w4..w8,paper:A}: shared 2, 2/9; C shares 1 (< 2)
    assert store.coupled_papers("A") == [("B", 0.75, 3), ("D", pytest.approx(2 / 9), 2)]
    assert store.coupled_papers("A", min_shared=3) == [("B", 0.75, 3)]
    assert store.cited_by("A") == ["D"] and store.cites("C") == [(1, "w1", None), (2, "w9", None)]


def test_similar_papers_are_top_k_by_cosine(store):
    sim = store.similar_papers("A")
    assert [p for p, _ in sim] == ["B", "D"] and sim[0][1] == pytest.approx(0.9 / np.hypot(0.9, 0.1))
    with pytest.raises(KeyError):
        store.similar_papers("Z")
    assert [c.chunk_id for c in store.chunks_of("C")] == ["C::c0000"]


def test_bm25_is_lucene_scoring_by_hand(tmp_path):
    texts = ["cat sat", "dog sat down", "cat cat"]
    idx = build_index(tmp_path / "i", ["c1", "c2", "c3"], texts, ["p", "p", "p"], np.eye(3, dtype=np.float32))
    # N=3, df(cat)=2: idf = ln(1 + (3-2+0.5)/(2+0.5)) = ln 1.6; avgdl = 7/3
    idf = np.log(1.6)

    def tf(f, dl):
        return f / (f + 1.5 * (1 - 0.75 + 0.75 * dl / (7 / 3)))

    hits = dict(idx.chunk_bm25("cat", 3))
    assert hits["c1"] == pytest.approx(idf * tf(1, 2), rel=1e-5)
    assert hits["c3"] == pytest.approx(idf * tf(2, 2), rel=1e-5)
    assert idx.chunk_bm25("the", 3) == []  # stop words only
    assert [c for c, _ in idx.chunk_dense(np.array([0, 1, 0], np.float32), 1)] == ["c2"]
    again = EmbeddedSearchIndex.open(tmp_path / "i")
    assert again.chunk_bm25("cat", 3) == idx.chunk_bm25("cat", 3)


def test_tokenizer_keeps_decimals_and_drops_stop_words():
    assert tokenize("The GSM8K accuracy is 80.59%") == ["gsm8k", "accuracy", "80.59"]


def test_evidence_items_use_only_allowed_keys():
    c = Chunk(chunk_id="p::c0001", paper_id="p", kind="text", page=11, section="References",
              object_id="Citation 57", text="[57] x", seq=1)
    assert evidence_item(c) == {"paper_id": "p", "source_type": "citation_context",
                                "locator": {"page": 11, "citation_id": 57, "section": "References"}}
    t = Chunk(chunk_id="p::c0002", paper_id="p", kind="equation", page=3, object_id="Algorithm 1", text="x", seq=2)
    assert source_type(t) == "equation_algorithm" and evidence_item(t)["locator"] == {"page": 3, "algorithm_id": "Algorithm 1"}


def test_reader_question_parsing():
    assert named_objects("Figure 1 of a paper; reference [57]; Eq. (4)") == {"Figure 1", "Citation 57", "Equation 4"}
    assert ask_part("A paper does X. What is Y?") == "What is Y?"
    assert ask_part("What is Y?") == "What is Y?"


def test_incremental_neighbours_equal_a_full_recompute():
    from lit3r.index.neighbours import update_neighbours

    rng = np.random.default_rng(7)
    ids = [f"p{i:03d}" for i in range(120)]
    vecs = rng.standard_normal((120, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)

    def lists(edges):
        out = {}
        for n in edges:
            out.setdefault(n.paper_id, []).append((n.neighbour_id, round(n.score, 5)))
        return out

    k = 5
    old = {p: [(q, s) for q, s in v] for p, v in lists(top_k_neighbours(ids[:100], vecs[:100], k)).items()}
    raw_old = {}
    for n in top_k_neighbours(ids[:100], vecs[:100], k):
        raw_old.setdefault(n.paper_id, []).append((n.neighbour_id, n.score))
    # add 20 papers, re-encode 3, remove 4 (the removed ones' own lists are already gone)
    new_vecs = vecs.copy()
    changed = {"p005", "p050", "p077"} | set(ids[100:])
    for p in ("p005", "p050", "p077"):
        i = ids.index(p)
        new_vecs[i] = rng.standard_normal(16)
        new_vecs[i] /= np.linalg.norm(new_vecs[i])
    removed = {"p010", "p011", "p060", "p099"}
    keep = [i for i, p in enumerate(ids) if p not in removed]
    kept_ids, kept_vecs = [ids[i] for i in keep], new_vecs[keep]
    stored = {p: v for p, v in raw_old.items() if p not in removed}
    affected, edges = update_neighbours(stored, kept_ids, kept_vecs, k, changed)
    merged = {p: v for p, v in stored.items() if p not in affected}
    merged.update({p: [] for p in affected if p in set(kept_ids)})
    for n in edges:
        merged[n.paper_id].append((n.neighbour_id, n.score))
    want = lists(top_k_neighbours(kept_ids, kept_vecs, k))
    assert {p: [(q, round(s, 5)) for q, s in v] for p, v in merged.items()} == want
    assert len(affected) < len(kept_ids)  # the unchanged lists were left alone
    assert old  # the first lists were built
