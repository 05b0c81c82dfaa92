"""The LLM client: one :class:`Chat` seam, validated JSON outputs, one retry layer, a disk cache.

The providers behind the seam are in :mod:`lit3r.llm.providers`; the fault classes, waits and
the circuit breaker in :mod:`lit3r.llm.faults`; prompt fitting in :mod:`lit3r.llm.fit`.

:class:`StructuredLLM` asks for JSON that validates against a pydantic model (JSON-schema response
format where the server supports it). It is the only retry layer (the providers' SDKs retry
nothing): fatal errors (auth, quota, bad request) fail at once; transient ones (rate limits with
their ``retry-after``, 5xx, timeouts, connection errors) are retried with jittered waits while
the question's budget (``llm.retry_budget_s``) lasts; an endpoint that keeps failing, or keeps
giving the same non-retryable error, is not called again in the run
(:class:`lit3r.llm.faults.Breaker`); a question's LLM calls end at ``llm.question_deadline_s``
(each request's own deadline is the provider's, never past the question's: :func:`deadline_left`).
Every reply's text is redacted (:func:`lit3r.present.redact.redact`) before it is parsed, shown, traced or
cached: a server that echoes the key cannot put it in an answer. A prompt over the context is
shrunk once, a reply cut at ``max_tokens`` is asked again once with more, malformed JSON is repaired
once; then :class:`LLMError` (``kind``: the fault class; callers catch it and fall back). Answers
are cached on disk keyed by model + messages + schema, so reruns are reproducible and free;
calls, tokens, cost, retries, faults and notes are counted per question (:class:`Usage`).
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from graph.atomic import write_text_atomic
from lit3r.errors import ContextOverflow, FatalLLMError, LLMError, TransientLLMError
from lit3r.llm.cache import read_entry
from lit3r.llm.faults import Breaker, backoff_wait
from lit3r.llm.fit import shrink_messages
from lit3r.present.redact import logger, redact

__all__ = ["Chat", "Reply", "Usage", "StructuredLLM", "LLMError", "TransientLLMError", "track_usage", "in_context",
           "parse_json", "first_line", "deadline_left"]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


@dataclass
class Reply:
    """One chat completion: text, token counts and why it stopped (``finish_reason``: "stop",
    "length" when cut at max_tokens, "" when the provider did not say)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""


class Chat(Protocol):
    """A provider: ``name`` (model id, part of the cache key) and one chat call."""

    name: str
    supports_images: bool
    concurrent: bool

    def chat(self, messages: list[dict], schema: Optional[dict], max_tokens: int, temperature: float) -> Reply:
        """Raises TransientLLMError for retryable failures, ContextOverflow for a prompt over the
        context, LLMRefusal for a refusal, FatalLLMError or LLMError for the others."""


@dataclass
class Usage:
    """LLM calls, tokens and cost (USD) of one question or run; ``failures``: asks that raised,
    ``faults``: their classes (:mod:`lit3r.llm.faults`), ``retries``: attempts retried,
    ``lost_seconds``: time failed attempts and waits cost (the budget's measure), ``notes``: what
    was adapted (prompt shrunk, more tokens); ``stages``: per pipeline stage (``decompose``,
    ``verify``, ``read_paper``, ``synthesize``: the ``stage`` of :meth:`StructuredLLM.ask`)
    ``{calls, prompt_tokens, completion_tokens, seconds, invalid, cut, failures}`` where
    ``invalid`` counts replies that were not valid JSON for the schema (repaired or not) and
    ``cut`` replies stopped at the token limit (``finish_reason: length``)."""

    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    failures: int = 0
    seconds: float = 0.0
    retries: int = 0
    lost_seconds: float = 0.0
    faults: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stages: dict[str, dict[str, float]] = field(default_factory=dict)
    #: The last failed attempt's one-line error (what the budget's notice names as the cause).
    last_fault: str = ""

    def add(self, other: "Usage") -> None:
        for k in self.__dataclass_fields__:
            if k == "last_fault":
                self.last_fault = other.last_fault or self.last_fault
            elif k == "stages":
                for stage, counts in other.stages.items():
                    mine = self.stages.setdefault(stage, dict.fromkeys(STAGE_COUNTS, 0))
                    for c, v in counts.items():
                        mine[c] = mine.get(c, 0) + v
            else:
                setattr(self, k, getattr(self, k) + getattr(other, k))


