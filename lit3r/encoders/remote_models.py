"""Encoders and the reranker behind HTTP servers (``models.encoder_backend = "server"``,
``models.reranker = "server"``).

:class:`RemoteEncoder` speaks the OpenAI embeddings API (``POST {url}/v1/embeddings`` with
``{"model", "input": [texts]}``, reply ``{"data": [{"index", "embedding"}]}``), which OpenAI,
vLLM, TEI, Infinity, Ollama and llama.cpp's server all serve. :class:`RemoteReranker` speaks the
rerank API of TEI, Infinity, Cohere and llama.cpp (``POST {url}/rerank`` with ``{"model", "query",
"documents", "texts"}``; reply ``[{"index", "score"}]`` or ``{"results": [{"index",
"relevance_score"}]}``).

Requests carry ``batch_size`` texts each; up to ``concurrency`` are in flight at once (a thread
pool). A transient failure (connection refused or reset, timeout, HTTP 408/409/429/5xx; a 429's
``Retry-After`` is honoured) is retried with jittered exponential waits while the call's time
budget (``budget_s``) lasts; auth (401/403) and other 4xx fail at once. Every failure is one
:class:`ModelError` line naming the server, the fault and the fix, like the LLM client's
(lit3r/llm/client.py). Vectors are L2-normalised here (float32), whatever the server returns.
The standard library's ``urllib`` carries the requests (no extra dependency).
"""

from __future__ import annotations

import json
import random
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

import numpy as np

from lit3r.encoders.spec import normalise
from lit3r.errors import ModelError

#: HTTP statuses retried within the budget.
TRANSIENT_STATUS = (408, 409, 429, 500, 502, 503, 504)


def endpoint(url: str, path: str) -> str:
    """``url`` + ``path``, where ``url`` is a server root (``http://host:8080``) or already ends
    in ``/v1`` (the OpenAI base URL form): ``endpoint("http://h:1/v1", "/v1/embeddings")`` is
    ``http://h:1/v1/embeddings``."""
    url = url.rstrip("/")
    if url.endswith("/v1") and path.startswith("/v1/"):
        path = path[3:]
    return url + path


class _Client:
    """POST JSON with retries inside a time budget (module docstring); ``what`` names the server
    in messages ("embedding server http://...")."""

    def __init__(self, url: str, what: str, *, api_key: Optional[str], timeout_s: float, budget_s: float,
                 concurrency: int) -> None:
        self.url, self.what = url, what
        self.api_key = api_key
        self.timeout_s, self.budget_s = float(timeout_s), float(budget_s)
        self.concurrency = max(1, int(concurrency))
        self._local = threading.local()

    def post(self, path: str, payload: dict, deadline: float) -> Any:
        target = endpoint(self.url, path)
        body = json.dumps(payload).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        attempt = 0
        while True:
            attempt += 1
            wait, fault = self._once(target, body, headers, deadline)
            if fault is None:
                return wait
            if wait is None or time.monotonic() + wait >= deadline:
                budget = f" after {attempt} attempts in the {self.budget_s:g} s budget" if wait is not None else ""
                raise ModelError(f"{self.what}: {fault}{budget}")
            time.sleep(wait)

    def _once(self, target: str, body: bytes, headers: dict, deadline: float) -> tuple[Any, Optional[str]]:
        """``(reply, None)`` on success; ``(seconds to wait, fault)`` for a transient failure;
        ``(None, fault)`` for one no retry can fix."""
        timeout = max(0.1, min(self.timeout_s, deadline - time.monotonic()))
        request = urllib.request.Request(target, data=body, headers=headers, method="POST")
        backoff = min(8.0, 0.5 * 2 ** getattr(self._local, "fails", 0)) * (0.5 + random.random())
        try:
            with urllib.request.urlopen(request, timeout=timeout) as resp:
                data = json.loads(resp.read().decode("utf-8"))
            self._local.fails = 0
            return data, None
        except urllib.error.HTTPError as exc:
            detail = " ".join(exc.read().decode("utf-8", "replace").split())[:160]
            self._local.fails = getattr(self._local, "fails", 0) + 1
            if exc.code in (401, 403):
                return None, f"HTTP {exc.code} (not authorised): set the server's API key in LIT3R_MODELS__SERVER_API_KEY"
            if exc.code in TRANSIENT_STATUS:
                after = exc.headers.get("Retry-After") if exc.headers else None
                wait = float(after) if after and after.replace(".", "", 1).isdigit() else backoff
                return wait, f"HTTP {exc.code} ({detail or exc.reason}): check the server's log or try again later"
            return None, (f"HTTP {exc.code} ({detail or exc.reason}): check the model name and the URL "
                          f"(models.server_model, models.server_url)")
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            self._local.fails = getattr(self._local, "fails", 0) + 1
            reason = getattr(exc, "reason", exc)
            return backoff, f"cannot reach {target} ({' '.join(str(reason).split())[:120]}): start the server or fix the URL"
        except ValueError as exc:  # a reply that is not JSON
            return backoff, f"the reply of {target} is not JSON ({' '.join(str(exc).split())[:120]})"


