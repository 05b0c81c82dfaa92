"""The ``lit3r`` command line (click). Errors are one sentence plus the fix, never a traceback:
every :class:`lit3r.errors.Lit3rError`, and the drivers' and SQLite's errors, are caught once,
in :class:`Lit3rGroup`, which also takes every secret out of the message (:mod:`lit3r.redact`).
Commands never change the settings they load: options become overrides.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

from graph.progress import Reporter
from lit3r.cli.browser import browser
from lit3r.cli.common import secrets_of, settings_of, warn_stale
from lit3r.cli.cypher import cypher
from lit3r.cli.errors import Lit3rGroup
from lit3r.cli.eval import eval_cmd
from lit3r.cli.graph import graph
from lit3r.cli.ingest import ingest
from lit3r.cli.mcp import mcp
from lit3r.cli.params import OPTION, PAPER_IDS, TABLE_SCHEMA, OneLineUsageError, options_dict
from lit3r.cli.render import print_answer, print_shown, toml
from lit3r.cli.trace import graph_trace, trace
from lit3r.config import Settings
from lit3r.disk import full_disk_line as _full_disk
from lit3r.redact import masked, redact, redact_data

if TYPE_CHECKING:  # loaded by the commands that use them (the engine loads torch, lit3r.show PyMuPDF)
    from lit3r.pipeline.engine import AskResult, Engine
    from lit3r.show import ShowReport


@click.group(cls=Lit3rGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lit3r")
@click.option("--home", type=click.Path(), default=None, envvar="LIT3R_HOME",
              help="Data folder: the corpus and its index (default: LIT3R_HOME or the per-user data folder).")
@click.pass_context
def main(ctx: click.Context, home: Optional[str]) -> None:
    """Lit3R: question answering over research papers, with evidence traces."""
    import logging

    if home is not None and not home.strip():
        raise OneLineUsageError("the data folder is empty (--home \"\" or LIT3R_HOME=): name a folder or unset it")
    for name in ("neo4j", "opensearch"):  # the drivers' retry chatter; failures come out as one line
        logging.getLogger(name).setLevel(logging.CRITICAL)
    ctx.obj = {"home": Path(home) if home is not None else None}


@main.command()
@click.argument("question")
@click.option("--option", "options", type=OPTION, multiple=True,
              help="A multiple-choice option, e.g. --option A=78.77 (repeat for each option).")
@click.option("--json", "as_json", is_flag=True, help="Print the submission object, candidates and timings as JSON.")
@click.option("--top", default=10, show_default=True, type=click.IntRange(min=1),
              help="Candidates shown in the readable output.")
@click.option("--llm", "llm", type=click.Choice(["none", "local", "openai"]), default=None,
              help="Override the configured LLM provider for this run.")
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
    from lit3r.show import show_dir

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
            print_answer(result, engine.paper_heads([*result.read.papers, *result.candidates[:top]]), top, opts,
                         clean=lambda text: redact(text, secrets))
            stored = _store_trace(ctx, settings, engine, result, quiet=True) if trace_graph else None
            if stored and result.read.papers:  # where its trace is (not for an abstention); then --show's PNGs
                click.echo(f"Trace: run {stored['run']} (`lit3r graph trace {result.query_id} --run {stored['run']}`)")
            if shown is not None:
                print_shown(shown)
    if shown is not None and shown.problems:
        raise click.ClickException("; ".join(shown.problems))


def _store_trace(ctx: click.Context, settings: Settings, engine: Engine, result: AskResult,
                 quiet: bool = False) -> Optional[dict]:
    """Store one answer's evidence trace as a graph (issue 15): the store's report, None when it
    could not be written (one warning line)."""
    from lit3r.cli.trace import store_or_warn
    from lit3r.trace_graph import ask_run_name, trace_line

    return store_or_warn(settings, [redact_data(trace_line(result), secrets_of(ctx))], ask_run_name(), engine.graph,
                         result.query_id, quiet=quiet)


def _show(engine: Engine, result: AskResult, folder: Path) -> ShowReport:
    """``ask --show``: the PNGs of the answer's evidence locators, one per item of its line."""
    from lit3r.show import Answer, evidence_chunks, show_evidence

    chunks = evidence_chunks(result.read.evidence, result.line)
    return show_evidence(chunks, engine.paper_heads([c.paper_id for c in chunks]), engine.settings.home, folder,
                         Answer(result.read.rows, result.read.freeform))


@main.command()
@click.option("--queries", "queries", type=click.Path(path_type=Path, exists=True, dir_okay=False), required=True,
              help="Input JSONL (query_id, question, answer_types, multiple_choice_options, table_schema).")
