"""The Python side of the servers' load, without servers: CPU seconds per 1,000 chunks of each step.

    .venv/bin/python bench/load_client_bench.py --home DIR [--chunks 5000]

DIR: a data folder with ``chunks.jsonl`` (e.g. one kept by ``bench/scale_bench.py --keep``). Random
unit vectors of 384 dimensions stand in for the encoder's. Prints CPU ms per 1,000 chunks of:
tokenizing the chunk texts; the bulk bodies built as opensearch-py's ``parallel_bulk`` built them
(an action dict per document, the client's serializer per line, a str body) and as
``graph/search/opensearch_bulk.py`` builds them (orjson straight to NDJSON bytes); and packing the
``load_chunks`` rows for Bolt with the installed driver (Rust packstream when ``neo4j-rust-ext`` is
installed, Python otherwise).
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graph.search import opensearch_bulk  # noqa: E402
from graph.search.opensearch import _Serializer  # noqa: E402
from graph.search.tokenize import tokenize  # noqa: E402


def _cpu_ms_per_1k(fn, n: int, repeat: int = 3) -> float:
    t = time.process_time()
    for _ in range(repeat):
        fn()
    return (time.process_time() - t) / repeat / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--chunks", type=int, default=5000)
    args = ap.parse_args()
    with (args.home / "chunks.jsonl").open(encoding="utf-8") as f:
        chunks = [json.loads(line) for line in itertools.islice(f, args.chunks)]
    n = len(chunks)
    vectors = np.random.default_rng(0).standard_normal((n, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    toks = [" ".join(tokenize(c["text"])) for c in chunks]

    def source(c, v, t):
        return {"chunk_id": c["chunk_id"], "paper_id": c["paper_id"], "kind": c["kind"], "page": c["page"],
                "section": c.get("section"), "object_id": c.get("object_id"), "tokens": t, "vector": v,
                "vector_bytes": base64.b64encode(v.tobytes()).decode("ascii")}

    def helpers_bodies() -> None:
        from opensearchpy.helpers.actions import _chunk_actions, expand_action

        ser = _Serializer()
        actions = ({"_index": "x", "_id": c["chunk_id"], "_source": source(c, v, t)} for c, v, t in zip(chunks, vectors, toks))
        for _, data in _chunk_actions(map(expand_action, actions), 500, 50 * 2**20, ser):
            ("\n".join(x if isinstance(x, str) else ser.dumps(x) for x in data) + "\n").encode()

    def ndjson_bodies() -> None:
        docs = ((c["chunk_id"], source(c, v, t)) for c, v, t in zip(chunks, vectors, toks))
        for _ in opensearch_bulk.bodies(opensearch_bulk.ndjson("x", docs)):
            pass

    def pack() -> None:
        from neo4j._codec.packstream.v1 import Packer

        class Sink(bytearray):
            write = bytearray.extend

        rows = [{"paper_id": c["paper_id"], "chunks": [{k: c.get(k) for k in (
            "chunk_id", "kind", "page", "section", "object_id", "text", "seq", "image")}]} for c in chunks]
        Packer(Sink()).pack({"rows": rows})

    from neo4j._codec.packstream.v1 import _rust_pack

    print(f"{n} chunks; CPU ms per 1,000 chunks: tokenize {_cpu_ms_per_1k(lambda: [tokenize(c['text']) for c in chunks], n):.1f}, "
          f"bulk bodies via parallel_bulk's path {_cpu_ms_per_1k(helpers_bodies, n):.1f}, "
          f"as NDJSON bytes {_cpu_ms_per_1k(ndjson_bodies, n):.1f}, "
          f"Bolt packing of the chunk rows ({'Rust' if _rust_pack else 'Python'}) {_cpu_ms_per_1k(pack, n):.1f}")


if __name__ == "__main__":
    main()
