"""The OpenSearch search index (opensearch-py): chunk BM25, paper BM25, k-NN chunk search, and
the chunk vectors and paper heads the reranker, reader and Relate read by id.

Two indices per corpus, ``<prefix>-chunks`` and ``<prefix>-papers``; OpenSearch is the system of
record for both (no local files). Both use BM25 with the configured k1/b in the index settings
and a whitespace analyzer over text already tokenized by :func:`graph.search.tokenize.tokenize`,
so OpenSearch and the embedded index score the same terms (Lucene stores document lengths in one
byte, so scores differ slightly). Chunk vectors go into a ``knn_vector`` field (HNSW, Lucene
engine, inner product on L2-normalised vectors = cosine); k-NN search is approximate. The chunk
index's mapping ``_meta`` records the chunk encoder and dimension.

Writes (:meth:`OpenSearchIndex.write_chunks`, :meth:`write_papers`, :meth:`delete_papers`) are
idempotent: documents are keyed by chunk id / paper id, and a paper's old documents are deleted
before it is written again. :meth:`bulk_mode` turns refresh off while a load runs.

Every client error of the index's public methods, and of :func:`make_client`, comes out as a
:class:`graph.errors.ServerFault` (:mod:`graph.server_faults`).
"""

from __future__ import annotations

import base64
import contextlib
import time
from typing import Any, Optional, Sequence

import numpy as np

from graph.errors import BackendUnavailable, NotBuiltError, UnknownIdError
from graph.question_cache import QuestionCache
from graph.search import opensearch_bulk
from graph.search.protocol import Hit
from graph.search.tokenize import MAX_QUERY_TERMS, cap_terms, tokenize
from graph.server_faults import OPENSEARCH, translate_faults

#: Characters of a paper's text kept as its head (the Relate step's BM25 seed query).
HEAD_CHARS = 4000


def chunk_index_body(dim: int, k1: float, b: float, shards: int = 1, replicas: int = 0,
                     meta: Optional[dict] = None, hnsw_m: int = 16, hnsw_ef_construction: int = 64) -> dict[str, Any]:
    """Settings and mappings of the chunk index (``hnsw_m`` links per node, ``hnsw_ef_construction``
    candidates per insertion: the HNSW graph dominates indexing time)."""
    return {
        "settings": {"index": {"knn": True, "number_of_shards": shards, "number_of_replicas": replicas,
                               "similarity": {"default": {"type": "BM25", "k1": k1, "b": b}}}},
        # the float vector is indexed (HNSW) but kept out of _source; its bytes are a stored
        # binary field, read by id without parsing any _source (vectors_of)
        "mappings": {"_meta": {"lit3r": {**(meta or {}), "dim": dim}}, "_source": {"excludes": ["vector"]},
                     "properties": {
            "chunk_id": {"type": "keyword"}, "paper_id": {"type": "keyword"}, "kind": {"type": "keyword"},
            "page": {"type": "integer"}, "section": {"type": "keyword"}, "object_id": {"type": "keyword"},
            "tokens": {"type": "text", "analyzer": "whitespace"},
            "vector_bytes": {"type": "binary", "store": True},
            "vector": {"type": "knn_vector", "dimension": dim,
                       "method": {"name": "hnsw", "engine": "lucene", "space_type": "innerproduct",
                                  "parameters": {"m": hnsw_m, "ef_construction": hnsw_ef_construction}}},
        }},
    }


def paper_index_body(k1: float, b: float, shards: int = 1, replicas: int = 0) -> dict[str, Any]:
    """Settings and mappings of the paper index (concatenated chunk tokens per paper; the head
    is stored, not indexed)."""
    return {
        "settings": {"index": {"number_of_shards": shards, "number_of_replicas": replicas,
                               "similarity": {"default": {"type": "BM25", "k1": k1, "b": b}}}},
        "mappings": {"properties": {"paper_id": {"type": "keyword"},
                                    "tokens": {"type": "text", "analyzer": "whitespace"},
                                    "head": {"type": "text", "index": False}}},
    }


