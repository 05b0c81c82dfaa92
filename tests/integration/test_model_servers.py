"""Encoders behind a server (issue 27, item 3): the packaged MiniLM served by a REAL llama.cpp
server (llama_cpp.server in embedding mode, from the dev extra) on 127.0.0.1, its GGUF written at
test time (tests/servers/minilm_gguf.py). An index built through the server equals the in-process
one within cosine 0.99, its manifest records the model, the backend and the dimension, and
`lit3r ask` answers through it. The client's faults: a closed port, a 401 and transient 503s
(a misbehaving local server) give one line or are retried within the budget."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from tests.conftest import CORPUS, ROOT
from tests.integration.conftest import send_json

PAPER = "1706.03762"
MODEL = "all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def minilm_server(tmp_path_factory):
    pytest.importorskip("gguf", reason="the dev extra (gguf) is not installed")
    from tests.servers import llama_server
    from tests.servers.minilm_gguf import write_minilm_gguf

    work = tmp_path_factory.mktemp("minilm-server")
    gguf_path = write_minilm_gguf(work / "minilm.gguf")
    server = llama_server.start(work, str(gguf_path), timeout=300, args=(
        "--embedding", "true", "--n_ctx", "256", "--n_batch", "256", "--n_ubatch", "256", "--model_alias", MODEL))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server_home(minilm_server, tmp_path_factory):
    pdfs, home = tmp_path_factory.mktemp("pdfs"), tmp_path_factory.mktemp("server-home")
    os.symlink(CORPUS / "pdfs" / f"{PAPER}.pdf", pdfs / f"{PAPER}.pdf")
    (home / "config.toml").write_text(
        f'[models]\nencoder_backend = "server"\nserver_url = "{minilm_server.url}"\nchunk_encoder = "{MODEL}"\n'
        f'paper_encoder = "{MODEL}"\nbatch_size = 16\nserver_concurrency = 2\n')
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), "--no-images"],
                         cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0 and "1 paper(s) encoded" in res.stdout, res.stderr[-2000:]
    return home


def test_the_index_built_through_the_server_equals_the_in_process_one(server_home):
    from graph.search.embedded import EmbeddedSearchIndex
    from lit3r.config import PACKAGED_MINILM
    from lit3r.models import load_encoder

    rows = [json.loads(line) for line in (server_home / "chunks.jsonl").read_text().splitlines()]
    served = EmbeddedSearchIndex.open(server_home / "index").vectors_of([r["chunk_id"] for r in rows])
    local = load_encoder(PACKAGED_MINILM, device="cpu", backend="onnx").encode([r["text"] for r in rows])
    cos = (served * local).sum(axis=1)
    assert served.shape == local.shape == (len(rows), 384)
    assert cos.min() >= 0.99, (float(cos.min()), rows[int(cos.argmin())]["text"][:80])


def test_the_manifest_records_the_served_model_and_its_dimension(server_home, minilm_server):
    manifest = json.loads((server_home / "index" / "manifest.json").read_text())
    assert manifest["dim"] == 384
    models = manifest["models"]
    assert (models["chunk_encoder"], models["encoder_backend"], models["server_url"]) == (
        MODEL, "server", minilm_server.url)
    assert "server_api_key" not in models


def test_ask_answers_through_the_server(server_home):
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(server_home), "ask",
                          "What BLEU score does the Transformer reach on WMT 2014 English-to-German?"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0 and PAPER in res.stdout, res.stderr[-2000:]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_closed_port_gives_one_line_within_the_budget():
    from lit3r.encoders.remote_models import RemoteEncoder
    from lit3r.errors import ModelError

    url = f"http://127.0.0.1:{_free_port()}"
    t = time.monotonic()
    with pytest.raises(ModelError) as info:
        RemoteEncoder(url, MODEL, budget_s=2, timeout_s=1)
    assert time.monotonic() - t < 15
    message = str(info.value)
    assert "\n" not in message and url in message and "start the server or fix the URL" in message


class _Flaky(http.server.BaseHTTPRequestHandler):
    """503 (Retry-After 0) to the first two requests, then 384-d one-hot vectors; 401 when the
    model is "locked"."""

    calls = 0

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body["model"] == "locked":
            return send_json(self, 401, {"error": {"message": "invalid api key"}})
        type(self).calls += 1
        if type(self).calls <= 2:
            return send_json(self, 503, {"error": "loading"}, {"Retry-After": "0"})
        data = [{"index": i, "embedding": np.eye(384)[i % 384].tolist()} for i, _ in enumerate(body["input"])]
        return send_json(self, 200, {"data": data[::-1]})

    def log_message(self, *args):
        pass


def test_transient_errors_are_retried_and_auth_fails_at_once():
    from lit3r.encoders.remote_models import RemoteEncoder
    from lit3r.errors import ModelError

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        enc = RemoteEncoder(url, MODEL, batch_size=3, concurrency=2, budget_s=30)
        vecs = enc.encode([f"text {i}" for i in range(7)])
        assert _Flaky.calls >= 5 and enc.dim == 384
        assert np.array_equal(vecs.argmax(axis=1), [0, 1, 2, 0, 1, 2, 0])  # order kept across batches
        with pytest.raises(ModelError, match="HTTP 401") as info:
            RemoteEncoder(url, "locked", budget_s=30)
        assert "\n" not in str(info.value) and "attempts" not in str(info.value)
    finally:
        server.shutdown()
        server.server_close()
