"""The trace-graph builder (hand-made trace, hand-computed graph), the Browser guide template and
the GraSS style. The stores and the guide's queries run against real data and a real Neo4j in
tests/integration/test_trace_graph.py."""

from __future__ import annotations

import re

import pytest

from graph.cypher import names, statement
from graph.trace import EDGE_TYPES, LABELS
from lit3r.cli.browser import asset, guide_queries, render_guide
from lit3r.errors import InputError
from lit3r.traces.trace_graph import ask_run_name, read_trace_lines, run_name, trace_graph

TRACE = {
    "question": "Which method is linear?",
    "rounds": [{"round": 1, "subqueries": ["q one", "q two"], "verdict": {"ok": True}, "pool_size": 3},
               {"round": 2, "subqueries": ["q one"], "verdict": None, "pool_size": 4}],
    "subqueries": [{"query": "q one", "prf_query": "q one +", "pooled_chunks": [["A::c0001", 0.5], ["B::c0000", 0.25]]},
                   {"query": "q two", "prf_query": "", "pooled_chunks": [["A::c0001", 0.75]]},
                   {"query": "q one", "prf_query": "again", "pooled_chunks": [["C::c0002", 0.125]]}],
    "ranking_a": [["A", 2.0], ["B", 1.0]],
    "ranking_b": ["A", "C"],
    "relate_sources": {"similar": ["C", "D"], "coupling": ["B", "C"], "paper_bm25": []},
    "seeds": ["A"],
    "answer": {"query_id": "q7", "gold_papers": [{"paper_id": "A"}],
               "answer": {"freeform": {"text": "Linear attention."}}},
    "evidence_chunks": ["A::c0001", "A::c0001"],
    "reader": {"name": "extractive"},
    "validation": [],
}


def test_trace_graph_holds_every_part_of_the_trace():
    g = trace_graph({"query_id": "q7", "trace": TRACE, "candidates": ["A", "C", "B"]}, "sub", "2026-01-01T00:00:00Z")
    assert g.key == "sub/q7"
    labels = {n.key: n.label for n in g.nodes}
    assert labels == {"sub/q7": "Question", "sub/q7/r1": "Round", "sub/q7/r1/s1": "Subquery", "sub/q7/r1/s2": "Subquery",
                      "sub/q7/r2": "Round", "sub/q7/r2/s1": "Subquery", "sub/q7/answer": "Answer"}
    assert all(n.props["run"] == "sub" and n.props["question"] == "sub/q7" for n in g.nodes)
    edges = {(e.src, e.type, e.dst): e.props for e in g.edges}
    # the second "q one" (round 2) takes the second subquery trace of that text
    assert edges[("sub/q7/r1/s1", "POOLED", "B::c0000")] == {"rank": 2, "score": 0.25}
    assert edges[("sub/q7/r2/s1", "POOLED", "C::c0002")] == {"rank": 1, "score": 0.125}
    assert ("sub/q7/r2/s1", "POOLED", "A::c0001") not in edges
    # A: in A (1), B (1), final 1, a seed; C: only B (2) and final 2, brought by similar (1) and coupling (2);
    # B: A (2) and final 3; its coupling entry is not Ranking B, so no RELATED edge
    assert edges[("sub/q7", "CANDIDATE", "A")] == {"rank": 1, "rank_a": 1, "score_a": 2.0, "rank_b": 1, "sources": []}
    assert edges[("sub/q7", "CANDIDATE", "C")] == {"rank": 2, "rank_a": None, "score_a": None, "rank_b": 2,
                                                  "sources": ["coupling", "similar"]}
    assert edges[("sub/q7", "CANDIDATE", "B")]["rank_b"] is None
    assert sorted((e.dst, e.props["source"], e.props["rank"]) for e in g.edges if e.type == "RELATED") == [
        ("C", "coupling", 2), ("C", "similar", 1)]
    assert edges[("sub/q7", "SEED", "A")] == {"rank": 1}
    supported = sorted((d, p["kind"]) for (s, t, d), p in edges.items() if t == "SUPPORTED_BY")
    assert supported == [("A", "paper"), ("A::c0001", "chunk")]  # the repeated evidence chunk once
    answer = next(n for n in g.nodes if n.label == "Answer")
    assert answer.props["text"] == "Linear attention." and answer.props["papers"] == ["A"]
    assert {n.label for n in g.nodes} <= set(LABELS) and {e.type for e in g.edges} <= set(EDGE_TYPES)


def test_old_traces_are_refused_with_the_fix(tmp_path):
    old = {k: v for k, v in TRACE.items() if k != "ranking_a"}
    with pytest.raises(InputError, match="'ranking_a'.*lit3r run"):
        trace_graph({"query_id": "q", "trace": old}, "r")
    f = tmp_path / "sub.jsonl.traces.jsonl"
    f.write_text('{"query_id": "a", "trace": {}}\n{"query_id": "b", "error": "boom"}\nnot json\n')
    with pytest.raises(InputError, match=":3: not valid JSON"):
        read_trace_lines(f)
    f.write_text('{"query_id": "a", "trace": {}}\n{"query_id": "b", "error": "boom"}\n')
    lines, failed = read_trace_lines(f)
    assert [x["query_id"] for x in lines] == ["a"] and failed == ["b"]
    assert run_name(f) == "sub" and run_name(tmp_path / "x.traces.jsonl") == "x"