#: OpenSearch ``preference`` of every search on a sharded index (the same shard copies each time).
_PREFERENCE = "lit3r"

class _Serializer:
    """opensearch-py serializer through orjson: numpy float32 vectors go out in their shortest
    exact form (the bulk load's bottleneck is JSON encoding)."""

    mimetype = "application/json"

    def __init__(self) -> None:
        import orjson

        self._orjson = orjson

    def loads(self, s):
        return self._orjson.loads(s)

    def dumps(self, data):
        if isinstance(data, (str, bytes)):  # a body serialised already (bulk NDJSON)
            return data
        return self._orjson.dumps(data, option=self._orjson.OPT_SERIALIZE_NUMPY).decode()


#: Seconds to open a connection to an OpenSearch node (README, OpenSearch section).
CONNECT_TIMEOUT_S = 4.0


@translate_faults(OPENSEARCH)
def make_client(url: str | Sequence[str], user: Optional[str] = None, password: Optional[str] = None,
                verify_certs: bool = True, ca_certs: Optional[str] = None, timeout: float = 30.0,
                connect_timeout: float = CONNECT_TIMEOUT_S):
    """An ``opensearchpy.OpenSearch`` client for one URL or several cluster nodes (TLS:
    ``https://`` URLs, ``ca_certs`` a CA bundle path). A connection is opened within
    ``connect_timeout`` s and a response awaited ``timeout`` s; one retry on connection errors
    (the next node of a cluster), none on a read timeout (a slow bulk request is not sent twice),
    so a server that is down is reported within about 5-10 s."""
    from opensearchpy import OpenSearch
    from urllib3 import Timeout

    hosts = [url] if isinstance(url, str) else list(url)
    auth = (user, password) if user else None
    return OpenSearch(hosts=hosts, http_auth=auth, verify_certs=verify_certs, ca_certs=ca_certs, ssl_show_warn=False,
                      retry_on_timeout=False, max_retries=1, timeout=Timeout(connect=connect_timeout, read=timeout),
                      serializer=_Serializer(), http_compress=False, pool_maxsize=8)


