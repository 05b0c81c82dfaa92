"""``lit3r ask``: parses the question and its options, answers it with
:class:`lit3r.pipeline.engine.Engine` and prints the answer (readable or JSON), stores its evidence
trace (:func:`lit3r.cli.trace.store_or_warn`) and, with ``--show``, writes the PNGs of its evidence
(:mod:`lit3r.present.show`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

from graph.progress import Reporter
from lit3r.cli.common import llm_option, secrets_of, settings_of, warn_stale
from lit3r.cli.params import OPTION, PAPER_IDS, TABLE_SCHEMA, options_dict
from lit3r.cli.render import print_answer, print_shown
from lit3r.present.redact import redact, redact_data

if TYPE_CHECKING:  # loaded by the command itself (the engine loads the models, lit3r.present.show PyMuPDF)
    from lit3r.config import Settings
    from lit3r.pipeline.engine import AskResult, Engine
    from lit3r.present.show import ShowReport


@click.command()
@click.argument("question")
@click.option("--option", "options", type=OPTION, multiple=True,
              help="A multiple-choice option, e.g. --option A=78.77 (repeat for each option).")
@click.option("--json", "as_json", is_flag=True, help="Print the submission object, candidates and timings as JSON.")
@click.option("--top", default=10, show_default=True, type=click.IntRange(min=1),
              help="Candidates shown in the readable output.")
@llm_option
@click.option("--papers", "papers", type=PAPER_IDS, default=None, help="Read only these papers: retrieval is skipped.")
@click.option("--table-schema", "table_schema", type=TABLE_SCHEMA, default=None,
              help='Ask for a table answer: \'[{"name": "Method", "type": "string", "is_row_key": true}, ...]\'.')
@click.option("--show", "show", type=click.Path(path_type=Path), default=None,
              help="Write one PNG per evidence locator into this folder (created if missing): the page, or the "
                   "table/figure region, with the evidence outlined.")
@click.option("--trace-graph/--no-trace-graph", "trace_graph", default=True, show_default=True,
              help="Store the evidence trace as a graph (lit3r/cli/trace.py; `lit3r graph trace QUERY_ID`).")
@click.pass_context
def ask(ctx: click.Context, question: str, options: tuple[tuple[str, str], ...], as_json: bool, top: int,
        llm: Optional[str], papers: Optional[list[str]], table_schema: Optional[list[dict]],
        show: Optional[Path], trace_graph: bool) -> None:
    """Answer QUESTION over the ingested corpus, with evidence locators.

    Runs Retrieve (hybrid BM25 + dense, RRF, PRF, rerank), Relate (similar papers, bibliographic
    coupling, paper BM25) and Read (the LLM reader when an LLM is configured, else the offline
    extractive reader); the answer line is validated against the stored chunks.
    """
    from lit3r.pipeline.engine import Engine
    from lit3r.present.show import show_dir

    opts = options_dict(options)
    settings = settings_of(ctx, **({"llm": {"provider": llm}} if llm else {}))
    show = show_dir(show) if show is not None else None  # a bad folder is refused before the models load
    engine = Engine(settings)
    warn_stale(settings)
    with engine.snapshot():  # the answer and what is printed about it come from one corpus
        result = engine.ask(question, options=opts or None, query_id="cli", table_schema=table_schema,
                            papers=papers, progress=Reporter())  # LLM rounds and readings, on stderr
        shown = _show(engine, result, show) if show is not None else None
        if as_json:
            stored = _store_trace(ctx, settings, engine, result, quiet=True) if trace_graph else None
            extra = {"trace_graph": stored} if stored else {}
            click.echo(json.dumps(redact_data({**result.to_json(), **(shown.to_json() if shown else {}), **extra},
                                              secrets_of(ctx)), indent=2, ensure_ascii=False))
        else:
            secrets = secrets_of(ctx)
            # stored before anything is printed: a closed pipe (`| head`) must not lose the trace
            stored = _store_trace(ctx, settings, engine, result, quiet=True) if trace_graph else None
            print_answer(result, engine.paper_heads([*result.read.papers, *result.candidates[:top]]), top, opts,
                         clean=lambda text: redact(text, secrets))
            if stored and result.read.papers:  # where its trace is (not for an abstention); then --show's PNGs
                click.echo(f"Trace: run {stored['run']} (`lit3r{_home_option(ctx)} graph trace {result.query_id} "
                           f"--run {stored['run']}`)")
            if shown is not None:
                print_shown(shown)
    if shown is not None and shown.problems:
        raise click.ClickException("; ".join(shown.problems))


def _home_option(ctx: click.Context) -> str:
    """`` --home DIR`` when the data folder was given on the command line (the trace command shown
    must find the same folder), else ``""`` (``LIT3R_HOME`` or the default folder finds it again)."""
    import shlex

    from click.core import ParameterSource

    root = ctx.find_root()
    if root.get_parameter_source("home") != ParameterSource.COMMANDLINE or not root.params.get("home"):
        return ""
    return f" --home {shlex.quote(str(root.params['home']))}"


def _store_trace(ctx: click.Context, settings: Settings, engine: Engine, result: AskResult,
                 quiet: bool = False) -> Optional[dict]:
    """Store one answer's evidence trace as a graph (issue 15): the store's report, None when it
    could not be written (one warning line)."""
    from lit3r.cli.trace import store_or_warn
    from lit3r.traces.trace_graph import ask_run_name, trace_line

    return store_or_warn(settings, [redact_data(trace_line(result), secrets_of(ctx))], ask_run_name(), engine.graph,
                         result.query_id, quiet=quiet)


def _show(engine: Engine, result: AskResult, folder: Path) -> ShowReport:
    """``ask --show``: the PNGs of the answer's evidence locators, one per item of its line."""
    from lit3r.present.show import Answer, evidence_chunks, show_evidence

    chunks = evidence_chunks(result.read.evidence, result.line)
    return show_evidence(chunks, engine.paper_heads([c.paper_id for c in chunks]), engine.settings.home, folder,
                         Answer(result.read.rows, result.read.freeform))
