"""Ids and labels written back by a model, replayed from what Qwen2.5-Coder-1.5B wrote (issue 14,
item 3): brackets, whole headers, near-miss ids."""

from lit3r.llm.labels import Resolver

PAPERS = ["2006.16236", "2007.14062", "2502.02508", "2501.12948"]


def test_bracketed_ids_and_whole_headers_resolve():
    r = Resolver(PAPERS)
    got = r.resolve_all(["[2006.16236]", "[2007.14062] Big Bird: Transformers for Longer Sequences (NeurIPS 2020)",
                         "2007.14062", " 2501.12948 "])
    assert got == ["2006.16236", "2007.14062", "2501.12948"] and r.notes == []


def test_a_near_miss_is_resolved_and_reported_an_unknown_id_dropped_and_reported():
    r = Resolver(PAPERS)
    assert r.resolve_all(["2501.02508", "1234.56789", 7]) == ["2502.02508"]
    assert r.notes == ["'2501.02508' read as '2502.02508' (one character apart)",
                       "'1234.56789' is not one of the listed ids: dropped"]


def test_passage_labels():
    r = Resolver(["E1", "E2", "E3"])
    assert r.resolve_all(["[E1]", "E3", "(E2)", "E9"]) == ["E1", "E3", "E2"]
    assert r.notes == ["'E9' is not one of the listed ids: dropped"]  # short labels: no near-miss guess
