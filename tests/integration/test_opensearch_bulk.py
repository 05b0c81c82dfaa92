"""graph/search/opensearch_bulk.py against the real OpenSearch: every document of several requests
in flight is indexed, and a refused document raises BulkIndexError as parallel_bulk did."""

from __future__ import annotations

import numpy as np
import pytest

from graph.search import opensearch_bulk
from graph.search.opensearch import make_client


def test_documents_of_several_requests_are_indexed_and_a_refused_one_raises(servers):
    from opensearchpy.helpers import BulkIndexError

    _, osr = servers
    client = make_client(osr.url, timeout=120)
    client.indices.create(index="bulk-check", body={
        "settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0}},
        "mappings": {"properties": {"n": {"type": "integer"}, "vector": {"type": "knn_vector", "dimension": 3,
                                    "method": {"name": "hnsw", "engine": "lucene", "space_type": "innerproduct"}}}}})
    try:
        vectors = np.eye(3, dtype=np.float32)
        docs = ((f"d{i}", {"n": i, "vector": vectors[i % 3]}) for i in range(250))
        assert opensearch_bulk.send(client, opensearch_bulk.ndjson("bulk-check", docs), max_docs=40, in_flight=3) == 250
        client.indices.refresh(index="bulk-check")
        assert client.count(index="bulk-check")["count"] == 250
        got = client.get(index="bulk-check", id="d4")["_source"]
        assert got == {"n": 4, "vector": [0.0, 1.0, 0.0]}
        bad = [("ok", {"n": 1, "vector": vectors[0]}), ("wrong-dimension", {"n": 2, "vector": [1.0, 0.0]})]
        with pytest.raises(BulkIndexError) as caught:
            opensearch_bulk.send(client, opensearch_bulk.ndjson("bulk-check", bad))
        assert [next(iter(item.values()))["_id"] for item in caught.value.errors] == ["wrong-dimension"]
    finally:
        client.indices.delete(index="bulk-check")
        client.close()
