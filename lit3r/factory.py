"""The one factory: stores, encoder, reranker, LLM and reader, built from the settings.

The stores, the reranker and the LLM are chosen through registries keyed by the settings' names:
:data:`BACKENDS`, :data:`GRAPH_BACKENDS` and :data:`TRACE_BACKENDS` here (and
``lit3r.cli.doctor.BACKEND_CHECKS``), :data:`lit3r.models.RERANKERS`,
:data:`lit3r.llm.providers.PROVIDERS`. Some callers still branch on a name: on the backend,
``lit3r.index.build._sync`` (the servers load), ``lit3r.cli.cypher`` (Cypher needs Neo4j) and
``lit3r.cli.Lit3rGroup`` (the servers-disagree message); on the provider,
``lit3r.config.llm_profile`` (the small profile is the local provider's) and the ``--llm`` choices
of ``lit3r ask`` and ``lit3r run``, which list the providers again. Drivers and clients are built
here and injected into the stores.

Backends (``settings.backend``):

- ``embedded``: :class:`graph.embedded.EmbeddedGraphStore` + :class:`graph.search.embedded.EmbeddedSearchIndex`
  over ``home/index`` (SQLite + memory-mapped files; nothing is loaded at open).
- ``neo4j+opensearch``: :class:`graph.neo4j_store.Neo4jGraphStore` + :class:`graph.search.opensearch.OpenSearchIndex`,
  the servers as the system of record (no local file is read; opening costs two round trips).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from graph.search.protocol import SearchIndex
from graph.store import GraphStore
from lit3r.config import Settings
from lit3r.errors import IndexDamaged, ModelError, PermissionDenied
from lit3r.llm.client import StructuredLLM
from lit3r.protocols import Encoder, Reranker
from lit3r.read.base import Reader

if TYPE_CHECKING:
    from graph.trace import TraceStore

Stores = tuple[GraphStore, SearchIndex]


def neo4j_driver(settings: Settings, **config):
    """A ``neo4j.Driver`` from ``settings.neo4j``; ``config`` goes to the driver (e.g.
    ``connection_timeout``)."""
    from graph.neo4j_store import connect

    n = settings.neo4j
    return connect(n.uri, n.user, n.password, **config)


def opensearch_client(settings: Settings):
    """An ``opensearchpy.OpenSearch`` client from ``settings.opensearch`` (every node URL given)."""
    from graph.search.opensearch import make_client

    o = settings.opensearch
    return make_client(o.urls, o.user, o.password, o.verify_certs, o.ca_certs)


def neo4j_store(settings: Settings, **config):
    """A :class:`graph.neo4j_store.Neo4jGraphStore` over the configured database, whether or not
    it holds a corpus (for loads, `lit3r cypher` and `lit3r doctor`); ``config``: driver settings."""
    from graph.neo4j_store import Neo4jGraphStore

    return Neo4jGraphStore(neo4j_driver(settings, **config), settings.neo4j.database)


def opensearch_index(settings: Settings):
    """A :class:`graph.search.opensearch.OpenSearchIndex` over the configured prefix, whether
    or not its indices exist."""
    from graph.search.opensearch import OpenSearchIndex

    return OpenSearchIndex(opensearch_client(settings), settings.opensearch.index_prefix,
                           candidates=settings.opensearch.knn_candidates)


def _open_embedded(settings: Settings) -> Stores:
    from graph.embedded import EmbeddedGraphStore
    from graph.search.embedded import DB_NAME, EmbeddedSearchIndex
    from graph.sqlite import Database

    _check_manifest(settings.index_dir, DB_NAME)
    r = settings.retrieve
    db = Database(settings.index_dir / DB_NAME)  # one connection per thread for both stores: one snapshot
    index = EmbeddedSearchIndex.open(settings.index_dir, k1=r.bm25_k1, b=r.bm25_b, db=db)
    return EmbeddedGraphStore.open(settings.index_dir / DB_NAME, db=db), index


#: The files a published embedded index has besides its database (:mod:`lit3r.index.build`); one
#: missing means a part of the index was lost, and no answer is given from the rest.
INDEX_FILES = ("manifest.json", "chunk_vectors.f32")


def _check_manifest(index_dir: Path, db_name: str) -> None:
    """Raise IndexDamaged naming the file and the fix (``lit3r doctor``, then a rebuild) when the
    index in ``index_dir`` has its database but lacks one of :data:`INDEX_FILES` (so it would
    answer from a part of itself) or its ``manifest.json`` is not a JSON object (cut short);
    PermissionDenied when the manifest cannot be read by this user; nothing when there is no
    database (the store says so)."""
    if not (index_dir / db_name).is_file():
        return
    for name in INDEX_FILES:
        if not (index_dir / name).is_file():
            raise IndexDamaged(f"the index in {index_dir} is missing part of itself ({name}): no answer is given "
                               f"from the rest; run `lit3r doctor` to check it, then `lit3r ingest PDF_DIR "
                               f"--rebuild` to rebuild it (parsed papers are kept)")
    try:
        manifest = json.loads((index_dir / "manifest.json").read_bytes())
    except PermissionError as exc:  # the fix is its permissions, never a rebuild
        raise PermissionDenied.of(exc, index_dir / "manifest.json") from None
    except (OSError, ValueError):  # ValueError: not UTF-8, not JSON
        manifest = None
    if not isinstance(manifest, dict):
        raise IndexDamaged(f"the index in {index_dir} is damaged (manifest.json is not a JSON object: cut short or "
                           f"overwritten): no answer is given from the rest; run `lit3r doctor` to check it, then "
                           f"`lit3r ingest PDF_DIR --rebuild` to rebuild it (parsed papers are kept)")


def _open_servers(settings: Settings) -> Stores:
    from graph.neo4j_store import Neo4jGraphStore
    from graph.search.opensearch import OpenSearchIndex
    from lit3r.index.load import check_pairing

    driver = neo4j_driver(settings)
    try:
        driver.verify_connectivity()  # one attempt (connection_timeout): a server down is one line at once
        graph = Neo4jGraphStore.open(driver, settings.neo4j.database)
    except BaseException:
        driver.close()
        raise
    try:
        check_pairing(graph, settings.opensearch.index_prefix)
        index = OpenSearchIndex.open(opensearch_client(settings), settings.opensearch.index_prefix,
                                     candidates=settings.opensearch.knn_candidates)
    except BaseException:
        graph.close()
        raise
    return graph, index


#: ``settings.backend`` -> the function that opens its ``(graph_store, search_index)``.
BACKENDS: dict[str, Callable[[Settings], Stores]] = {
    "embedded": _open_embedded,
    "neo4j+opensearch": _open_servers,
}


def _graph_embedded(settings: Settings, **_: object) -> GraphStore:
    from graph.embedded import EmbeddedGraphStore
    from graph.search.embedded import DB_NAME

    return EmbeddedGraphStore.open(settings.index_dir / DB_NAME)


def _graph_servers(settings: Settings, **config: object) -> GraphStore:
    from graph.neo4j_store import Neo4jGraphStore

    driver = neo4j_driver(settings, **config)
    try:
        driver.verify_connectivity()  # one attempt (connection_timeout): not the retries of a transaction
        return Neo4jGraphStore.open(driver, settings.neo4j.database)
    except BaseException:
        driver.close()
        raise


#: ``settings.backend`` -> the function that opens its graph store alone (``lit3r graph``).
GRAPH_BACKENDS: dict[str, Callable[..., GraphStore]] = {
    "embedded": _graph_embedded,
    "neo4j+opensearch": _graph_servers,
}


def open_graph(settings: Settings, **config: object) -> GraphStore:
    """The graph store of a built corpus without the search index (``config``: Neo4j driver
    settings, ignored by the embedded store). Raises NotBuiltError when nothing was built."""
    return GRAPH_BACKENDS[settings.backend](settings, **config)


def open_stores(settings: Settings) -> Stores:
    """``(graph_store, search_index)`` over a built corpus. Raises NotBuiltError when nothing
    was built (locally or on the servers), and the drivers' connection errors when a server
    cannot be reached."""
    return BACKENDS[settings.backend](settings)


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
                         f"run `lit3r ingest PDF_DIR` to re-encode the index with it, or set "
                         f"models.chunk_encoder and models.encoder_backend back")


def _traces_embedded(settings: Settings, graph: Optional[GraphStore]):
    from graph.trace import EmbeddedTraceStore

    return EmbeddedTraceStore(Path(settings.home) / TRACES_FILE, graph if graph is not None else open_graph(settings),
                              own_corpus=graph is None)


def _traces_servers(settings: Settings, graph: Optional[GraphStore]):
    from graph.neo4j_trace import Neo4jTraceStore

    driver = getattr(graph, "driver", None)  # the question's store: one driver for both
    if driver is not None:
        return Neo4jTraceStore(driver, settings.neo4j.database, own_driver=False)
    return Neo4jTraceStore(neo4j_driver(settings), settings.neo4j.database)


#: The embedded backend's trace store file, in the data folder (not in ``index/``, which a
#: rebuild replaces).
TRACES_FILE = "traces.sqlite"

#: ``settings.backend`` -> the function that opens its evidence-trace store (:mod:`graph.trace`).
TRACE_BACKENDS: dict[str, Callable[[Settings, Optional[GraphStore]], "TraceStore"]] = {
    "embedded": _traces_embedded,
    "neo4j+opensearch": _traces_servers,
}


def trace_store(settings: Settings, graph: Optional[GraphStore] = None) -> "TraceStore":
    """The evidence-trace store of the configured backend; ``graph``: the corpus store already
    open (reused, and left open by the trace store's ``close``). Raises NotBuiltError when no
    corpus was built."""
    return TRACE_BACKENDS[settings.backend](settings, graph)
