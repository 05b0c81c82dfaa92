"""Pictures of citation subgraphs for ``lit3r graph ... --png / --html`` (networkx + matplotlib).

The results of :mod:`graph.explore` become a ``networkx.MultiDiGraph`` (nodes: paper or work
ids with ``label``, ``role``; edges: ``relation`` in cites / coupled / similar, ``label``), which
is drawn with matplotlib's object API (no pyplot state, no display needed): a PNG, or a
self-contained HTML page holding the drawing as SVG and the result's tables in full.
"""

from __future__ import annotations

import html
import io
import textwrap
from pathlib import Path
from typing import Any, Sequence

import networkx as nx

#: Node colour per role, edge colour and style per relation.
NODE_COLOURS = {"seed": "#d62728", "cites": "#1f77b4", "cited_by": "#2ca02c", "coupled": "#ff7f0e",
                "similar": "#9467bd", "paper": "#1f77b4", "work": "#9e9e9e",
                "question": "#d62728", "answer_paper": "#2ca02c", "candidate": "#9e9e9e", "evidence": "#ff7f0e"}
EDGE_STYLES: dict[str, tuple[str, Any]] = {"cites": ("#4a4a4a", "solid"), "coupled": ("#ff7f0e", "dashed"),
                                           "similar": ("#9467bd", "dotted"), "candidate": ("#7f7f7f", "solid"),
                                           "supports": ("#ff7f0e", "solid")}
_LEGEND = {"cites": "cites (arrow to the cited)", "coupled": "coupled (shared cited works)",
           "similar": "similar (embedding cosine)", "candidate": "candidate (#final rank, A/B ranks)",
           "supports": "evidence chunk of the answer (E rank)"}
#: Candidates drawn in a trace besides the answer's papers (the rest are in the tables).
TRACE_CANDIDATES = 10


def _label(node_id: str, title: str | None) -> str:
    if not title:
        return "\n".join(textwrap.wrap(node_id, 28)[:3])
    lines = textwrap.wrap(title, 26)
    return node_id + "\n" + "\n".join(lines[:2]) + ("..." if len(lines) > 2 else "")


def neighbourhood_graph(result: dict) -> nx.MultiDiGraph:
    """The subgraph of a :func:`graph.explore.neighbourhood` result (also takes the results of
    :func:`graph.explore.coupling` and :func:`graph.explore.similar`, which hold a part of it)."""
    g = nx.MultiDiGraph()
    seed = result["paper"]["paper_id"]
    g.add_node(seed, label=_label(seed, result["paper"]["title"]), role="seed")

    def add(p: dict, role: str) -> None:
        if p["paper_id"] not in g:
            g.add_node(p["paper_id"], label=_label(p["paper_id"], p["title"]), role=role)

    for p in result.get("cites", []):
        add(p, "cites")
        g.add_edge(seed, p["paper_id"], relation="cites", label="")
    for p in result.get("cited_by", []):
        add(p, "cited_by")
        g.add_edge(p["paper_id"], seed, relation="cites", label="")
    for p in result.get("coupled", []):
        add(p, "coupled")
        g.add_edge(seed, p["paper_id"], relation="coupled", label=f"{p['shared']} shared")
    for p in result.get("similar", []):
        add(p, "similar")
        g.add_edge(seed, p["paper_id"], relation="similar", label=f"{p['score']:.2f}")
    return g


def path_graph(result: dict) -> nx.MultiDiGraph:
    """The subgraph of a :func:`graph.explore.citation_path` result (empty when no path)."""
    g = nx.MultiDiGraph()
    for n in result["nodes"]:
        g.add_node(n["id"], label=_label(n["id"], n["title"]), role=n["kind"])
    for e in result["edges"]:
        g.add_edge(e["citing"], e["cited"], relation="cites", label="")
    return g


def trace_graph(view: dict) -> nx.MultiDiGraph:
    """The subgraph of one stored evidence trace (``lit3r graph trace`` view: ``question``,
    ``candidates``, ``evidence_path``): the Question, its first ``TRACE_CANDIDATES`` candidates
    and every paper of the answer (edges labelled with the final rank and the Ranking A/B ranks),
    and the evidence chunks under their papers."""
    g = nx.MultiDiGraph()
    q = view["question"]
    qid = f"Q {q['query_id']}"
    g.add_node(qid, label=_label(qid, str(q.get("text") or "")), role="question")
    answer = {e["paper_id"] for e in view.get("evidence_path", [])}
    answer |= set(((q.get("answer") or {}).get("papers")) or [])
    for c in view.get("candidates", []):
        if (c.get("rank") or 10**9) > TRACE_CANDIDATES and c["paper_id"] not in answer:
            continue
        g.add_node(c["paper_id"], label=_label(c["paper_id"], c.get("title")),
                   role="answer_paper" if c["paper_id"] in answer else "candidate")
        ab = "/".join(str(c.get(k) if c.get(k) is not None else "-") for k in ("rank_a", "rank_b"))
        g.add_edge(qid, c["paper_id"], relation="candidate", label=f"#{c.get('rank')} (A/B {ab})")
    for e in view.get("evidence_path", []):
        if e["paper_id"] not in g:
            g.add_node(e["paper_id"], label=_label(e["paper_id"], None), role="answer_paper")
        g.add_node(e["chunk_id"], label=_label(e["chunk_id"], None), role="evidence")
        g.add_edge(e["paper_id"], e["chunk_id"], relation="supports", label=f"E{e.get('rank')}")
    return g


