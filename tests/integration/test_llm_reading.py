"""The LLM reader's two stages with a scripted provider over the real 10-paper subset, replaying
what Qwen2.5-Coder-1.5B wrote (issue 14, items 6 and 7): every paper judged relevant, the
prompt's example copied as ``supporting`` and as a fact, placeholders copied, facts citing
passages outside their supporting list; stage 1 must filter, use ``sufficient``, and hand
stage 2 facts labelled with stage 2's own passage labels."""

from __future__ import annotations

import json
import re

import pytest

from lit3r.config import load_settings
from lit3r.llm.client import Reply, StructuredLLM
from lit3r.pipeline.engine import Engine

QUESTION = "What BLEU score does the big Transformer reach on WMT 2014 English-to-German?"
GOLD = "1706.03762"

#: Stage-1 replies as observed (the old prompt's example: supporting ["P2", "P5"], a 3e-4 Adam
#: learning rate), placeholders copied from a reply shape, and a paper judged not relevant.
COPIED_EXAMPLE = {"relevant": True, "sufficient": False, "supporting": ["P2", "P5"],
                  "facts": [{"value": "3e-4", "unit": "", "what": "learning rate (Adam)", "passage": "P3"}]}
PLACEHOLDERS = {"supporting": ["<passage label>"], "facts": [{"value": "<value>", "unit": "<unit>",
                "what": "<what it measures>", "passage": "<passage label>"}], "relevant": True, "sufficient": True}
NOT_RELEVANT = {"supporting": [], "facts": [], "relevant": False, "sufficient": False}
INVENTED_FACT = {"relevant": True, "sufficient": False, "supporting": ["[P1]"],
                 "facts": [{"value": "3e-4", "unit": "", "what": "learning rate (Adam)", "passage": "P1"}]}
#: Stage 2 copying the reply shape.
SHAPE_COPY = {"papers": ["<paper identifier>"], "evidence": ["<passage label>"],
              "calculation": "<values and arithmetic, or empty>", "answer": "<answer>"}


def faithful(prompt: str) -> dict:
    """A correct stage-1 reply: P1 supports, with a fact taken from P1's text as written."""
    p1 = re.search(r"^\[P1\] \(.*?\) (.*)$", prompt, re.M).group(1)
    value = (re.findall(r"\d+\.\d+", p1) or re.findall(r"[A-Za-z]{5,}", p1))[0]
    return {"supporting": ["[P1]"], "facts": [{"value": value, "unit": "", "what": "stated in P1", "passage": "[P1]"}],
            "relevant": True, "sufficient": True}


class ReaderScript:
    """Stage 1 replies by paper id (a dict, or a callable of the prompt); stage 2 records its
    prompt and replies ``synthesis``; Retrieve's prompts are not expected (fixed papers)."""

    name = "scripted"
    supports_images = False

    def __init__(self, readings, synthesis):
        self.readings, self.synthesis = readings, synthesis
        self.stage1: list[str] = []
        self.stage2: list[str] = []

    def chat(self, messages, schema, max_tokens, temperature):
        text = messages[-1]["content"]
        if "ONE research paper" in text:
            pid = re.search(r"^Paper \[([^\]]+)\]", text, re.M).group(1)
            self.stage1.append(pid)
            reply = self.readings[pid]
            return Reply(json.dumps(reply(text) if callable(reply) else reply), 200, 40)
        assert "Evidence, grouped by paper" in text, text[:200]
        self.stage2.append(text)
        return Reply(json.dumps(self.synthesis), 300, 40)


@pytest.fixture(scope="module")
def base(subset_home):
    return Engine(load_settings(home=subset_home))


def _ask(base, script, papers, **read):
    read.setdefault("concurrency", 1)  # stage-1 calls in candidate order (the script records them)
    settings = base.settings.model_copy(update={"read": base.settings.read.model_copy(update=read)})
    engine = Engine(settings, encoder=base.encoder.encoder, llm=StructuredLLM(script, backoff=0))
    return engine.ask(QUESTION, papers=papers, answer_types=("freeform",))


def test_stage1_filters_and_stage2_sees_only_checked_facts_with_its_own_labels(base):
    others = ["2007.14062", "2006.04768", "2201.11903", "2501.12948"]
    script = ReaderScript({GOLD: faithful, others[0]: COPIED_EXAMPLE, others[1]: PLACEHOLDERS,
                           others[2]: NOT_RELEVANT, others[3]: INVENTED_FACT}, SHAPE_COPY)
    res = _ask(base, script, [GOLD, *others], llm_papers=5)
    notes = "\n".join(res.read.notes)
    assert script.stage1 == [GOLD, *others]  # one sufficient paper < read.sufficient_papers (2): all read
    (prompt,) = script.stage2
    passed = re.findall(r"^\[(\S+)\] ", prompt, re.M)
    assert passed == [GOLD, others[0], others[3]]  # placeholders and "not relevant" are not synthesised
    assert set(res.read.supporting) == set(passed)
    # facts: the gold paper's (from its own supporting passage) only, labelled with a stage-2 label
    facts = re.findall(r"^  fact: .*$", prompt, re.M)
    assert len(facts) == 1 and re.search(r"\(E1\)$", facts[0]) and not re.search(r"\(\[?P\d", prompt)
    assert [f["paper_id"] for f in res.read.facts] == [GOLD]
    assert res.read.facts[0]["chunk_id"] == res.read.supporting[GOLD][0]
    assert f"stage 1 {others[0]}: fact 'learning rate (Adam)' cites 'P3', not one of its supporting" in notes
    assert f"stage 1 {others[1]}: supporting labels copied from the prompt's reply shape" in notes
    assert f"stage 1 {others[1]}: judged relevant but named none of its passages" in notes
    assert f"stage 1 {others[3]}: fact 'learning rate (Adam)' has the value '3e-4', which P1 does not state" in notes
    assert "stage 1: 3 of 5 papers read passed to synthesis (1 judged sufficient)" in notes
    # stage 2 copied its reply shape: the answer is ignored, the ids and labels are dropped
    assert "stage 2 answer '<answer>' copies the prompt's reply shape: ignored" in notes
    assert res.read.freeform != "<answer>" and res.read.papers == [GOLD]
    assert "'<passage label>' is not one of the listed ids: dropped" in notes


