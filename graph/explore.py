"""Citation exploration over any :class:`graph.store.GraphStore`: what ``lit3r graph`` answers.

Every function here reads the store only through the GraphStore protocol, so the embedded
SQLite store and Neo4j give the same answer (the backends differ only in their queries: SQL
in :mod:`graph.embedded`, the named statements of ``cypher/`` in :mod:`graph.neo4j_store`).
Results are JSON-ready dicts and lists; scores are rounded to :data:`DIGITS` decimals. Unknown
paper ids raise graph.errors.UnknownIdError (a KeyError).

Shapes (``head`` is ``{paper_id, title, year, venue, authors}``):

- :func:`papers`: ``[head]`` by paper id.
- :func:`similar`: ``{paper: head, similar: [{rank, paper_id, score, title}]}`` (SIMILAR_TO, best first).
- :func:`coupling`: ``{paper: head, coupled: [{paper_id, jaccard, shared, title, works, work_titles}]}``:
  bibliographic coupling (seed paper section 2.2) with the shared cited work ids.
- :func:`neighbourhood`: ``{paper: head, references, cites, cited_by, coupled, similar}``:
  ``cites`` are the corpus papers in its reference list (``{number, paper_id, title}``, by the
  first reference number), ``cited_by`` the corpus papers citing it (``{paper_id, title}``).
- :func:`citation_path`: ``{from, to, hops, nodes: [{id, kind, title}], edges: [{citing, cited}]}``:
  a shortest path through CITES in either direction (a paper, a work it shares with the next
  paper, ...); among several, the one whose node ids come first in order (so both backends pick
  the same); ``hops`` None and no nodes when none is within ``max_hops``.
"""

from __future__ import annotations

from typing import Optional

from graph.records import Paper
from graph.store import GraphStore

#: Decimals of the scores in the results (cosine, Jaccard).
DIGITS = 6

_PAPER = "paper:"


def head(p: Paper) -> dict:
    """``{paper_id, title, year, venue, authors}`` of a paper."""
    return {"paper_id": p.paper_id, "title": p.title, "year": p.year, "venue": p.venue, "authors": list(p.authors)}


def _title(store: GraphStore, paper_id: str) -> str:
    return store.paper(paper_id).title


def papers(store: GraphStore, text: Optional[str] = None, limit: Optional[int] = None) -> list[dict]:
    """The heads of the papers whose id, title or an author contains ``text`` (all for None)."""
    return [head(p) for p in store.find_papers(text, limit)]


def similar(store: GraphStore, paper_id: str, limit: int = 10) -> dict:
    """The SIMILAR_TO neighbours of a paper (paper-embedding kNN), best first."""
    with store.snapshot():
        seed = head(store.paper(paper_id))
        rows = [{"rank": i, "paper_id": p, "score": round(s, DIGITS), "title": _title(store, p)}
                for i, (p, s) in enumerate(store.similar_papers(paper_id, limit), start=1)]
    return {"paper": seed, "similar": rows}


def _works(store: GraphStore, paper_id: str) -> set[str]:
    return {w for _, w, _ in store.cites(paper_id)}


def coupling(store: GraphStore, paper_id: str, min_shared: int = 2, limit: int = 10) -> dict:
    """The papers most coupled to a paper (by Jaccard of the cited-work sets, then shared
    count, then id), each with the work ids both cite (sorted)."""
    with store.snapshot():
        seed = head(store.paper(paper_id))
        mine = _works(store, paper_id)
        coupled = [(p, j, n, sorted(mine & _works(store, p)))
                   for p, j, n in store.coupled_papers(paper_id, min_shared, limit)]
        titles = store.work_titles([w for *_, works in coupled for w in works])
        # what the works are called, in the order of "works" (the key where no title is known)
        rows = [{"paper_id": p, "jaccard": round(j, DIGITS), "shared": n, "title": _title(store, p), "works": works,
                 "work_titles": [titles.get(w, w) for w in works]} for p, j, n, works in coupled]
    return {"paper": seed, "coupled": rows}


def neighbourhood(store: GraphStore, paper_id: str, limit: int = 10, min_shared: int = 2) -> dict:
    """A paper's citation neighbourhood: the corpus papers it cites and that cite it, its
    ``limit`` most coupled and most similar papers."""
    with store.snapshot():
        seed = head(store.paper(paper_id))
        refs = store.cites(paper_id)
        first: dict[str, int] = {}
        for number, _, cited in refs:
            if cited is not None and cited != paper_id:
                first.setdefault(cited, number)
        cites = [{"number": n, "paper_id": p, "title": _title(store, p)} for p, n in first.items()]
        cited_by = [{"paper_id": p, "title": _title(store, p)} for p in store.cited_by(paper_id) if p != paper_id]
        coupled = [{"paper_id": p, "jaccard": round(j, DIGITS), "shared": n, "title": _title(store, p)}
                   for p, j, n in store.coupled_papers(paper_id, min_shared, limit)]
        sim = similar(store, paper_id, limit)["similar"]
    return {"paper": seed, "references": len(refs), "cites": cites, "cited_by": cited_by, "coupled": coupled,
            "similar": sim}


def _node(store: GraphStore, work_id: str) -> dict:
    if work_id.startswith(_PAPER):
        pid = work_id[len(_PAPER):]
        return {"id": pid, "kind": "paper", "title": _title(store, pid)}
    return {"id": work_id, "kind": "work", "title": None}


def citation_path(store: GraphStore, from_id: str, to_id: str, max_hops: int = 8) -> dict:
    """A shortest citation path between two papers (module docstring), found breadth-first
    from ``from_id`` one :meth:`GraphStore.citation_links` call per hop."""
    with store.snapshot():
        store.paper(from_id), store.paper(to_id)  # UnknownIdError for either
        src, dst = _PAPER + from_id, _PAPER + to_id
        dist: dict[str, int] = {src: 0}
        adj: dict[str, set[str]] = {}
        links: set[tuple[str, str]] = set()
        frontier = [src]
        while dst not in dist and frontier and dist[frontier[0]] < max_hops:
            found = store.citation_links(frontier)
            links |= found
            here, nxt = set(frontier), set()
            for a, b in found:
                for u, v in ((a, b), (b, a)):
                    if u in here:
                        adj.setdefault(u, set()).add(v)
                        if v not in dist:
                            dist[v] = dist[u] + 1
                            nxt.add(v)
            frontier = sorted(nxt)
        out: dict = {"from": from_id, "to": to_id, "hops": None, "nodes": [], "edges": []}
        if dst not in dist:
            return out
        hops = dist[dst]
        on = {hops: {dst}}  # the nodes on some shortest path, by distance from src
        for i in range(hops - 1, -1, -1):
            on[i] = {u for u, d in dist.items() if d == i and adj.get(u, set()) & on[i + 1]}
        path = [src]
        for i in range(1, hops + 1):
            path.append(min(adj[path[-1]] & on[i]))
        out["hops"] = hops
        out["nodes"] = [_node(store, w) for w in path]
        titles = store.work_titles([n["id"] for n in out["nodes"] if n["kind"] == "work"])
        for n in out["nodes"]:
            if n["kind"] == "work":
                n["title"] = titles.get(n["id"])
        ids = [n["id"] for n in out["nodes"]]
        out["edges"] = [{"citing": u, "cited": v} if (path[i], path[i + 1]) in links else {"citing": v, "cited": u}
                        for i, (u, v) in enumerate(zip(ids, ids[1:]))]
    return out
