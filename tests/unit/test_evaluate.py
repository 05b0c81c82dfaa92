"""The official LitTraceQA metrics against hand-computed values."""

import json

import pytest

from lit3r.littraceqa.metrics import cell_equal, evaluate, evidence_key, normalize_text, prf, table_scores
from tests.conftest import SHARED

GOLD = {
    "query_id": "q1", "task_family": "f", "primary_evidence_type": "table",
    "gold_papers": [{"paper_id": "A"}, {"paper_id": "B"}],
    "evidence": [{"paper_id": "A", "source_type": "table", "locator": {"page": 6, "table_id": "Table 4", "row": "x"}},
                 {"paper_id": "B", "source_type": "text_span", "locator": {"page": 2, "section": "Intro"}}],
    "answer": {"multiple_choice": {"options": {"A": "1", "B": "2"}, "gold": "B"},
               "freeform": {"text": "14.70"},
               "table": {"schema": [{"name": "paper", "type": "string", "is_row_key": True},
                                    {"name": "value", "type": "number", "is_row_key": False},
                                    {"name": "unit", "type": "string", "is_row_key": False}],
                         "rows": [{"paper": "A", "value": 10.0, "unit": "ms"}, {"paper": "B", "value": 0.5, "unit": "s"}]}},
}


def test_normalisation_rules():
    assert normalize_text('  "Hello   World" ') == "hello world"
    assert evidence_key({"paper_id": "A", "source_type": "table", "locator": {"page": 6, "table_id": "4"}}) == \
        ("A", "table", "6", "table 4")
    assert evidence_key({"paper_id": "A", "source_type": "equation_algorithm",
                         "locator": {"page": 3, "algorithm_id": 2}}) == ("A", "equation_algorithm", "3", "equation 2")
    # text_span: no object id; section counts only without a page; items without location or object drop
    assert evidence_key({"paper_id": "A", "source_type": "text_span", "locator": {"page": 2, "table_id": "T1"}}) == \
        ("A", "text_span", "2", "")
    assert evidence_key({"paper_id": "A", "source_type": "text_span", "locator": {"section": "Intro"}}) == \
        ("A", "text_span", "intro", "")
    assert evidence_key({"paper_id": "A", "source_type": "text_span", "locator": {"row": "x"}}) is None
    assert prf(set(), set()) == (1.0, 1.0, 1.0) and prf(set(), {1}) == (0.0, 0.0, 0.0)
    assert cell_equal("12.5%", 12.5) and not cell_equal("12.6", 12.5) and cell_equal(" Foo ", "foo")


def test_hand_made_submission():
    pred = {"query_id": "q1", "gold_papers": [{"paper_id": "A"}, {"paper_id": "C"}],
            "evidence": [{"paper_id": "A", "source_type": "table", "locator": {"page": 6, "table_id": "Table 4", "column": "y"}},
                         {"paper_id": "A", "source_type": "figure", "locator": {"page": 7, "figure_id": "Figure 1"}},
                         {"paper_id": "B", "source_type": "text_span", "locator": {"page": 2}}],
            "answer": {"multiple_choice": {"gold": "b"}, "freeform": {"text": "'14.70'"},
                       "table": {"rows": [{"paper": "a", "value": "10%", "unit": "MS"}, {"paper": "C", "value": 1}]}}}
    res = evaluate([pred], [GOLD])
    q = res["questions"][0]
    assert (q["paper_p"], q["paper_r"], q["paper_f1"]) == (0.5, 0.5, 0.5)
    # evidence: 2 of 3 predicted keys match (row/column fields ignored; text_span matches on page)
    assert q["evidence_p"] == pytest.approx(2 / 3) and q["evidence_r"] == 1.0
    assert q["evidence_f1"] == pytest.approx(0.8)
    assert q["mc_acc"] == 1.0 and q["freeform_em"] == 1.0
    # rows: keys {a, c} vs {a, b}: P = R = F1 = 0.5; cells: gold rows x 2 non-key columns = 4, 2 right
    assert (q["row_p"], q["row_r"], q["row_f1"]) == (0.5, 0.5, 0.5)
    assert (q["cells_correct"], q["cells_total"], q["cell_acc"]) == (2, 4, 0.5)
    o = res["overall"]
    assert o["overall"] == pytest.approx((0.5 + 0.8 + (1.0 + 0.5 + 0.5) / 3) / 3)


def test_key_only_table_uses_row_f1_and_missing_prediction_scores_zero():
    t = {"schema": [{"name": "title", "type": "string", "is_row_key": True}], "rows": [{"title": "X"}, {"title": "Y"}]}
    s = table_scores([{"title": "x"}], t)
    assert s["row_f1"] == pytest.approx(2 / 3) and s["cell_acc"] == pytest.approx(2 / 3)
    res = evaluate([], [GOLD])
    assert res["overall"]["paper_f1"] == 0.0 and res["missing_predictions"] == ["q1"]


def test_gold_scores_itself_as_one_on_the_validation_set():
    golds = [json.loads(line) for line in (SHARED / "littraceqa" / "validation.jsonl").open()]
    preds = [{"query_id": g["query_id"], "gold_papers": g["gold_papers"], "evidence": g["evidence"],
              "answer": {k: ({"gold": v["gold"]} if k == "multiple_choice" else v) for k, v in g["answer"].items()}}
             for g in golds]
    o = evaluate(preds, golds)["overall"]
    for k in ("paper_f1", "evidence_f1", "mc_acc", "freeform_em", "row_f1", "cell_acc_macro", "cell_acc_micro", "overall"):
        assert o[k] == pytest.approx(1.0), k