#: The per-stage counters of :attr:`Usage.stages`.
STAGE_COUNTS = ("calls", "prompt_tokens", "completion_tokens", "seconds", "invalid", "cut", "failures")


#: When the LLM call in progress in this context must end (``time.perf_counter()``; None: no bound).
_CALL_DEADLINE: contextvars.ContextVar[Optional[float]] = contextvars.ContextVar("lit3r_call_deadline", default=None)


def deadline_left() -> float:
    """Seconds the LLM call in progress may still take: what is left of its question's
    ``llm.question_deadline_s`` (infinity outside :meth:`StructuredLLM.ask`). A provider bounds
    its request by the smaller of this and its own deadline."""
    end = _CALL_DEADLINE.get()
    return float("inf") if end is None else end - time.perf_counter()


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
    """Validated JSON answers from a :class:`Chat`: one retry layer, a circuit breaker, the
    length and overflow retries, one repair and a disk cache (module docstring).

    ``cache_dir`` None disables the cache; ``price_in``/``price_out``: USD per 1M tokens;
    ``retries``: retries per call at most; ``backoff``: the first wait in seconds (doubling,
    jittered; a ``retry-after`` replaces it); ``budget_s``: seconds per question that failed
    attempts and waits may cost (``llm.retry_budget_s``); ``question_s``: seconds a question's LLM
    calls may take in all, from its first (``llm.question_deadline_s``); ``breaker_failures``:
    consecutive failed attempts (transient or the same non-retryable error) that stop calling the
    endpoint for the rest of the run (0: never);
    ``prompt_tokens``: tokens a prompt may take (None: what the context leaves; :meth:`_fit`);
    ``notify``: where the one-line notices go (default: the ``lit3r.llm`` logger, stderr).
    """

    chat: Chat
    cache_dir: Optional[Path] = None
    retries: int = 3
    backoff: float = 1.0
    max_tokens: int = 512
    temperature: float = 0.0
    price_in: float = 0.0
    price_out: float = 0.0
    budget_s: float = 60.0
    question_s: float = 1800.0
    breaker_failures: int = 5
    prompt_tokens: Optional[int] = None
    notify: Optional[Callable[[str], None]] = None
    usage: Usage = field(default_factory=Usage)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.breaker = Breaker(self.chat.name, self.breaker_failures, self._notify)

    def _notify(self, line: str) -> None:
        (self.notify or _log_line)(line)

    def _count(self, scope: Usage, stage: Optional[str] = None, **deltas: Any) -> None:
        """Add to the run's counters and to ``scope`` (the question's; calls may run in threads),
        and the numeric ones of :data:`STAGE_COUNTS` to ``stage``'s counters."""
        with self._lock:
            for target in (self.usage, scope) if scope is not self.usage else (self.usage,):
                for k, v in deltas.items():
                    if k in Usage.__dataclass_fields__:  # invalid / cut are per-stage counters only
                        setattr(target, k, getattr(target, k) + v)
                if stage is not None:
                    counts = target.stages.setdefault(stage, dict.fromkeys(STAGE_COUNTS, 0))
                    for k, v in deltas.items():
                        if k in counts:
                            counts[k] += v

    def ask(self, messages: list[dict], model: type[M], stage: Optional[str] = None) -> M:
        """The reply to ``messages`` parsed as ``model``; ``stage`` names the pipeline step for
        :attr:`Usage.stages` (default: the model's class name). Raises LLMError (``kind``:
        :mod:`lit3r.llm.faults`) when no valid reply came: fatal errors at once, transient ones
        after the retries or the question's budget, an open breaker without a call; a prompt that
        does not fit the context is shrunk once (:mod:`lit3r.llm.fit`), a reply cut at
        ``max_tokens`` is asked again once with more tokens, invalid JSON is repaired once."""
        schema = model.model_json_schema()
        stage = stage or model.__name__
        key = hashlib.sha256(json.dumps([self.chat.name, messages, schema], sort_keys=True).encode()).hexdigest()
        cached = self._cache_get(key)
        if cached is not None:
            try:
                out = model.model_validate_json(cached)
                self._count(_QUESTION_USAGE.get() or self.usage, cached=1)
                return out
            except ValidationError:
                pass
        scope = _QUESTION_USAGE.get() or Usage()  # the question's budget (one ask's when none is tracked)
        try:
            out = self._ask(self._fit(messages, scope), schema, model, scope, stage)
        except LLMError as exc:
            self._count(scope, stage, failures=1, faults=[exc.kind])
            self.breaker.unusable(exc)
            raise
        self.breaker.usable()
        self._cache_put(key, redact(out.model_dump_json()))
        return out

    def _ask(self, messages: list[dict], schema: dict, model: type[M], scope: Usage, stage: str) -> M:
        max_tokens = self.max_tokens
        try:
            reply = self._call(messages, schema, max_tokens, scope, stage)
        except ContextOverflow as exc:
            smaller = shrink_messages(messages, _keep_fraction(exc.requested, exc.limit, max_tokens))
            if smaller is None:
                raise
            messages, what = smaller
            self._count(scope, notes=[f"{self.chat.name}: context overflow{_sizes(exc)}: {what}, asked again"])
            reply = self._call(messages, schema, max_tokens, scope, stage)  # a second overflow is raised
        try:
            return parse_json(reply.text, model)
        except (ValidationError, ValueError) as exc:
            problem = first_line(exc)
            self._count(scope, stage, invalid=1, cut=int(reply.finish_reason == "length"))
        if reply.finish_reason == "length":
            more = self._more_tokens(reply, max_tokens)
            if more <= max_tokens:
                raise LLMError(f"{self.chat.name}: the reply was cut at llm.max_tokens = {max_tokens} and the "
                               "context leaves no room for more: raise llm.n_ctx or llm.max_tokens", kind="length")
            self._count(scope, notes=[f"{self.chat.name}: reply cut at llm.max_tokens = {max_tokens}: asked again "
                                      f"with {more} (raise llm.max_tokens)"])
            max_tokens = more
            reply = self._call(messages, schema, max_tokens, scope, stage)
            try:
                return parse_json(reply.text, model)
            except (ValidationError, ValueError) as exc:
                self._count(scope, stage, invalid=1, cut=int(reply.finish_reason == "length"))
                if reply.finish_reason == "length":
                    raise LLMError(f"{self.chat.name}: the reply was cut at {max_tokens} tokens twice: raise "
                                   f"llm.max_tokens (now {self.max_tokens})", kind="length") from None
                problem = first_line(exc)
        repair = messages + [{"role": "assistant", "content": reply.text},
                             {"role": "user", "content": "That was not valid JSON for the requested format "
                              f"({problem}). Reply again with only the JSON object."}]
        reply = self._call(repair, schema, max_tokens, scope, stage)
        try:
            return parse_json(reply.text, model)
        except (ValidationError, ValueError) as exc2:
            cut = reply.finish_reason == "length"
            self._count(scope, stage, invalid=1, cut=int(cut))
            fix = f"raise llm.max_tokens (now {self.max_tokens})" if cut else "use a stronger model or check the endpoint"
            raise LLMError(f"{self.chat.name} gave invalid JSON twice ({first_line(exc2)}): {fix}",
                           kind="length" if cut else "invalid") from None

    def _fit(self, messages: list[dict], scope: Usage) -> list[dict]:
        """``messages`` shrunk before the call when the prompt is over its budget: what the context
        leaves after ``max_tokens`` (when the provider knows ``n_ctx``: the local provider) and at
        most ``prompt_tokens`` (``llm.prompt_tokens``: a CPU-bound model's prefill time per call).
        Tokens are counted by the provider (``count_tokens``) or estimated at
        :data:`CHARS_PER_TOKEN` characters each."""
        count, n_ctx = getattr(self.chat, "count_tokens", None), getattr(self.chat, "n_ctx", None)
        limits = ([n_ctx - self.max_tokens] if n_ctx else []) + ([self.prompt_tokens] if self.prompt_tokens else [])
        if not limits:
            return messages
        budget = max(64, min(limits))
        tokens = count(messages) if count is not None else _estimate_tokens(messages)
        if tokens <= budget:
            return messages
        smaller = shrink_messages(messages, min(0.9, max(0.05, 0.9 * budget / tokens)))
        if smaller is None:
            return messages
        why = (f"> llm.prompt_tokens = {self.prompt_tokens}" if self.prompt_tokens == budget
               else f"+ llm.max_tokens = {self.max_tokens} > llm.n_ctx = {n_ctx}")
        self._count(scope, notes=[f"{self.chat.name}: prompt of {tokens} tokens {why}: {smaller[1]}"])
        return smaller[0]

    def _more_tokens(self, reply: Reply, max_tokens: int) -> int:
        """Twice ``max_tokens``, at most what the context leaves after the prompt (when known)."""
        n_ctx = getattr(self.chat, "n_ctx", None)
        more = 2 * max_tokens
        if n_ctx and reply.prompt_tokens:
            more = min(more, n_ctx - reply.prompt_tokens - 8)
        return more

    def _call(self, messages: list[dict], schema: dict, max_tokens: int, scope: Usage,
              stage: Optional[str] = None) -> Reply:
        """One call with the retries: transient errors are retried (at most ``retries`` times,
        jittered waits, ``retry-after`` honoured) while the question's budget lasts; every failed
        attempt counts for the breaker, a success resets it."""
        attempt = 0
        while True:
            self.breaker.check()
            question_left = self._question_left(scope)
            if scope.lost_seconds > 0 and scope.lost_seconds >= self.budget_s:
                if "budget" not in scope.faults:
                    last = f" (last: {scope.last_fault})" if scope.last_fault else ""
                    self._notify(f"LLM {self.chat.name}: llm.retry_budget_s = {self.budget_s:g} s spent on failed calls "
                                 f"for this question{last}: its remaining LLM steps take the extractive answer")
                raise LLMError(f"{self.chat.name}: llm.retry_budget_s = {self.budget_s:g} s of this question spent on "
                               "failed calls: not called again for it", kind="budget")
            t = time.perf_counter()
            bound = _CALL_DEADLINE.set(t + question_left)
            try:
                reply = self.chat.chat(messages, schema, max_tokens, self.temperature)
            except TransientLLMError as exc:
                lost = time.perf_counter() - t
                attempt += 1
                opened = self.breaker.failure(exc)
                wait = backoff_wait(attempt, self.backoff, max(0.0, self.budget_s), exc.retry_after)
                left = min(self.budget_s - scope.lost_seconds - lost, question_left - lost)
                scope.last_fault = first_line(exc)[:200]
                if exc.retry_after is not None and exc.retry_after > left and not opened:
                    # no retry can succeed within the question's budget: its other LLM steps fall back at once
                    self._count(scope, stage, seconds=lost, lost_seconds=max(lost, self.budget_s), faults=["budget"])
                    self._notify(f"LLM {self.chat.name}: the server asks to wait {exc.retry_after:g} s ({scope.last_fault}),"
                                 f" beyond llm.retry_budget_s = {self.budget_s:g} s: this question's remaining LLM steps "
                                 "take the extractive answer (raise llm.retry_budget_s to wait)")
                    raise LLMError(f"{exc} (the server asks to wait {exc.retry_after:g} s, beyond llm.retry_budget_s)",
                                   kind=exc.kind) from None
                if opened or attempt > self.retries or wait > left:
                    self._count(scope, stage, seconds=lost, lost_seconds=lost)
                    why = ("the endpoint is not called again in this run" if opened else
                           f"after {attempt} attempt(s)" if attempt > self.retries else
                           f"the server asks to wait {exc.retry_after:g} s, beyond llm.retry_budget_s"
                           if exc.retry_after is not None and exc.retry_after > left else
                           f"llm.retry_budget_s = {self.budget_s:g} s spent")
                    raise LLMError(f"{exc} ({why})", kind=exc.kind) from None
                self._count(scope, stage, seconds=lost, lost_seconds=lost + wait, retries=1)
                time.sleep(wait)
                continue
            except LLMError as exc:
                self._count(scope, stage, seconds=time.perf_counter() - t)
                if isinstance(exc, FatalLLMError):  # auth, quota: at once; the same bad request: breaker_failures
                    self.breaker.failure(exc)
                raise
            finally:
                _CALL_DEADLINE.reset(bound)
            self.breaker.success()
            reply.text = redact(reply.text)  # a server may echo the key: no answer, trace or cache file shows it
            self._count(scope, stage, seconds=time.perf_counter() - t, calls=1, prompt_tokens=reply.prompt_tokens,
                        completion_tokens=reply.completion_tokens,
                        cost_usd=(reply.prompt_tokens * self.price_in + reply.completion_tokens * self.price_out) / 1e6)
            return reply

    def _question_left(self, scope: Usage) -> float:
        """Seconds left of ``scope``'s ``question_s`` (its clock starts at its first call); raises
        LLMError (kind ``deadline``, one notice per question) when none are left."""
        started = scope.__dict__.setdefault("_started", time.perf_counter())  # not a field: never in a trace
        left = self.question_s - (time.perf_counter() - started)
        if left > 0:
            return left
        if "deadline" not in scope.faults:
            self._notify(f"LLM {self.chat.name}: llm.question_deadline_s = {self.question_s:g} s of LLM calls spent "
                         "for this question: its remaining LLM steps take the extractive answer")
        raise LLMError(f"{self.chat.name}: llm.question_deadline_s = {self.question_s:g} s of this question spent: not "
                       "called again for it", kind="deadline")

    def _cache_get(self, key: str) -> Optional[str]:
        if self.cache_dir is None:
            return None
        return read_entry(self.cache_dir / key[:2] / f"{key}.json")  # a damaged entry: warned, asked again

    def _cache_put(self, key: str, value: str) -> None:
        if self.cache_dir is None:
            return
        path = self.cache_dir / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, value)


