"""`lit3r graph` on both backends: the same JSON from the embedded SQLite store and from Neo4j
(a real server, loaded with the same built 10-paper subset) for every corpus paper and every
pair of papers; a drawing of a neighbourhood is a real PNG; the tables print values in full."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner

from lit3r.cli import main
from tests.integration.conftest import SUBSET


@pytest.fixture(scope="module")
def runners(subset_home, subset_records, servers, tmp_path_factory):
    """``(embedded, neo4j)``: functions running `lit3r ARGS` on the subset's embedded home, and
    on the servers backend over Neo4j loaded with the same records (from a home with no file)."""
    from graph.neo4j_store import Neo4jGraphStore, connect

    papers, chunks, refs, neighbours, _ = subset_records
    store = Neo4jGraphStore(connect(servers[0].uri))
    try:
        store.load(papers, chunks, refs, neighbours)
    finally:
        store.close()
    bare = tmp_path_factory.mktemp("graph-bare") / "home"
    emb = CliRunner(env={"LIT3R_BACKEND": "embedded"})
    srv = CliRunner(env={"LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": servers[0].uri,
                         "LIT3R_NEO4J__USER": "", "LIT3R_NEO4J__PASSWORD": ""})

    def run(runner, home):
        def go(*args: str, code: int = 0):
            res = runner.invoke(main, ["--home", str(home), "graph", *args], catch_exceptions=False)
            assert res.exit_code == code, res.output
            return res
        return go

    return run(emb, subset_home), run(srv, bare)


def _both(runners, *args: str):
    emb, srv = runners
    a, b = json.loads(emb(*args, "--json").stdout), json.loads(srv(*args, "--json").stdout)
    return a, b


def test_papers_and_search_are_identical(runners):
    a, b = _both(runners, "papers")
    assert a == b and [p["paper_id"] for p in a] == sorted(SUBSET)
    assert all(p["title"] and p["authors"] for p in a)
    for text in ("attention", "ATTENTION", "2007.", "vaswani", "no such words here"):
        a, b = _both(runners, "papers", "--search", text)
        assert a == b, text
    assert [p["paper_id"] for p in _both(runners, "papers", "--search", "Vaswani")[0]] == ["1706.03762"]
    assert _both(runners, "papers", "--limit", "3")[1] == _both(runners, "papers")[0][:3]


def test_every_paper_answers_the_same_on_both_backends(runners):
    seen = {"cites": 0, "cited_by": 0, "coupled": 0, "similar": 0}
    for pid in SUBSET:
        a, b = _both(runners, "neighbourhood", pid)
        assert a == b, pid
        for k in seen:
            seen[k] += len(a[k])
        a, b = _both(runners, "coupling", pid, "--limit", "50")
        assert a == b, pid
        assert all(len(c["works"]) == c["shared"] for c in a["coupled"])
        a, b = _both(runners, "similar", pid, "--limit", "20")
        assert a == b, pid
    assert all(n > 0 for n in seen.values()), seen  # not vacuous: every relation occurs


def test_citation_paths_are_identical_for_every_pair(runners):
    hops = []
    for x, y in itertools.combinations(sorted(SUBSET), 2):
        a, b = _both(runners, "path", x, y)
        assert a == b, (x, y)
        if a["hops"] is not None:
            assert [a["nodes"][0]["id"], a["nodes"][-1]["id"]] == [x, y] and len(a["edges"]) == a["hops"]
        hops.append(a["hops"])
    assert any(h == 1 for h in hops) and any(h is not None and h >= 2 for h in hops), hops


def test_neighbourhood_png_and_html_are_drawn(runners, tmp_path):
    from PIL import Image

    emb, srv = runners
    png, page = tmp_path / "n.png", tmp_path / "n.html"
    res = srv("neighbourhood", "2007.14062", "--png", str(png), "--html", str(page))
    assert f"drawing saved to {png}" in res.stderr
    img = Image.open(png).convert("RGB")
    assert img.size[0] >= 1000 and img.size[1] >= 800, img.size
    px = np.asarray(img).reshape(-1, 3).astype(int)
    ink = float((px < 250).any(axis=1).mean())
    assert 0.02 < ink < 0.6, ink  # drawn, not blank, not a solid fill
    seed = (px[:, 0] > 180) & (px[:, 1] < 110) & (px[:, 2] < 110)  # the red seed node
    others = (px[:, 2] > 150) & (px[:, 0] < 90)  # blue "cites" nodes
    assert seed.sum() > 300 and others.sum() > 300, (seed.sum(), others.sum())
    text = page.read_text(encoding="utf-8")
    r = json.loads(emb("neighbourhood", "2007.14062", "--json").stdout)
    assert "<svg" in text and all(p["paper_id"] in text for p in r["coupled"] + r["cited_by"] + r["similar"])
    path = tmp_path / "p.png"
    emb("path", "2007.14062", "2006.04768", "--png", str(path))
    assert Image.open(path).size[0] >= 1000


def test_tables_print_full_values(runners):
    emb, _ = runners
    out = emb("coupling", "2007.14062").stdout
    row = json.loads(emb("coupling", "2007.14062", "--json").stdout)["coupled"][0]
    flat = "".join(out.split())  # long values fold onto more lines; none is cut
    assert all("".join(t.split()) in flat for t in row["work_titles"]) and "2007.14062" in out
    # works are shown by title; their keys only in --json
    assert len(row["work_titles"]) == len(row["works"]) and any(t != w for t, w in zip(row["work_titles"], row["works"]))
    assert not any(w in flat for w, t in zip(row["works"], row["work_titles"]) if t != w), out
    path = emb("path", "2007.14062", "2006.04768").stdout
    steps = json.loads(emb("path", "2007.14062", "2006.04768", "--json").stdout)["nodes"]
    for node in steps:
        if node["kind"] == "work":
            assert node["title"] and node["id"] not in path and node["title"][:20] in path, (node, path)


def test_bad_input_is_one_line(runners, tmp_path):
    for run in runners:
        res = run("neighbourhood", "no-such-paper", code=1)
        assert res.stderr.strip().splitlines() == ["Error: unknown paper id 'no-such-paper': `lit3r graph papers "
                                                   "--search TEXT` lists the paper ids"], res.stderr
        res = run("neighbourhood", "2007.14062", "--png", str(tmp_path / "x.jpg"), code=2)
        assert "give a .png file in an existing folder" in res.stderr
        res = run("path", "2007.14062", "2006.04768", "--max-hops", "1", "--json")
        assert json.loads(res.stdout) == {"from": "2007.14062", "to": "2006.04768", "hops": None, "nodes": [],
                                          "edges": []}


def test_the_path_is_the_first_shortest_path_networkx_finds(subset_home, subset_records):
    """An oracle from the records alone: networkx's shortest paths over the CITES pairs (a paper
    is the work "paper:<id>"); of several, the first by node ids."""
    import networkx as nx

    refs = subset_records[2]
    g = nx.Graph()
    g.add_edges_from((f"paper:{r.paper_id}", r.work_id) for r in refs)
    show = lambda w: w[len("paper:"):] if w.startswith("paper:") else w  # noqa: E731
    runner, n = CliRunner(env={"LIT3R_BACKEND": "embedded"}), 0
    for x, y in itertools.permutations(sorted(SUBSET), 2):
        res = runner.invoke(main, ["--home", str(subset_home), "graph", "path", x, y, "--json"])
        got = json.loads(res.stdout)
        try:
            want = min(nx.all_shortest_paths(g, f"paper:{x}", f"paper:{y}"))
        except nx.NetworkXNoPath:
            assert got["hops"] is None
            continue
        if len(want) - 1 > 8:
            assert got["hops"] is None
            continue
        assert [nd["id"] for nd in got["nodes"]] == [show(w) for w in want], (x, y)
        n += len(want) > 2
    assert n > 0  # some paths go through other nodes


@pytest.mark.parametrize("args", [["graph", "neighbourhood", "{id}"], ["graph", "similar", "{id}"],
                                  ["graph", "coupling", "{id}"], ["graph", "path", "{id}", "1706.03762"],
                                  ["graph", "trace", "{id}"], ["trace", "show", "{id}"], ["trace", "delete", "{id}"],
                                  ["trace", "candidates", "{id}"], ["ask", "attention", "--papers", "{id}"]])
def test_an_unknown_id_of_100000_characters_is_cut_in_the_error_line(hashing_home, args):
    """Issue 16: an error echoes at most 80 characters of a user-given id, then its length."""
    ident = "x" * 100_000
    res = CliRunner().invoke(main, ["--home", str(hashing_home), *[a.replace("{id}", ident) for a in args]])
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and len(lines) == 1, res.output[:500]
    assert "'" + "x" * 77 + "'... (100,000 characters)" in lines[0] and len(lines[0]) < 400, lines[0][:500]
