"""The LLM client: one :class:`Chat` seam, validated JSON outputs, retries, a disk cache.

The providers behind the seam are in :mod:`lit3r.llm.providers`.

:class:`StructuredLLM` asks for JSON that validates against a pydantic model (JSON-schema response
format where the server supports it), retries rate limits, timeouts and connection errors with
exponential backoff (tenacity), repairs malformed JSON once, then raises :class:`LLMError`
(callers catch it and continue). Answers are cached on disk keyed by model + messages + schema,
so reruns are reproducible and free; tokens and cost are counted per question (:class:`Usage`).
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from graph.atomic import write_text_atomic
from lit3r.errors import LLMError, TransientLLMError

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


@dataclass
class Reply:
    """One chat completion: text and token counts."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Chat(Protocol):
    """A provider: ``name`` (model id, part of the cache key) and one chat call."""

    name: str
    supports_images: bool
    concurrent: bool

    def chat(self, messages: list[dict], schema: Optional[dict], max_tokens: int, temperature: float) -> Reply:
        """Raises TransientLLMError for retryable failures, LLMError for the others."""


@dataclass
class Usage:
    """LLM calls, tokens and cost (USD) of one question or run."""

    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    failures: int = 0
    seconds: float = 0.0

    def add(self, other: "Usage") -> None:
        for k in self.__dataclass_fields__:
            setattr(self, k, getattr(self, k) + getattr(other, k))


#: The usage of the question being answered in this context (None: none is tracked).
_QUESTION_USAGE: contextvars.ContextVar[Optional[Usage]] = contextvars.ContextVar("lit3r_question_usage", default=None)


@contextmanager
def track_usage() -> Iterator[Usage]:
    """Count the LLM calls made in this context into a fresh :class:`Usage`, exact per question
    when several questions run at once (``lit3r run --workers N``): each question's thread has
    its own context, and the threads a question starts get a copy of it (:func:`in_context`)."""
    usage = Usage()
    token = _QUESTION_USAGE.set(usage)
    try:
        yield usage
    finally:
        _QUESTION_USAGE.reset(token)


def in_context(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` to run in another thread with a copy of the caller's context (so that its LLM calls
    count for the caller's question). Call it in the calling thread, once per task."""
    ctx = contextvars.copy_context()
    return lambda *args, **kwargs: ctx.run(fn, *args, **kwargs)


@dataclass
class StructuredLLM:
    """Validated JSON answers from a :class:`Chat` with retries, one repair and a disk cache.

    ``cache_dir`` None disables the cache; ``price_in``/``price_out``: USD per 1M tokens.
    """

    chat: Chat
    cache_dir: Optional[Path] = None
    retries: int = 3
    backoff: float = 1.0
    max_tokens: int = 512
    temperature: float = 0.0
    price_in: float = 0.0
    price_out: float = 0.0
    usage: Usage = field(default_factory=Usage)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def _count(self, **deltas: float) -> None:
        """Add to the usage counters (calls may run in several threads)."""
        question = _QUESTION_USAGE.get()
        with self._lock:
            for k, v in deltas.items():
                setattr(self.usage, k, getattr(self.usage, k) + v)
                if question is not None:
                    setattr(question, k, getattr(question, k) + v)

    def ask(self, messages: list[dict], model: type[M]) -> M:
        """The reply to ``messages`` parsed as ``model``. Raises LLMError when no valid reply
        came after the retries and one repair attempt."""
        schema = model.model_json_schema()
        key = hashlib.sha256(json.dumps([self.chat.name, messages, schema], sort_keys=True).encode()).hexdigest()
        cached = self._cache_get(key)
        if cached is not None:
            try:
                self._count(cached=1)
                return model.model_validate_json(cached)
            except ValidationError:
                pass
        reply = self._call(messages, schema)
        try:
            out = _parse(reply.text, model)
        except (ValidationError, ValueError) as exc:
            repair = messages + [{"role": "assistant", "content": reply.text},
                                 {"role": "user", "content": "That was not valid JSON for the requested format "
                                  f"({first_line(exc)}). Reply again with only the JSON object."}]
            reply = self._call(repair, schema)
            try:
                out = _parse(reply.text, model)
            except (ValidationError, ValueError) as exc2:
                self._count(failures=1)
                raise LLMError(f"{self.chat.name} gave invalid JSON twice ({first_line(exc2)}): "
                               "use a stronger model or check the endpoint") from None
        self._cache_put(key, out.model_dump_json())
        return out

    def _call(self, messages: list[dict], schema: dict) -> Reply:
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        t = time.perf_counter()
        try:
            for attempt in Retrying(stop=stop_after_attempt(self.retries + 1), reraise=True,
                                    retry=retry_if_exception_type(TransientLLMError),
                                    wait=wait_exponential(multiplier=self.backoff, max=30 * self.backoff)):
                with attempt:
                    reply = self.chat.chat(messages, schema, self.max_tokens, self.temperature)
        except TransientLLMError as exc:
            self._count(failures=1)
            raise LLMError(f"{self.chat.name}: still failing after {self.retries} retries ({exc})") from None
        finally:
            self._count(seconds=time.perf_counter() - t)
        self._count(calls=1, prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
                    cost_usd=(reply.prompt_tokens * self.price_in + reply.completion_tokens * self.price_out) / 1e6)
        return reply

    def _cache_get(self, key: str) -> Optional[str]:
        if self.cache_dir is None:
            return None
        path = self.cache_dir / key[:2] / f"{key}.json"
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def _cache_put(self, key: str, value: str) -> None:
        if self.cache_dir is None:
            return
        path = self.cache_dir / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, value)


def first_line(exc: Exception) -> str:
    """An exception's message as one line of at most 200 characters."""
    return " ".join(str(exc).split())[:200]


def _parse(text: str, model: type[M]) -> M:
    """Parse the first JSON object in ``text`` (models wrap JSON in prose or code fences)."""
    text = text.strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    return model.model_validate_json(text[start : end + 1])
