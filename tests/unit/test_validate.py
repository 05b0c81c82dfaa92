"""Deterministic validation and repair of submission lines (lit3r.littraceqa.validate)."""

from __future__ import annotations

from graph.records import Chunk
from lit3r.littraceqa.metrics import score_question
from lit3r.littraceqa.validate import QuestionSpec, table_rows, validate_line


class Chunks:
    """The one GraphStore method the validator uses, over hand-made records."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.by_paper: dict[str, list[Chunk]] = {}
        for c in chunks:
            self.by_paper.setdefault(c.paper_id, []).append(c)

    def chunks_of(self, paper_id: str) -> list[Chunk]:
        return self.by_paper.get(paper_id, [])


def _c(pid, seq, kind, page, obj=None, section=None):
    return Chunk(chunk_id=f"{pid}::c{seq:04d}", paper_id=pid, kind=kind, page=page, object_id=obj, section=section,
                 text=f"chunk {seq} of {pid}", seq=seq)


GRAPH = Chunks([
    _c("p1", 0, "title_abstract", 1), _c("p1", 1, "text", 3, section="3 Method"),
    _c("p1", 2, "table", 6, "Table 4"), _c("p1", 3, "figure", 7, "Figure 2"), _c("p1", 4, "figure", 8, "Figure 2"),
    _c("p1", 5, "equation", 4, "Equation 3"), _c("p1", 6, "text", 12, "Citation 57", "References"),
    _c("p2", 0, "title_abstract", 1), _c("p2", 1, "table", 5, "Table 1"),
])
SPEC = QuestionSpec("q1", ("freeform", "multiple_choice"), ("A", "B", "C", "D"))


def test_locators_are_rebuilt_from_stored_chunks():
    line = {"query_id": "q1", "gold_papers": [{"paper_id": "p1"}],
            "evidence": [
                {"paper_id": "p1", "source_type": "text_span", "locator": {"page": 6, "table_id": "tab. 4", "row": "x"}},
                {"paper_id": "p1", "source_type": "figure", "locator": {"page": 8, "figure_id": 2}},
                {"paper_id": "p1", "source_type": "text_span", "locator": {"page": 12, "citation_id": "[57]"}},
                {"paper_id": "p1", "source_type": "equation_algorithm", "locator": {"equation_id": "Eq. (3)"}},
                {"paper_id": "p1", "source_type": "text_span", "locator": {"page": 3, "bbox": [1, 2]}},
                {"paper_id": "p1", "source_type": "table", "locator": {"page": 6, "table_id": "Table 4"}},  # duplicate
                {"paper_id": "p1", "source_type": "table", "locator": {"page": 9, "table_id": "Table 9"}},  # no chunk
            ],
            "answer": {"freeform": {"text": "  14.70 "}, "multiple_choice": {"gold": "c"}}}
    out, problems = validate_line(line, SPEC, ["p1", "p2"], GRAPH)
    assert out["evidence"] == [
        {"paper_id": "p1", "source_type": "table", "locator": {"page": 6, "table_id": "Table 4"}},
        {"paper_id": "p1", "source_type": "figure", "locator": {"page": 8, "figure_id": "Figure 2"}},
        {"paper_id": "p1", "source_type": "citation_context",
         "locator": {"page": 12, "citation_id": 57, "section": "References"}},
        {"paper_id": "p1", "source_type": "equation_algorithm", "locator": {"page": 4, "equation_id": "Equation 3"}},
        {"paper_id": "p1", "source_type": "text_span", "locator": {"page": 3, "section": "3 Method"}},
    ]
    assert out["answer"] == {"freeform": {"text": "14.70"}, "multiple_choice": {"gold": "C"}}
    assert any("Table 9" in p and "dropped" in p for p in problems)
    assert any("rebuilt" in p for p in problems)


def test_papers_are_candidates_and_evidence_adds_its_paper():
    line = {"query_id": "q1", "gold_papers": [{"paper_id": "p9"}, {"paper_id": "p1"}, {"paper_id": "p1"}],
            "evidence": [{"paper_id": "p2", "chunk_id": "p2::c0001", "source_type": "text_span", "locator": {}},
                         {"paper_id": "p3", "source_type": "table", "locator": {"page": 1, "table_id": "Table 1"}}],
            "answer": {"multiple_choice": {"gold": "E"}, "table": {"rows": []}}}
    out, problems = validate_line(line, SPEC, ["p1", "p2", "p3"], GRAPH)
    assert out["gold_papers"] == [{"paper_id": "p1"}, {"paper_id": "p2"}]
    assert out["evidence"] == [{"paper_id": "p2", "source_type": "table", "locator": {"page": 5, "table_id": "Table 1"}}]
    assert out["answer"] == {}  # E is not an option; table was not requested; no freeform given
    text = "\n".join(problems)
    for part in ("'p9' is not a candidate", "p2 added", "no stored chunk of p3", "'E'", "'table' was not requested",
                 "no freeform answer"):
        assert part in text


def test_table_rows_follow_the_schema():
    schema = [{"name": "Method", "type": "string", "is_row_key": True},
              {"name": "FID", "type": "number", "is_row_key": False},
              {"name": "Open", "type": "boolean", "is_row_key": False}]
    problems: list[str] = []
    rows = table_rows([{"method": " TCM ", "FID": "2.05%", "Open": "yes", "extra": 1},
                       {"Method": "tcm", "FID": 3},
                       {"Method": "", "FID": 1},
                       {"Method": "sCT", "FID": "n/a", "Open": False},
                       "not a row"], schema, problems)
    assert rows == [{"Method": "TCM", "FID": 2.05, "Open": True}, {"Method": "sCT", "FID": "n/a", "Open": False}]
    assert len(problems) == 5  # extra column, duplicate key, empty key, not a number, not an object


def test_a_repaired_line_scores_like_the_gold_it_matches():
    gold = {"query_id": "q1", "gold_papers": [{"paper_id": "p1"}],
            "evidence": [{"paper_id": "p1", "source_type": "table", "locator": {"page": 6, "table_id": "Table 4"}}],
            "answer": {"multiple_choice": {"options": {"A": "1", "B": "2", "C": "3", "D": "4"}, "gold": "C"}}}
    messy = {"query_id": "q1", "gold_papers": ["p1"],
             "evidence": [{"paper_id": "p1", "source_type": "text_span", "locator": {"page": "6", "table_id": "4"}}],
             "answer": {"multiple_choice": {"gold": " c."}}}
    assert score_question(messy, gold)["evidence_f1"] == 0.0
    clean, _ = validate_line(messy, QuestionSpec("q1", ("multiple_choice",), ("A", "B", "C", "D")), ["p1"], GRAPH)
    s = score_question(clean, gold)
    assert (s["paper_f1"], s["evidence_f1"], s["mc_acc"]) == (1.0, 1.0, 1.0)
