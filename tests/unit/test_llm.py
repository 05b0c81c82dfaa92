"""StructuredLLM against scripted providers: parsing, repair, the retry layer, the breaker, the
length and overflow retries, cache, usage."""

import time

import pytest
from pydantic import BaseModel

from lit3r.errors import ContextOverflow, FatalLLMError, LLMRefusal
from lit3r.llm.client import LLMError, Reply, StructuredLLM, TransientLLMError, parse_json, track_usage


class Answer(BaseModel):
    value: int


class Scripted:
    """A provider that replays a script: strings and Replies are replies, exceptions are raised,
    ``(seconds, step)`` sleeps first (a slow or hanging server)."""

    name = "scripted"
    supports_images = False

    def __init__(self, *script):
        self.script = list(script)
        self.calls = []
        self.max_tokens = []

    def chat(self, messages, schema, max_tokens, temperature):
        self.calls.append(messages)
        self.max_tokens.append(max_tokens)
        step = self.script.pop(0) if self.script else '{"value": 1}'
        if isinstance(step, tuple):
            time.sleep(step[0])
            step = step[1]
        if isinstance(step, Exception):
            raise step
        return step if isinstance(step, Reply) else Reply(step, prompt_tokens=10, completion_tokens=5)


MSG = [{"role": "user", "content": "give a value"}]


def test_valid_json_inside_prose_is_parsed_and_counted():
    llm = StructuredLLM(Scripted('Sure! ```json\n{"value": 3}\n```'), price_in=1.0, price_out=2.0)
    assert llm.ask(MSG, Answer).value == 3
    assert (llm.usage.calls, llm.usage.prompt_tokens, llm.usage.completion_tokens) == (1, 10, 5)
    assert llm.usage.cost_usd == pytest.approx((10 * 1.0 + 5 * 2.0) / 1e6)


@pytest.mark.parametrize("text", [
    '<think>the reply is {"value": 9}? no: {"value": "x"} has braces {}</think>\n{"value": 4}',
    'I weigh {a} and {b}.</think> {"value": 4}',  # the server cut the opening tag
    'Here {is} the answer: {"value": 4} and {"value": 5}',  # prose braces, then the first object
    '```json\n{"value": 4, "note": "a } in a string"}\n```',
])
def test_the_first_balanced_object_after_reasoning_is_parsed(text):
    assert parse_json(text, Answer).value == 4