def test_reading_stops_once_enough_papers_are_sufficient_and_those_come_first(base):
    others = ["2007.14062", "2006.04768", "2201.11903"]
    script = ReaderScript({others[0]: COPIED_EXAMPLE, GOLD: faithful, others[1]: faithful, others[2]: faithful},
                          {"papers": [GOLD], "evidence": ["E1"], "calculation": "", "answer": "a"})
    res = _ask(base, script, [others[0], GOLD, others[1], others[2]], llm_papers=4, sufficient_papers=1)
    assert script.stage1 == [others[0], GOLD]
    assert "stage 1 stopped after 2 of 4 papers: 1 judged sufficient" in res.read.notes
    assert re.findall(r"^\[(\S+)\] ", script.stage2[0], re.M) == [GOLD, others[0]]  # the sufficient paper first


def test_no_relevant_paper_still_synthesises_from_the_extractive_papers(base):
    papers = [GOLD, "2007.14062"]
    script = ReaderScript({p: NOT_RELEVANT for p in papers},
                          {"papers": [GOLD], "evidence": ["E1"], "calculation": "", "answer": "a"})
    res = _ask(base, script, papers, llm_papers=2)
    assert "stage 1 found no relevant paper: the extractive reader's papers are read" in res.read.notes
    assert len(script.stage2) == 1 and res.read.reader == "llm"


def test_stage2_revises_the_extractive_draft_and_sees_its_evidence(base):
    """Stage 2 is shown the extractive answer as a draft (``read.draft``): its papers, its
    evidence as the prompt's own E labels (those chunks are among the passages even when stage 1
    passed none of them), the answer, per option the passage that matches it and the choice."""
    options = {"A": "28.4", "B": "41.8", "C": "25.8", "D": "27.3"}
    script = ReaderScript({p: NOT_RELEVANT for p in (GOLD, "2007.14062")},
                          {"papers": [GOLD], "evidence": ["E1"], "calculation": "", "answer": "a", "choice": "A"})
    settings = base.settings.model_copy(update={"read": base.settings.read.model_copy(update={"concurrency": 1})})
    engine = Engine(settings, encoder=base.encoder.encoder, llm=StructuredLLM(script, backoff=0))
    res = engine.ask(QUESTION, papers=[GOLD, "2007.14062"], options=options,
                     answer_types=("freeform", "multiple_choice"))
    extractive = Engine(base.settings, encoder=base.encoder.encoder).ask(
        QUESTION, papers=[GOLD, "2007.14062"], options=options, answer_types=("freeform", "multiple_choice")).read
    (prompt,) = script.stage2
    draft = prompt.split("Draft answer", 1)[1].split("Reply with:", 1)[0]
    labels = dict(re.findall(r"^  \[(E\d+)\] \((.*?)\) ", prompt, re.M))
    assert f"- papers: {', '.join(extractive.papers)}" in draft
    cited = re.search(r"^- evidence: (.*)$", draft, re.M).group(1).split(", ")
    assert cited and all(lab in labels for lab in cited) and len(cited) == len(extractive.evidence)
    assert f"- answer: {extractive.freeform}" in draft and f"- choice: {extractive.choice}" in draft
    matches = re.findall(r"^- option ([A-D]) matches: \"(.*)\" \((E\d+)\)$", draft, re.M)
    assert {m[0] for m in matches} == {k for k, v in extractive.option_support.items() if v.get("evidence")}
    assert all(m[2] in labels for m in matches)
    assert res.read.choice == "A" and res.read.reader == "llm"  # the reply, not the draft, answers
    off = base.settings.model_copy(update={"read": base.settings.read.model_copy(update={"concurrency": 1,
                                                                                       "draft": False})})
    script.stage2.clear()
    Engine(off, encoder=base.encoder.encoder, llm=StructuredLLM(script, backoff=0)).ask(
        QUESTION, papers=[GOLD, "2007.14062"], options=options, answer_types=("freeform", "multiple_choice"))
    assert "- none" in script.stage2[0].split("Draft answer", 1)[1].split("Reply with:", 1)[0]


def test_a_defect_in_the_llm_path_never_loses_the_question(base, monkeypatch):
    """Any unexpected exception of the LLM reader (not a server or index fault) leaves the
    extractive answer, noted in the trace, and the path counts as the fallback."""
    import lit3r.read.llm as llm_reader

    def broken(*args, **kwargs):
        raise TypeError("'NoneType' object is not subscriptable")

    monkeypatch.setattr(llm_reader, "draft_lines", broken)
    script = ReaderScript({p: NOT_RELEVANT for p in (GOLD, "2007.14062")},
                          {"papers": [GOLD], "evidence": ["E1"], "calculation": "", "answer": "a"})
    res = _ask(base, script, [GOLD, "2007.14062"], llm_papers=2)
    extractive = Engine(base.settings, encoder=base.encoder.encoder).ask(
        QUESTION, papers=[GOLD, "2007.14062"], answer_types=("freeform",)).read
    assert res.answered_by() == "fallback" and res.read.freeform == extractive.freeform
    assert res.read.papers == extractive.papers and res.submission()["gold_papers"]
    assert any(n.startswith("LLM reader failed (TypeError: 'NoneType'") for n in res.read.notes)