@translate_faults(OPENSEARCH)
class OpenSearchIndex:
    """SearchIndex answered by OpenSearch alone (see the module docstring).

    ``client``: an ``opensearchpy.OpenSearch`` (:func:`make_client`); ``prefix``: the index name
    prefix; ``candidates``: HNSW candidates per k-NN query. ``dim`` / ``encoder`` come from the
    chunk index's ``_meta`` (:meth:`open`). Unknown ids raise graph.errors.UnknownIdError (a KeyError);
    the client's errors come out as graph.errors.ServerFault (``.down``: unreachable, timed out, or the
    credentials or rights refused).
    """

    def __init__(self, client, prefix: str, candidates: int = 400, dim: Optional[int] = None,
                 encoder: Optional[str] = None) -> None:
        self.client = client
        self.prefix = prefix
        self.candidates = candidates
        self.dim = dim
        self.encoder = encoder
        self.chunk_index, self.paper_index = f"{prefix}-chunks", f"{prefix}-papers"
        self.location = f"the OpenSearch index {self.chunk_index}"
        self.sharded = False  # several primary shards: BM25 asks for corpus-wide term statistics (DFS)
        self._cache = QuestionCache("vectors")

    _vectors = property(lambda self: self._cache.get("vectors"))

    @classmethod
    def open(cls, client, prefix: str, candidates: int = 400) -> "OpenSearchIndex":
        """An index over a loaded corpus (one round trip: the chunk index's mapping). Raises
        NotBuiltError when the indices are missing."""
        meta = cls(client, prefix).stored_meta()
        if meta is None:
            raise NotBuiltError(f"no Lit3R indices {prefix}-chunks / {prefix}-papers in OpenSearch: run "
                                    f"`lit3r ingest PDF_DIR` with the servers backend")
        index = cls(client, prefix, candidates, dim=meta.get("dim"), encoder=meta.get("chunk_encoder"))
        conf = client.indices.get_settings(index=f"{prefix}-*", params={"filter_path": "*.settings.index.number_of_shards"})
        index.sharded = any(int(v["settings"]["index"]["number_of_shards"]) > 1 for v in conf.values())
        return index

    def stored_meta(self) -> Optional[dict]:
        """The ``_meta.lit3r`` of the chunk index (``dim``, ``chunk_encoder``), None when the
        indices do not exist."""
        from opensearchpy.exceptions import NotFoundError

        try:
            m = self.client.indices.get_mapping(index=self.chunk_index)
            if not self.client.indices.exists(index=self.paper_index):
                return None
        except NotFoundError:
            return None
        body = next(iter(m.values()))["mappings"]
        return (body.get("_meta") or {}).get("lit3r") or {}

    def snapshot(self):
        """Context manager for one question: vectors read inside it are kept until the
        outermost one exits (:mod:`graph.question_cache`)."""
        return self._cache.scope()

    def close(self) -> None:
        self.client.close()

    def server_version(self) -> str:
        """The server's version number (``"2.19.1"``; one request)."""
        return self.client.info()["version"]["number"]

    def refresh(self, timeout_s: float = 600) -> None:
        """Make every document written so far searchable and countable (both indices), waiting up
        to ``timeout_s`` seconds."""
        self.client.indices.refresh(index=f"{self.chunk_index},{self.paper_index}", request_timeout=timeout_s)

    # -- writing ---------------------------------------------------------------------------
    def ensure_indices(self, dim: int, k1: float, b: float, *, shards: int = 1, replicas: int = 0,
                       encoder: Optional[str] = None, hnsw_m: int = 16, hnsw_ef_construction: int = 64) -> bool:
        """Create both indices when missing; recreate them (empty) when the stored dimension or
        encoder differs. Returns True when they were (re)created (every paper must be written)."""
        meta = self.stored_meta()
        if meta is not None and meta.get("dim") == dim and meta.get("chunk_encoder") == encoder:
            self.dim, self.encoder = dim, encoder
            both = f"{self.chunk_index},{self.paper_index}"
            have = self.client.indices.get_settings(index=both, params={"filter_path": "*.settings.index.number_of_replicas"})
            if any(int(v["settings"]["index"]["number_of_replicas"]) != replicas for v in have.values()):
                # replicas change live; primary shards are fixed when an index is created
                self.client.indices.put_settings(index=both, body={"index": {"number_of_replicas": replicas}})
            return False
        for name in (self.chunk_index, self.paper_index):
            if self.client.indices.exists(index=name):
                self.client.indices.delete(index=name)
        self.client.indices.create(index=self.chunk_index, body=chunk_index_body(
            dim, k1, b, shards, replicas, {"chunk_encoder": encoder}, hnsw_m, hnsw_ef_construction))
        self.client.indices.create(index=self.paper_index, body=paper_index_body(k1, b, shards, replicas))
        self.client.cluster.health(index=f"{self.chunk_index},{self.paper_index}", wait_for_status="yellow",
                                   request_timeout=90)
        self.dim, self.encoder = dim, encoder
        return True

    @contextlib.contextmanager
    def bulk_mode(self):
        """Refresh off while writing; restored (and one refresh run) on exit."""
        both = f"{self.chunk_index},{self.paper_index}"
        self.client.indices.put_settings(index=both, body={"index": {"refresh_interval": "-1"}})
        try:
            yield self
        finally:
            self.client.indices.put_settings(index=both, body={"index": {"refresh_interval": None}})
            self.client.indices.refresh(index=both, request_timeout=600)

    def delete_papers(self, paper_ids: Sequence[str], batch: int = 1000) -> int:
        """Delete every chunk and paper document of ``paper_ids`` (documents written but not yet
        refreshed included). Returns how many documents were deleted."""
        ids = list(dict.fromkeys(paper_ids))
        if not ids:
            return 0
        both = f"{self.chunk_index},{self.paper_index}"
        self.client.indices.refresh(index=both, request_timeout=600)
        n = 0
        for i in range(0, len(ids), batch):
            res = self.client.delete_by_query(index=both, body={"query": {"terms": {"paper_id": ids[i : i + batch]}}},
                                              params={"conflicts": "proceed", "refresh": "true",
                                                      "slices": "auto", "request_timeout": 600})
            n += res.get("deleted", 0)
        return n

    def write_chunks(self, chunks: Sequence[dict], vectors: np.ndarray, tokens: Optional[Sequence[str]] = None) -> int:
        """Index chunk records (JSON-ready dicts) with their ``(n, dim)`` float32 vectors;
        ``tokens[i]``: chunk i's text already through :func:`tokenize` and joined by spaces
        (computed here when None). Returns the number of documents written."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        toks = tokens if tokens is not None else [" ".join(tokenize(c["text"])) for c in chunks]
        docs = ((c["chunk_id"], {
            "chunk_id": c["chunk_id"], "paper_id": c["paper_id"], "kind": c["kind"], "page": c["page"],
            "section": c.get("section"), "object_id": c.get("object_id"), "tokens": t,
            "vector": v, "vector_bytes": base64.b64encode(v.tobytes()).decode("ascii")})
            for c, v, t in zip(chunks, vectors, toks))
        return opensearch_bulk.send(self.client, opensearch_bulk.ndjson(self.chunk_index, docs), max_docs=500)

    def write_papers(self, paper_ids: Sequence[str], texts: Sequence[str], tokens: Optional[Sequence[str]] = None) -> int:
        """Index papers: ``texts[i]`` is the concatenated chunk text of ``paper_ids[i]``; ``tokens[i]``
        its tokens joined by spaces (computed here when None)."""
        toks = tokens if tokens is not None else [" ".join(tokenize(t)) for t in texts]
        docs = ((pid, {"paper_id": pid, "tokens": tk, "head": t[:HEAD_CHARS]})
                for pid, t, tk in zip(paper_ids, texts, toks))
        return opensearch_bulk.send(self.client, opensearch_bulk.ndjson(self.paper_index, docs), max_docs=100)

    def load(self, chunks: Sequence, vectors: np.ndarray, k1: float = 1.5, b: float = 0.75, *, shards: int = 1,
             replicas: int = 0, encoder: Optional[str] = None) -> dict[str, float]:
        """Make both indices hold exactly these chunks (Chunk records or dicts, in the order of
        ``vectors``): papers whose documents are stored are deleted and written again, others
        deleted. Returns ``{"seconds", "docs", "docs_per_s"}``."""
        t0 = time.perf_counter()
        rows = [c.model_dump(mode="json") if hasattr(c, "model_dump") else c for c in chunks]
        self.ensure_indices(vectors.shape[1], k1, b, shards=shards, replicas=replicas, encoder=encoder)
        texts: dict[str, list[str]] = {}
        for c in sorted(rows, key=lambda c: (c["paper_id"], c["seq"])):
            texts.setdefault(c["paper_id"], []).append(c["text"])
        stored = self.stored_paper_ids()
        with self.bulk_mode():
            self.delete_papers(sorted(stored | set(texts)))
            n = self.write_chunks(rows, vectors) + self.write_papers(list(texts), ["\n".join(t) for t in texts.values()])
        secs = time.perf_counter() - t0
        return {"seconds": secs, "docs": n, "docs_per_s": n / secs if secs else 0.0}

    def stored_paper_ids(self) -> set[str]:
        """Every paper id with a document in the paper or chunk index (a terms aggregation)."""
        return set(self.documents_per_paper(f"{self.chunk_index},{self.paper_index}"))

    def documents_per_paper(self, index: Optional[str] = None) -> dict[str, int]:
        """``{paper_id: documents}`` in ``index`` (default: the chunk index), by a composite
        terms aggregation in pages."""
        out: dict[str, int] = {}
        after = None
        while True:
            comp: dict[str, Any] = {"size": 10000, "sources": [{"p": {"terms": {"field": "paper_id"}}}]}
            if after:
                comp["after"] = after
            res = self.client.search(index=index or self.chunk_index, body={"size": 0, "aggs": {"ids": {"composite": comp}}},
                                     params={"request_timeout": 300})
            agg = res["aggregations"]["ids"]
            out.update((b["key"]["p"], b["doc_count"]) for b in agg["buckets"])
            after = agg.get("after_key")
            if not agg["buckets"] or not after:
                return out

    def layout(self) -> dict[str, dict]:
        """``{index: {"shards", "replicas", "health"}}`` of both indices (for `lit3r doctor`)."""
        both = f"{self.chunk_index},{self.paper_index}"
        conf = self.client.indices.get_settings(index=both)
        health = self.client.cluster.health(index=both, params={"level": "indices"})["indices"]
        return {name: {"shards": int(v["settings"]["index"]["number_of_shards"]),
                       "replicas": int(v["settings"]["index"]["number_of_replicas"]),
                       "health": health.get(name, {}).get("status", "unknown")} for name, v in conf.items()}

    def count(self) -> dict[str, int]:
        """Documents per index (for `lit3r doctor`)."""
        return {kind: self.client.count(index=f"{self.prefix}-{kind}")["count"] for kind in ("chunks", "papers")}

    # -- reading by id -----------------------------------------------------------------------
    def vectors_of(self, chunk_ids: Sequence[str]) -> np.ndarray:
        """``(len(chunk_ids), dim)`` float32 vectors in that order (one ``mget``; UnknownIdError for an
        unknown id)."""
        if not len(chunk_ids):
            return np.zeros((0, self.dim or 0), np.float32)
        cache = self._vectors
        rows = {} if cache is None else cache
        ids = [c for c in dict.fromkeys(chunk_ids) if c not in rows]
        if ids:
            docs = self.client.mget(index=self.chunk_index, body={"ids": ids},
                                    params={"_source": "false", "stored_fields": "vector_bytes"})["docs"]
            rows.update({d["_id"]: np.frombuffer(base64.b64decode(d["fields"]["vector_bytes"][0]), dtype=np.float32)
                         for d in docs if d.get("found") and "fields" in d})
        missing = [c for c in chunk_ids if c not in rows]
        if missing:
            raise UnknownIdError("chunk", missing[0])
        return np.stack([rows[c] for c in chunk_ids])

    def paper_head(self, paper_id: str, chars: int) -> str:
        """The first ``chars`` characters of a paper's text (UnknownIdError when unknown)."""
        doc = self.client.mget(index=self.paper_index, body={"ids": [paper_id]}, params={"_source": "head"})["docs"][0]
        if not doc.get("found"):
            raise UnknownIdError("paper", paper_id)
        return doc["_source"]["head"][:chars]

    # -- search ----------------------------------------------------------------------------
    def doc_freq(self, index: str, terms: list[str]) -> dict[str, int]:
        """``{term: df}`` of ``terms`` in ``index`` (one ``_termvectors`` request on an artificial
        document; on a sharded index the df of the shard it is routed to); terms in no document
        are left out."""
        res = self.client.termvectors(index=index, body={
            "doc": {"tokens": " ".join(terms)}, "fields": ["tokens"], "term_statistics": True,
            "field_statistics": False, "positions": False, "offsets": False, "payloads": False})
        stats = ((res.get("term_vectors") or {}).get("tokens") or {}).get("terms") or {}
        return {t: int(v.get("doc_freq", 0)) for t, v in stats.items() if v.get("doc_freq")}

    def _match_body(self, field: str, query: str, k: int, index: Optional[str] = None) -> Optional[dict]:
        toks = tokenize(query)
        if len(toks) > MAX_QUERY_TERMS:  # past the server's clause limit: the rule of both backends
            toks = cap_terms(toks, lambda terms: self.doc_freq(index or self.chunk_index, terms))
        if not toks or k <= 0:
            return None
        return {"size": k + self.TIE_SLACK, "_source": [field], "query": {"match": {"tokens": " ".join(toks)}}}

    def _knn_body(self, query_vector: np.ndarray, k: int) -> dict:
        # HNSW is approximate: ask the graph for more candidates than needed (Lucene's
        # num_candidates = k here), then keep the top k, which brings recall close to exact search
        return {"size": k + self.TIE_SLACK, "_source": ["chunk_id"],
                "query": {"knn": {"vector": {"vector": np.asarray(query_vector, np.float32),
                                             "k": max(k + self.TIE_SLACK, self.candidates)}}}}

    #: Hits fetched beyond k, so that equal scores are ordered by id whatever the shard layout.
    TIE_SLACK = 16

    @staticmethod
    def _ranked(hits: list[Hit], k: int) -> list[Hit]:
        # shards return equal scores in their own order: best score first, then by id
        return sorted(hits, key=lambda h: (-h[1], h[0]))[:k]

    @classmethod
    def _hits(cls, res: dict, field: str, k: int) -> list[Hit]:
        return cls._ranked([(h["_source"][field], float(h["_score"])) for h in res["hits"]["hits"]], k)

    @classmethod
    def _cosine_hits(cls, res: dict, k: int) -> list[Hit]:
        # the k-NN plugin's innerproduct score is 1 + ip for ip >= 0 and 1 / (1 - ip) below;
        # on L2-normalised vectors ip is the cosine, which the SearchIndex protocol returns
        out = []
        for h in res["hits"]["hits"]:
            s = float(h["_score"])
            out.append((h["_source"]["chunk_id"], s - 1.0 if s >= 1.0 else 1.0 - 1.0 / s))
        return cls._ranked(out, k)

    def _bm25(self, index: str, field: str, query: str, k: int) -> list[Hit]:
        body = self._match_body(field, query, k, index)
        if not body:
            return []
        # one shard scores with its own document frequencies; DFS gathers them from every shard
        # first, so a sharded index ranks like a single one
        # and one preference string sends every query to the same shard copies (a replica whose
        # deleted documents differ scores near-ties in another order): reproducible rankings
        params = {"search_type": "dfs_query_then_fetch", "preference": _PREFERENCE} if self.sharded else {}
        return self._hits(self.client.search(index=index, body=body, params=params), field, k)

    def chunk_bm25(self, query: str, k: int) -> list[Hit]:
        """Top-k chunks by BM25 from OpenSearch; [] for a query without terms."""
        return self._bm25(self.chunk_index, "chunk_id", query, k)

    def paper_bm25(self, query: str, k: int) -> list[Hit]:
        """Top-k papers by BM25 over their concatenated chunk text, from OpenSearch."""
        return self._bm25(self.paper_index, "paper_id", query, k)

    def chunk_dense(self, query_vector: np.ndarray, k: int) -> list[Hit]:
        """Top-k chunks by approximate k-NN (HNSW) from OpenSearch, scored by cosine."""
        if k <= 0:
            return []
        params = {"preference": _PREFERENCE} if self.sharded else {}
        return self._cosine_hits(self.client.search(index=self.chunk_index, body=self._knn_body(query_vector, k),
                                                    params=params), k)

    def chunk_dense_many(self, query_vectors: np.ndarray, k: int) -> list[list[Hit]]:
        """Top-k chunks for each query vector, all in one ``msearch`` round trip."""
        if not len(query_vectors) or k <= 0:
            return [[] for _ in range(len(query_vectors))]
        lines: list[dict] = []
        for q in query_vectors:
            lines += [{"index": self.chunk_index}, self._knn_body(q, k)]
        out = []
        for r in self.client.msearch(body=lines)["responses"]:
            if "error" in r:
                raise BackendUnavailable(f"OpenSearch k-NN search failed: {r['error']}")
            out.append(self._cosine_hits(r, k))
        return out
