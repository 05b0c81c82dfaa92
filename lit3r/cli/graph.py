"""``lit3r graph``: explore the citation graph of the corpus, with the same answers on both
backends (the embedded SQLite store and Neo4j; :mod:`graph.explore` holds the queries).

Each command prints readable tables (values wrap, never cut), or ``--json`` (the
:mod:`graph.explore` shapes); the drawing commands also take ``--png FILE`` / ``--html FILE``
(:mod:`lit3r.present.draw`). More subcommands join the :func:`graph` group with ``@graph.command()``
(or ``graph.add_command``), using :func:`open_graph_store` and :func:`emit`.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

import click

from lit3r.cli.tables import echo_table

#: Seconds to wait for the Neo4j server to answer the first connection (servers backend).
CONNECT_TIMEOUT = 4.0


@click.group()
def graph() -> None:
    """Explore the citation graph: papers, neighbourhoods, coupling, similar papers, paths.

    The answers are the same on the embedded and the Neo4j backend; --json prints them as
    JSON, --png / --html draw the subgraph.
    """


@contextlib.contextmanager
def open_graph_store(ctx: click.Context) -> Iterator[Any]:
    """The configured backend's graph store for one command (closed after it); an unknown
    paper id becomes one line that says how to find ids."""
    from lit3r.cli.common import settings_of
    from lit3r.errors import UnknownIdError
    from lit3r.factory import open_graph

    settings = settings_of(ctx.find_root())
    store = open_graph(settings, connection_timeout=CONNECT_TIMEOUT, max_transaction_retry_time=2.0)
    try:
        yield store
    except UnknownIdError as exc:
        raise click.ClickException(f"{exc}: `lit3r graph papers --search TEXT` lists the paper ids") from None
    finally:
        store.close()


def file_option(name: str, suffix: str, what: str) -> Callable:
    """``--NAME FILE``: also draw the subgraph into FILE, which must end with ``suffix`` and lie in an
    existing folder (else a usage error naming it); ``what``: the format, for the help."""
    def check(ctx: click.Context, param: click.Parameter, value: Optional[Path]) -> Optional[Path]:
        if value is not None and (value.suffix.lower() != suffix or not value.parent.resolve().is_dir()):
            raise click.BadParameter(f"{value}: give a {suffix} file in an existing folder", ctx, param)
        return value

    return click.option(f"--{name}", name, type=click.Path(path_type=Path, dir_okay=False), default=None,
                        callback=check, help=f"Also draw the subgraph into this {what} file.")


def _outputs(draws: bool = True) -> Callable:
    def wrap(f: Callable) -> Callable:
        f = click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")(f)
        if draws:
            f = file_option("html", ".html", "self-contained HTML (drawing and tables)")(f)
            f = file_option("png", ".png", "PNG")(f)
        return f

    return wrap


def emit(result: Any, as_json: bool, show: Callable[[], None], draw: Optional[Callable[[], Any]] = None,
         png: Optional[Path] = None, html: Optional[Path] = None, title: str = "",
         tables: Sequence[tuple[str, list[dict]]] = (), line: bool = False) -> None:
    """Print ``result`` as JSON or by ``show()``; write the drawing of ``draw()`` (a networkx
    graph) into ``png`` / ``html`` (with ``tables``), naming the files on stderr."""
    from lit3r.present import draw as drawing

    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        show()
    if draw is None or (png is None and html is None):
        return
    g = draw()
    try:
        if png is not None:
            click.echo(f"drawing saved to {drawing.write_png(g, png, title, line)}", err=True)
        if html is not None:
            click.echo(f"page saved to {drawing.write_html(g, html, title, tables, line)}", err=True)
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or png or html}: cannot be written ({exc.strerror or exc}): "
                                   f"choose a writable path") from None


def _head_line(p: dict, extra: str = "") -> str:
    venue = " ".join(str(x) for x in (p["venue"], p["year"]) if x)
    return f"[{p['paper_id']}] {p['title']}" + (f" ({venue})" if venue else "") + extra


@graph.command("papers")
@click.option("--search", "text", default=None, help="Only papers whose id, title or an author contains TEXT "
              "(case-insensitive).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many papers.")
@_outputs(draws=False)
@click.pass_context
def papers_cmd(ctx: click.Context, text: Optional[str], limit: Optional[int], as_json: bool) -> None:
    """List the ingested papers (by id), or those matching --search."""
    from graph import explore

    with open_graph_store(ctx) as store:
        rows = explore.papers(store, text, limit)

    def show() -> None:
        echo_table([{"paper_id": r["paper_id"], "year": r["year"], "venue": r["venue"], "title": r["title"],
                     "authors": r["authors"]} for r in rows])

    emit(rows, as_json, show)


def _neighbourhood_tables(r: dict) -> list[tuple[str, list[dict]]]:
    return [("Cites (corpus papers in its reference list)", r.get("cites", [])),
            ("Cited by (corpus papers)", r.get("cited_by", [])),
            ("Coupled (bibliographic coupling: shared cited works, Jaccard)", r.get("coupled", [])),
            ("Similar (paper-embedding cosine)", r.get("similar", []))]


@graph.command("neighbourhood")
@click.argument("paper")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True,
              help="Coupled and similar papers shown.")
@click.option("--min-shared", type=click.IntRange(min=1), default=2, show_default=True,
              help="Cited works a coupled paper shares at least.")
@_outputs()
@click.pass_context
def neighbourhood_cmd(ctx: click.Context, paper: str, limit: int, min_shared: int, as_json: bool,
                      png: Optional[Path], html: Optional[Path]) -> None:
    """The citation neighbourhood of PAPER: corpus papers it cites and that cite it, its most
    coupled and most similar papers."""
    from graph import explore
    from lit3r.present.draw import neighbourhood_graph

    with open_graph_store(ctx) as store:
        r = explore.neighbourhood(store, paper, limit, min_shared)

    def show() -> None:
        click.echo(_head_line(r["paper"], f"; {r['references']} references"))
        for heading, rows in _neighbourhood_tables(r):
            click.echo("")
            echo_table(rows, heading)

    emit(r, as_json, show, lambda: neighbourhood_graph(r), png, html, f"Citation neighbourhood of {paper}",
         _neighbourhood_tables(r))


@graph.command("coupling")
@click.argument("paper")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True, help="Coupled papers shown.")
@click.option("--min-shared", type=click.IntRange(min=1), default=2, show_default=True,
              help="Cited works a coupled paper shares at least.")
@_outputs()
@click.pass_context
def coupling_cmd(ctx: click.Context, paper: str, limit: int, min_shared: int, as_json: bool, png: Optional[Path],
                 html: Optional[Path]) -> None:
    """Papers bibliographically coupled to PAPER (by Jaccard of the cited-work sets), with the
    works both cite."""
    from graph import explore
    from lit3r.present.draw import neighbourhood_graph

    with open_graph_store(ctx) as store:
        r = explore.coupling(store, paper, min_shared, limit)
    tables = [("Coupled papers", r["coupled"])]

    def show() -> None:
        click.echo(_head_line(r["paper"]))
        echo_table([{k: v for k, v in c.items() if k != "work_titles"} | {"works": "\n".join(c["work_titles"])}
                    for c in r["coupled"]])

    emit(r, as_json, show, lambda: neighbourhood_graph(r), png, html, f"Bibliographic coupling of {paper}", tables)


@graph.command("similar")
@click.argument("paper")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True, help="Similar papers shown.")
@_outputs()
@click.pass_context
def similar_cmd(ctx: click.Context, paper: str, limit: int, as_json: bool, png: Optional[Path],
                html: Optional[Path]) -> None:
    """The papers most similar to PAPER (SIMILAR_TO: paper-embedding cosine), best first."""
    from graph import explore
    from lit3r.present.draw import neighbourhood_graph

    with open_graph_store(ctx) as store:
        r = explore.similar(store, paper, limit)

    def show() -> None:
        click.echo(_head_line(r["paper"]))
        echo_table(r["similar"])

    emit(r, as_json, show, lambda: neighbourhood_graph(r), png, html, f"Papers similar to {paper}",
         [("Similar papers", r["similar"])])


@graph.command("path")
@click.argument("from_paper", metavar="FROM")
@click.argument("to_paper", metavar="TO")
@click.option("--max-hops", type=click.IntRange(min=1, max=12), default=8, show_default=True,
              help="Longest path searched.")
@_outputs()
@click.pass_context
def path_cmd(ctx: click.Context, from_paper: str, to_paper: str, max_hops: int, as_json: bool, png: Optional[Path],
             html: Optional[Path]) -> None:
    """A shortest citation path from FROM to TO: CITES edges in either direction, through the
    papers and works in between (of several, the first by node ids)."""
    from graph import explore
    from lit3r.present.draw import path_graph

    with open_graph_store(ctx) as store:
        r = explore.citation_path(store, from_paper, to_paper, max_hops)
    steps = []
    for i, n in enumerate(r["nodes"]):
        e = r["edges"][i] if i < len(r["edges"]) else None
        link = "" if e is None else ("cites the next" if e["citing"] == n["id"] else "is cited by the next")
        shown = n["id"] if n["kind"] == "paper" else "-"  # a work by its title; its key is in --json
        steps.append({"step": i, "id": shown, "kind": n["kind"], "title": n["title"] or n["id"], "link": link})

    def show() -> None:
        if r["hops"] is None:
            click.echo(f"no citation path from {from_paper} to {to_paper} within {max_hops} hops")
            return
        click.echo(f"{r['hops']} hop{'s' if r['hops'] != 1 else ''} from {from_paper} to {to_paper}")
        echo_table(steps)

    emit(r, as_json, show, lambda: path_graph(r), png, html, f"Citation path {from_paper} -> {to_paper}",
         [("Path", steps)], line=True)
