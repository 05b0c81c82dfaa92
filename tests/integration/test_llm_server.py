"""Retrieve with a real OpenAI-compatible server: llama_cpp.server + the packaged SmolLM2-135M."""

from __future__ import annotations

import pytest

from lit3r.config import load_settings
from lit3r.llm.client import StructuredLLM
from lit3r.llm.providers import OpenAIChat
from lit3r.pipeline.engine import Engine
from lit3r.pipeline.retrieve import Subqueries, Verdict
from tests.servers import llama_server


@pytest.fixture(scope="module")
def llm_url(tmp_path_factory):
    try:
        server = llama_server.start(tmp_path_factory.mktemp("llama"))
    except Exception as exc:
        pytest.fail(f"the local LLM server could not start: {exc}")
    yield server.url
    server.stop()


def test_schema_constrained_json_from_the_real_server(llm_url):
    llm = StructuredLLM(OpenAIChat("smollm2", base_url=llm_url, json_mode="object_schema"), backoff=0.1)
    out = llm.ask([{"role": "user", "content": 'Write two search queries about sparse attention as JSON '
                    '{"subqueries": [...]}.'}], Subqueries)
    assert isinstance(out.subqueries, list)
    v = llm.ask([{"role": "user", "content": 'Is the sky green? JSON {"evidence_papers": [], "sufficient": '
                  'false, "missing": "..."}'}], Verdict)
    assert isinstance(v.sufficient, bool)
    assert llm.usage.calls >= 2 and llm.usage.prompt_tokens > 0 and llm.usage.completion_tokens > 0


def test_ask_with_the_local_llm_server(subset_home, llm_url):
    settings = load_settings(home=subset_home, llm={"provider": "openai", "model": "smollm2", "base_url": llm_url,
                                                      "json_mode": "object_schema", "max_tokens": 256,
                                                      "cache": False, "vision": False, "timeout": 600,
                                                      "retry_budget_s": 1200})  # a loaded 2-core machine
    settings.retrieve.max_rounds = 2
    settings.read.llm_papers = 2
    res = Engine(settings).ask("Which paper proposes sparse attention with random, window and global tokens "
                               "for longer sequences?", query_id="llm")
    assert res.usage.calls >= 5 and res.usage.prompt_tokens > 500  # decompose + verify + 2 readings + synthesis
    assert res.rounds and res.rounds[0].subqueries[0].startswith("Which paper")
    assert "2007.14062" in res.candidates[:5]
    trace = res.trace()
    assert trace["llm"]["calls"] == res.usage.calls and trace["rounds"][0]["pool_size"] > 0


def test_llm_reader_on_fixed_papers_with_the_local_server(subset_home, llm_url):
    settings = load_settings(home=subset_home, llm={"provider": "openai", "model": "smollm2", "base_url": llm_url,
                                                      "json_mode": "object_schema", "max_tokens": 256,
                                                      "cache": False, "vision": False,
                                                      # the machinery, not speed: a loaded CI machine can take
                                                      # minutes per call of the local server
                                                      "timeout": 600, "retry_budget_s": 1200})
    engine = Engine(settings)
    schema = [{"name": "Method", "type": "string", "is_row_key": True},
              {"name": "GSM8K accuracy", "type": "number", "is_row_key": False}]
    opts = {"A": "78.77", "B": "80.59", "C": "75.28", "D": "84.10"}
    papers = ["2309.06275", "2201.11903"]
    res = engine.ask("With ChatGPT and chain-of-thought prompting, what GSM8K accuracy is reported once the "
                     "re-reading step is added?", options=opts, papers=papers, query_id="r",
                     answer_types=("freeform", "multiple_choice", "table"), table_schema=schema)
    assert 3 <= res.usage.calls <= 6  # 2 local readings + 1 synthesis (+ JSON repairs); no retrieval
    assert res.read.reader in ("llm", "llm stage 1 + extractive")
    trace = res.trace()
    assert trace["reader"]["name"] == res.read.reader and "retrieve" not in res.timings
    line = res.submission()
    assert {p["paper_id"] for p in line["gold_papers"]} <= set(papers)
    assert line["answer"]["multiple_choice"]["gold"] in opts
    for row in line["answer"]["table"]["rows"]:
        assert list(row) == ["Method", "GSM8K accuracy"]
        assert row["GSM8K accuracy"] is None or isinstance(row["GSM8K accuracy"], (int, float, str))
    chunk_pages = {(c.paper_id, c.page) for p in papers for c in engine.graph.chunks_of(p)}
    assert all((e["paper_id"], e["locator"]["page"]) in chunk_pages for e in line["evidence"])
