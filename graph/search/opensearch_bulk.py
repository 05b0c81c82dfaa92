"""Bulk indexing into OpenSearch from pre-serialised NDJSON bytes, several requests in flight.

Each document is serialised once by orjson, straight to bytes (numpy float32 vectors in their
shortest exact form), into ``_bulk`` bodies of at most ``max_docs`` documents and ``max_bytes``
bytes; up to ``in_flight`` bodies are sent at once on the client's connection pool, so OpenSearch
indexes one request while the next is built. opensearch-py's ``parallel_bulk`` did the same work
through a dict per action, a serializer call per line, a str body and its UTF-8 encoding: 0.028
CPU s per 1,000 chunk documents for the bodies against 0.018 here (5,000 synthetic chunks with
384-d vectors; docs/BENCHMARKS.md#servers).

A document that OpenSearch refuses raises ``opensearchpy.helpers.BulkIndexError`` (as
``parallel_bulk(raise_on_error=True)`` did) with the failed items; transport errors are the
client's.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Iterable, Iterator

import orjson

#: Documents and bytes per ``_bulk`` request, and requests in flight (2 cores: the server indexes
#: one request per write thread while the client builds the next).
MAX_DOCS, MAX_BYTES, IN_FLIGHT = 500, 50 * 2**20, 4


def ndjson(index: str, docs: Iterable[tuple[str, dict[str, Any]]]) -> Iterator[bytes]:
    """The two NDJSON lines (action, source) of each ``(doc_id, source)``, as one bytes object."""
    for doc_id, source in docs:
        yield (orjson.dumps({"index": {"_index": index, "_id": doc_id}}) + b"\n"
               + orjson.dumps(source, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")


def bodies(lines: Iterable[bytes], max_docs: int = MAX_DOCS, max_bytes: int = MAX_BYTES) -> Iterator[tuple[int, bytes]]:
    """``(documents, body)`` of consecutive documents: at most ``max_docs`` of them and
    ``max_bytes`` bytes (one larger document goes alone)."""
    batch: list[bytes] = []
    size = 0
    for line in lines:
        if batch and (len(batch) >= max_docs or size + len(line) > max_bytes):
            yield len(batch), b"".join(batch)
            batch, size = [], 0
        batch.append(line)
        size += len(line)
    if batch:
        yield len(batch), b"".join(batch)


def _check(res: dict) -> int:
    items = res.get("items", [])
    if res.get("errors"):
        from opensearchpy.helpers import BulkIndexError

        failed = [item for item in items if next(iter(item.values())).get("error")]
        raise BulkIndexError(f"{len(failed)} document(s) failed to index.", failed)
    return len(items)


def send(client, docs: Iterable[bytes], *, max_docs: int = MAX_DOCS, max_bytes: int = MAX_BYTES,
         in_flight: int = IN_FLIGHT, request_timeout: float = 300) -> int:
    """Index the NDJSON ``docs`` (:func:`ndjson`) through ``client`` (an ``opensearchpy.OpenSearch``)
    with ``in_flight`` requests at a time. Returns the number of documents indexed; raises as the
    module docstring says (the requests still in flight are awaited first)."""
    n = 0
    pending: deque[Future] = deque()
    with ThreadPoolExecutor(in_flight, thread_name_prefix="opensearch-bulk") as pool:
        try:
            for _, body in bodies(docs, max_docs, max_bytes):
                if len(pending) >= in_flight:
                    n += _check(pending.popleft().result())
                pending.append(pool.submit(client.bulk, body=body, params={"request_timeout": request_timeout}))
            while pending:
                n += _check(pending.popleft().result())
        finally:
            for future in pending:
                future.cancel()
    return n
