"""The real `openai` client against a local HTTP server that misbehaves on purpose."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

from lit3r.errors import LLMError
from lit3r.llm.client import StructuredLLM
from lit3r.llm.providers import OpenAIChat


class Answer(BaseModel):
    value: int


class Script:
    steps: list = []
    requests: list = []


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Script.requests.append(body)
        step = Script.steps.pop(0) if Script.steps else ("ok", '{"value": 1}')
        kind, arg = step
        if kind == "status":
            self.send_response(arg)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"error": {"message": f"status {arg}"}}).encode())
            return
        if kind == "sleep":
            time.sleep(arg)
            arg = '{"value": 2}'
        reply = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                 "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": arg}}],
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
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def _llm(url, timeout=5.0):
    Script.requests = []
    return StructuredLLM(OpenAIChat("test-model", base_url=url, api_key="k", timeout=timeout), retries=3, backoff=0.01)


MSG = [{"role": "user", "content": "value?"}]


def test_rate_limits_and_server_errors_are_retried(server):
    Script.steps = [("status", 429), ("status", 503), ("ok", '{"value": 5}')]
    llm = _llm(server)
    assert llm.ask(MSG, Answer).value == 5
    assert len(Script.requests) == 3 and llm.usage.calls == 1 and llm.usage.prompt_tokens == 11
    assert Script.requests[0]["response_format"]["type"] == "json_schema"  # schema-constrained request


def test_timeouts_are_retried(server):
    Script.steps = [("sleep", 2.0), ("ok", '{"value": 6}')]
    assert _llm(server, timeout=0.5).ask(MSG, Answer).value == 6


def test_malformed_json_is_repaired_once_then_fails_clearly(server):
    Script.steps = [("ok", "{value: 7"), ("ok", '{"value": 7}')]
    assert _llm(server).ask(MSG, Answer).value == 7
    Script.steps = [("ok", "nope"), ("ok", "still nope")]
    with pytest.raises(LLMError, match="invalid JSON twice"):
        _llm(server).ask(MSG, Answer)


def test_auth_errors_are_not_retried(server):
    Script.steps = [("status", 401)]
    with pytest.raises(LLMError, match="check the model name, key"):
        _llm(server).ask(MSG, Answer)
    assert len(Script.requests) == 1


def test_persistent_rate_limit_gives_up(server):
    Script.steps = [("status", 429)] * 4
    with pytest.raises(LLMError, match="after 3 retries"):
        _llm(server).ask(MSG, Answer)
    assert len(Script.requests) == 4
