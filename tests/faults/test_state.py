"""Fault class: damaged or missing state (issue 25, item 6). A damaged LLM cache entry is
ignored, asked again, rewritten and warned about in one line; a data folder whose index lost a
part (its manifest) refuses to answer and names the fix; a full disk names the path and the
space needed; nothing already stored is lost."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pydantic import BaseModel

from tests.faults.conftest import QUESTION, errors, lit3r


class _Answer(BaseModel):
    answer: str


class _OneReply(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that answers every chat completion with one JSON object."""

    calls = 0

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).calls += 1
        body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": '{"answer": "fresh"}'}}],
                           "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_a_damaged_llm_cache_entry_is_ignored_rewritten_and_warned_about(tmp_path, capfd):
    from lit3r import factory
    from lit3r.config import load_settings

    server = ThreadingHTTPServer(("127.0.0.1", 0), _OneReply)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings = load_settings(home=tmp_path, llm={"provider": "openai", "base_url":
                                                     f"http://127.0.0.1:{server.server_port}/v1", "model": "m",
                                                     "api_key": "k", "retries": 0})
        llm = factory.llm(settings)
        messages = [{"role": "user", "content": "answer"}]
        assert llm.ask(messages, _Answer).answer == "fresh" and _OneReply.calls == 1
        entries = [p for p in (tmp_path / "llm-cache").rglob("*.json")]
        assert len(entries) == 1
        assert llm.ask(messages, _Answer).answer == "fresh" and _OneReply.calls == 1  # from the cache
        capfd.readouterr()
        for damage in (b"\xff\xfe not utf-8", b'{"answer": "cut sho', b"[1, 2]"):
            entries[0].write_bytes(damage)
            assert llm.ask(messages, _Answer).answer == "fresh"  # asked again, no traceback
            warned = [line for line in capfd.readouterr().err.splitlines() if line.strip()]
            assert len(warned) == 1 and warned[0].startswith(f"warning: LLM cache entry {entries[0]} is damaged ("), \
                warned
            assert json.loads(entries[0].read_text(encoding="utf-8")) == {"answer": "fresh"}  # rewritten
        assert _OneReply.calls == 4
    finally:
        server.shutdown()


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.endswith((".lock", "-wal", "-shm"))}


def test_an_index_without_its_manifest_refuses_to_answer_and_names_the_fix(home_copy):
    (home_copy / "index" / "manifest.json").unlink()
    records = {n: (home_copy / n).read_bytes() for n in ("papers.jsonl", "chunks.jsonl", "references.jsonl")}
    index = _digests(home_copy / "index")
    res, seconds = lit3r(home_copy, "ask", QUESTION, "--no-trace-graph")
    lines = errors(res.stderr)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert res.stdout == "", res.stdout  # no answer from the rest of the index
    assert len(lines) == 1 and "manifest.json" in lines[0] and "`lit3r doctor`" in lines[0] \
        and "`lit3r ingest PDF_DIR --rebuild`" in lines[0], lines
    assert {n: (home_copy / n).read_bytes() for n in records} == records
    assert seconds < 60, seconds
    assert _digests(home_copy / "index") == index  # the rest of the index is left as it was

def test_a_full_disk_names_the_path_and_the_space_needed_and_keeps_the_answered_lines(small_home, tmp_path):
    """--out on a file system with no space left (a link to /dev/full, where every write fails
    with ENOSPC)."""
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "q0", "question": QUESTION}) + "\n")
    out = tmp_path / "out.jsonl"
    os.symlink("/dev/full", out)
    res, seconds = lit3r(small_home, "run", "--queries", str(queries), "--out", str(out), "--no-trace-graph")
    lines = errors(res.stderr)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert len(lines) == 1 and "the disk is full" in lines[0] and "MB needed" in lines[0] \
        and (str(out) in lines[0] or "/dev/full" in lines[0]), lines
    assert seconds < 120, seconds
