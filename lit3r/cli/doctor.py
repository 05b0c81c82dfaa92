"""`lit3r doctor`: check each component of the configured system and say how to fix it."""

from __future__ import annotations

import importlib.metadata as md
import json
from typing import Any, Callable, Optional, Sequence

from graph.errors import ServerFault, one_line_message, shown_text
from lit3r.backends import backend_of
from lit3r.config import Settings, encoder_identity
from lit3r.errors import IndexDamaged, Lit3rError, PermissionDenied
from lit3r.index.state import stale_index_message
from lit3r.present.redact import redact, secret_values
from lit3r.present.server_errors import server_errors, server_message

#: Seconds the doctor waits for each answer of a server that accepted the connection (a port that
#: accepts and never answers fails its check in this time, not the 30 s read timeout of queries).
PROBE_TIMEOUT_S = 5.0


class CheckFailed(Lit3rError):
    """A doctor check found a problem; its message names the cause and the fix (one line)."""


#: The Neo4j driver's settings for the doctor's checks: a silent Bolt port fails in PROBE_TIMEOUT_S too.
_PROBE_NEO4J = {"connection_timeout": PROBE_TIMEOUT_S, "connection_acquisition_timeout": PROBE_TIMEOUT_S}

#: Checks that only mean something when the named ones passed (else: "not checked", at once).
DEPENDS = {"servers agree": ("neo4j", "opensearch")}


def _check(name: str, fn, secrets: Sequence[str] = (), settings: Optional[Settings] = None) -> dict[str, Any]:
    """``{"name", "ok", "detail"}`` of one check; the detail (a server's error message too, with
    its address from ``settings``) with ``secrets`` masked (:func:`lit3r.present.redact.redact`). Tells the
    OpenSearch client's ``ConnectionTimeout`` from its other errors (``DRIVER_IMPORTS_ALLOWED`` in
    ``tests/unit/test_boundary.py``)."""
    from opensearchpy.exceptions import ConnectionTimeout

    try:
        return {"name": name, "ok": True, "detail": one_line_message(redact(fn(), secrets))}
    except Exception as exc:  # each check reports its own failure and the rest still run
        cause = exc.cause if isinstance(exc, ServerFault) else exc  # a store's driver error: the driver's
        if isinstance(cause, ConnectionTimeout) and settings is not None:  # a port that accepts and never answers
            detail = (f"OpenSearch at {settings.opensearch.url} did not answer within {PROBE_TIMEOUT_S:g} s: check "
                      f"that it is OpenSearch, runs and is not overloaded, or set opensearch.url / "
                      f"LIT3R_OPENSEARCH__URL to a running server")
            return {"name": name, "ok": False, "detail": redact(detail, secrets)[:400]}
        if isinstance(exc, server_errors()):  # which server, why, the fix (lit3r/present/server_errors.py)
            return {"name": name, "ok": False, "detail": redact(server_message(settings, exc), secrets)[:400]}
        if isinstance(exc, PermissionError):  # the fix is its permissions (not a rebuild)
            exc = PermissionDenied.of(exc)
        if isinstance(exc, Lit3rError):  # already one line naming the cause and the fix (a damaged index file)
            return {"name": name, "ok": False, "detail": one_line_message(redact(str(exc), secrets))[:600]}
        if isinstance(exc, OSError) and exc.strerror:  # the reason and the file, not Python's class name
            what = f"{exc.strerror}: {shown_text(exc.filename, 200)}" if exc.filename else exc.strerror
            return {"name": name, "ok": False, "detail": one_line_message(redact(what, secrets))[:400]}
        first = (str(exc).splitlines() or [""])[0]  # unexpected: its class name says what failed
        return {"name": name, "ok": False, "detail": one_line_message(redact(f"{type(exc).__name__}: {first}",
                                                                             secrets))[:300]}


def _packages(settings: Settings) -> str:
    def version(name: str) -> str:
        try:
            return md.version(name)
        except md.PackageNotFoundError:  # the optional ones (torch: the extra lit3r[torch])
            return "not installed"

    return ", ".join(f"{p} {version(p)}" for p in ("pymupdf", "bm25s", "onnxruntime", "openvino", "torch",
                                                   "sentence-transformers"))


def _corpus(settings: Settings) -> str:
    home = settings.home
    if not (home / "papers.jsonl").is_file():
        raise CheckFailed(f"no corpus in {home}: run `lit3r ingest PDF_DIR`")
    n = {name: sum(1 for _ in (home / f"{name}.jsonl").open()) for name in ("papers", "chunks", "references")}
    return f"{home}: {n['papers']} papers, {n['chunks']} chunks, {n['references']} references"