@click.option("--out", "out", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Submission JSONL (appended; query ids already there are skipped).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Questions in flight at once (helps when an LLM endpoint is the bottleneck).")
@click.option("--llm", "llm", type=click.Choice(["none", "local", "openai"]), default=None,
              help="Override the configured LLM provider for this run.")
@click.option("--trace-graph/--no-trace-graph", "trace_graph", default=True, show_default=True,
              help="Store the evidence trace as a graph (lit3r/cli/trace.py; run: OUT without .jsonl).")
@click.option("--fail-fast", "fail_fast", is_flag=True,
              help="Stop at the first bad input line (default: report each bad line and run the others).")
@click.pass_context
def run(ctx: click.Context, queries: Path, out: Path, workers: int, llm: Optional[str], trace_graph: bool,
        fail_fast: bool) -> None:
    """Answer a batch of questions into a LitTraceQA submission; traces go to OUT.traces.jsonl.

    Every input line is checked first: each bad line is one message naming the line and the
    field, and gets no submission line; the other questions run (exit 1 at the end)."""
    from lit3r.littraceqa.batch import check_out, run_batch
    from lit3r.littraceqa.inputs import scan_inputs

    settings = settings_of(ctx, **({"llm": {"provider": llm}} if llm else {}))
    rows, bad = scan_inputs(queries)  # every line is checked here, before the models load
    check_out(queries, out, probe_lock=True)  # --out is not --queries, and no other run writes it
    if bad and fail_fast:
        raise click.ClickException(f"{bad[0]} (--fail-fast: no question was run)")
    for line in bad:
        click.echo(f"bad input {line}", err=True)
    if not rows:
        raise click.ClickException(f"{queries} holds no valid question: " + (
            "fix the lines above" if bad else "pass a JSONL file with one question per line"))
    from lit3r.pipeline.engine import Engine  # loaded once the input and --out are checked

    try:
        engine = Engine(settings)
        warn_stale(settings)
        report = run_batch(engine, queries, out, workers=workers)
    except OSError as exc:
        full = _full_disk(exc, out, "the lines written are kept")
        raise click.ClickException(full or f"--out {out}: cannot be written ({exc.strerror or exc}): choose a "
                                   f"writable path") from None
    for qid, err in report.failures:
        click.echo(f"failed {qid}: {redact(err, secrets_of(ctx))}", err=True)
    if trace_graph:
        from lit3r.cli.trace import store_or_warn
        from lit3r.trace_graph import read_trace_lines, run_name

        traces = out.with_name(out.name + ".traces.jsonl")
        lines = read_trace_lines(traces)[0] if traces.is_file() else []
        if lines:
            store_or_warn(settings, lines, run_name(out), later=f"lit3r trace load {traces}")
    click.echo(redact(report.summary(out), secrets_of(ctx)))
    if report.failures or report.invalid or report.stopped:
        sys.exit(1)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Print the effective configuration and check each component."""
    from lit3r.cli.doctor import run_checks

    settings = settings_of(ctx)
    checks = run_checks(settings)  # details with secrets masked
    config = masked(settings.model_dump(mode="json"), secrets_of(ctx))
    if as_json:
        click.echo(json.dumps({"config": config, "checks": checks}, indent=2))
    else:
        click.echo(f"# effective configuration\n{toml(config)}\n# checks")
        for c in checks:
            click.echo(f"[{'ok' if c['ok'] else 'FAIL'}] {c['name']}: {c['detail']}")
    if not all(c["ok"] for c in checks):
        sys.exit(1)


@main.group()
def config() -> None:
    """The effective configuration (defaults, the TOML file, LIT3R_* variables)."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON.")
@click.option("--changed", is_flag=True, help="Only the settings that differ from the defaults.")
@click.pass_context
def config_show(ctx: click.Context, as_json: bool, changed: bool) -> None:
    """Print the effective configuration with each setting's description, secrets masked
    (`lit3r doctor` checks it)."""
    from lit3r.config import config_file, descriptions

    settings = settings_of(ctx.find_root())
    data = settings.model_dump(mode="json", exclude_defaults=changed)
    path = config_file(settings.home)
    data = masked(data, secrets_of(ctx))
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"# configuration file: {path or 'none'}; LIT3R_* variables override it\n"
               f"{toml(data, notes=descriptions())}")


main.add_command(ingest)  # lit3r/cli/ingest.py (the run: lit3r/ingest_run.py)
main.add_command(eval_cmd)  # lit3r/cli/eval.py (the scores: lit3r/littraceqa/metrics.py)
main.add_command(cypher)  # lit3r/cli/cypher.py
main.add_command(graph)  # lit3r/cli/graph.py: the `lit3r graph` group
main.add_command(trace)  # lit3r/cli/trace.py: `lit3r trace load|list|show|candidates|supported|delete`
graph.add_command(graph_trace)  # `lit3r graph trace QUERY_ID`
main.add_command(browser)  # lit3r/cli/browser.py
main.add_command(mcp)  # lit3r/cli/mcp.py: the MCP server (lit3r/serve/)
