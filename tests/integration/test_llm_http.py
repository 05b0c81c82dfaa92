"""The real `openai` client against a local HTTP server that misbehaves on purpose: every fault
class of :mod:`lit3r.llm.faults`, with request counts and elapsed bounds, up to whole questions
and a whole `lit3r run` (issue 16, item 2; issue 14, item 1)."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

from lit3r.errors import LLMError
from lit3r.llm.client import StructuredLLM
from lit3r.llm.providers import OpenAIChat
from tests.integration.conftest import send_json


class Answer(BaseModel):
    value: int


class Script:
    """What the server does next: ``steps`` are popped one per request (then ``default``);
    ``requests`` are the bodies it got."""

    steps: list = []
    requests: list = []
    default: tuple = ("ok", '{"value": 1}')
    stop = threading.Event()  # ends the hanging handlers at teardown

    @classmethod
    def next(cls) -> tuple:
        return cls.steps.pop(0) if cls.steps else cls.default


OVERFLOW_400 = {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                          "type": "exceed_context_size_error", "n_prompt_tokens": 9000, "n_ctx": 8192}}
QUOTA_429 = {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                       "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}


class Handler(BaseHTTPRequestHandler):
    """Steps: ("ok", content) | ("status", code[, headers[, body]]) | ("sleep", s) (then a valid
    reply) | ("hang",) (no reply until teardown) | ("reset",) (the connection is closed with no
    reply) | ("length", content) (finish_reason "length") | ("refusal", text) | ("overflow",)."""

    def log_message(self, *args):  # quiet
        pass

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up first (a timeout test)
            pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Script.requests.append(body)
        kind, *args = Script.next()
        if kind == "hang":
            Script.stop.wait(120)
            return
        if kind == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.close()
            return
        if kind in ("status", "overflow"):
            code, headers, err = (400, {}, OVERFLOW_400) if kind == "overflow" else (
                args[0], args[1] if len(args) > 1 else {}, args[2] if len(args) > 2 else
                {"error": {"message": f"status {args[0]}"}})
            send_json(self, code, err, headers)
            return
        content, finish, refusal = (args[0] if args else '{"value": 2}'), "stop", None
        if kind == "sleep":
            time.sleep(args[0])
            content = '{"value": 2}'
        elif kind == "length":
            finish = "length"
        elif kind == "refusal":
            content, refusal = None, args[0]
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                 "choices": [{"index": 0, "finish_reason": finish,
                              "message": {"role": "assistant", "content": content, "refusal": refusal}}],
                 "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Script.stop.clear()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    Script.stop.set()
    httpd.shutdown()


@pytest.fixture(autouse=True)
def _fresh_script():
    Script.steps, Script.requests, Script.default = [], [], ("ok", '{"value": 1}')
    yield
    Script.steps, Script.default = [], ("ok", '{"value": 1}')


def _llm(url, timeout=5.0, **kw):
    Script.requests = []
    kw = {"retries": 3, "backoff": 0.01, **kw}
    return StructuredLLM(OpenAIChat("test-model", base_url=url, api_key="k", timeout=timeout), **kw)


MSG = [{"role": "user", "content": "value?"}]


def test_rate_limits_and_server_errors_are_retried(server):
    Script.steps = [("status", 429), ("status", 503), ("status", 500), ("ok", '{"value": 5}')]
    llm = _llm(server)
    assert llm.ask(MSG, Answer).value == 5
    assert len(Script.requests) == 4 and llm.usage.calls == 1 and llm.usage.prompt_tokens == 11
    assert llm.usage.retries == 3
    assert Script.requests[0]["response_format"]["type"] == "json_schema"  # schema-constrained request


def test_retry_after_is_honoured(server):
    Script.steps = [("status", 429, {"retry-after": "1"}), ("ok", '{"value": 5}')]
    t = time.perf_counter()
    assert _llm(server, backoff=0).ask(MSG, Answer).value == 5
    assert 1.0 <= time.perf_counter() - t < 3 and len(Script.requests) == 2
    Script.steps = [("status", 429, {"retry-after": "300"})]
    t = time.perf_counter()
    with pytest.raises(LLMError, match="asks to wait 300 s, beyond llm.retry_budget_s") as info:
        _llm(server, budget_s=20).ask(MSG, Answer)
    assert info.value.kind == "rate_limit" and len(Script.requests) == 1 and time.perf_counter() - t < 2


def test_timeouts_and_resets_are_retried(server):
    Script.steps = [("sleep", 2.0), ("reset",), ("ok", '{"value": 6}')]
    llm = _llm(server, timeout=0.5)
    assert llm.ask(MSG, Answer).value == 6 and len(Script.requests) == 3 and llm.usage.retries == 2


def test_malformed_json_is_repaired_once_then_fails_clearly(server):
    Script.steps = [("ok", "{value: 7"), ("ok", '{"value": 7}')]
    assert _llm(server).ask(MSG, Answer).value == 7
    Script.steps = [("ok", "nope"), ("ok", "still nope")]
    with pytest.raises(LLMError, match="invalid JSON twice"):
        _llm(server).ask(MSG, Answer)


@pytest.mark.parametrize("step, kind, says", [
    (("status", 401), "auth", "refuses the key.*check llm.api_key"),
    (("status", 403), "auth", "refuses the key"),
    (("status", 429, {}, QUOTA_429), "quota", "insufficient_quota.*add credit"),
    (("status", 400), "bad_request", "HTTP 400 bad request"),
    (("status", 404), "bad_request", "check llm.model and llm.base_url"),
    (("status", 422), "bad_request", "HTTP 422"),
])
def test_fatal_errors_fail_fast_in_one_line(server, step, kind, says):
    Script.default = step
    said = []
    llm = _llm(server, notify=said.append)
    t = time.perf_counter()
    with pytest.raises(LLMError, match=says) as info:
        llm.ask(MSG, Answer)
    assert info.value.kind == kind and len(Script.requests) == 1 and time.perf_counter() - t < 2  # no retry
    assert "\n" not in str(info.value)
    for _ in range(3):  # a later question: auth and quota stop the run, a bad request is the prompt's
        with pytest.raises(LLMError):
            llm.ask(MSG, Answer)
    assert len(Script.requests) == (1 if kind in ("auth", "quota") else 4)
    assert len(said) == (1 if kind in ("auth", "quota") else 0)


def test_connection_refused_opens_the_breaker(server):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    said = []
    llm = StructuredLLM(OpenAIChat("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=2), backoff=0.01,
                        breaker_failures=5, notify=said.append)
    t = time.perf_counter()
    for _ in range(10):
        with pytest.raises(LLMError) as info:
            llm.ask(MSG, Answer)
    assert time.perf_counter() - t < 5 and info.value.kind == "circuit_open"
    assert llm.usage.faults[0] == "connection" and "cannot connect" in said[0] and len(said) == 1


def test_a_reply_cut_by_length_is_asked_again_with_more_tokens(server):
    Script.steps = [("length", '{"val'), ("ok", '{"value": 8}')]
    llm = _llm(server, max_tokens=100)
    assert llm.ask(MSG, Answer).value == 8
    assert [r["max_tokens"] for r in Script.requests] == [100, 200]
    assert any("raise llm.max_tokens" in n for n in llm.usage.notes)
    Script.steps = [("length", '{"val'), ("length", '{"value": 8, "x": [1, 2')]
    with pytest.raises(LLMError, match="cut at 200 tokens twice: raise llm.max_tokens") as info:
        _llm(server, max_tokens=100).ask(MSG, Answer)
    assert info.value.kind == "length" and len(Script.requests) == 2


def test_a_think_block_with_braces_before_the_json(server):
    Script.steps = [("ok", '<think>Is it {"value": 0}? The schema {value: int} wants {"value": 9}.</think>\n'
                           '```json\n{"value": 9}\n```')]
    llm = _llm(server)
    assert llm.ask(MSG, Answer).value == 9 and len(Script.requests) == 1  # no repair needed


def test_a_refusal_is_reported_as_a_refusal(server):
    Script.steps = [("refusal", "I'm sorry, I cannot help with that request.")]
    llm = _llm(server)
    with pytest.raises(LLMError, match="refused to answer: I'm sorry") as info:
        llm.ask(MSG, Answer)
    assert info.value.kind == "refusal" and len(Script.requests) == 1 and "invalid JSON" not in str(info.value)


def test_an_overflow_400_shrinks_the_prompt_once(server):
    from lit3r.prompts import render

    passages = "\n\n".join(f"[P{i}] (text, page {i}) " + "words " * 300 for i in range(1, 9))
    msgs = [{"role": "user", "content": render("read_paper", question="q?", paper_id="p", title="T", venue="",
                                               passages=passages)}]
    Script.steps = [("overflow",), ("ok", '{"value": 4}')]
    llm = _llm(server)
    assert llm.ask(msgs, Answer).value == 4
    first, second = (r["messages"][0]["content"] for r in Script.requests)
    assert "[P8]" in first and "[P8]" not in second and "[P1]" in second and len(second) < 0.9 * len(first)
    assert any("context overflow (9000 > 8192 tokens)" in n for n in llm.usage.notes)
    Script.steps = [("overflow",), ("overflow",)]
    with pytest.raises(LLMError, match="does not fit the context.*raise llm.n_ctx") as info:
        _llm(server).ask(msgs, Answer)
    assert info.value.kind == "overflow" and len(Script.requests) == 2


def test_persistent_rate_limit_gives_up(server):
    Script.steps = [("status", 429)] * 4
    with pytest.raises(LLMError, match="HTTP 429 rate limited.*after 4 attempt"):
        _llm(server).ask(MSG, Answer)
    assert len(Script.requests) == 4


# ----------------------------------------------------------------------------- whole questions and runs

QUESTION = "Which paper proposes sparse attention with random, window and global tokens for longer sequences?"


def _engine(home, url, **llm):
    from lit3r.config import load_settings
    from lit3r.pipeline.engine import Engine

    cfg = {"provider": "openai", "model": "test-model", "base_url": url, "api_key": "k", "json_mode": "object_schema",
           "cache": False, "vision": False, **llm}
    return Engine(load_settings(home=home, llm=cfg))


def test_a_hanging_server_ends_one_ask_in_bounded_time(subset_home, server, caplog):
    """Every request hangs: with llm.timeout 2 s and llm.retry_budget_s 10 s the question ends
    well under 30 s with the extractive answer, and the user is told in one line."""
    engine = _engine(subset_home, server, timeout=2, retry_budget_s=10)
    Script.default = ("hang",)
    caplog.set_level(logging.WARNING, logger="lit3r.llm")
    t = time.perf_counter()
    res = engine.ask(QUESTION, query_id="hang")
    elapsed = time.perf_counter() - t
    assert elapsed < 30, elapsed
    assert res.answered_by() == "fallback" and res.degraded()
    assert res.submission()["answer"]["freeform"]["text"] and "2007.14062" in res.candidates[:5]
    assert set(res.usage.faults) <= {"timeout", "budget", "circuit_open"} and "timeout" in res.usage.faults
    lines = [r.getMessage() for r in caplog.records if r.name == "lit3r.llm"]
    assert len(lines) == 1 and ("llm.retry_budget_s = 10 s spent" in lines[0] or "not called again" in lines[0]), lines
    assert len(Script.requests) <= 8  # ~budget / timeout attempts, not 4 tries x every call
    trace = res.trace()
    assert trace["answered_by"] == "fallback" and trace["llm"]["faults"] == res.usage.faults


def test_a_run_against_a_hanging_server_counts_degraded_answers(subset_home, server, tmp_path, caplog):
    from click.testing import CliRunner

    from lit3r.cli import main
    from tests.conftest import CORPUS

    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(line for line in list((CORPUS / "questions_dev_inputs.jsonl").open())[:3]))
    out = tmp_path / "sub.jsonl"
    Script.default = ("hang",)
    caplog.set_level(logging.WARNING, logger="lit3r.llm")
    env = {"LIT3R_LLM__PROVIDER": "openai", "LIT3R_LLM__BASE_URL": server, "LIT3R_LLM__MODEL": "m",
           "LIT3R_LLM__API_KEY": "k", "LIT3R_LLM__TIMEOUT": "2", "LIT3R_LLM__RETRY_BUDGET_S": "6",
           "LIT3R_LLM__CACHE": "false", "LIT3R_LLM__VISION": "false"}
    t = time.perf_counter()
    res = CliRunner(env=env).invoke(main, ["--home", str(subset_home), "run", "--queries", str(queries), "--out", str(out)])
    elapsed = time.perf_counter() - t
    assert res.exit_code == 0, res.output
    assert "3 answered" in res.output and "answered by fallback 3" in res.output and "3 degraded" in res.output
    assert "circuit_open" in res.output.split("questions per LLM fault:")[1] and "timeout" in res.output
    traces = [json.loads(line) for line in (tmp_path / "sub.jsonl.traces.jsonl").read_text().splitlines()]
    assert [t["trace"]["answered_by"] for t in traces] == ["fallback"] * 3 and all(t["trace"]["degraded"] for t in traces)
    opened = [r.getMessage() for r in caplog.records if "not called again in this run" in r.getMessage()]
    assert len(opened) == 1 and len(Script.requests) <= 6  # the breaker opened once; the rest went straight on
    assert elapsed < 60, elapsed


class _Tokens:
    """A stand-in for ``llama_cpp.Llama`` whose real context is ``window`` tokens (4 bytes a
    token when counting ahead, 3 when it runs: the count ahead underestimates, as a chat template
    does): a longer prompt raises llama.cpp's ValueError; otherwise it answers ``{}``."""

    window = 600

    def __init__(self, **kwargs):
        self.n_ctx = kwargs["n_ctx"]

    def tokenize(self, text, add_bos=True, special=False):
        return list(range(len(text) // 4))

    def create_chat_completion(self, messages, max_tokens, **kwargs):
        n = sum(len(m["content"] if isinstance(m["content"], str) else str(m["content"])) for m in messages) // 3
        if n >= self.window:
            raise ValueError(f"Requested tokens ({n}) exceed context window of {self.window}")
        return {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": n, "completion_tokens": 1}}


@pytest.mark.parametrize("window, path", [(700, "shrunk"), (120, "fallback")])
def test_an_in_process_context_overflow_never_loses_the_question(subset_home, monkeypatch, tmp_path, window, path):
    """llama.cpp in process raises ValueError (issue 14, item 1): the prompt is shrunk and asked
    again, or the step falls back; the question is answered either way, noted in the trace."""
    import sys
    import types

    from lit3r.config import load_settings
    from lit3r.pipeline.engine import Engine

    module = types.ModuleType("llama_cpp")
    module.Llama = type("Llama", (_Tokens,), {"window": window})
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    settings = load_settings(home=subset_home, llm={"provider": "local", "model_path": str(gguf), "cache": False,
                                                      "max_tokens": 64, "n_ctx": 8192})
    res = Engine(settings).ask(QUESTION, query_id="overflow")
    trace = res.trace()
    assert res.submission()["answer"]["freeform"]["text"] and res.submission()["gold_papers"]
    assert any("context overflow" in n for n in trace["llm"]["notes"])
    if path == "shrunk":  # every step got its answer from the shrunk prompt
        assert res.usage.calls >= 3 and "overflow" not in res.usage.faults
        import re

        dropped = [int(m.group(1)) for n in trace["llm"]["notes"] for m in [re.search(r"(\d+) of \d+ passage", n)] if m]
        assert dropped and max(dropped) >= 1  # the real prompt builders' passages were found and dropped
    else:  # nothing fits: every step fell back, the extractive answer stands
        assert res.answered_by() == "fallback" and res.usage.calls == 0
        # llm.breaker_failures (5) overflows in a row open the breaker: the later steps are not tried
        assert res.usage.faults[:5] == ["overflow"] * 5 and set(res.usage.faults) <= {"overflow", "circuit_open"}
