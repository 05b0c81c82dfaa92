"""Decomposition must not cost Ranking A recall (issue 14, item 8): recall@k of Ranking A over the
dev questions answerable from the 10-paper subset, without an LLM and with a scripted decomposer
that replays the kinds of subqueries Qwen2.5-Coder-1.5B wrote: more than asked for, the
question's entities alone, vague queries, a copy of the prompt's old example, queries on other
topics of the library that pull unrelated papers, and earlier queries repeated in later rounds."""

from __future__ import annotations

import json
import re

import pytest

from lit3r.config import load_settings
from lit3r.llm.client import Reply, StructuredLLM
from lit3r.pipeline.engine import Engine
from tests.conftest import CORPUS
from tests.integration.conftest import SUBSET

#: Queries on other topics of the library (what a model that misreads the question writes).
OFF_TOPIC = ["sparse attention long sequences global tokens", "linear attention low-rank projection complexity",
             "reinforcement learning reasoning model training", "chain of thought prompting few-shot exemplars",
             "image super-resolution degradation model", "gated sparse convolution speech recognition"]


def bad_decomposition(question: str, rnd: int) -> list[str]:
    """Round 1: the question's capitalised words alone, vague queries, off-topic queries: 8 in
    all (4 were asked for). Later rounds: round 1's queries again (case changed) and more off-topic."""
    names = [w for w in re.findall(r"[\w\-]+", question) if sum(c.isupper() or c.isdigit() for c in w) >= 2][:3]
    first = [*names, "full method", "cited papers", *OFF_TOPIC][:8]
    return first if rnd == 1 else [q.upper() for q in first[:3]] + OFF_TOPIC[::-1][:4]


class BadDecomposer:
    """Scripted provider: decomposition prompts get :func:`bad_decomposition`, the verifier
    never finds evidence (so all rounds run)."""

    name = "scripted"
    supports_images = False

    def __init__(self):
        self.round = {}
        self.prompts = []

    def chat(self, messages, schema, max_tokens, temperature):
        text = messages[-1]["content"]
        self.prompts.append(text)
        if "evidence_papers" in text:
            return Reply(json.dumps({"evidence_papers": [], "sufficient": False, "missing": ""}), 100, 20)
        question = re.search(r"^Question: (.*)$", text, re.M).group(1)
        rnd = self.round[question] = self.round.get(question, 0) + 1
        return Reply(json.dumps({"subqueries": bad_decomposition(question, rnd)}), 100, 40)


def dev_questions(papers) -> list[dict]:
    """The dev questions whose gold papers are all in ``papers``."""
    rows = [json.loads(line) for line in (CORPUS / "questions_dev.jsonl").open()]
    return [r for r in rows if {g["paper_id"] for g in r["gold_papers"]} <= set(papers)]


def recall_at(ranking: list[str], gold: set[str], k: int) -> float:
    return len(set(ranking[:k]) & gold) / len(gold)


@pytest.fixture(scope="module")
def base(subset_home):
    return Engine(load_settings(home=subset_home))


def test_ranking_a_recall_does_not_drop_with_a_bad_decomposition(base):
    questions = dev_questions(SUBSET)
    assert len(questions) >= 5
    chat = BadDecomposer()
    llm = Engine(base.settings, encoder=base.encoder.encoder, llm=StructuredLLM(chat, backoff=0))
    searched_all, beyond = set(), False
    for row in questions:
        gold = {g["paper_id"] for g in row["gold_papers"]}
        plain = base.ask(row["question"], answer=False)
        with_llm = llm.ask(row["question"], answer=False)
        a0, a1 = [p for p, _ in plain.ranking_a], [p for p, _ in with_llm.ranking_a]
        for k in (1, 3, 5, 10):
            assert recall_at(a1, gold, k) >= recall_at(a0, gold, k), (row["query_id"], k, a0[:k], a1[:k])
        assert recall_at(with_llm.candidates, gold, 5) >= recall_at(plain.candidates, gold, 5), row["query_id"]
        assert a1[: len(a0)] == a0  # the question's own papers first, in its own order
        rounds = with_llm.rounds
        assert len(rounds) == 3 and all(len(r.subqueries) <= 1 + 4 for r in rounds)  # the question + 4 at most
        searched = [q for r in rounds for q in r.subqueries]
        searched_all.update(searched)
        assert len(searched) == len({q.lower() for q in searched})  # no repeat across rounds
        assert "full method" not in searched and "cited papers" not in searched
        dropped = " ".join(n for r in rounds for n in r.dropped)
        assert "'full method' is vague" in dropped and "repeats an earlier query" in dropped
        beyond = beyond or "beyond the 4 asked for" in dropped
    assert "GSM8K" in searched_all  # a one-word named entity of the question is searched
    assert beyond  # 8 written, 4 asked for: the cap came after the filter
