"""LLM faults: what each failure means, how long to wait, when to stop calling (issue 16, item 2).

Classes (``LLMError.kind``):

- fatal, never retried (:class:`lit3r.errors.FatalLLMError`): ``auth`` (HTTP 401/403), ``quota``
  (429 with ``insufficient_quota``: no retry can fix it), ``bad_request`` (400/404/422 and the
  other 4xx), ``malformed`` (a 200 body that is not a chat completion: :mod:`lit3r.llm.wire`);
- transient, retried within the budget (:class:`lit3r.errors.TransientLLMError`): ``rate_limit``
  (429, its ``retry-after`` honoured), ``server`` (5xx, a malformed response), ``timeout``,
  ``connection`` (refused, reset);
- ``overflow`` (:class:`lit3r.errors.ContextOverflow`): the prompt does not fit the context (a
  llama.cpp ``ValueError: Requested tokens (N) exceed context window of M``, an HTTP 400 that
  says so): the prompt is shrunk once (:mod:`lit3r.llm.fit`);
- ``length``, ``refusal``, ``invalid`` (no valid JSON), ``budget`` (the question's retry budget is
  spent), ``deadline`` (its ``llm.question_deadline_s`` is), ``circuit_open`` (:class:`Breaker`):
  raised by :class:`lit3r.llm.client.StructuredLLM`.

:func:`classify_openai` maps an ``openai`` exception to one of these; :func:`overflow_from_text`
reads the token counts out of an overflow message; :func:`backoff_wait` is the jittered wait;
:class:`Breaker` opens after ``llm.breaker_failures`` consecutive failed attempts (transient or
fatal: a server that answers every request with the same 400 or 404 is not asked again question
after question; one auth or quota error opens it at once) and stays open for the rest of the run.
Every message carries the server's words through :func:`lit3r.present.redact.redact` (a server may echo
the key), and names the key only as ``sk-...abcd``.
"""

from __future__ import annotations

import random
import re
import threading
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Optional

from lit3r.errors import ContextOverflow, FatalLLMError, LLMError, TransientLLMError
from lit3r.present.redact import key_mask, redact

#: fault kinds that are retried
TRANSIENT = ("rate_limit", "server", "timeout", "connection")
#: fault kinds that open the breaker at once (every later call would fail the same way)
OPENS_AT_ONCE = ("auth", "quota")
#: Replies that came back but cannot be used: cut at the token limit, over the context after
#: the shrink, refused, invalid JSON after the repair. The same kind ``threshold`` asks in a row
#: opens the breaker too (each prompt differs, so no retry of one prompt can notice the pattern).
UNUSABLE = ("length", "overflow", "refusal", "invalid")

_OVERFLOW_WORDS = re.compile(r"context|too long|maximum .*length|exceeds? .*(tokens|length)", re.I)
_OVERFLOW_FIX = ("raise llm.n_ctx (or the server's context size) or send less text (llm.profile = \"small\", fewer "
                 "read.chunks_per_paper, a smaller read.chunk_chars)")


def one_line(text: object, limit: int = 200) -> str:
    """``text`` as one line of at most ``limit`` characters, secrets masked (:func:`lit3r.present.redact.redact`)."""
    return redact(" ".join(str(text).split()))[:limit]


def overflow_from_text(message: str, where: str) -> Optional[ContextOverflow]:
    """A :class:`ContextOverflow` when ``message`` says the prompt exceeds the context (llama.cpp:
    "Requested tokens (8811) exceed context window of 8192"; llama.cpp server: "the request
    exceeds the available context size"; vLLM/OpenAI: "maximum context length is 8192 tokens.
    However, you requested 9000 tokens"), else None. ``where``: the model's name, for the message."""
    if not _OVERFLOW_WORDS.search(message) or not re.search(r"exceed|maximum|too long|context_length", message, re.I):
        return None
    requested = limit = None
    m = re.search(r"Requested tokens \((\d+)\) exceed context window of (\d+)", message)
    if m:
        requested, limit = int(m.group(1)), int(m.group(2))
    else:
        m_lim = re.search(r"(?:maximum context length is|context window of|context length of|n_ctx\W+)\s*(\d+)",
                          message, re.I)
        m_req = re.search(r"(?:requested|n_prompt_tokens\W+|resulted in)\s*(\d+)", message, re.I)
        limit = int(m_lim.group(1)) if m_lim else None
        requested = int(m_req.group(1)) if m_req else None
    sizes = f" ({requested} > {limit} tokens)" if requested and limit else ""
    return ContextOverflow(f"{where}: the prompt does not fit the context{sizes}: {_OVERFLOW_FIX}",
                           requested=requested, limit=limit)


def retry_after(headers: Any) -> Optional[float]:
    """Seconds from a ``retry-after-ms`` or ``retry-after`` header (seconds or an HTTP date); None
    when absent or unreadable."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            import time

            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _body_text(exc: Any) -> str:
    """What an openai status error says: the server's message (else the SDK's), its code and
    type when the message does not name them, and llama.cpp's token counts."""
    body = getattr(exc, "body", None)
    message = str(body.get("message") or "") if isinstance(body, dict) else ""
    parts = [message or str(getattr(exc, "message", "") or exc)]
    parts += [str(x) for x in (getattr(exc, "code", None), getattr(exc, "type", None)) if x and str(x) not in parts[0]]
    if isinstance(body, dict):
        parts += [f"{k}={body[k]}" for k in ("n_prompt_tokens", "n_ctx") if k in body]
    return " ".join(p for p in parts if p)