@pytest.mark.parametrize("text, problem", [
    ('<think>{"value": 1} still thinking', "unclosed reasoning block"),
    ('{"value": 4, "rows": [{"a": 1}, {"b', "cut off"),  # a nested object must not pass for the reply
    ("no json here", "no JSON object"),
])
def test_no_complete_object_is_a_clear_value_error(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_json(text, Answer)


def test_malformed_json_gets_one_repair():
    chat = Scripted('{"value": "three"}', '{"value": 3}')
    assert StructuredLLM(chat).ask(MSG, Answer).value == 3
    assert len(chat.calls) == 2 and "not valid JSON" in chat.calls[1][-1]["content"]
    bad = StructuredLLM(Scripted("no json here", "still none"))
    with pytest.raises(LLMError, match="invalid JSON twice") as info:
        bad.ask(MSG, Answer)
    assert bad.usage.failures == 1 and info.value.kind == "invalid" and bad.usage.faults == ["invalid"]


def test_usage_is_counted_per_stage_with_invalid_and_cut_replies():
    chat = Scripted('{"value": "three"}', '{"value": 3}', Reply('{"value": 1', 10, 512, finish_reason="length"),
                    Reply('{"value": 2}', 10, 5), "no json", "none again")
    llm = StructuredLLM(chat)
    with track_usage() as usage:
        llm.ask(MSG, Answer, "verify")
        llm.ask(MSG, Answer, "synthesize")
        with pytest.raises(LLMError):
            llm.ask(MSG, Answer)  # no stage: the model's name
    v, s, a = usage.stages["verify"], usage.stages["synthesize"], usage.stages["Answer"]
    assert (v["calls"], v["invalid"], v["cut"], v["prompt_tokens"], v["failures"]) == (2, 1, 0, 20, 0)
    assert (s["calls"], s["invalid"], s["cut"], s["completion_tokens"]) == (2, 1, 1, 517)
    assert (a["calls"], a["invalid"], a["failures"]) == (2, 2, 1)
    assert usage.calls == 6 == sum(st["calls"] for st in usage.stages.values())
    assert llm.usage.stages == usage.stages  # the run's counters too
    total = type(usage)()
    total.add(usage)
    total.add(usage)
    assert total.stages["verify"]["calls"] == 4 and total.calls == 12


def test_unusable_replies_in_a_row_open_the_breaker_with_the_fix():
    """Replies cut at the token limit (or refused) ask after ask: each prompt differs, so only a
    count across asks notices; the line names the setting to change; a valid reply resets it."""
    cut = Reply('{"value": 1', 10, 64, finish_reason="length")
    notices = []
    chat = Scripted(*[cut] * 4, '{"value": 2}', *[cut] * 6, LLMRefusal("scripted refused to answer: no"))
    llm = StructuredLLM(chat, max_tokens=32, breaker_failures=3, notify=notices.append)
    for _ in range(2):
        with pytest.raises(LLMError) as info:
            llm.ask([{"role": "user", "content": f"q{_}"}], Answer)
        assert info.value.kind == "length"
    assert llm.ask([{"role": "user", "content": "q2"}], Answer).value == 2 and not notices  # reset
    for i in range(3):
        with pytest.raises(LLMError):
            llm.ask([{"role": "user", "content": f"q{3 + i}"}], Answer)
    assert len(notices) == 1 and "3 replies in a row unusable (length" in notices[0]
    assert "llm.max_tokens" in notices[0] and "not called again in this run" in notices[0]
    calls = len(chat.calls)
    with pytest.raises(LLMError) as info:
        llm.ask([{"role": "user", "content": "q9"}], Answer)
    assert info.value.kind == "circuit_open" and len(chat.calls) == calls
    refusing = StructuredLLM(Scripted(*[LLMRefusal("scripted refused to answer: no")] * 3), breaker_failures=2,
                             notify=notices.append)
    for i in range(2):
        with pytest.raises(LLMError):
            refusing.ask([{"role": "user", "content": f"r{i}"}], Answer)
    assert refusing.breaker.open and "unusable (refusal" in notices[-1]


def test_transient_errors_are_retried_then_give_up():
    chat = Scripted(TransientLLMError("429", kind="rate_limit"), TransientLLMError("t", kind="timeout"), '{"value": 1}')
    llm = StructuredLLM(chat, retries=3, backoff=0)
    assert llm.ask(MSG, Answer).value == 1 and len(chat.calls) == 3 and llm.usage.retries == 2
    dead_chat = Scripted(*[TransientLLMError("HTTP 503", kind="server")] * 5)
    dead = StructuredLLM(dead_chat, retries=2, backoff=0)
    with pytest.raises(LLMError, match=r"HTTP 503 \(after 3 attempt") as info:
        dead.ask(MSG, Answer)
    assert len(dead_chat.calls) == 3 and info.value.kind == "server" and dead.usage.faults == ["server"]


@pytest.mark.parametrize("kind, opens", [("auth", True), ("quota", True), ("bad_request", False)])
def test_fatal_errors_fail_at_once_and_auth_or_quota_stop_the_run(kind, opens):
    said = []
    chat = Scripted(FatalLLMError(f"{kind}: fix it", kind=kind), '{"value": 1}')
    llm = StructuredLLM(chat, retries=3, backoff=0, notify=said.append)
    with pytest.raises(LLMError, match="fix it") as info:
        llm.ask(MSG, Answer)
    assert len(chat.calls) == 1 and info.value.kind == kind  # never retried
    if opens:  # every later call would fail the same way: not called again, told once
        with pytest.raises(LLMError, match="not called again in this run") as again:
            llm.ask(MSG, Answer)
        assert again.value.kind == "circuit_open" and len(chat.calls) == 1 and len(said) == 1
    else:  # a bad request is the prompt's: the next one is sent
        assert llm.ask(MSG, Answer).value == 1 and not said


def test_the_breaker_opens_after_consecutive_failures_and_says_so_once():
    said = []
    chat = Scripted(TransientLLMError("x", kind="server"), '{"value": 1}', *[TransientLLMError("down", kind="connection")] * 9)
    llm = StructuredLLM(chat, retries=1, backoff=0, breaker_failures=3, notify=said.append)
    assert llm.ask(MSG, Answer).value == 1  # one failure, then a success resets the count
    for _ in range(2):  # 2 + 1 consecutive failed attempts
        with pytest.raises(LLMError):
            llm.ask(MSG, Answer)
    calls = len(chat.calls)
    assert calls == 2 + 3
    t = time.perf_counter()
    for _ in range(5):
        with pytest.raises(LLMError, match="failed 3 time"):
            llm.ask(MSG, Answer)
    assert len(chat.calls) == calls and time.perf_counter() - t < 0.1  # not called again, at once
    assert len(said) == 1 and "the remaining questions take the extractive answer" in said[0]
    assert llm.usage.faults.count("circuit_open") == 5


def test_retry_after_is_honoured_within_the_budget():
    chat = Scripted(TransientLLMError("429", kind="rate_limit", retry_after=0.6), '{"value": 2}')
    t = time.perf_counter()
    assert StructuredLLM(chat, backoff=0).ask(MSG, Answer).value == 2
    assert 0.6 <= time.perf_counter() - t < 2
    late = Scripted(TransientLLMError("429", kind="rate_limit", retry_after=120), '{"value": 2}')
    t = time.perf_counter()
    said = []
    slow = StructuredLLM(late, budget_s=5, notify=said.append)
    with track_usage():
        with pytest.raises(LLMError, match="asks to wait 120 s, beyond llm.retry_budget_s"):
            slow.ask(MSG, Answer)
        with pytest.raises(LLMError) as info:  # the question's next step: no request, no second line
            slow.ask(MSG + [{"role": "user", "content": "next step"}], Answer)
    assert info.value.kind == "budget" and len(late.calls) == 1 and time.perf_counter() - t < 1  # no 2-minute wait
    assert len(said) == 1 and "asks to wait 120 s (429), beyond llm.retry_budget_s = 5 s" in said[0]
    assert "raise llm.retry_budget_s" in said[0]


def test_the_question_budget_bounds_a_hanging_endpoint():
    """Each attempt hangs 0.4 s then times out; a budget of 1.5 s ends the question's LLM use."""
    said = []
    chat = Scripted(*[(0.4, TransientLLMError("no reply within llm.timeout", kind="timeout"))] * 50)
    llm = StructuredLLM(chat, retries=10, backoff=0.2, budget_s=1.5, breaker_failures=0, notify=said.append)
    t = time.perf_counter()
    with track_usage() as usage:
        for _ in range(8):  # the calls of one question
            with pytest.raises(LLMError):
                llm.ask(MSG, Answer)
    elapsed = time.perf_counter() - t
    assert elapsed < 1.5 + 0.4 + 0.3  # the budget, plus the attempt in flight when it ran out
    assert 2 <= len(chat.calls) <= 5 and usage.faults.count("budget") >= 6
    assert [s for s in said if "retry_budget_s" in s] == said and len(said) == 1
    assert "(last: no reply within llm.timeout)" in said[0]  # the cause, not only the budget
    with track_usage():  # the next question has its own budget
        with pytest.raises(LLMError, match="no reply"):
            llm.ask(MSG, Answer)


def test_a_reply_cut_at_max_tokens_is_asked_again_with_more():
    chat = Scripted(Reply('{"value": 1', 10, 64, "length"), Reply('{"value": 5}', 10, 70, "stop"))
    llm = StructuredLLM(chat, max_tokens=64)
    assert llm.ask(MSG, Answer).value == 5
    assert chat.max_tokens == [64, 128] and chat.calls[1] == MSG  # the same prompt, more tokens, no repair
    assert any("llm.max_tokens = 64" in n for n in llm.usage.notes)
    twice = Scripted(Reply('{"value": 1', 10, 64, "length"), Reply('{"value": 1', 10, 128, "length"))
    with pytest.raises(LLMError, match="cut at 128 tokens twice: raise llm.max_tokens") as info:
        StructuredLLM(twice, max_tokens=64).ask(MSG, Answer)
    assert info.value.kind == "length" and len(twice.calls) == 2


def test_refusals_are_reported_as_refusals():
    chat = Scripted(LLMRefusal("scripted refused to answer: I can't help with that"), '{"value": 1}')
    llm = StructuredLLM(chat)
    with pytest.raises(LLMError, match="refused to answer") as info:
        llm.ask(MSG, Answer)
    assert info.value.kind == "refusal" and len(chat.calls) == 1 and llm.usage.faults == ["refusal"]


def _passages(n: int, size: int = 400) -> list[dict]:
    from lit3r.prompts import render

    text = "\n\n".join(f"[P{i}] (text, page {i}) " + f"passage {i} " * (size // 10) for i in range(1, n + 1))
    return [{"role": "user", "content": render("read_paper", question="q?", paper_id="p1", title="T", venue="",
                                               passages=text)}]


def test_a_context_overflow_drops_the_lowest_ranked_passages_and_asks_again():
    msgs = _passages(6)
    chat = Scripted(ContextOverflow("too long", requested=3000, limit=2048), '{"value": 3}')
    llm = StructuredLLM(chat, max_tokens=256)
    assert llm.ask(msgs, Answer).value == 3
    sent = chat.calls[1][0]["content"]
    assert "[P1]" in sent and "[P6]" not in sent and sent.rstrip().endswith("Answer with JSON only.")
    assert len(sent) < 0.7 * len(msgs[0]["content"]) and any("passage(s) dropped" in n for n in llm.usage.notes)
    again = Scripted(ContextOverflow("too long", requested=3000, limit=2048), ContextOverflow("still", requested=2100,
                                                                                              limit=2048))
    with pytest.raises(LLMError) as info:  # once only: the caller falls back
        StructuredLLM(again).ask(msgs, Answer)
    assert info.value.kind == "overflow" and len(again.calls) == 2


def test_shrinking_keeps_the_template_and_the_best_passages_of_every_prompt():
    from lit3r.llm.fit import passage_spans, shrink_text
    from lit3r.prompts import render

    synth = render("synthesize", question="q?", options="", schema="", fields='- "answer": x;',
                   draft="- evidence: E1, E3\n- choice: A",
                   evidence="[p1] T1\n  [E1] (text, page 1) aaa\n  [E2] (text, page 2) bbb\n  fact: f: 1 (P1)\n\n"
                            "[p2] T2\n  [E3] (table, page 3) " + "ccc " * 200)
    verify = render("verify", question="q?", papers="[p1] T1\n  (text, page 1) aaa\n  (text, page 2) bbb\n\n"
                                                     "[p2] T2\n  (table, page 3) " + "ccc " * 200)
    for text, first, last in ((synth, "[E1]", "[E3]"), (verify, "(text, page 1)", "(table, page 3)")):
        assert len(passage_spans(text)) == 3
        out, dropped, listed = shrink_text(text, len(text) - 500)
        assert (dropped, listed) == (1, 3) and first in out and last not in out
        assert out.count("Answer with JSON") == 1 and "[p2] T2" not in out
    shrunk = shrink_text(synth, len(synth) - 500)[0]
    assert "Draft answer" in shrunk and "- choice: A" in shrunk  # the draft is template text: it stays
    assert shrink_text("no passages here", 5) is None


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
        self.sent = kwargs
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        return {"choices": [{"message": {"content": step}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2}}

    def tokenize(self, text, add_bos=True, special=False):
        return list(range(len(text) // 4))  # about 4 bytes a token


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
    with pytest.raises(LLMError, match=r"does not fit the context \(9120 > 8192 tokens\): raise llm.n_ctx") as info:
        llm.ask(MSG, Answer)  # no passage to drop: the caller falls back
    assert info.value.kind == "overflow"
    assert llm.ask(MSG, Answer).value == 1


def test_local_overflow_valueerror_shrinks_the_prompt_once(fake_llama):
    """llama.cpp in process raises ValueError (issue 14, item 1): the passages that do not fit are
    dropped and the question is asked again, or the caller falls back; never an unknown error."""
    from lit3r.llm.providers import LlamaCppChat

    chat = LlamaCppChat(str(fake_llama), n_ctx=8192)
    msgs = _passages(8, 2000)
    chat.llm.script = [ValueError("Requested tokens (9120) exceed context window of 8192"), '{"value": 2}']
    llm = StructuredLLM(chat, max_tokens=512)
    assert llm.ask(msgs, Answer).value == 2
    sent = chat.llm.sent["messages"][0]["content"]
    assert "[P1]" in sent and "[P8]" not in sent and any("context overflow (9120 > 8192" in n for n in llm.usage.notes)
    chat.llm.script = [ValueError("Requested tokens (9120) exceed context window of 8192")] * 2
    with pytest.raises(LLMError, match="does not fit the context") as info:
        StructuredLLM(chat).ask(msgs, Answer)
    assert info.value.kind == "overflow"


def test_local_prompts_are_fitted_to_n_ctx_before_the_call(fake_llama):
    from lit3r.llm.providers import LlamaCppChat

    chat = LlamaCppChat(str(fake_llama), n_ctx=1024)
    msgs = _passages(8, 1000)  # about 2,100 tokens at 4 bytes a token
    chat.llm.script = ['{"value": 3}']
    llm = StructuredLLM(chat, max_tokens=256)
    assert llm.ask(msgs, Answer).value == 3
    sent = chat.llm.sent["messages"][0]["content"]
    assert chat.count_tokens([{"role": "user", "content": sent}]) + 256 <= 1024 and "[P1]" in sent
    assert any("> llm.n_ctx = 1024" in n for n in llm.usage.notes)


def test_prompts_are_fitted_to_the_prompt_token_budget_on_any_endpoint(fake_llama):
    """``llm.prompt_tokens`` bounds each prompt (issue 14, item 10): counted by the local provider,
    estimated at 4 characters a token for an endpoint that cannot count; the best passages stay."""
    from lit3r.llm.providers import LlamaCppChat

    msgs = _passages(8, 1000)
    http = Scripted('{"value": 1}')  # no count_tokens, no n_ctx
    llm = StructuredLLM(http, prompt_tokens=800)
    assert llm.ask(msgs, Answer).value == 1
    sent = http.calls[0][0]["content"]
    assert len(sent) / 4 <= 800 and "[P1]" in sent and "[P8]" not in sent
    assert any("> llm.prompt_tokens = 800" in n for n in llm.usage.notes)
    chat = LlamaCppChat(str(fake_llama), n_ctx=8192)  # the context allows it all; the budget does not
    chat.llm.script = ['{"value": 3}']
    local = StructuredLLM(chat, max_tokens=256, prompt_tokens=600)
    assert local.ask(msgs, Answer).value == 3
    assert chat.count_tokens([{"role": "user", "content": chat.llm.sent["messages"][0]["content"]}]) <= 600
    small = StructuredLLM(Scripted('{"value": 1}'), prompt_tokens=100_000)  # under budget: unchanged
    small.ask(msgs, Answer)
    assert small.chat.calls[0] == msgs and not small.usage.notes


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


def test_per_paper_notes_that_say_the_same_are_shown_once():
    """`lit3r ask` with an endpoint down: one note for the 50 papers read, not 50 lines."""
    from lit3r.cli.render import collapse_notes

    down = "openai:m is not called again in this run (it failed 5 time(s) in a row: timeout)"
    notes = [f"stage 1 p{i}: {down}" for i in range(50)] + ["stage 2: no reply", "stage 1 q: another problem"]
    assert collapse_notes(notes) == [f"stage 1, 50 papers (p0, p1, p2, ...): {down}", "stage 2: no reply",
                                     "stage 1 q: another problem"]
    assert collapse_notes(["stage 1 p1: x"]) == ["stage 1 p1: x"]
