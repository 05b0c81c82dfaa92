"""Decomposition and worked examples, replayed from what Qwen2.5-Coder-1.5B wrote (issue 14,
items 6 and 8): subqueries beyond the count asked for, one-word named entities, vague queries,
repeats across rounds, copies of the prompt's example; the question's own chunks anchored in the
pool; prompts whose reply shapes hold placeholders only."""

import re

import pytest

from lit3r.pipeline.pool import Pool
from lit3r.pipeline.retrieve import clean_subqueries, question_entities, subqueries_model
from lit3r.prompts import echoes_example, example_values, is_placeholder, template

Q = ("A prompting paper proposes simply having the LLM read the question a second time before it answers. "
     "With ChatGPT and chain-of-thought prompting, what GSM8K accuracy is reported, and how does Codex do?")

#: Round 1 as the 1.5B model wrote it for a question like Q: 7 queries when 4 were asked for.
OBSERVED_ROUND_1 = ["GSM8K", "Codex", "full method", "cited papers", "re-reading the question prompting",
                    "Re-reading the questions prompting", "chain-of-thought prompting ChatGPT accuracy table",
                    "read the question twice reasoning"]


def test_named_entities_of_the_question():
    assert question_entities(Q) == {"llm", "chatgpt", "gsm8k", "codex"}
    assert question_entities("Which paper uses GPT-4 and LLaMA on BLEU?") == {"gpt", "llama", "bleu"}
    assert question_entities("Sparse attention. Which paper?") == set()  # sentence starts are not names


def test_round_one_keeps_entities_drops_vague_and_repeats_and_caps_the_count():
    kept, notes = clean_subqueries(OBSERVED_ROUND_1, Q, None, {Q}, 4, "decompose_first")
    assert kept == ["GSM8K", "Codex", "re-reading the question prompting",
                    "chain-of-thought prompting ChatGPT accuracy table"]
    assert notes == ["subquery 'full method' is vague (names no particular thing): dropped",
                     "subquery 'cited papers' is vague (names no particular thing): dropped",
                     "subquery 'Re-reading the questions prompting' repeats an earlier query: dropped",
                     "subquery 'read the question twice reasoning' is beyond the 4 asked for: dropped"]


def test_later_rounds_drop_repeats_of_earlier_rounds_after_normalising():
    seen = {Q, "[ACL 2020] GSM8K", "[ACL 2020] re-reading the question prompting"}
    kept, notes = clean_subqueries(["gsm8k", "Re-Reading  the Question, prompting!", "  ", "<query>",
                                    "Codex pass@1 HumanEval"], Q, "[ACL 2020]", seen, 4, "decompose_next")
    assert kept == ["[ACL 2020] Codex pass@1 HumanEval"]
    assert [n.split("'")[1] for n in notes] == ["gsm8k", "Re-Reading the Question, prompting!", "<query>"]
    assert "repeats an earlier query" in notes[0] and "reply shape" in notes[2]


def test_the_question_itself_is_not_searched_twice():
    kept, notes = clean_subqueries([Q.upper()], Q, None, {Q}, 4, "decompose_first")
    assert kept == [] and "repeats" in notes[0]


def test_the_reply_schema_caps_the_list_at_the_count_asked_for():
    schema = subqueries_model(4).model_json_schema()
    assert schema["properties"]["subqueries"]["maxItems"] == 4  # a grammar-constrained backend stops there
    # an endpoint that ignores the schema: all 8 are validated, the cap comes after the filter
    assert len(subqueries_model(4).model_validate({"subqueries": OBSERVED_ROUND_1}).subqueries) == 8


def test_the_questions_own_papers_stay_first_in_ranking_a():
    paper_of = {"q1": "A", "q2": "B", "q3": "C", "s1": "X", "s2": "Y", "s3": "B"}
    pool = Pool(paper_of)
    pool.add([("q1", 0.0164), ("q2", 0.0150), ("q3", 0.0130)], anchor=True)
    # a vague subquery's chunks score as high as the question's own (equal weight in the blend)
    pool.add([("s1", 0.0164), ("s2", 0.0160), ("s3", 0.0163)])
    assert [p for p, _ in pool.ranking_a()] == ["A", "B", "C", "X", "Y"]
    assert dict(pool.ranking_a())["B"] == 0.0163  # the paper's score is still its best pooled chunk's
    plain = Pool(paper_of)
    plain.add([("q1", 0.0164), ("q2", 0.0150), ("q3", 0.0130), ("s1", 0.0164), ("s2", 0.0160)])
    assert [p for p, _ in plain.ranking_a()] == ["A", "X", "Y", "B", "C"]  # no anchor: by best score


PHRASES_COPIED = ["P2", "P5", "3e-4", "learning rate (Adam)", "gated sparse convolution", "31.4", "p_17"]


@pytest.mark.parametrize("name", ["read_paper", "synthesize", "decompose_first", "decompose_next", "verify"])
def test_worked_examples_are_placeholders_only(name):
    """Issue 14, item 6: the invented examples that were copied are gone, and every value of a
    reply shape is a placeholder that no passage, id or query can be mistaken for."""
    text = template(name).template
    assert not [p for p in PHRASES_COPIED if re.search(rf"(?<![\w$]){re.escape(p)}(?!\w)", text)]
    assert "Reply shape" in text and example_values(name)
    assert all(is_placeholder(v) for v in example_values(name))


def test_copies_of_the_reply_shape_are_recognised():
    assert echoes_example("read_paper", "<passage label>") and echoes_example("read_paper", "[<passage label>]")
    assert echoes_example("synthesize", "<Answer>") and echoes_example("decompose_first", " <query> ")
    assert not echoes_example("read_paper", "P2") and not echoes_example("synthesize", "80.59")
    assert not echoes_example("read_paper", 3.0) and not is_placeholder("a < b and c > d")