def classify_openai(exc: Exception, name: str, timeout: float, key: Optional[str] = None) -> LLMError:
    """The :class:`LLMError` an ``openai`` exception means (module docstring); ``name``: the
    model's name, ``timeout``: ``llm.timeout`` and ``key``: the API key sent (shown only as
    :func:`lit3r.present.redact.key_mask`), for the message."""
    import openai

    if isinstance(exc, openai.APITimeoutError):  # before APIConnectionError, its parent
        return TransientLLMError(f"{name}: no reply within llm.timeout = {timeout:g} s", kind="timeout")
    if isinstance(exc, openai.APIConnectionError):
        return TransientLLMError(f"{name}: cannot connect ({one_line(exc.__cause__ or exc, 120)}): check "
                                 "llm.base_url and that the server runs", kind="connection")
    status = getattr(exc, "status_code", None)
    text = redact(_body_text(exc))
    if isinstance(exc, openai.AuthenticationError) or status in (401, 403):
        which = f"the key {key_mask(key)}" if key else "a request without a key"
        return FatalLLMError(f"{name}: HTTP {status}, the endpoint refuses {which} ({one_line(text, 120)}): check "
                             "llm.api_key / OPENAI_API_KEY", kind="auth")
    if status == 429:
        if "insufficient_quota" in text or "quota" in text.lower():
            return FatalLLMError(f"{name}: HTTP 429 insufficient_quota, the account has no quota left: add credit, "
                                 "or use another llm.api_key", kind="quota")
        headers = getattr(getattr(exc, "response", None), "headers", None)
        return TransientLLMError(f"{name}: HTTP 429 rate limited ({one_line(text, 100)})", kind="rate_limit",
                                 retry_after=retry_after(headers))
    if status is not None and (status >= 500 or status in (408, 409)):
        headers = getattr(getattr(exc, "response", None), "headers", None)
        return TransientLLMError(f"{name}: HTTP {status} ({one_line(text, 100)})", kind="server",
                                 retry_after=retry_after(headers))
    if status in (400, 413, 422):
        overflow = overflow_from_text(text, name)
        if overflow is not None:
            return overflow
    if status is not None:
        fix = "check llm.model and llm.base_url" if status == 404 else "check llm.model, llm.json_mode and the endpoint"
        return FatalLLMError(f"{name}: HTTP {status} bad request ({one_line(text, 120)}): {fix}", kind="bad_request")
    return TransientLLMError(f"{name}: {type(exc).__name__}: {one_line(exc, 120)}", kind="server")


def backoff_wait(attempt: int, backoff: float, cap: float, retry_after_s: Optional[float],
                 rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry number ``attempt`` (1, 2, ...): the server's ``retry_after_s``
    when it gave one (plus up to 10 % jitter), else ``backoff * 2**(attempt-1)`` with equal
    jitter (half fixed, half random); at most ``cap``."""
    if retry_after_s is not None:
        return min(cap, retry_after_s * (1 + 0.1 * rand()))
    base = min(cap, backoff * 2 ** (attempt - 1))
    return base / 2 + rand() * base / 2


class Breaker:
    """A circuit breaker for one endpoint, for the rest of the run: open after ``threshold``
    consecutive failed attempts (a success resets the count) or one auth/quota error. While
    open, :meth:`check` raises ``LLMError(kind="circuit_open")`` at once; ``notify`` gets one
    line when it opens (``threshold`` 0: never opens)."""

    def __init__(self, name: str, threshold: int, notify: Callable[[str], None]) -> None:
        self.name, self.threshold, self.notify = name, threshold, notify
        self.failures = 0
        self.unusable_kind, self.unusable_in_row = "", 0
        self.reason: Optional[str] = None
        self.short = ""
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return self.reason is not None

    def check(self) -> None:
        """Raises LLMError(kind "circuit_open") when the breaker is open."""
        if self.reason is not None:
            raise LLMError(f"{self.name} is not called again in this run (it {self.short})", kind="circuit_open")

    def success(self) -> None:
        with self._lock:
            self.failures = 0

    def usable(self) -> None:
        """An ask ended with a valid reply: the run of unusable replies is broken."""
        with self._lock:
            self.unusable_kind, self.unusable_in_row = "", 0

    def unusable(self, exc: LLMError) -> bool:
        """Count one ask that ended with an unusable reply (``exc.kind`` in :data:`UNUSABLE`);
        ``threshold`` of the same kind in a row open the breaker (its line carries the last
        error, which names the setting to change). True when this one opened it."""
        with self._lock:
            if self.reason is not None or exc.kind not in UNUSABLE or not self.threshold:
                return False
            self.unusable_in_row = self.unusable_in_row + 1 if exc.kind == self.unusable_kind else 1
            self.unusable_kind = exc.kind
            if self.unusable_in_row < self.threshold:
                return False
            self.short = f"gave {self.unusable_in_row} unusable replies in a row: {exc.kind}"
            self.reason = (f"LLM {self.name}: {self.unusable_in_row} replies in a row unusable ({exc.kind}; last: "
                           f"{one_line(exc, 400)}); not called again in this run, the remaining questions take the "
                           "extractive answer")
        self.notify(self.reason)
        return True

    def failure(self, exc: LLMError) -> bool:
        """Count one failed attempt; True when this one opened the breaker."""
        with self._lock:
            if self.reason is not None:
                return False
            self.failures += 1
            if exc.kind in OPENS_AT_ONCE or (self.threshold and self.failures >= self.threshold):
                times = f"failed {self.failures} time(s) in a row" if exc.kind not in OPENS_AT_ONCE else "failed"
                self.short = f"{times}: {exc.kind}"
                self.reason = (f"LLM {self.name} {times} (last: {one_line(exc, 400)}); not called again in this run, "
                               "the remaining questions take the extractive answer")
                opened = True
            else:
                opened = False
        if opened:
            self.notify(self.reason or "")
        return opened