def _index(settings: Settings) -> str:
    """The embedded index: its manifest, then every file's header, size and shape and the
    database's ``quick_check`` (:func:`graph.search.embedded.check_files`, well under a second
    for the 60 papers), the encoder it was built with and whether it holds the last ingest.
    Raises with one line naming the missing or damaged file and the fix."""
    from graph.search.embedded import DB_NAME, check_files

    index_dir = settings.index_dir
    manifest = index_dir / "manifest.json"
    rebuild = "run `lit3r ingest PDF_DIR --rebuild` to rebuild it"
    if not manifest.is_file():
        if (index_dir / DB_NAME).is_file():
            raise IndexDamaged(f"the index in {index_dir} is damaged (manifest.json is missing): {rebuild}")
        raise CheckFailed(f"no index in {index_dir}: run `lit3r ingest PDF_DIR`")
    try:
        m = json.loads(manifest.read_text(encoding="utf-8"))
    except PermissionError:
        raise PermissionDenied(manifest) from None
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not valid JSON"
        raise IndexDamaged(f"the index in {index_dir} is damaged (manifest.json: {why}): {rebuild}") from None
    if not isinstance(m, dict) or not isinstance(m.get("models"), dict) or "report" not in m:
        if (index_dir / DB_NAME).is_file():
            raise IndexDamaged(f"the index in {index_dir} is damaged (manifest.json names no finished build): "
                               f"{rebuild}")
        raise CheckFailed(f"no index in {index_dir}: run `lit3r ingest PDF_DIR`")
    files = check_files(index_dir)  # IndexDamaged naming the file
    encoder = encoder_identity(m["models"].get("chunk_encoder"), m["models"].get("encoder_backend"))
    if encoder != settings.models.chunk_identity:
        raise CheckFailed(f"index built with {encoder}, config says "
                         f"{settings.models.chunk_identity}: run `lit3r ingest PDF_DIR` again")
    stale = stale_index_message(settings)  # lit3r/index/state.py
    if stale:
        raise CheckFailed(stale)
    checked = "files and database checked" if files["quick_check"] else "files checked (database too large for quick_check)"
    return (f"{index_dir}: built with {encoder} ({m.get('dim')}-d), {files['chunks']} chunks, up to date with the "
            f"corpus; {checked}")


def _encoder(settings: Settings) -> str:
    from lit3r import factory

    return f"{settings.models.chunk_identity}: {factory.chunk_encoder(settings).dim}-d"


def _reranker(settings: Settings) -> str:
    from lit3r import factory

    model = factory.reranker(settings)
    if model is None:
        return "bi-encoder fallback (no cross-encoder configured; set models.reranker = 'cross-encoder')"
    model.scores("q", ["t"])
    return f"cross-encoder {model.name}"


def _neo4j(settings: Settings) -> str:
    from graph.cypher import names
    from lit3r.factory import neo4j_store

    n = settings.neo4j
    store = neo4j_store(settings, **_PROBE_NEO4J)
    try:
        agent = store.verify()
        missing = {"paper_id", "chunk_id", "work_id"} - store.constraint_names()
        count = store.paper_counts()
    finally:
        store.close()
    if missing:
        raise CheckFailed(f"{agent} at {n.uri}: constraints missing {sorted(missing)}: run `lit3r ingest PDF_DIR`")
    if count["n"] == 0:
        raise CheckFailed(f"{agent} at {n.uri} holds no corpus: run `lit3r ingest PDF_DIR`")
    if count["done"] < count["n"]:
        raise CheckFailed(f"{agent} at {n.uri}: {count['n'] - count['done']} of {count['n']} papers are partly "
                           f"loaded (a load was interrupted): run `lit3r ingest PDF_DIR` again to finish it")
    return f"{agent} at {n.uri}: {count['n']} papers, constraints present, {len(names())} named statements"


def _probe_index(settings: Settings):
    """The configured OpenSearch index with the doctor's short read timeout
    (:data:`PROBE_TIMEOUT_S`; queries elsewhere keep theirs)."""
    from graph.search.opensearch import OpenSearchIndex, make_client

    o = settings.opensearch
    client = make_client(o.urls, o.user, o.password, o.verify_certs, o.ca_certs, timeout=PROBE_TIMEOUT_S)
    return OpenSearchIndex(client, o.index_prefix, candidates=o.knn_candidates)


