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


class ReaderScript(ScriptedLLM):
    """Retrieve's prompts from scripts; stage 1 finds every paper relevant; stage 2 replies
    ``synthesis``."""

    def __init__(self, synthesis):
        super().__init__([{"subqueries": []}], [{"evidence_papers": [], "sufficient": True, "missing": ""}])
        self.synthesis = synthesis

    def chat(self, messages, schema, max_tokens, temperature):
        text = messages[-1]["content"]
        if "[P1]" in text:
            return Reply(json.dumps({"relevant": True, "sufficient": True, "supporting": ["P1"], "facts": []}), 50, 10)
        if "[E1]" in text:
            return Reply(json.dumps(self.synthesis), 80, 30)
        return super().chat(messages, schema, max_tokens, temperature)


def test_an_ungrounded_number_falls_back_to_the_extractive_answer(base):
    """Issue 13, item 7: the prompt's worked example copied as the answer ("31.4 - 29.9 = 1.5")
    is in no cited evidence: flagged, and the extractive answer is used; a grounded one stays."""
    settings = base.settings.model_copy(update={"read": base.settings.read.model_copy(update={"llm_papers": 2})})
    question = "What BLEU score does the big Transformer reach on WMT 2014 English-to-German?"
    copied = {"papers": ["1706.03762"], "evidence": ["E1"], "calculation": "31.4 - 29.9 = 1.5", "answer": "1.5 BLEU"}
    engine = Engine(settings, encoder=base.encoder.encoder, llm=StructuredLLM(ReaderScript(copied), backoff=0))
    res = engine.ask(question)
    assert res.read.reader == "llm" and res.read.freeform != "1.5 BLEU"
    assert any("states 1.5, which the cited evidence does not" in n for n in res.read.notes)
    grounded = {"papers": ["1706.03762"], "evidence": ["E1"], "calculation": "", "answer": "28.4 BLEU"}
    engine = Engine(settings, encoder=base.encoder.encoder, llm=StructuredLLM(ReaderScript(grounded), backoff=0))
    res = engine.ask(question)
    cited = " ".join(c.text for c in res.read.evidence)
    assert ("28.4" in cited) == (res.read.freeform == "28.4 BLEU")
    assert res.usage.calls >= 3 and res.usage.prompt_tokens > 0  # this question's calls only


def test_stage2_labels_in_brackets_and_duplicate_papers_keep_the_evidence_cap(base):
    """Issue 14, items 3-4, replayed: "[E1]" labels, a whole paper header and a paper named twice
    are resolved, and the evidence cap is counted after de-duplication."""
    settings = base.settings.model_copy(update={"read": base.settings.read.model_copy(update={"llm_papers": 3})})
    reply = {"papers": ["[1706.03762] Attention Is All You Need (NeurIPS 2017)", "1706.03762", "[1706.03762]"],
             "evidence": ["[E1]", "E2", "[E3]", "E1", "E9"], "calculation": "", "answer": "self-attention"}
    engine = Engine(settings, encoder=base.encoder.encoder, llm=StructuredLLM(ReaderScript(reply), backoff=0))
    res = engine.ask("What BLEU score does the big Transformer reach on WMT 2014 English-to-German?")
    assert res.read.reader == "llm"
    assert "1706.03762" in res.read.papers and len(res.read.papers) == len(set(res.read.papers))
    assert len(res.read.evidence) <= max(settings.read.max_evidence, len(res.read.papers))
    assert any("'E9' is not one of the listed ids" in n for n in res.read.notes)


def test_verifier_ids_in_brackets_or_whole_headers_are_resolved(base):
    """Issue 14, item 3, replayed: the verifier copies the prompt's "[id] title" headers."""
    chat = ScriptedLLM([{"subqueries": []}],
                       [{"evidence_papers": ["[2007.14062] Big Bird: Transformers for Longer Sequences (NeurIPS 2020)",
                                             "9999.99999"], "sufficient": True, "missing": ""}])
    res = _engine(base, chat).ask(Q, answer=False)
    assert res.relate.seeds[0] == "2007.14062" and "9999.99999" not in res.relate.seeds
    assert any("'9999.99999' is not one of the listed ids" in e for e in res.rounds[0].errors)
