"""Shared helpers of the fault tests (no conftest here on purpose: each module imports what it uses).

- :class:`LLMServer`: a real OpenAI-compatible HTTP server on 127.0.0.1 that misbehaves as told
  (one ``reply`` callable per request), counting requests and keeping their Authorization headers;
- :func:`hashing_home_of`: a data folder with two real papers ingested by a real `lit3r ingest`
  with the model-free ``hashing:64`` encoder (seconds to build), once per session;
- :func:`lit3r`: the real CLI in a subprocess, with a time bound;
- :func:`files_under`: every regular file below a folder, for "the key is nowhere" checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest

from tests.conftest import CORPUS, ROOT

#: Papers of :func:`hashing_home_of`; QUESTION is answered from them without an LLM (EXTRACTIVE: the
#: start of that answer as `lit3r ask` prints it).
PAPERS = ("1706.03762", "2007.14062")
EXTRACTIVE = "Answer: "
QUESTION = "Which paper proposes sparse attention with random, window and global tokens for longer sequences?"


def completion(content: Optional[str], model: str = "m", finish: str = "stop") -> dict:
    """A well-formed chat.completion body whose message says ``content``."""
    return {"id": "x", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}


def send(handler: BaseHTTPRequestHandler, code: int, data: bytes, content_type: str = "application/json",
         headers: Optional[dict] = None) -> None:
    """Write ``data`` as a whole response with status ``code``."""
    handler.send_response(code)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)


def send_json(handler: BaseHTTPRequestHandler, code: int, payload, headers: Optional[dict] = None) -> None:
    send(handler, code, json.dumps(payload).encode(), headers=headers)


def trickle(handler: BaseHTTPRequestHandler, data: bytes, every_s: float, stop: threading.Event) -> None:
    """A 200 reply whose ``data`` comes one byte every ``every_s`` seconds (each byte resets a
    read timeout); ends early when ``stop`` is set or the client hangs up."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.flush()
    for i in range(len(data)):
        if stop.wait(every_s):
            return
        handler.wfile.write(data[i:i + 1])
        handler.wfile.flush()


#: reply(handler, n, body): answer request number ``n`` (1, 2, ...) whose JSON body is ``body``.
Reply = Callable[[BaseHTTPRequestHandler, int, dict], None]


@dataclass
class LLMServer:
    """A misbehaving OpenAI-compatible server: ``reply`` answers every POST; ``requests`` counts
    them, ``auth`` keeps their Authorization headers, ``url`` is its ``/v1`` base URL."""

    reply: Reply
    requests: int = 0
    auth: list = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    def __enter__(self) -> "LLMServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def handle(self):
                try:
                    super().handle()
                except (BrokenPipeError, ConnectionResetError):  # the client gave up first
                    pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests += 1
                server.auth.append(self.headers.get("Authorization", ""))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                server.reply(self, server.requests, body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def llm_env(url: str, key: str = "k", **settings: object) -> dict:
    """The environment of a `lit3r` subprocess that uses the OpenAI provider at ``url``: no
    cache, no images, JSON object mode, no abstention (the hashing encoder's cosines are low: every
    LLM step is asked); ``settings`` are more ``llm.*`` values."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LIT3R_", "OPENAI_"))}
    env.update({"LIT3R_READ__ABSTAIN_COSINE": "-1", "LIT3R_LLM__BASE_URL": url, "LIT3R_LLM__MODEL": "test-model",
                "LIT3R_LLM__API_KEY": key, "LIT3R_LLM__CACHE": "false", "LIT3R_LLM__VISION": "false",
                "LIT3R_LLM__JSON_MODE": "object_schema"})
    env.update({f"LIT3R_LLM__{k.upper()}": str(v) for k, v in settings.items()})
    return env


@dataclass
class Ran:
    """A finished CLI run: exit code, outputs, seconds."""

    code: int
    out: str
    err: str
    seconds: float


def lit3r(home: Path, args: list[str], env: dict, timeout: float = 240) -> Ran:
    """``python -m lit3r.cli --home HOME ARGS`` in a subprocess; fails the test past ``timeout`` s."""
    t = time.perf_counter()
    try:
        res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), *args], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"lit3r {' '.join(args)} ran past {timeout} s")
    return Ran(res.returncode, res.stdout, res.stderr, time.perf_counter() - t)


def files_under(folder: Path) -> Iterator[Path]:
    """Every regular file below ``folder`` (links not followed)."""
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file() and not path.is_symlink():
            yield path


_HOMES: dict = {}


def hashing_home_of(tmp_path_factory) -> Path:
    """A data folder with :data:`PAPERS` ingested by a real `lit3r ingest` with the hashing:64
    encoder, built once per session (each module's ``hashing_home`` fixture returns it). Tests
    that write into it (traces, caches) work on a copy (:func:`home_copy`)."""
    if "home" in _HOMES:
        return _HOMES["home"]
    if not (CORPUS / "pdfs").is_dir():
        pytest.fail(f"real test data missing: {CORPUS / 'pdfs'} (the repo expects ../shared/data beside it)")
    pdfs, home = tmp_path_factory.mktemp("fault-pdfs"), tmp_path_factory.mktemp("fault-home")
    for pid in PAPERS:
        os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
    (home / "config.toml").write_text('[models]\nchunk_encoder = "hashing:64"\npaper_encoder = "hashing:64"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIT3R_")}
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), "--no-images"],
                         cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0 and "2 paper(s) encoded" in res.stdout, res.stderr[-2000:]
    _HOMES["home"] = home
    return home


def home_copy(home: Path, tmp_path: Path) -> Path:
    """A copy of ``home`` that a test may write into."""
    import shutil

    return Path(shutil.copytree(home, tmp_path / "home", symlinks=True))
