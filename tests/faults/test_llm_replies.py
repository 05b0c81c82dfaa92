"""LLM servers that misbehave (issue 25, item 5): a real HTTP server on 127.0.0.1, the real
``openai`` client, and the real CLI where the user meets the fault.

- a reply trickled one byte at a time is cut off at ``llm.request_deadline_s`` (each byte resets
  the read timeout, not the deadline), and a question's calls end at ``llm.question_deadline_s``;
- a malformed 200 body (not JSON, server-sent events, bad UTF-8, the wrong JSON shape) is one
  line (kind ``malformed``) and the extractive answer, never a traceback, never a lost question;
- 400 and 404 are not retried, and a run stops calling a server that keeps giving them (the
  breaker, one line naming the model), with a bounded request count;
- 429's ``Retry-After`` is waited up to the question's budget; a longer wait ends the question's
  LLM use at once, with one line naming the wait and the setting.
"""

from __future__ import annotations

import json
import time

import pytest
from pydantic import BaseModel

from lit3r.errors import LLMError
from lit3r.llm.client import StructuredLLM
from lit3r.llm.providers import OpenAIChat
from tests.conftest import CORPUS
from tests.faults.llm_servers import (
    EXTRACTIVE,
    QUESTION,
    LLMServer,
    completion,
    hashing_home_of,
    lit3r,
    llm_env,
    send,
    send_json,
    trickle,
)


class Answer(BaseModel):
    value: int


MSG = [{"role": "user", "content": "value?"}]
GOOD = json.dumps(completion('{"value": 3}')).encode()

#: name -> (content type, body): 200 replies that are no chat completion.
MALFORMED = {
    "not JSON": ("text/html", b"<html><body>Welcome to nginx!</body></html>"),
    "SSE": ("text/event-stream", b'data: {"choices": [{"delta": {"content": "{}"}}]}\n\ndata: [DONE]\n\n'),
    "SSE as JSON": ("application/json", b'data: {"choices": [{"delta": {"content": "{}"}}]}\n\n'),
    "bad UTF-8": ("application/json",
                  b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "\xff\xfe{}"}}]}'),
    "no choices": ("application/json", json.dumps({"answer": {"value": 3}}).encode()),
    "empty choices": ("application/json", json.dumps({"choices": []}).encode()),
    "content not text": ("application/json",
                         json.dumps({"choices": [{"message": {"content": {"value": 3}}}]}).encode()),
    "completions shape": ("application/json", json.dumps({"choices": [{"text": '{"value": 3}'}]}).encode()),
    "JSON list": ("application/json", b"[1, 2, 3]"),
}


@pytest.fixture(scope="session")
def hashing_home(tmp_path_factory):
    return hashing_home_of(tmp_path_factory)


def malformed(name):
    content_type, body = MALFORMED[name]
    return lambda handler, n, request: send(handler, 200, body, content_type)


def _llm(url, deadline=60.0, question_s=1800.0, **kw):
    """The real client against ``url``: ``deadline`` is llm.request_deadline_s, ``question_s``
    llm.question_deadline_s (set as attributes: the same construction as before they existed)."""
    chat = OpenAIChat("test-model", base_url=url, api_key="k", timeout=kw.pop("timeout", 5))
    chat.deadline = deadline
    llm = StructuredLLM(chat, **{"retries": 3, "backoff": 0.01, **kw})
    llm.question_s = question_s
    return llm


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_200_is_one_line_and_not_retried(name):
    with LLMServer(malformed(name)) as server:
        llm = _llm(server.url)
        t = time.perf_counter()
        with pytest.raises(LLMError, match="not a chat completion.*check llm.base_url") as info:
            llm.ask(MSG, Answer)
        assert info.value.kind == "malformed" and "\n" not in str(info.value)
        assert server.requests == 1 and time.perf_counter() - t < 10


