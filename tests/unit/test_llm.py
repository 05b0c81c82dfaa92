"""StructuredLLM against scripted providers: parsing, repair, retries, cache, usage."""

import pytest
from pydantic import BaseModel

from lit3r.llm.client import LLMError, Reply, StructuredLLM, TransientLLMError


class Answer(BaseModel):
    value: int


class Scripted:
    """A provider that replays a script: strings are replies, exceptions are raised."""

    name = "scripted"
    supports_images = False

    def __init__(self, *script):
        self.script = list(script)
        self.calls = []

    def chat(self, messages, schema, max_tokens, temperature):
        self.calls.append(messages)
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        return Reply(step, prompt_tokens=10, completion_tokens=5)


MSG = [{"role": "user", "content": "give a value"}]


def test_valid_json_inside_prose_is_parsed_and_counted():
    llm = StructuredLLM(Scripted('Sure! ```json\n{"value": 3}\n```'), price_in=1.0, price_out=2.0)
    assert llm.ask(MSG, Answer).value == 3
    assert (llm.usage.calls, llm.usage.prompt_tokens, llm.usage.completion_tokens) == (1, 10, 5)
    assert llm.usage.cost_usd == pytest.approx((10 * 1.0 + 5 * 2.0) / 1e6)


def test_malformed_json_gets_one_repair():
    chat = Scripted('{"value": "three"}', '{"value": 3}')
    assert StructuredLLM(chat).ask(MSG, Answer).value == 3
    assert len(chat.calls) == 2 and "not valid JSON" in chat.calls[1][-1]["content"]
    bad = StructuredLLM(Scripted("no json here", "still none"))
    with pytest.raises(LLMError, match="invalid JSON twice"):
        bad.ask(MSG, Answer)
    assert bad.usage.failures == 1


def test_transient_errors_are_retried_then_give_up():
    chat = Scripted(TransientLLMError("429"), TransientLLMError("timeout"), '{"value": 1}')
    assert StructuredLLM(chat, retries=3, backoff=0).ask(MSG, Answer).value == 1
    dead = StructuredLLM(Scripted(*[TransientLLMError("429")] * 3), retries=2, backoff=0)
    with pytest.raises(LLMError, match="after 2 retries"):
        dead.ask(MSG, Answer)
    hard = StructuredLLM(Scripted(LLMError("bad key"), '{"value": 1}'), retries=3, backoff=0)
    with pytest.raises(LLMError, match="bad key"):  # not retried
        hard.ask(MSG, Answer)


def test_disk_cache_makes_reruns_free(tmp_path):
    first = StructuredLLM(Scripted('{"value": 7}'), cache_dir=tmp_path)
    assert first.ask(MSG, Answer).value == 7
    again = StructuredLLM(Scripted(), cache_dir=tmp_path)  # would fail if it called the provider
    assert again.ask(MSG, Answer).value == 7 and again.usage.cached == 1 and again.usage.calls == 0
    other = StructuredLLM(Scripted('{"value": 8}'), cache_dir=tmp_path)
    assert other.ask(MSG + [{"role": "user", "content": "x"}], Answer).value == 8  # other messages: new key