def test_guide_marks_are_named_statements_and_all_filled():
    marks = set(re.findall(r"\{\{([a-z_]+)\}\}", asset("guide.html"))) - {"style_url"}
    assert marks and marks <= set(names())
    page = render_guide("http://127.0.0.1:1/lit3r.grass")
    assert "{{" not in page and page.count("<slide") == 5
    queries = guide_queries(page)
    assert ":style http://127.0.0.1:1/lit3r.grass" in queries
    for name in marks:  # the guide runs the named statements exactly
        assert statement(name) in queries
    assert any("<-[:CITES]-" in q for q in queries)  # unescaped back from the HTML


def test_style_covers_the_lit3r_labels():
    grass = asset("lit3r.grass")
    rules = dict(re.findall(r"node\.(\w+) \{(.*?)\}", grass, re.S))
    for label in ("Paper", "Work", "Author", "Chunk", "TextChunk", "TableChunk", "FigureChunk", "EquationChunk",
                  "TitleAbstractChunk", "Question", "Answer", "Round", "Subquery"):
        assert "color:" in rules[label] and "caption:" in rules[label], label
    assert len({re.search(r"\bcolor: (#\w+)", rules[k]).group(1) for k in
                ("TextChunk", "TableChunk", "FigureChunk", "EquationChunk", "TitleAbstractChunk")}) == 5


def test_malformed_traces_and_run_names_are_one_line_errors():
    """Bad-input trial (issue 15): wrong-typed fields were tracebacks; a run name with "/" made
    two questions share one key and one was lost."""
    import pytest

    from lit3r.errors import InputError
    from lit3r.traces.trace_graph import trace_graph

    with pytest.raises(InputError, match="wrong shape"):
        trace_graph({"query_id": "q1", "trace": {k: None for k in (
            "question", "rounds", "subqueries", "ranking_a", "ranking_b", "relate_sources", "seeds",
            "evidence_chunks")}}, "run1")
    with pytest.raises(InputError, match="holds '/'"):
        trace_graph({"query_id": "c1", "trace": {}}, "a/b")
    with pytest.raises(InputError, match='needs a string "query_id"'):
        trace_graph({"query_id": 5, "trace": {}}, "run1")


def test_a_trace_is_drawn_with_its_candidates_and_evidence(tmp_path):
    """`lit3r graph trace QUERY_ID --png`: the Question, its candidates (final and A/B ranks) and
    the answer's evidence chunks under their papers; the PNG is written and not blank."""
    from matplotlib.image import imread

    from lit3r.present.draw import trace_graph, write_png

    view = {"question": {"query_id": "q1", "run": "r", "text": "How does ALiBi bias attention?",
                         "answer": {"papers": ["2108.12409"]}},
            "candidates": [{"paper_id": "2108.12409", "title": "Train Short, Test Long", "rank": 1, "rank_a": 1,
                            "rank_b": 1},
                           {"paper_id": "1706.03762", "title": "Attention Is All You Need", "rank": 2, "rank_a": None,
                            "rank_b": 3}],
            "evidence_path": [{"rank": 1, "chunk_id": "2108.12409::c0007", "paper_id": "2108.12409"}]}
    g = trace_graph(view)
    assert {g.nodes[n]["role"] for n in g} == {"question", "answer_paper", "candidate", "evidence"}
    assert [d["label"] for _, v, d in g.edges(data=True) if v == "1706.03762"] == ["#2 (A/B -/3)"]
    assert g.has_edge("2108.12409", "2108.12409::c0007")
    png = write_png(g, tmp_path / "t.png", "trace")
    pixels = imread(png)
    assert pixels.shape[0] >= 800 and (pixels[..., :3] < 0.9).any(axis=-1).mean() > 0.01


def test_a_garbage_trace_store_is_named_damaged_with_a_fix_that_keeps_it(tmp_path):
    """A traces.sqlite that is not a database is "damaged: move it aside", on write and on read
    (not "make the data folder writable", which is writable; not the corpus index)."""
    from graph.trace import EmbeddedTraceStore, TraceStoreError

    path = tmp_path / "traces.sqlite"
    path.write_bytes(bytes(range(256)) * 200)
    store = EmbeddedTraceStore(path, corpus=None)  # type: ignore[arg-type]
    for call in (lambda: store.questions(), lambda: store.write([])):
        with pytest.raises(TraceStoreError) as err:
            call()
        assert str(err.value) == (f"the trace store {path} is damaged (file is not a database): move it aside "
                                  f"(`mv {path} {path}.bad`); the next `lit3r ask` or `lit3r trace load` starts a "
                                  f"new one")
    assert path.read_bytes() == bytes(range(256)) * 200  # kept as it was


def test_two_asks_in_the_same_second_are_two_runs():
    """Each `lit3r ask` stores its trace under its own run: a name to the second alone made the
    second ask of that second overwrite the first's trace."""
    names = {ask_run_name() for _ in range(50)}
    assert len(names) == 50
    assert all(re.fullmatch(r"ask-\d{8}T\d{6}Z-[0-9a-f]{6}", n) for n in names), names
