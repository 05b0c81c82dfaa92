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


class FakeLlama:
    """Stands in for ``llama_cpp.Llama``: records its arguments and the OpenMP wait policy in
    force when it loads; replies from a script (exceptions are raised)."""

    made: list = []

    def __init__(self, **kwargs):
        import os

        self.kwargs, self.wait_policy = kwargs, os.environ.get("OMP_WAIT_POLICY")
        self.script = []
        FakeLlama.made.append(self)

    def create_chat_completion(self, **kwargs):
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        return {"choices": [{"message": {"content": step}}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}


@pytest.fixture
def fake_llama(monkeypatch, tmp_path):
    """A fake ``llama_cpp`` module, a GGUF path, and OMP_WAIT_POLICY unset (restored after)."""
    import sys
    import types

    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    monkeypatch.setattr("lit3r.llm.providers._openmp_loaded", lambda: False)  # as in a fresh `lit3r ask`
    monkeypatch.setenv("OMP_WAIT_POLICY", "restored-after-the-test")
    monkeypatch.delenv("OMP_WAIT_POLICY")
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    FakeLlama.made = []
    return gguf


def test_local_provider_sets_passive_openmp_and_threads(fake_llama, monkeypatch):
    import os

    from lit3r.config import load_settings
    from lit3r.llm.providers import PROVIDERS

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    settings = load_settings(home=fake_llama.parent, llm={"provider": "local", "model_path": str(fake_llama)})
    chat = PROVIDERS["local"](settings.llm)
    llama = FakeLlama.made[-1]
    assert llama.wait_policy == "PASSIVE" and os.environ["OMP_WAIT_POLICY"] == "PASSIVE"  # set before loading
    assert (llama.kwargs["n_threads"], llama.kwargs["n_threads_batch"], llama.kwargs["n_ctx"]) == (1, 4, 8192)
    assert chat.name == "local:tiny.gguf"
    settings = load_settings(home=fake_llama.parent, llm={"provider": "local", "model_path": str(fake_llama),
                                                           "threads": 2, "n_ctx": 2048})
    PROVIDERS["local"](settings.llm)
    assert (FakeLlama.made[-1].kwargs["n_threads"], FakeLlama.made[-1].kwargs["n_threads_batch"],
            FakeLlama.made[-1].kwargs["n_ctx"]) == (2, 2, 2048)


@pytest.mark.parametrize("value", ["ACTIVE", ""])
def test_a_wait_policy_the_user_set_is_kept(fake_llama, monkeypatch, value):
    import os

    from lit3r.llm.providers import LlamaCppChat

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setenv("OMP_WAIT_POLICY", value)
    LlamaCppChat(str(fake_llama))
    llama = FakeLlama.made[-1]
    assert llama.wait_policy == value == os.environ["OMP_WAIT_POLICY"]
    assert (llama.kwargs["n_threads"], llama.kwargs["n_threads_batch"]) == (1, 1)  # threads that may spin: one


def test_an_openmp_runtime_loaded_before_means_one_thread(fake_llama, monkeypatch):
    import os

    from lit3r.llm.providers import LlamaCppChat

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr("lit3r.llm.providers._openmp_loaded", lambda: True)  # e.g. PyTorch imported first
    chat = LlamaCppChat(str(fake_llama))
    assert "OMP_WAIT_POLICY" not in os.environ  # too late to take effect: not set
    assert (chat.threads, chat.threads_batch) == (1, 1)
    assert (LlamaCppChat(str(fake_llama), threads=2).threads_batch, FakeLlama.made[-1].kwargs["n_threads"]) == (2, 2)


def test_local_provider_errors_are_one_line(fake_llama, tmp_path):
    from lit3r.llm.providers import LlamaCppChat

    with pytest.raises(LLMError, match="no such GGUF file"):
        LlamaCppChat(str(tmp_path / "missing.gguf"))
    chat = LlamaCppChat(str(fake_llama))
    chat.llm.script = [ValueError("Requested tokens (9120) exceed context window of 8192"), '{"value": 1}']
    llm = StructuredLLM(chat)
    with pytest.raises(LLMError, match=r"exceed context window of 8192: raise llm.n_ctx"):
        llm.ask(MSG, Answer)
    assert llm.ask(MSG, Answer).value == 1


# ----------------------------------------------------------------------------- usage per question, grounding


class Sized:
    """A chat whose prompt tokens are the number of the question it answers (so that each
    question's usage is known exactly), slow enough that questions overlap."""

    name, supports_images, concurrent = "sized", False, True

    def chat(self, messages, schema, max_tokens, temperature):
        import time as _time

        _time.sleep(0.01)
        n = int(messages[0]["content"].split()[0])
        return Reply("{\"value\": 1}", prompt_tokens=n, completion_tokens=1)


def test_usage_is_exact_per_question_under_parallel_questions():
    """``lit3r run --workers N``: each question counts only its own calls, including the calls of
    the threads it starts (stage-1 readings), while the shared counter sees them all."""
    from concurrent.futures import ThreadPoolExecutor

    from lit3r.llm.client import in_context, track_usage

    llm = StructuredLLM(Sized())

    def question(n: int):
        with track_usage() as usage:
            with ThreadPoolExecutor(max_workers=3) as ex:  # a question's own readings in threads
                for f in [ex.submit(in_context(llm.ask), [{"role": "user", "content": f"{n} paper {k}"}], Answer)
                          for k in range(n)]:
                    f.result()
            llm.ask([{"role": "user", "content": f"{n} synthesis"}], Answer)
        return usage

    with ThreadPoolExecutor(max_workers=4) as pool:
        usages = list(pool.map(question, [1, 2, 3, 4]))
    assert [u.calls for u in usages] == [2, 3, 4, 5]
    assert [u.prompt_tokens for u in usages] == [n * (n + 1) for n in (1, 2, 3, 4)]
    assert llm.usage.calls == 14 and llm.usage.prompt_tokens == sum(n * (n + 1) for n in (1, 2, 3, 4))


def test_grounding_numbers_in_evidence_or_computed_from_it():
    from lit3r.read.grounding import ungrounded

    evidence = ["ChatGPT CoT | 78.77", "ChatGPT CoT+RE2 | 80.59", "1,053 slides"]
    assert ungrounded("80.59% (up 1.82 points)", "80.59 - 78.77 = 1.82", evidence) == []
    assert ungrounded("1053 slides in 2 sets", "", evidence) == []
    assert ungrounded("31.4 - 29.9 = 1.5", "31.4 - 29.9 = 1.5", evidence) == ["1.5", "29.9", "31.4"]  # a copied example
    assert ungrounded("80.59 (up 2.5)", "80.59 - 78.77 = 2.5", evidence) == ["2.5"]  # wrong arithmetic
