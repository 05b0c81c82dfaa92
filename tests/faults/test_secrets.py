"""Secrets: an API key never shows, wherever it comes from (issue 25, item 1).

A real HTTP server on 127.0.0.1 plays a gateway that echoes the key it was sent: in its 401 body
(as some gateways do), or inside a 200 answer. The key is planted in the data folder's
config.toml or in OPENAI_API_KEY; `lit3r ask`, `ask --json`, `doctor` and `run` go through the
real CLI, and stdout, stderr, every file written in the data folder (traces, LLM cache, run
output) are searched for the key and for a middle part of it. The key may be named only as
``sk-...abcd``.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import CORPUS
from tests.faults.llm_servers import (
    EXTRACTIVE,
    QUESTION,
    LLMServer,
    completion,
    files_under,
    hashing_home_of,
    home_copy,
    lit3r,
    llm_env,
    send_json,
)

KEY = "sk-proj-Zq8XwR4tY7uIo0pAs5dF6gH2jK9lL3mNvB1c"
#: Parts of the key that must appear nowhere (the masked form keeps only the last four characters).
PARTS = (KEY, KEY[8:28], KEY[-12:-4])
SHOWN = "sk-...vB1c"


@pytest.fixture(scope="session")
def hashing_home(tmp_path_factory):
    return hashing_home_of(tmp_path_factory)


def echo_401(handler, n, body):
    """401 whose message quotes the Authorization header, the bare key and its URL-encoded form."""
    auth = handler.headers.get("Authorization", "")
    bare = auth.split()[-1] if auth else ""
    send_json(handler, 401, {"error": {"message": f"Incorrect API key provided: {auth}. Key {bare} is not valid "
                                                  f"(see https://gw.example/keys?api_key={bare}).",
                                       "type": "invalid_request_error", "param": bare, "code": "invalid_api_key"}})


def echo_200(handler, n, body):
    """A 200 chat completion whose answer repeats the key (a model that was shown it)."""
    auth = handler.headers.get("Authorization", "")
    words = f"the key is {auth.split()[-1]} and Bearer {auth.split()[-1]}"
    send_json(handler, 200, completion(json.dumps({"answer": words, "text": words, "subqueries": [words],
                                                   "missing": words, "sufficient": False, "ok": True})))


def assert_nowhere(texts: dict, home) -> None:
    for where, text in texts.items():
        for part in PARTS:
            assert part not in text, f"the key shows in {where}: {text[-2000:]}"
    for path in files_under(home):
        if path == home / "config.toml":  # the user's own file, where the key was planted
            continue
        data = path.read_bytes()
        for part in PARTS:
            assert part.encode() not in data, f"the key is written in {path}"


def plant(home, how: str) -> dict:
    """The CLI's environment with the key in ``home``'s config.toml or in OPENAI_API_KEY."""
    if how == "config.toml":
        with (home / "config.toml").open("a") as fh:
            fh.write(f'\n[llm]\napi_key = "{KEY}"\n')
    env = llm_env("", key="", timeout=10, retry_budget_s=10)
    del env["LIT3R_LLM__API_KEY"]
    if how == "OPENAI_API_KEY":
        env["OPENAI_API_KEY"] = KEY
    return env


@pytest.mark.parametrize("how", ["config.toml", "OPENAI_API_KEY"])
def test_a_401_that_echoes_the_key_shows_it_nowhere(hashing_home, tmp_path, how):
    home = home_copy(hashing_home, tmp_path)
    env = plant(home, how)
    with LLMServer(echo_401) as server:
        env["LIT3R_LLM__BASE_URL"] = server.url
        ask = lit3r(home, ["ask", "--llm", "openai", QUESTION], env)
        as_json = lit3r(home, ["ask", "--llm", "openai", "--json", QUESTION], env)
        doctor = lit3r(home, ["doctor"], {**env, "LIT3R_LLM__PROVIDER": "openai"})
        assert server.auth and all(KEY in a for a in server.auth)  # the key was sent: the server could echo it
    assert ask.code == 0 and as_json.code == 0 and ask.out.startswith(EXTRACTIVE), ask.err[-2000:]
    assert "Traceback" not in ask.err + as_json.err + doctor.err + doctor.out
    lines = [line for line in ask.err.splitlines() if "HTTP 401" in line]
    assert len(lines) == 1 and SHOWN in lines[0] and "llm.api_key" in lines[0], ask.err  # one line naming the key
    assert "HTTP 401" in doctor.out + doctor.err
    assert_nowhere({"ask stdout": ask.out, "ask stderr": ask.err, "ask --json": as_json.out,
                    "ask --json stderr": as_json.err, "doctor": doctor.out + doctor.err}, home)


def test_a_run_against_an_echoing_server_writes_the_key_nowhere(hashing_home, tmp_path):
    home = home_copy(hashing_home, tmp_path)
    env = plant(home, "config.toml")
    queries, out = tmp_path / "q.jsonl", home / "sub.jsonl"
    queries.write_text("".join(list((CORPUS / "questions_dev_inputs.jsonl").open())[:2]))
    texts = {}
    for name, reply in (("401", echo_401), ("200", echo_200)):
        with LLMServer(reply) as server:
            env["LIT3R_LLM__BASE_URL"] = server.url
            ran = lit3r(home, ["run", "--queries", str(queries), "--out", str(out), "--llm", "openai"], env)
            assert server.requests >= 1
        assert ran.code == 0 and "Traceback" not in ran.err, ran.err[-2000:]
        texts[f"run {name} stdout"], texts[f"run {name} stderr"] = ran.out, ran.err
        assert len(out.read_text().splitlines()) == 2
        out.unlink()
        (home / "sub.jsonl.traces.jsonl").rename(home / f"traces-{name}.jsonl")  # kept: searched below
    assert_nowhere(texts, home)


def test_an_answer_that_repeats_the_key_is_masked_in_answer_trace_and_cache(hashing_home, tmp_path):
    home = home_copy(hashing_home, tmp_path)
    env = plant(home, "config.toml")
    env["LIT3R_LLM__CACHE"] = "true"  # the LLM cache is written in the data folder
    with LLMServer(echo_200) as server:
        env["LIT3R_LLM__BASE_URL"] = server.url
        ask = lit3r(home, ["ask", "--llm", "openai", "--json", QUESTION], env)
        assert server.requests >= 1
    assert ask.code == 0 and "Traceback" not in ask.err, ask.err[-2000:]
    assert (home / "llm-cache").is_dir() and any(files_under(home / "llm-cache"))
    assert_nowhere({"ask --json": ask.out, "ask stderr": ask.err}, home)