def test_candidate_recall_from_traces_by_family(tmp_path):
    from lit3r.littraceqa.metrics import candidate_recall, plot_recall

    golds = [{"query_id": "a", "task_family": "single", "primary_evidence_type": "table",
              "gold_papers": [{"paper_id": "p1"}]},
             {"query_id": "b", "task_family": "multi", "primary_evidence_type": "figure",
              "gold_papers": [{"paper_id": "p1"}, {"paper_id": "p2"}, {"paper_id": "p3"}, {"paper_id": "p4"}]},
             {"query_id": "c", "task_family": "multi", "gold_papers": [{"paper_id": "p9"}]}]
    traces = [{"query_id": "a", "candidates": ["p0", "p1"]},
              {"query_id": "b", "candidates": ["p2", "x", "x", "x", "x", "p3"] + ["y"] * 14 + ["p4"]},
              {"query_id": "zzz", "candidates": ["p9"]}]
    rec = candidate_recall(traces, golds)
    assert rec["by_task_family"]["single"] == {"1": 0.0, "5": 1.0, "10": 1.0, "20": 1.0, "50": 1.0}
    assert rec["by_task_family"]["multi"] == {"1": 0.125, "5": 0.125, "10": 0.25, "20": 0.25, "50": 0.375}
    assert rec["overall"]["50"] == (1.0 + 0.75 + 0.0) / 3
    assert rec["by_evidence_type"]["unknown"]["50"] == 0.0 and rec["missing_traces"] == ["c"]
    png = tmp_path / "recall.png"
    plot_recall({"all": rec["overall"], "multi": rec["by_task_family"]["multi"]}, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_malformed_predictions_score_as_missing_and_are_counted():
    bad_lines = [5, [1, 2], {"no_id": 1}, {"query_id": ["q1"]},
                 {"query_id": "q1", "gold_papers": ["A", {"paper_id": ["x"]}], "evidence": "none",
                  "answer": {"multiple_choice": "B", "freeform": ["x"], "table": {"rows": ["a", {"paper": "a"}]}}},
                 {"query_id": "q1", "gold_papers": [{"paper_id": "A"}]},  # duplicate: the first line counts
                 {"query_id": "zzz"}]
    res = evaluate(bad_lines, [GOLD])
    q = res["questions"][0]
    assert q["paper_f1"] == 0.0 and q["evidence_f1"] == 0.0 and q["mc_acc"] == 0.0 and q["row_p"] == 1.0
    assert res["warnings"] == ["4 prediction line(s) without a string query_id were ignored",
                               "1 duplicate prediction(s) were ignored (the first line counts)",
                               "1 prediction(s) for query ids not in the gold file were ignored"]
    with pytest.raises(ValueError, match="no questions"):
        evaluate([], [])
    with pytest.raises(ValueError, match="gold line 1 has no query_id"):
        evaluate([], [{"paper_id": "x"}])


@pytest.mark.parametrize("page", [float("nan"), float("inf"), -float("inf"), 10**4000, True, "12345678901234"],
                         ids=["nan", "inf", "-inf", "4000-digit", "bool", "long-digits"])
def test_a_page_that_is_no_number_makes_the_item_not_count(page):
    """A non-finite, boolean or absurd page never raises (OverflowError, int digit limit): the
    item scores as missing."""
    assert evidence_key({"paper_id": "A", "source_type": "text_span", "locator": {"page": page}}) is None
    assert evidence_key({"paper_id": "A", "source_type": "table", "locator": {"page": 6.0}}) == ("A", "table", "6", "")


@pytest.mark.parametrize("answer, field", [
    ({"multiple_choice": {}}, "answer.multiple_choice"),
    ({"freeform": "14.70"}, "answer.freeform"),
    ({"table": "a table"}, "answer.table"),
    ({"table": {"schema": [{"name": "a"}], "rows": ["x"]}}, "answer.table.rows"),
    ({"table": {"schema": ["a"], "rows": []}}, "answer.table.schema"),
    ("B", "answer"),
])
def test_a_malformed_gold_answer_names_the_line_and_field(answer, field):
    with pytest.raises(ValueError) as err:
        evaluate([], [GOLD, {**GOLD, "query_id": "q2", "answer": answer}], gold_name="gold.jsonl")
    assert str(err.value) == f'gold gold.jsonl:2: field "{field}": must be ' + str(err.value).split("must be ", 1)[1]
    assert str(err.value).endswith(": fix the line")


def test_a_query_id_twice_in_gold_names_both_lines_and_an_empty_submission_warns():
    with pytest.raises(ValueError, match=r"gold g\.jsonl:2: field \"query_id\": 'q1' is already on line 1"):
        evaluate([], [GOLD, GOLD], gold_name="g.jsonl")
    res = evaluate([], [GOLD])
    assert res["overall"]["overall"] == 0.0 and res["warnings"] == [
        "the submission has no prediction for any gold question: every question scores 0 (pass the JSONL that "
        "`lit3r run` wrote)"]
