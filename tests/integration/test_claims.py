"""Tables read back from real stored table chunks, and options chosen by their evidence, on the
10-paper subset (issue 13)."""

from __future__ import annotations

import pytest

from lit3r.config import load_settings
from lit3r.pipeline.engine import Engine
from lit3r.read import claims
from lit3r.read.tables import parse_table


@pytest.fixture(scope="module")
def engine(subset_home):
    return Engine(load_settings(home=subset_home))


def _table(engine, paper_id, object_id):
    return next(c for c in engine.graph.chunks_of(paper_id) if c.object_id == object_id)


def test_table_rows_cells_and_columns_from_a_stored_chunk(engine):
    t = parse_table(_table(engine, "1706.03762", "Table 2").text)
    rows = {r.key: r.cells for r in t.rows}
    assert rows["Transformer (big)"][:2] == ["28.4", "41.8"]
    assert rows["Transformer (base model)"][:2] == ["27.3", "38.1"]
    assert t.columns[0] == "BLEU EN-DE" and t.columns[3] == "Training Cost (FLOPs) EN-FR"  # a spanning header


def test_row_groups_and_stacked_headers(engine):
    t = parse_table(_table(engine, "2309.06275", "Table 1").text)
    assert t.columns[0] == "GSM"
    chatgpt = [r for r in t.rows if r.group == "ChatGPT"]
    assert [r.key for r in chatgpt] == ["Vanilla", "Vanilla+RE2", "CoT", "CoT+RE2"]  # a centred label spans 4 rows
    assert chatgpt[-1].cells[0].startswith("80.59")
    r1 = parse_table(_table(engine, "2501.12948", "Table 2").text)
    assert [r.key for r in r1.rows] == ["OpenAI-o1-mini", "OpenAI-o1-0912", "DeepSeek-R1-Zero"]  # headers are not rows
    assert r1.columns[1].endswith("cons@64")


def test_a_text_chunk_has_no_table_rows():
    assert parse_table("Table 3: Hyperparameters.\nWe use the settings of prior work.").rows == []


def test_query_terms_acronyms_stems_and_negation():
    q = claims.Query.of("With chain-of-thought prompting, what recall do the participants of its single 7B agent "
                        "(not the ensemble) reach?")
    assert {"cot", "particip", "7b", "recal"} <= q.terms
    assert "ensembl" in q.negated and "ensembl" not in q.terms
    assert claims.terms("CoT+RE2 on GSM8K") >= {"cot", "re", "gsm"}


def test_options_chosen_by_the_cell_that_states_them(engine):
    """The answer is the cell whose row, group and column the question names; its chunk is cited."""
    res = engine.ask("A prompting paper proposes having the LLM read the question a second time before it answers. "
                     "With ChatGPT and chain-of-thought prompting, what GSM8K accuracy is reported once this "
                     "re-reading step is added?", options={"A": "78.77", "B": "79.45", "C": "61.64", "D": "80.59"})
    assert res.read.choice == "D"
    assert res.read.evidence[0].object_id == "Table 1" and res.read.evidence[0].paper_id == "2309.06275"
    assert "80.59" in res.read.freeform


def test_a_result_repeated_in_an_ablation_table_is_cited_from_the_results_table(engine):
    """PaSa reports PaSa-7b's RealScholarQuery recall in its results table (Table 6, p8) and
    again in its ablation table (Table 8, p10): the results table is the evidence."""
    res = engine.ask("For the paper-search agent with a Crawler and a Selector, what recall does the single PaSa-7b "
                     "reach on RealScholarQuery?", options={"A": "0.4834", "B": "0.6111", "C": "0.6488"})
    assert res.read.choice == "B"
    first = res.read.evidence[0]
    assert (first.paper_id, first.object_id, first.page) == ("2501.10120", "Table 6", 8)


def test_no_letter_when_no_option_is_stated(engine):
    res = engine.ask("What GSM8K accuracy does re-reading reach with ChatGPT?",
                     options={"A": "12345.6", "B": "65432.1"})
    assert res.read.choice is None and "multiple_choice" not in res.submission()["answer"]
    assert any("no option is supported" in n for n in res.read.notes)


@pytest.mark.parametrize("question", ["What is the recommended dosage of ibuprofen for children?", "x",
                                      "Who won the 2018 FIFA World Cup final?"])
def test_off_topic_questions_abstain_with_a_valid_line(engine, question):
    res = engine.ask(question, options={"A": "yes", "B": "no"})
    line = res.submission()
    assert res.read.papers == [] and line["gold_papers"] == [] and line["evidence"] == []
    assert line["answer"]["freeform"]["text"].startswith("no supporting evidence in this corpus")
    assert "multiple_choice" not in line["answer"]


def test_corpus_questions_do_not_abstain(engine):
    for q in ("What does Linformer reduce the complexity of self-attention to?", "What is BigBird?"):
        assert engine.ask(q).read.papers, q


def test_abstention_prints_one_line_and_exits_0(subset_home):
    from click.testing import CliRunner

    from lit3r.cli import main

    res = CliRunner().invoke(main, ["--home", str(subset_home), "ask", "How do I bake sourdough bread at home?"])
    assert res.exit_code == 0 and res.output.startswith("no supporting evidence in this corpus for: How do I bake")
    bad = CliRunner().invoke(main, ["--home", str(subset_home), "ask", "q?", "--option", "A=yes"])
    assert bad.exit_code == 1 and "at least two options" in bad.output


def test_table_answer_reads_the_named_rows_of_one_table_block(engine):
    """docs/USAGE.md's example: the rows the question names, their cells from one block of the
    stored Table 1 (not paper titles, not a mix of the two LLMs' blocks)."""
    schema = [{"name": "Method", "type": "string", "is_row_key": True}, {"name": "GSM8K", "type": "number"}]
    res = engine.ask("What are the GSM8K accuracies of CoT and CoT+RE2?", table_schema=schema)
    rows = {r["Method"]: r["GSM8K"] for r in res.submission()["answer"]["table"]["rows"]}
    assert rows in ({"CoT": 58.98, "CoT+RE2": 61.64}, {"CoT": 78.77, "CoT+RE2": 80.59})
