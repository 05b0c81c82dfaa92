"""Round control of the Retrieve step with a scripted LLM over the real 10-paper subset."""

from __future__ import annotations

import json

import pytest

from lit3r.config import load_settings
from lit3r.errors import LLMError
from lit3r.llm.client import Reply, StructuredLLM
from lit3r.pipeline.engine import Engine
from lit3r.pipeline.retrieve import venue_year


class ScriptedLLM:
    """Answers decomposition and verification prompts from scripts (by prompt kind)."""

    name = "scripted"
    supports_images = False

    def __init__(self, decompositions, verdicts):
        self.decompositions = list(decompositions)
        self.verdicts = list(verdicts)
        self.prompts = []

    def chat(self, messages, schema, max_tokens, temperature):
        text = messages[-1]["content"]
        self.prompts.append(text)
        script = self.verdicts if "evidence_papers" in text else self.decompositions
        step = script.pop(0)
        if isinstance(step, Exception):
            raise step
        return Reply(json.dumps(step), 100, 20)


@pytest.fixture(scope="module")
def base(subset_home):
    return Engine(load_settings(home=subset_home))


def _engine(base, chat):
    """An engine over the same corpus and encoder with the scripted LLM injected (the tests stop
    after Relate: the scripts answer Retrieve's prompts only)."""
    return Engine(base.settings, encoder=base.encoder.encoder, llm=StructuredLLM(chat, backoff=0))


Q = "Which attention mechanism makes Transformers handle longer sequences with sparse attention?"


def test_stops_when_the_verifier_is_satisfied(base):
    chat = ScriptedLLM([{"subqueries": ["big bird sparse attention", "random window global attention"]}],
                       [{"evidence_papers": ["2007.14062", "nope"], "sufficient": True, "missing": ""}])
    res = _engine(base, chat).ask(Q, answer=False)
    assert len(res.rounds) == 1 and res.rounds[0].subqueries == [Q, "big bird sparse attention",
                                                                  "random window global attention"]
    assert res.relate.seeds[0] == "2007.14062" and "nope" not in res.relate.seeds  # verified, known ids only
    assert res.usage.calls == 2 and res.usage.prompt_tokens == 200
    verify_prompt = chat.prompts[1]
    assert "[2007.14062]" in verify_prompt and "page" in verify_prompt


def test_three_rounds_at_most_with_the_missing_note(base):
    chat = ScriptedLLM([{"subqueries": ["a1 attention"]}, {"subqueries": ["b1 linear attention"]},
                        {"subqueries": ["c1 reasoning"]}],
                       [{"evidence_papers": [], "sufficient": False, "missing": "the complexity table"}] * 3)
    res = _engine(base, chat).ask(Q, answer=False)
    assert [r.round for r in res.rounds] == [1, 2, 3]
    assert "the complexity table" in chat.prompts[2] and "- a1 attention" in chat.prompts[2]
    assert len(res.subqueries) == 4 and len(chat.prompts) == 6


def test_no_new_subquery_stops_and_empty_note_asks_for_another_angle(base):
    chat = ScriptedLLM([{"subqueries": ["x attention"]}, {"subqueries": ["x attention"]}],
                       [{"evidence_papers": [], "sufficient": False, "missing": ""}])
    res = _engine(base, chat).ask(Q, answer=False)
    assert len(res.rounds) == 2 and res.rounds[1].subqueries == []
    assert "different angle" in chat.prompts[2]


def test_llm_failures_are_traced_and_the_step_continues(base):
    chat = ScriptedLLM([LLMError("endpoint down")] * 3, [LLMError("endpoint down")] * 3)
    res = _engine(base, chat).ask(Q, answer=False)
    assert res.candidates and res.rounds[0].errors and "endpoint down" in res.rounds[0].errors[0]
    assert len(res.rounds) == 2 and res.rounds[1].subqueries == []  # nothing new after round 1
    assert res.candidates[0] == "2007.14062"


def test_venue_year_tag():
    assert venue_year("In the ACL 2020 paper on S2ORC, ...") == "[ACL 2020]"
    assert venue_year("a NeurIPS 2024 paper") == "[NeurIPS 2024]"
    assert venue_year("no venue here 2020") is None
