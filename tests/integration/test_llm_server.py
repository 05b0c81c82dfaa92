"""Retrieve with a real OpenAI-compatible server: llama_cpp.server + the packaged SmolLM2-135M."""

from __future__ import annotations

import pytest

from lit3r.config import load_settings
from lit3r.engine import Engine
from lit3r.llm import OpenAIChat, StructuredLLM
from lit3r.rounds import Subqueries, Verdict
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
                                                      "cache": False})
    settings.retrieve.max_rounds = 2
    res = Engine(settings).ask("Which paper proposes sparse attention with random, window and global tokens "
                               "for longer sequences?", query_id="llm")
    assert res.usage.calls >= 2 and res.usage.prompt_tokens > 500  # decomposition + verification ran
    assert res.rounds and res.rounds[0].subqueries[0].startswith("Which paper")
    assert "2007.14062" in res.candidates[:5]
    trace = res.trace()
    assert trace["llm"]["calls"] == res.usage.calls and trace["rounds"][0]["pool_size"] > 0