class RemoteEncoder:
    """A bi-encoder served at ``url`` (OpenAI ``/v1/embeddings``) under the name ``model``.

    ``batch_size``: texts per request; ``concurrency``: requests in flight; ``timeout_s``: one
    request's limit; ``budget_s``: all retries of one request; ``query_prompt``: a literal prefix
    put before each query. Attributes ``name`` (``model``), ``dim`` (asked of the server with one
    probe text at load), ``device`` (the URL), ``backend`` (``"server"``). Raises
    :class:`ModelError` (one line) when the server cannot be reached or fails.
    """

    def __init__(self, url: str, model: str, *, batch_size: int = 64, concurrency: int = 4,
                 timeout_s: float = 120.0, budget_s: float = 300.0, api_key: Optional[str] = None,
                 query_prompt: Optional[str] = None) -> None:
        self.name, self.device, self.backend = model, url, "server"
        self.batch_size = max(1, int(batch_size))
        self.query_prompt = query_prompt
        self._client = _Client(url, f"embedding server {url} (model {model})", api_key=api_key, timeout_s=timeout_s,
                               budget_s=budget_s, concurrency=concurrency)
        self.dim = int(self._batch(["probe"]).shape[1])

    def _batch(self, texts: list[str]) -> np.ndarray:
        deadline = time.monotonic() + self._client.budget_s
        reply = self._client.post("/v1/embeddings", {"model": self.name, "input": texts}, deadline)
        try:
            rows = sorted(reply["data"], key=lambda d: d.get("index", 0))
            vecs = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ModelError(f"{self._client.what}: the reply is not an OpenAI embeddings reply (no data[].embedding):"
                             f" point models.server_url at an OpenAI-compatible server") from None
        if vecs.ndim != 2 or len(vecs) != len(texts):
            raise ModelError(f"{self._client.what}: {len(vecs)} vectors for {len(texts)} texts: the server does not "
                             f"embed a list of inputs; use one that does (vLLM, TEI, Infinity, llama.cpp)")
        return vecs

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """float32 (len(texts), dim) unit rows, in order; requests of ``batch_size`` texts, at
        most ``concurrency`` at once. An empty list gives (0, dim)."""

        texts = [t if t.strip() else " " for t in texts]  # some servers reject an empty input
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        batches = [texts[i:i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        if len(batches) == 1:
            return normalise(self._batch(batches[0]))
        with ThreadPoolExecutor(max_workers=min(self._client.concurrency, len(batches))) as pool:
            parts = list(pool.map(self._batch, batches))
        return normalise(np.concatenate(parts, axis=0))

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """As :meth:`encode`, with ``query_prompt`` put before each text."""
        prefix = self.query_prompt or ""
        return self.encode([prefix + t for t in texts])

    def __repr__(self) -> str:
        return f"RemoteEncoder({self.name!r}, dim={self.dim}, url={self.device!r})"


class RemoteReranker:
    """A cross-encoder served at ``url`` (``/rerank``: TEI, Infinity, Cohere, llama.cpp) under the
    name ``model``; ``batch_size`` texts per request, the rest as :class:`RemoteEncoder`."""

    def __init__(self, url: str, model: str, *, batch_size: int = 32, concurrency: int = 4,
                 timeout_s: float = 120.0, budget_s: float = 300.0, api_key: Optional[str] = None) -> None:
        self.name, self.device = model, url
        self.batch_size = max(1, int(batch_size))
        self._client = _Client(url, f"rerank server {url} (model {model})", api_key=api_key, timeout_s=timeout_s,
                               budget_s=budget_s, concurrency=concurrency)

    def _batch(self, query: str, texts: list[str]) -> np.ndarray:
        deadline = time.monotonic() + self._client.budget_s
        reply = self._client.post("/rerank", {"model": self.name, "query": query, "documents": texts,
                                              "texts": texts, "return_documents": False}, deadline)
        rows = reply.get("results") if isinstance(reply, dict) else reply
        out = np.full(len(texts), np.nan, dtype=np.float32)
        try:
            for r in rows or []:
                out[int(r["index"])] = float(r.get("score", r.get("relevance_score")))
        except (KeyError, TypeError, ValueError, IndexError):
            raise ModelError(f"{self._client.what}: the reply is not a rerank reply ([{{index, score}}] or "
                             f"{{results: [{{index, relevance_score}}]}}): point models.reranker_url at a "
                             f"TEI, Infinity, Cohere or llama.cpp rerank server") from None
        if np.isnan(out).any():
            raise ModelError(f"{self._client.what}: {int(np.isnan(out).sum())} of {len(texts)} texts got no score: "
                             f"check the server's top_n / batch limits (models.batch_size)")
        return out

    def scores(self, query: str, texts: list[str]) -> np.ndarray:
        """float32 (len(texts),): the server's relevance of each text, higher = more relevant."""
        texts = list(texts)
        if not texts:
            return np.zeros(0, np.float32)
        batches = [texts[i:i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        with ThreadPoolExecutor(max_workers=min(self._client.concurrency, len(batches))) as pool:
            parts = list(pool.map(lambda b: self._batch(query, b), batches))
        return np.concatenate(parts)

    def __repr__(self) -> str:
        return f"RemoteReranker({self.name!r}, url={self.device!r})"