def _layout(g: nx.MultiDiGraph, line: bool) -> dict[str, Any]:
    nodes = list(g.nodes)
    if line:
        return {n: (float(i), (i % 2) * 0.25) for i, n in enumerate(nodes)}
    seeds = [n for n in nodes if g.nodes[n]["role"] in ("seed", "question")]
    chunks = [n for n in nodes if g.nodes[n]["role"] == "evidence"]
    rest = [n for n in nodes if n not in seeds and n not in chunks]
    if not rest:
        return {n: (0.0, 0.0) for n in nodes}
    shells = [seeds, rest] + ([chunks] if chunks else [])
    return nx.shell_layout(g, shells) if seeds else nx.circular_layout(g)


def figure(g: nx.MultiDiGraph, title: str, line: bool = False):
    """A matplotlib ``Figure`` of ``g`` (``line``: the nodes left to right, for a path)."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    n = max(1, g.number_of_nodes())
    fig = Figure(figsize=(max(12.0, 2.2 * n) if line else 14.0, 5.0 if line else 11.0), dpi=100)
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_title(title, fontsize=13)
    if g.number_of_nodes() == 0:
        ax.text(0.5, 0.5, "(nothing to draw)", ha="center", va="center", fontsize=14)
        return fig
    pos = _layout(g, line)
    colours = [NODE_COLOURS.get(g.nodes[v]["role"], "#1f77b4") for v in g.nodes]
    nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colours, node_size=700, alpha=0.9)
    used = []
    for k, (rel, (colour, style)) in enumerate(EDGE_STYLES.items()):
        edges = [(u, v) for u, v, d in g.edges(data=True) if d["relation"] == rel]
        if not edges:
            continue
        used.append(rel)
        nx.draw_networkx_edges(g, pos, edgelist=edges, ax=ax, edge_color=colour, style=style, width=1.6,
                               arrows=True, arrowstyle="-|>" if rel in ("cites", "supports") else "-", arrowsize=16,
                               node_size=700, connectionstyle=f"arc3,rad={0.08 * k}")
        labels = {(u, v): d["label"] for u, v, d in g.edges(data=True) if d["relation"] == rel and d["label"]}
        if labels:
            nx.draw_networkx_edge_labels(g, pos, edge_labels=labels, ax=ax, font_size=7, font_color=colour,
                                         label_pos=0.35, connectionstyle=f"arc3,rad={0.08 * k}")
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    dx, dy = (max(xs) - min(xs)) or 1.0, 1.0 if line else (max(ys) - min(ys)) or 1.0
    below = {v: (x, y - 0.035 * dy) for v, (x, y) in pos.items()}  # captions under the nodes
    nx.draw_networkx_labels(g, below, labels={v: g.nodes[v]["label"] for v in g.nodes}, ax=ax, font_size=7,
                            verticalalignment="top", bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none",
                                                           "pad": 0.5})
    handles = [Line2D([0], [0], color=EDGE_STYLES[r][0], linestyle=EDGE_STYLES[r][1], label=_LEGEND[r]) for r in used]
    roles = dict.fromkeys(g.nodes[v]["role"] for v in g.nodes)
    handles += [Line2D([0], [0], marker="o", color="w", markerfacecolor=NODE_COLOURS.get(r, "#1f77b4"),
                       markersize=10, label=r.replace("_", " ")) for r in roles]
    ax.legend(handles=handles, loc="upper left" if line else "lower left", fontsize=8, frameon=False)
    ax.set_xlim(min(xs) - 0.12 * dx, max(xs) + 0.12 * dx)
    ax.set_ylim(min(ys) - (0.5 if line else 0.16) * dy, max(ys) + (0.3 if line else 0.06) * dy)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.95, bottom=0.01)
    return fig


def write_png(g: nx.MultiDiGraph, path: Path, title: str, line: bool = False) -> Path:
    """Draw ``g`` into the PNG ``path`` (its folder must exist); returns the path. Raises OSError."""
    figure(g, title, line).savefig(path, format="png")
    return path


def write_html(g: nx.MultiDiGraph, path: Path, title: str, tables: Sequence[tuple[str, list[dict]]],
               line: bool = False) -> Path:
    """A self-contained HTML page: ``title``, the drawing of ``g`` as inline SVG and each
    ``(heading, rows)`` of ``tables`` in full. Raises OSError."""
    buf = io.StringIO()
    figure(g, title, line).savefig(buf, format="svg")
    svg = buf.getvalue()
    svg = svg[svg.find("<svg"):]
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>",
             "<style>body{font-family:sans-serif;margin:2em}svg{max-width:100%;height:auto}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;"
             "text-align:left;vertical-align:top}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>", svg]
    for heading, rows in tables:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        if not rows:
            parts.append("<p>(none)</p>")
            continue
        cols = list(rows[0])
        parts.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>")
        for r in rows:
            parts.append("<tr>" + "".join(f"<td>{html.escape(_cell(r.get(c)))}</td>" for c in cols) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return str(v)
