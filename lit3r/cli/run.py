"""``lit3r run``: checks a batch of questions (every line first), answers the valid ones into a
LitTraceQA submission with :func:`lit3r.littraceqa.batch.run_batch`, stores their traces
(:func:`lit3r.cli.trace.store_or_warn`) and prints the summary; exit 1 when a line was bad or a
question failed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import click

from lit3r.cli.common import llm_option, secrets_of, settings_of, warn_stale
from lit3r.index.disk import full_disk_line
from lit3r.present.redact import redact


@click.command()
@click.option("--queries", "queries", type=click.Path(path_type=Path, exists=True, dir_okay=False), required=True,
              help="Input JSONL (query_id, question, answer_types, multiple_choice_options, table_schema).")
@click.option("--out", "out", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Submission JSONL (appended; query ids already there are skipped).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Questions in flight at once (helps when an LLM endpoint is the bottleneck).")
@llm_option
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
        full = full_disk_line(exc, out, "the lines written are kept")
        raise click.ClickException(full or f"--out {out}: cannot be written ({exc.strerror or exc}): choose a "
                                   f"writable path") from None
    for qid, err in report.failures:
        click.echo(f"failed {qid}: {redact(err, secrets_of(ctx))}", err=True)
    if trace_graph:
        from lit3r.cli.trace import store_or_warn
        from lit3r.traces.trace_graph import read_trace_lines, run_name

        traces = out.with_name(out.name + ".traces.jsonl")
        lines = read_trace_lines(traces)[0] if traces.is_file() else []
        if lines:
            store_or_warn(settings, lines, run_name(out), later=f"lit3r trace load {traces}")
    click.echo(redact(report.summary(out), secrets_of(ctx)))
    if report.failures or report.invalid or report.stopped:
        sys.exit(1)
