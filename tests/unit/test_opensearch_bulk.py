"""The bulk bodies of the servers' load (graph/search/opensearch_bulk.py) and the paper tokens taken
from the chunks' (lit3r/index/load.py): the same bytes and terms as before, built with less work."""

from __future__ import annotations

import numpy as np
import orjson

from graph.search import opensearch_bulk
from graph.search.opensearch import _Serializer
from graph.search.tokenize import tokenize
from lit3r.index.load import _paper_tokens


def test_a_document_is_serialised_as_opensearch_py_serialised_it():
    vector = (np.arange(4, dtype=np.float32) / 3).astype(np.float32)
    source = {"chunk_id": "p::c1", "page": 3, "section": None, "tokens": "naïve 84.2 ünïcode", "vector": vector}
    line = next(opensearch_bulk.ndjson("idx-chunks", [("p::c1", source)]))
    ser = _Serializer()  # the client's serializer, as helpers.parallel_bulk used it per line
    assert line == (ser.dumps({"index": {"_index": "idx-chunks", "_id": "p::c1"}}) + "\n"
                    + ser.dumps(source) + "\n").encode()
    sent = np.array(orjson.loads(line.split(b"\n")[1])["vector"], dtype=np.float32)
    assert sent.tobytes() == vector.tobytes()  # the shortest text that reads back as the same float32
    assert ser.dumps(b'{"a":1}\n') == b'{"a":1}\n'  # a body serialised already goes out as it is


def test_bodies_hold_at_most_the_documents_and_bytes_asked_and_a_large_document_goes_alone():
    lines = [b"a" * 10 + b"\n", b"b" * 10 + b"\n", b"c" * 100 + b"\n", b"d" * 10 + b"\n", b"e" * 10 + b"\n"]
    got = list(opensearch_bulk.bodies(lines, max_docs=2, max_bytes=50))
    assert [n for n, _ in got] == [2, 1, 2]
    assert b"".join(body for _, body in got) == b"".join(lines)
    assert [n for n, _ in opensearch_bulk.bodies(lines, max_docs=4, max_bytes=10_000)] == [4, 1]
    assert list(opensearch_bulk.bodies([])) == []


def test_a_papers_tokens_from_its_chunks_equal_the_tokens_of_its_joined_text():
    papers = [["The GSM8K accuracy is 80.59%", "", "of the 3.", "5 models", "İstanbul ÉCOLE naïve_bayes"],
              ["single chunk, with 1.2.3 versions"], [""], ["a", "the"]]
    chunk_tokens = [" ".join(tokenize(t)) for texts in papers for t in texts]
    got = _paper_tokens([len(texts) for texts in papers], chunk_tokens)
    assert got == [" ".join(tokenize("\n".join(texts))) for texts in papers]
    assert got[0].startswith("gsm8k accuracy 80.59") and "  " not in got[0]
