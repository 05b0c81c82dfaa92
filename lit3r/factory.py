"""The one factory: stores, encoder, reranker, LLM and reader, built from the settings.

The stores come from the backend registry (:mod:`lit3r.backends`: one :class:`~lit3r.backends.Backend`
per ``settings.backend``), the reranker from :data:`lit3r.models.RERANKERS`, the LLM from
:data:`lit3r.llm.providers.PROVIDERS`. No code outside :mod:`lit3r.backends` branches on a backend
name (``tests/unit/test_registries.py``). The servers' drivers and clients are built by
:mod:`lit3r.backends.servers` (re-exported here: :func:`neo4j_driver`, :func:`opensearch_client`,
:func:`neo4j_store`, :func:`opensearch_index`) and injected into the stores.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from graph.search.protocol import SearchIndex
from graph.store import GraphStore
from lit3r.backends import backend_of
from lit3r.backends.servers import neo4j_driver, neo4j_store, opensearch_client, opensearch_index
from lit3r.config import Settings
from lit3r.errors import ModelError
from lit3r.llm.client import StructuredLLM
from lit3r.protocols import Encoder, Reranker
from lit3r.read.base import Reader

if TYPE_CHECKING:
    from graph.trace import TraceStore

Stores = tuple[GraphStore, SearchIndex]

__all__ = ["Stores", "open_stores", "open_graph", "trace_store", "chunk_encoder", "reranker", "llm", "reader",
           "check_index_encoder", "neo4j_driver", "neo4j_store", "opensearch_client", "opensearch_index"]


def open_graph(settings: Settings, **config: object) -> GraphStore:
    """The graph store of a built corpus without the search index (``config``: Neo4j driver
    settings, ignored by the embedded store). Raises NotBuiltError when nothing was built."""
    return backend_of(settings).open_graph(settings, **config)


def open_stores(settings: Settings) -> Stores:
    """``(graph_store, search_index)`` over a built corpus. Raises NotBuiltError when nothing
    was built (locally or on the servers), IndexDamaged / PermissionDenied for a damaged or
    unreadable local index, and the drivers' connection errors when a server cannot be reached."""
    return backend_of(settings).open_stores(settings)


def chunk_encoder(settings: Settings) -> Encoder:
    """The configured chunk encoder (``settings.models``), loaded once per process. Raises
    ModelError when it cannot be loaded."""
    from lit3r.models import load_encoder

    m = settings.models
    return load_encoder(m.chunk_encoder, device=m.device, batch_size=m.batch_size, query_prompt=m.query_prompt,
                        dtype=m.dtype, backend=m.encoder_backend, endpoint=m.endpoint(m.server_url))


def reranker(settings: Settings) -> Optional[Reranker]:
    """The configured reranker; None for the bi-encoder fallback (:func:`lit3r.models.make_reranker`)."""
    from lit3r.models import make_reranker

    return make_reranker(settings.models)


def llm(settings: Settings) -> Optional[StructuredLLM]:
    """The configured LLM (``settings.llm``) with its retries, cache and prices; None for
    provider "none". Raises LLMError when the provider cannot be set up (package or model
    missing)."""
    from lit3r.llm.providers import PROVIDERS

    cfg = settings.llm
    chat = PROVIDERS[cfg.provider](cfg)
    if chat is None:
        return None
    cache = Path(settings.home) / "llm-cache" if cfg.cache else None
    return StructuredLLM(chat, cache, retries=cfg.retries, backoff=cfg.backoff, max_tokens=cfg.max_tokens,
                         temperature=cfg.temperature, price_in=cfg.price_in, price_out=cfg.price_out,
                         budget_s=cfg.retry_budget_s, breaker_failures=cfg.breaker_failures,
                         prompt_tokens=cfg.prompt_tokens, question_s=cfg.question_deadline_s)


def reader(settings: Settings, graph: GraphStore, index: SearchIndex, model: Optional[StructuredLLM]) -> Reader:
    """The Read step's reader: the LLM reader over ``model`` (falling back to the extractive
    reader per stage and field), or the extractive reader when there is no LLM."""
    from lit3r.read.extractive import ExtractiveReader
    from lit3r.read.llm import LLMReader

    extractive = ExtractiveReader(graph, index, settings.read)
    return LLMReader(extractive, model, settings.read, Path(settings.home)) if model is not None else extractive


def check_index_encoder(settings: Settings, index: SearchIndex, encoder: Encoder) -> None:
    """The index must have been built with the configured chunk encoder and its dimension
    (ModelError naming both and the fix otherwise)."""
    built, dim, want = index.encoder, index.dim, settings.models.chunk_identity
    if (built and built != want) or (dim and dim != encoder.dim):
        raise ModelError(f"{index.location} was built with the chunk encoder {built or '?'} "
                         f"({dim}-d), the configuration says {want} ({encoder.dim}-d): "
                         f"run `lit3r ingest PDF_DIR` to re-encode the index with it, or "
                         f"{_settings_of_identity(built, settings)}")


def _settings_of_identity(built: Optional[str], settings: Settings) -> str:
    """The settings that give back the index's encoder identity ``built`` (``spec`` or ``spec@backend``,
    :func:`lit3r.config.sections.encoder_identity`), as the refusal's second fix: ``set
    models.encoder_backend = "openvino" in <home>/config.toml`` when only the backend differs."""
    m = settings.models
    if not built:
        return "set models.chunk_encoder and models.encoder_backend back"
    spec, _, backend = built.partition("@")
    backend = backend or ("torch" if not spec.startswith("hashing:") else m.encoder_backend)
    keys = ([f'models.chunk_encoder = "{spec}"'] if spec != m.chunk_encoder else []) + \
        ([f'models.encoder_backend = "{backend}"'] if backend != m.encoder_backend else [])
    if not keys:
        return "set the models back to those of the index"
    return f"set {' and '.join(keys)} (in {Path(settings.home) / 'config.toml'} or as LIT3R_MODELS__* variables)"


def trace_store(settings: Settings, graph: Optional[GraphStore] = None) -> "TraceStore":
    """The evidence-trace store of the configured backend; ``graph``: the corpus store already
    open (reused, and left open by the trace store's ``close``). Raises NotBuiltError when no
    corpus was built."""
    return backend_of(settings).open_traces(settings, graph)