def test_a_reply_trickled_byte_by_byte_is_cut_off_at_the_request_deadline():
    """A byte every 0.2 s resets the 5 s read timeout forever; the 2 s deadline cuts it."""
    with LLMServer(lambda h, n, r: trickle(h, GOOD, 0.2, server.stop)) as server:
        llm = _llm(server.url, timeout=5, deadline=2, retries=1, budget_s=30)
        t = time.perf_counter()
        with pytest.raises(LLMError, match=r"no complete reply within 2 s \(llm.request_deadline_s") as info:
            llm.ask(MSG, Answer)
        elapsed = time.perf_counter() - t
    assert info.value.kind == "timeout" and server.requests == 2  # one retry, both cut at 2 s
    assert 3.5 < elapsed < 12, elapsed


def test_the_question_deadline_bounds_every_call_of_a_question():
    """Replies that take 1.5 s each: a question of many calls stops at llm.question_deadline_s."""
    def slow(handler, n, request):
        if not server.stop.wait(1.5):
            send(handler, 200, GOOD)

    said = []
    with LLMServer(slow) as server:
        from lit3r.llm.client import track_usage

        llm = _llm(server.url, question_s=4, notify=said.append)
        t = time.perf_counter()
        answered, failed = 0, []
        with track_usage():
            for _ in range(10):
                try:
                    llm.ask(MSG + [{"role": "user", "content": str(time.perf_counter())}], Answer)
                    answered += 1
                except LLMError as exc:
                    failed.append(exc.kind)
        elapsed = time.perf_counter() - t
    assert 1 <= answered <= 3 and failed and set(failed) <= {"timeout", "deadline"}, (answered, failed)
    assert elapsed < 8, elapsed
    assert sum("llm.question_deadline_s = 4 s" in line for line in said) == 1, said


@pytest.mark.parametrize("code, says", [(400, "HTTP 400 bad request"), (404, "check llm.model and llm.base_url"),
                                        (422, "HTTP 422")])
def test_the_same_non_retryable_error_stops_calling_the_server(code, says):
    said = []
    with LLMServer(lambda h, n, r: send_json(h, code, {"error": {"message": f"model 'test-model' failed ({code})"}})) \
            as server:
        llm = _llm(server.url, breaker_failures=3, notify=said.append)
        t = time.perf_counter()
        kinds = []
        for i in range(20):
            with pytest.raises(LLMError) as info:
                llm.ask(MSG + [{"role": "user", "content": str(i)}], Answer)
            kinds.append(info.value.kind)
            assert "\n" not in str(info.value) and (says in str(info.value) or info.value.kind == "circuit_open")
        assert server.requests == 3 and time.perf_counter() - t < 10  # no retry; 3 asks, then none
    assert kinds[:3] == ["bad_request"] * 3 and set(kinds[3:]) == {"circuit_open"}
    assert len(said) == 1 and "openai:test-model" in said[0] and says in said[0] and "not called again" in said[0]


# ------------------------------------------------------------------------------------ the CLI


def _bad_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "not called again in this run" in line]


@pytest.mark.parametrize("name", ["not JSON", "SSE", "bad UTF-8", "no choices", "content not text"])
def test_ask_against_a_malformed_server_answers_without_a_traceback(hashing_home, name):
    with LLMServer(malformed(name)) as server:
        ran = lit3r(hashing_home, ["ask", "--llm", "openai", QUESTION], llm_env(server.url, timeout=10), timeout=180)
    assert ran.code == 0 and "Traceback" not in ran.err + ran.out, ran.err[-3000:]
    assert ran.out.startswith(EXTRACTIVE) and "[2007.14062]" in ran.out, ran.out[:500]  # the extractive answer
    lines = _bad_lines(ran.err)
    assert len(lines) == 1 and "not a chat completion" in lines[0] and "llm.base_url" in lines[0], ran.err
    assert server.requests <= 5  # llm.breaker_failures malformed replies, then no more calls


def _queries(tmp_path, n):
    queries = tmp_path / "q.jsonl"
    rows = list((CORPUS / "questions_dev_inputs.jsonl").open())[:n]
    queries.write_text("".join(rows))
    return queries, [json.loads(r)["query_id"] for r in rows]