def _pairing(settings: Settings) -> str:
    from lit3r.backends.servers import check_pairing
    from lit3r.factory import neo4j_store

    o = settings.opensearch
    store, index = neo4j_store(settings, **_PROBE_NEO4J), _probe_index(settings)
    try:
        store.verify()  # one connection attempt, not a read's retries, when Neo4j is down
        check_pairing(store, o.index_prefix)
        papers = store.paper_counts()["done"]
        docs = index.count()["papers"]
        layout = index.layout()
    finally:
        store.close()
        index.close()
    if docs != papers:
        raise CheckFailed(f"Neo4j holds {papers} loaded papers, OpenSearch {o.index_prefix}-papers {docs}: run "
                           f"`lit3r ingest PDF_DIR` to make them agree")
    for name, lay in layout.items():
        if lay["shards"] != o.shards:
            raise CheckFailed(f"{name} has {lay['shards']} primary shard(s), the settings say {o.shards}: shards "
                               f"are fixed when an index is created: delete {o.index_prefix}-chunks and -papers "
                               f"and run `lit3r ingest PDF_DIR` to recreate them")
        if lay["health"] != "green":
            raise CheckFailed(f"{name} is {lay['health']}: {lay['replicas']} replica(s) per shard need more "
                               f"nodes than the cluster has: lower opensearch.replicas (0 on one node) and "
                               f"run `lit3r ingest PDF_DIR`, or add nodes")
    lay = next(iter(layout.values()))
    return (f"{papers} papers in both servers; {o.index_prefix}-* with {lay['shards']} shard(s), "
            f"{lay['replicas']} replica(s), green")


def _opensearch(settings: Settings) -> str:
    o = settings.opensearch
    index = _probe_index(settings)
    try:
        version = index.server_version()
        meta = index.stored_meta()
        if meta is None:
            raise CheckFailed(f"OpenSearch {version} at {o.url} has no indices {o.index_prefix}-chunks/-papers: "
                                    f"run `lit3r ingest PDF_DIR`")
        if meta.get("chunk_encoder") != settings.models.chunk_identity:
            raise CheckFailed(f"{o.index_prefix}-chunks was built with {meta.get('chunk_encoder')}, config says "
                             f"{settings.models.chunk_identity}: run `lit3r ingest PDF_DIR` again")
        counts = index.count()
    finally:
        index.close()
    return (f"OpenSearch {version} at {o.url}: {counts['chunks']} chunks, {counts['papers']} papers indexed "
            f"({meta.get('dim')}-d {meta.get('chunk_encoder')})")


#: The store checks by name; each backend names its own (:attr:`lit3r.backends.Backend.doctor_checks`).
STORE_CHECKS: dict[str, Callable[[Settings], str]] = {
    "corpus": _corpus, "index": _index, "neo4j": _neo4j, "opensearch": _opensearch, "servers agree": _pairing}


def run_checks(settings: Settings) -> list[dict[str, Any]]:
    """Checks, in order: packages, the backend's stores (its ``doctor_checks``, :data:`STORE_CHECKS`), chunk encoder,
    reranker, backend, LLM. Returns ``[{"name", "ok", "detail"}]``, secrets masked in every
    detail; never raises."""
    before, after = ([(name, STORE_CHECKS[name]) for name in names] for names in backend_of(settings).doctor_checks)
    checks = [("packages", _packages), *before, ("chunk encoder", _encoder), ("reranker", _reranker), *after]
    secrets = secret_values(settings)
    done: list[dict[str, Any]] = []
    for name, fn in checks:
        failed = [c["name"] for c in done if c["name"] in DEPENDS.get(name, ()) and not c["ok"]]
        done.append({"name": name, "ok": False, "detail": f"not checked: the {failed[0]} check failed (above)"}
                    if failed else _check(name, lambda fn=fn: fn(settings), secrets, settings))
    return [*done, {"name": "backend", "ok": True, "detail": settings.backend},
            _check("llm", lambda: _llm_check(settings), secrets, settings)]


def _llm_check(settings: Settings) -> str:
    from pydantic import BaseModel

    from lit3r import factory

    llm = factory.llm(settings)
    if llm is None:
        return "none (one Retrieve round, offline extractive reader)"

    class Pong(BaseModel):
        ok: bool

    llm.cache_dir = None
    llm.ask([{"role": "user", "content": 'Reply with the JSON {"ok": true}.'}], Pong)
    return f"{llm.chat.name}: answered a JSON request"