def first_line(exc: Exception) -> str:
    """An exception's message as one line of at most 200 characters."""
    return " ".join(str(exc).split())[:200]


#: Characters per token when the provider cannot count them (English prose, BPE vocabularies).
CHARS_PER_TOKEN = 4.0


def _estimate_tokens(messages: list[dict]) -> int:
    """The prompt tokens of ``messages`` at :data:`CHARS_PER_TOKEN` (text parts only)."""
    chars = 0
    for m in messages:
        c = m.get("content")
        chars += len(c) if isinstance(c, str) else sum(len(p.get("text", "")) for p in c or [] if isinstance(p, dict))
    return int(chars / CHARS_PER_TOKEN) + 8 * len(messages)


def _keep_fraction(requested: Optional[int], limit: Optional[int], max_tokens: int) -> float:
    """The share of the prompt to keep so that it and ``max_tokens`` fit ``limit`` (0.5 when the
    sizes are unknown)."""
    if not requested or not limit:
        return 0.5
    return min(0.9, max(0.05, 0.9 * (limit - max_tokens - 64) / requested))


def _sizes(exc: ContextOverflow) -> str:
    return f" ({exc.requested} > {exc.limit} tokens)" if exc.requested and exc.limit else ""


def _log_line(line: str) -> None:
    """A notice to the ``lit3r.llm`` logger (stderr unless logging is configured otherwise)."""
    logger("lit3r.llm").warning(line)


