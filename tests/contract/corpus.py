"""A hand-made corpus for the store contracts: records built in memory, vectors from the model-free
hashing encoder, so a contract suite starts in seconds (no PDF, no model, no ../shared/data).

:func:`make_corpus` returns ``(papers, chunks, references, neighbours, vectors)``: 8 papers of
about 24 chunks each (every chunk kind; pseudo-word texts, each paper drawing on its own topic
words and a shared pool, so BM25 ranks a paper by its words), reference lists that cite other
papers of the corpus and a pool of 12 outside works (so bibliographic coupling with 1, 2 and 5
shared works all occur), the top-3 SIMILAR_TO neighbours of each paper by the cosine of its mean
chunk vector, and the chunk vectors (float32, unit rows, in ``chunks`` order). Deterministic.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from graph.records import Chunk, Neighbour, Paper, Reference, Source, chunk_id_for

DIM = 32
N_PAPERS, N_CHUNKS, N_WORKS = 8, 24, 12
#: (id, title, authors): the contracts' find_papers cases match an id prefix, a title word in
#: any case and an author's surname.
PAPERS = [
    ("2101.00001", "Linear attention for long documents", ["Ada Lovelace", "Alan Turing"]),
    ("2101.00002", "Sparse transformer blocks", ["Grace Hopper"]),
    ("2102.00003", "Retrieval with citation graphs", ["Edsger Dijkstra", "Ada Lovelace"]),
    ("2102.00004", "Chain of reasoning in small models", ["Barbara Liskov"]),
    ("2103.00005", "Dense passage encoders", ["Donald Knuth", "Frances Allen"]),
    ("2103.00006", "Attention sinks and streaming", ["John Backus"]),
    ("2104.00007", "Tables in scientific papers", ["Karen Sparck Jones"]),
    ("2104.00008", "Graph neural message passing", ["Leslie Lamport", "Grace Hopper"]),
]
KINDS = [("table", "Table"), ("figure", "Figure"), ("equation", "Equation")]


def _words(rng: random.Random, n: int) -> list[str]:
    """``n`` distinct pseudo-words of three syllables (no stop word, no digit)."""
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)))
    return sorted(out)


def _text(rng: random.Random, topic: list[str], shared: list[str], n: int) -> str:
    words = [rng.choice(topic) if rng.random() < 0.6 else rng.choice(shared) for _ in range(n)]
    if rng.random() < 0.5:
        words[rng.randrange(n)] = "attention model"
    return " ".join(words).capitalize() + "."


def _chunks(rng: random.Random, pid: str, title: str, topic: list[str], shared: list[str]) -> list[Chunk]:
    out = [Chunk(chunk_id=chunk_id_for(pid, 0), paper_id=pid, kind="title_abstract", page=1,
                 text=f"[ICLR 2021] {title}. {_text(rng, topic, shared, 40)}", seq=0)]
    for seq in range(1, N_CHUNKS):
        page, kind, object_id = 1 + seq // 5, "text", None
        if seq % 6 == 5:
            kind, label = KINDS[(seq // 6) % len(KINDS)]
            object_id = f"{label} {seq // 6 + 1}"
        text = _text(rng, topic, shared, rng.randint(60, 110))
        out.append(Chunk(chunk_id=chunk_id_for(pid, seq), paper_id=pid, kind=kind, page=page,
                         section=f"{1 + seq // 8} Section", object_id=object_id, text=text, seq=seq))
    return out


def _references(rng: random.Random, pid: str, ids: list[str], works: list[str]) -> list[Reference]:
    others = [q for q in ids if q != pid]
    cited = [(f"paper:{q}", q) for q in rng.sample(others, 2)]
    cited += [(f"title:{w}", None) for w in rng.sample(works, rng.randint(5, 9))]
    return [Reference(paper_id=pid, number=i, page=9, raw=f"A. Author. {work.split(':', 1)[1]}. 2020.",
                      title=work.split(":", 1)[1], work_id=work, cited_paper_id=target)
            for i, (work, target) in enumerate(cited, 1)]


def _neighbours(papers: list[Paper], chunks: list[Chunk], vectors: np.ndarray, k: int = 3) -> list[Neighbour]:
    ids = [p.paper_id for p in papers]
    means = np.stack([vectors[[i for i, c in enumerate(chunks) if c.paper_id == pid]].mean(axis=0) for pid in ids])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    sims = means @ means.T
    out = []
    for a, pid in enumerate(ids):
        order = sorted((b for b in range(len(ids)) if b != a), key=lambda b: (-sims[a, b], ids[b]))[:k]
        out += [Neighbour(paper_id=pid, neighbour_id=ids[b], score=round(float(sims[a, b]), 6), rank=r)
                for r, b in enumerate(order, 1)]
    return out


def make_corpus(seed: int = 7) -> tuple[list[Paper], list[Chunk], list[Reference], list[Neighbour], np.ndarray]:
    """The hand-made corpus (module docstring)."""
    from lit3r.models import HashingEncoder

    rng = random.Random(seed)
    vocab = _words(rng, 60 * N_PAPERS + 200)
    shared, works = vocab[:200], [f"w{vocab[i]}" for i in range(N_WORKS)]
    ids = [pid for pid, _, _ in PAPERS]
    papers, chunks, refs = [], [], []
    for n, (pid, title, authors) in enumerate(PAPERS):
        topic = vocab[200 + 60 * n: 260 + 60 * n]
        papers.append(Paper(paper_id=pid, title=title, authors=authors, venue="ICLR", year=2021,
                            abstract=f"About {title.lower()}.", n_pages=1 + N_CHUNKS // 5,
                            source=Source(file=f"pdfs/{pid}.pdf", sha256=hashlib.sha256(pid.encode()).hexdigest())))
        chunks += _chunks(rng, pid, title, topic, shared)
        refs += _references(rng, pid, ids, works)
    vectors = HashingEncoder(DIM).encode([c.text for c in chunks])
    return papers, chunks, refs, _neighbours(papers, chunks, vectors), vectors


class OnNeo4j:
    """Mixin of the Neo4j halves of the contracts: ``cls.uri`` of the session's test Neo4j, and
    :meth:`load_corpus` writing the hand-made records into it (replacing what the previous class loaded)."""

    uri: str

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _server(cls, servers):
        cls.uri = servers[0].uri

    @classmethod
    def load_corpus(cls, papers, chunks, refs, neighbours) -> None:
        from graph.neo4j_store import Neo4jGraphStore, connect

        store = Neo4jGraphStore(connect(cls.uri))
        store.load(papers, chunks, refs, neighbours)
        store.close()
