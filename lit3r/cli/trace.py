"""``lit3r trace`` (store, list, delete and query evidence traces as a graph) and
``lit3r graph trace QUERY_ID``; :func:`store_or_warn` is what ``lit3r ask`` and ``lit3r run`` call
(storing and reading traces is :mod:`lit3r.traces.trace_graph`, which ``lit3r mcp`` shares).

The traces go to the configured backend's trace store (:func:`lit3r.factory.trace_store`:
``traces.sqlite`` in the data folder on the embedded backend, the Neo4j database next to the
corpus on the servers backend); the graph is built once, by :func:`lit3r.traces.trace_graph.trace_graph`.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import click

from lit3r.cli.tables import echo_table
from lit3r.errors import SHOWN_ID_CHARS, shown_id
from lit3r.traces.trace_graph import store_traces, trace_view


@contextlib.contextmanager
def open_trace_store(ctx: click.Context, graph: Any = None) -> Iterator[Any]:
    """The configured backend's trace store for one command (closed after it); an unknown
    question becomes one line saying how to list them."""
    from lit3r.cli.common import settings_of
    from lit3r.errors import UnknownIdError
    from lit3r.factory import trace_store

    store = trace_store(settings_of(ctx.find_root()), graph)
    try:
        yield store
    except UnknownIdError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()


def stored_note(report: dict[str, Any], query_id: Optional[str] = None) -> str:
    """One stderr line about a stored trace."""
    missing = f"; {len(report['missing'])} id(s) not in the corpus left out" if report["missing"] else ""
    see = f"`lit3r graph trace {query_id} --run {report['run']}`" if query_id else \
        f"`lit3r trace list --run {report['run']}`"
    return (f"trace graph stored: run {report['run']}, {report['questions']} question(s), {report['nodes']} nodes, "
            f"{report['edges']} edges{missing} (see {see}; `lit3r trace delete {report['run']}` removes it)")


@click.group()
def trace() -> None:
    """Evidence traces as a graph: load a batch's traces, list, query and delete them.

    `lit3r ask` and `lit3r run` store their traces already (unless --no-trace-graph).
    """


@trace.command("load")
@click.argument("traces_file", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--run", "run", default=None, help="Run name (default: the file name without .traces.jsonl and "
              ".jsonl, as `lit3r run` names it).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def load_cmd(ctx: click.Context, traces_file: Path, run: Optional[str], as_json: bool) -> None:
    """Store the traces of an earlier batch (OUT.traces.jsonl of `lit3r run`) as a graph,
    replacing earlier traces of the same run and query ids."""
    from lit3r.cli.common import settings_of
    from lit3r.traces.trace_graph import read_trace_lines, run_name

    lines, failed = read_trace_lines(traces_file)
    if not lines:
        raise click.ClickException(f"{traces_file} holds no trace: pass the OUT.traces.jsonl of `lit3r run`")
    report = store_traces(settings_of(ctx.find_root()), lines, run or run_name(traces_file))
    report["failed_questions"] = failed
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(stored_note(report))
    if failed:
        click.echo(f"{len(failed)} question(s) of the file failed in the batch and have no trace", err=True)


@trace.command("delete")
@click.argument("run")
@click.pass_context
def delete_cmd(ctx: click.Context, run: str) -> None:
    """Delete every trace of RUN (its questions, rounds, subqueries and answers)."""
    with open_trace_store(ctx) as store:
        n = store.delete_run(run)
    if n == 0:
        raise click.ClickException(f"no trace of run {shown_id(run)}: `lit3r trace list` lists the runs")
    click.echo(f"deleted {n} trace node(s) of run {run}")


@trace.command("list")
@click.option("--run", "run", default=None, help="Only the questions of this run.")
@click.option("--json", "as_json", is_flag=True, help="Print them as JSON.")
@click.pass_context
def list_cmd(ctx: click.Context, run: Optional[str], as_json: bool) -> None:
    """The stored question traces, newest first."""
    with open_trace_store(ctx) as store:
        rows = store.questions(run)
    click.echo(json.dumps(rows, indent=2, ensure_ascii=False)) if as_json else echo_table(rows)


@trace.command("candidates")
@click.argument("query_id")
@click.option("--run", "run", default=None, help="The run (default: the newest question of that id).")
@click.option("--paper", "paper_id", default=None, help="Only this paper.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.pass_context
def candidates_cmd(ctx: click.Context, query_id: str, run: Optional[str], paper_id: Optional[str],
                   as_json: bool) -> None:
    """Why each paper is a candidate of QUERY_ID: ranks in A, B and the final list, the Relate
    sources and seeds that brought it, its pooled and evidence chunks."""
    with open_trace_store(ctx) as store:
        rows = store.candidates(query_id, run, paper_id)
    if paper_id is not None and not rows:
        which = query_id if len(query_id) <= SHOWN_ID_CHARS else "QUERY_ID"
        raise click.ClickException(f"paper {shown_id(paper_id)} is no candidate of {shown_id(query_id)}: `lit3r trace "
                                   f"candidates {which}` lists them")
    click.echo(json.dumps(rows, indent=2, ensure_ascii=False)) if as_json else echo_table(_candidate_rows(rows))


@trace.command("supported")
@click.argument("target_id")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.pass_context
def supported_cmd(ctx: click.Context, target_id: str, as_json: bool) -> None:
    """Every stored question whose answer TARGET_ID (a chunk id or a paper id) supported."""
    with open_trace_store(ctx) as store:
        rows = store.supported(target_id)
    click.echo(json.dumps(rows, indent=2, ensure_ascii=False)) if as_json else echo_table(rows)


def _candidate_rows(rows: list[dict], titles: bool = True) -> list[dict]:
    """Table rows: ranks, seed rank, ``source#rank`` of the Relate sources, ``seed #rank`` of
    SIMILAR_TO and ``seed (shared works)`` of coupling to the seeds, pooled / evidence chunks."""
    out = []
    for r in rows:
        row = {"rank": r["rank"], "A": r["rank_a"], "B": r["rank_b"], "paper_id": r["paper_id"], "seed": r["seed_rank"],
               "sources": " ".join(f"{s['source']}#{s['rank']}" for s in r["sources"]),
               "similar_to": " ".join(f"{s['seed']}#{s['rank']}" for s in r["similar_to_seeds"]),
               "coupled_to": " ".join(f"{s['seed']}({s['shared']})" for s in r["coupled_seeds"]),
               "pooled": r["pooled_chunks"], "evidence": r["evidence_chunks"]}
        if titles:
            row["title"] = r["title"]
        out.append(row)
    return out


def print_trace(view: dict[str, Any]) -> None:
    """The readable form of :func:`trace_view`."""
    q = view["question"]
    click.echo(f"Question {q['query_id']} (run {q['run']}, stored {q['stored_at']}): {q['text']}")
    for r in q["rounds"]:
        click.echo(f"\nRound {r['round']}: pool of {r['pool_size']} chunks")
        for s in r["subqueries"]:
            click.echo(f"  {s['index']}. {s['query']}  ({s['pooled']} chunks pooled)")
    click.echo(f"\nRelate seeds: {', '.join(q['seeds']) or '(none)'}\n")
    echo_table(_candidate_rows(view["candidates"], titles=False),
               "Candidates: final rank, Ranking A, Ranking B; Relate sources; links to the seeds (`lit3r trace "
               "candidates` adds titles)")
    a = q["answer"] or {}
    click.echo(f"\nAnswer ({a.get('reader')}): {a.get('text') or a.get('choice') or '(no text)'}")
    click.echo(f"Selected papers: {', '.join(a.get('papers') or []) or '(none)'}\n")
    echo_table([{"rank": e["rank"], "chunk_id": e["chunk_id"], "paper_id": e["paper_id"],
                 "candidate_rank": e["candidate_rank"],
                 "pooled_by": "; ".join(f"round {p['round']} subquery {p['subquery']} #{p['rank']} "
                                        f"({p['score']:.4f})" for p in e["pooled_by"]) or "(read, not pooled)"}
                for e in view["evidence_path"]], "Evidence path (Question -> Answer -> evidence chunk)")


def _drawing_options(f: Any) -> Any:
    from lit3r.cli.graph import file_option

    f = file_option("html", ".html", "self-contained HTML (drawing and tables)")(f)
    return file_option("png", ".png", "PNG")(f)


@click.command("trace")
@click.argument("query_id")
@click.option("--run", "run", default=None, help="The run (default: the newest question of that id).")
@click.option("--json", "as_json", is_flag=True, help="Print the trace as JSON.")
@_drawing_options
@click.pass_context
def graph_trace(ctx: click.Context, query_id: str, run: Optional[str], as_json: bool,
                png: Optional[Path] = None, html: Optional[Path] = None) -> None:
    """The evidence trace of QUERY_ID as stored in the graph: rounds, subqueries, candidates
    with their ranks and Relate sources, the answer and its evidence path; --png / --html draw
    the Question, its candidates and the answer's evidence chunks."""
    from lit3r.cli.graph import emit
    from lit3r.present.draw import trace_graph as drawn

    with open_trace_store(ctx) as store:
        view = trace_view(store, query_id, run)
    tables = [("Candidates", _candidate_rows(view["candidates"], titles=True)),
              ("Evidence path", [{k: e.get(k) for k in ("rank", "chunk_id", "paper_id", "candidate_rank")}
                                 for e in view["evidence_path"]])]
    emit(view, as_json, lambda: print_trace(view), lambda: drawn(view), png, html,
         f"Evidence trace of {query_id} (run {view['question']['run']})", tables)


trace.add_command(graph_trace, "show")


def store_or_warn(settings: Any, lines: Sequence[dict], run: str, graph: Any = None,
                  query_id: Optional[str] = None, later: str = "", quiet: bool = False) -> Optional[dict[str, Any]]:
    """:func:`lit3r.traces.store.keep_traces` for ``lit3r ask`` / ``lit3r run``: the answer is already
    out, so a trace store that cannot be written is one warning on stderr (with the fix), not a
    failure; ``later``: the command that stores the traces afterwards; ``quiet``: no note when
    stored (``ask --json`` puts the report in its JSON instead)."""
    from lit3r.traces.store import keep_traces

    report, why = keep_traces(settings, lines, run, graph)
    if report is None:
        then = f"; then `{later}` stores it" if later else ""
        click.echo(f"warning: the trace graph was not stored: {why}{then} (--no-trace-graph skips it)", err=True)
        return None
    if not quiet:
        click.echo(stored_note(report, query_id), err=True)
    return report
