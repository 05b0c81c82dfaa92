"""The seed paper's formulas against hand-computed values."""

import pytest

from lit3r.littraceqa.metrics import recall_at_k
from lit3r.pipeline.fusion import (
    fuse_ab,
    jaccard,
    papers_by_best_chunk,
    prf_query,
    relate_ranking,
    rerank_blend,
    round_robin,
    rrf,
    rrf_scores,
)
from lit3r.pipeline.pool import Pool


def test_rrf_scores_by_hand():
    s = rrf_scores([["a", "b", "c"], ["b", "a"]], k=60)
    assert s["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert s["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert s["c"] == pytest.approx(1 / 63)
    assert rrf([["a", "b", "c"], ["b", "a"]]) == ["a", "b", "c"]  # tie a/b: first appearance


def test_rrf_weights_and_k():
    s = rrf_scores([["a"], ["b"]], k=10, weights=[2.0, 1.0])
    assert s == {"a": pytest.approx(2 / 11), "b": pytest.approx(1 / 11)}
    with pytest.raises(ValueError):
        rrf_scores([["a"]], weights=[1, 2])


def test_three_lane_fusion_example():
    bm25, paper_bm25, dense = ["p1", "p2", "p3"], ["p2", "p1"], ["p3", "p2"]
    s = rrf_scores([bm25, paper_bm25, dense])
    assert s["p2"] == pytest.approx(1 / 62 + 1 / 61 + 1 / 62)  # 0.048650
    assert rrf([bm25, paper_bm25, dense])[0] == "p2"


def test_papers_by_best_chunk():
    assert papers_by_best_chunk(["c1", "c2", "c3", "c4"], {"c1": "A", "c2": "B", "c3": "A", "c4": "C"}) == ["A", "B", "C"]


def test_round_robin():
    assert round_robin([["a", "b", "c"], ["d", "a", "e"], ["f"]]) == ["a", "d", "f", "b", "c", "e"]
    assert round_robin([["s", "x"], ["y"]], exclude={"s"}) == ["y", "x"]


def test_prf_query():
    assert prf_query("q", "T  abstract\ntext", chars=10) == "q T abstract"


def test_rerank_blend_by_hand_and_pin():
    retrieval = ["c1", "c2", "c3"]
    rr = {"c1": 0.1, "c2": 0.9, "c3": 0.5}  # reranker ranks: c2=1, c3=2, c1=3
    out = dict(rerank_blend(retrieval, rr, pin=3))
    assert out["c1"] == pytest.approx(0.6 / 61 + 0.4 / 63)
    assert out["c2"] == pytest.approx(0.6 / 62 + 0.4 / 61)
    assert out["c3"] == pytest.approx(0.6 / 63 + 0.4 / 62)
    # pin=1: c1 stays first although c2 has the higher blended score
    order = [c for c, _ in rerank_blend(retrieval, rr, pin=1)]
    assert order == ["c1", "c2", "c3"]
    order = [c for c, _ in rerank_blend(retrieval, rr, pin=3)]
    assert order == ["c2", "c1", "c3"]  # 0.016236 > 0.016185 > 0.015975


def test_pool_keeps_max_and_ranking_a():
    pool = Pool({"c1": "A", "c2": "B", "c3": "A"})
    assert pool.add([("c1", 0.2), ("c2", 0.5)]) == 2
    assert pool.add([("c1", 0.4), ("c2", 0.1), ("c3", 0.3)]) == 1
    assert pool.scores == {"c1": 0.4, "c2": 0.5, "c3": 0.3}
    assert pool.ranking_a() == [("B", 0.5), ("A", 0.4)]
    assert pool.chunks_of("A") == [("c1", 0.4), ("c3", 0.3)]


def test_relate_ranking_and_ab_fusion():
    b = relate_ranking({"sim": ["x", "y"], "coupling": ["y", "z"], "bm25": ["y"]}, seeds=["s"], k=60, keep=3)
    assert b == ["s", "y", "x"]  # y: 1/62+1/61+1/61
    fused = fuse_ab(["a", "s"], ["s", "y"], k=10, top=3)
    # s: 1/12 + 1/11 = 0.1742; a: 1/11 = 0.0909; y: 1/12 = 0.0833
    assert fused == ["s", "a", "y"]


def test_jaccard_and_recall():
    assert jaccard({1, 2, 3}, {2, 3, 4}) == 0.5
    assert jaccard(set(), set()) == 0.0
    assert recall_at_k(["a", "b", "c"], ["c", "d"], 2) == 0.0
    assert recall_at_k(["a", "b", "c"], ["c", "d"], 3) == 0.5