_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_REASONING_END = re.compile(r"</(?:think|thinking|reasoning)>", re.I)


def parse_json(text: str, model: type[M]) -> M:
    """The first balanced JSON object in ``text`` after any reasoning block (``<think>...</think>``,
    which may hold braces; a reply that starts inside one and only closes it counts too), parsed
    as ``model`` (models wrap JSON in prose or code fences; balanced braces that are not JSON, as
    in prose, are skipped). Raises ValueError when there is no complete JSON object (none, or one
    cut off), ValidationError when the first one does not fit ``model``."""
    text = _REASONING.sub(" ", text)
    ends = list(_REASONING_END.finditer(text))
    if ends:
        text = text[ends[-1].end():]
    if re.search(r"<(think|thinking|reasoning)>", text, re.I):
        raise ValueError("the reply ends inside an unclosed reasoning block, with no JSON object after it")
    for start, end in _balanced(text):
        if end < 0:
            raise ValueError("the JSON object is cut off before its end")
        try:
            obj = json.loads(text[start:end])
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(obj, dict):
            return model.model_validate(obj)
    raise ValueError("no JSON object in the reply")


def _balanced(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each top-level ``{...}`` span of ``text`` (JSON strings respected);
    a last span that never closes comes as ``(start, -1)``."""
    depth, start, in_string, escape = 0, -1, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and depth:
            in_string = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                yield start, i + 1
    if depth:
        yield start, -1