@pytest.mark.parametrize("name", ["not JSON", "bad UTF-8", "SSE"])
def test_a_run_against_a_malformed_server_loses_no_question(hashing_home, tmp_path, name):
    queries, ids = _queries(tmp_path, 3)
    out = tmp_path / "sub.jsonl"
    with LLMServer(malformed(name)) as server:
        ran = lit3r(hashing_home, ["run", "--queries", str(queries), "--out", str(out), "--llm", "openai"],
                    llm_env(server.url, timeout=10), timeout=240)
    assert ran.code == 0 and "Traceback" not in ran.err + ran.out, ran.err[-3000:]
    got = [json.loads(line)["query_id"] for line in out.read_text().splitlines()]
    assert sorted(got) == sorted(ids), (got, ran.out, ran.err[-2000:])  # each once, none missing
    assert "answered by fallback 3" in ran.out and len(_bad_lines(ran.err)) == 1
    assert server.requests <= 5


@pytest.mark.parametrize("code, says", [(400, "HTTP 400"), (404, "check llm.model")])
def test_a_run_against_a_400_or_404_stops_calling_after_the_breaker(hashing_home, tmp_path, code, says):
    queries, ids = _queries(tmp_path, 4)
    out = tmp_path / "sub.jsonl"
    reply = {"error": {"message": "model 'test-model' not found" if code == 404 else "unsupported parameter"}}
    with LLMServer(lambda h, n, r: send_json(h, code, reply)) as server:
        ran = lit3r(hashing_home, ["run", "--queries", str(queries), "--out", str(out), "--llm", "openai"],
                    llm_env(server.url, timeout=10), timeout=240)
    assert ran.code == 0 and "Traceback" not in ran.err, ran.err[-3000:]
    # llm.breaker_failures (5), give or take the papers read at once: not one request per step of every question
    assert 5 <= server.requests <= 7, server.requests
    lines = _bad_lines(ran.err)
    assert len(lines) == 1 and "openai:test-model" in lines[0] and says in lines[0], ran.err
    assert sorted(json.loads(line)["query_id"] for line in out.read_text().splitlines()) == sorted(ids)


def test_ask_against_a_trickling_server_ends_within_its_deadlines(hashing_home):
    big = json.dumps(completion('{"subqueries": []}')).encode() * 4
    with LLMServer(lambda h, n, r: trickle(h, big, 0.25, server.stop)) as server:
        env = llm_env(server.url, timeout=5, request_deadline_s=2, retry_budget_s=6)
        ran = lit3r(hashing_home, ["ask", "--llm", "openai", QUESTION], env, timeout=180)
    assert ran.code == 0 and "Traceback" not in ran.err, ran.err[-3000:]
    assert ran.out.startswith(EXTRACTIVE) and "[2007.14062]" in ran.out, ran.out[:500]
    assert "llm.request_deadline_s" in ran.err and server.requests <= 5, (server.requests, ran.err)
    assert ran.seconds < 120, ran.seconds


def test_a_retry_after_beyond_the_budget_ends_the_questions_llm_use_in_one_line(hashing_home):
    with LLMServer(lambda h, n, r: send_json(h, 429, {"error": {"message": "slow down"}}, {"Retry-After": "300"})) \
            as server:
        ran = lit3r(hashing_home, ["ask", "--llm", "openai", QUESTION], llm_env(server.url, retry_budget_s=5),
                    timeout=180)
    assert ran.code == 0 and "Traceback" not in ran.err and ran.out.startswith(EXTRACTIVE), ran.err[-3000:]
    lines = [line for line in ran.err.splitlines() if "asks to wait 300 s" in line]
    assert len(lines) == 1 and "llm.retry_budget_s = 5 s" in lines[0], ran.err
    assert server.requests == 1 and ran.seconds < 120


def test_a_short_retry_after_is_waited_then_the_call_succeeds():
    def reply(handler, n, request):
        if n == 1:
            send_json(handler, 429, {"error": {"message": "slow down"}}, {"Retry-After": "1"})
        else:
            send(handler, 200, GOOD)

    with LLMServer(reply) as server:
        t = time.perf_counter()
        assert _llm(server.url, backoff=0).ask(MSG, Answer).value == 3
        assert 1.0 <= time.perf_counter() - t < 6 and server.requests == 2
