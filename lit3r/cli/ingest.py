"""``lit3r ingest``: parses its options, runs :func:`lit3r.index.ingest_run.ingest_run` and prints the
run report (skipped files, duplicates and input problems on stderr, the summary on stdout, or the
whole report as JSON)."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional

import click

from graph.errors import escaped
from ingest.corpus import PARSERS
from lit3r.cli.common import settings_of
from lit3r.cli.params import OneLineUsageError

if TYPE_CHECKING:
    from ingest.corpus import IngestReport
    from lit3r.config import Settings
    from lit3r.index.build import BuildReport

#: Input problems of an ingest printed one per line; the rest are counted (all are in report.json).
SHOWN_PROBLEMS = 20


@click.command()
@click.argument("pdf_dir", type=click.Path(path_type=Path), required=False)
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="Corpus folder to write (default: the data folder, --home).")
@click.option("--metadata", "metadata_file", type=click.Path(path_type=Path), default=None,
              help="JSONL with paper_id, title, authors, venue, year, abstract, pdf (overrides page 1).")
@click.option("--parser", type=click.Choice(PARSERS), default=None,
              help="pymupdf (offline default) or mineru (reads MinerU content_list.json beside each PDF).")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Parser processes (default: CPU count).")
@click.option("--images/--no-images", default=None, help="Save PNG crops of table and figure regions (default: yes).")
@click.option("--reuse/--no-reuse", default=True, show_default=True,
              help="Take the metadata, parser and images settings this folder was built with when not given.")
@click.option("--prune", is_flag=True, help="Drop papers of earlier runs whose PDF is no longer under PDF_DIR.")
@click.option("--replace", is_flag=True,
              help="A file whose paper id another stored paper (other bytes) holds replaces it (default: refused).")
@click.option("--metadata-only", "metadata_only", is_flag=True,
              help="Add the papers of --metadata without PDFs (a paper pool: title, venue, year, abstract).")
@click.option("--build/--no-build", default=True, show_default=True,
              help="Also embed the chunks and build the graph store and search index.")
@click.option("--rebuild", is_flag=True,
              help="Rebuild the index from scratch (re-embeds every paper; for a damaged index).")
@click.option("--json", "as_json", is_flag=True, help="Print the run report as JSON.")
@click.pass_context
def ingest(ctx: click.Context, pdf_dir: Optional[Path], out_dir: Optional[Path], metadata_file, parser, workers,
           images, reuse: bool, prune: bool, replace: bool, metadata_only: bool, build: bool, rebuild: bool,
           as_json: bool) -> None:
    """Parse the PDFs under PDF_DIR (a folder, or one PDF) into papers, chunks and references.

    Re-running is idempotent and resumes an interrupted run; bad files are reported and skipped;
    new PDFs are added to the corpus folder (use --prune to drop papers whose PDF is gone).
    Then (unless --no-build) embeds the chunks and builds the graph store and search index of
    the corpus folder, so that `lit3r ask` can answer. Exits 1 when no file could be ingested.
    The folder keeps the metadata file and parser settings it was built with (lit3r/index/recipe.py).

    With --metadata-only (no PDF_DIR), the papers of the --metadata file are added by title,
    venue, year and abstract alone: only the title-based search lanes can find them.
    """
    from lit3r.index.ingest_run import IngestRequest, ingest_run

    settings = settings_of(ctx, **({"home": out_dir} if out_dir else {}))
    if metadata_only and (pdf_dir is not None or metadata_file is None):
        raise OneLineUsageError("--metadata-only takes no PDF_DIR and needs --metadata POOL.jsonl")
    if pdf_dir is None and not metadata_only:
        raise OneLineUsageError("missing PDF_DIR: pass a folder of PDFs (or --metadata-only --metadata POOL.jsonl)")
    request = IngestRequest(pdf_dir, metadata_file, parser, images, reuse, workers, prune, replace, metadata_only,
                            build, rebuild)
    with sigterm_as_ctrl_c():
        done = ingest_run(settings, request, progress=not as_json, say=lambda line: click.echo(line, err=True))
    if as_json:
        click.echo(json.dumps({"ingest": asdict(done.report), "build": asdict(done.built) if done.built else None},
                              indent=2))
        return
    echo_problems(done.report, settings.home)
    click.echo(summary(done.report, settings.home))
    if done.built is not None:
        echo_built(settings, done.built)
    failure = done.failure(request)
    if failure:
        raise click.ClickException(failure)


@contextlib.contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """While the block runs, SIGTERM (``kill PID``, a service manager stopping the run) raises
    KeyboardInterrupt as Ctrl-C does, so the ingest stops the same way: what is done is kept and
    one line says to run the command again (:class:`lit3r.errors.Interrupted`, exit 130) instead
    of the process dying without a word. Outside the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def echo_problems(report: IngestReport, out_dir: Path) -> None:
    """The skipped files, duplicates and input problems of ``report`` on stderr, one a line
    (escaped: a file name's non-UTF-8 bytes as \\xNN); past :data:`SHOWN_PROBLEMS` problems, a count."""
    for _file, reason in report.failures:
        click.echo(f"skipped {escaped(reason)}", err=True)
    for _file, line in report.duplicates:
        click.echo(f"duplicate {escaped(line)}", err=True)
    for line in report.problems[:SHOWN_PROBLEMS]:
        click.echo(f"warning: {escaped(line)}", err=True)
    if len(report.problems) > SHOWN_PROBLEMS:
        click.echo(f"warning: {len(report.problems) - SHOWN_PROBLEMS} more input problem(s): see "
                   f"{out_dir / 'report.json'}", err=True)


def summary(report: IngestReport, out_dir: Path) -> str:
    """The one summary line of the parse step."""
    pruned = f", {report.pruned} pruned" if report.pruned else ""
    dups = f", {len(report.duplicates)} duplicate(s)" if report.duplicates else ""
    problems = f", {len(report.problems)} input problem(s)" if report.problems else ""
    return (f"{report.papers} paper(s) in {out_dir} ({report.parsed} parsed, {report.unchanged} unchanged, "
            f"{len(report.failures)} skipped{dups}{pruned}{problems}): {report.chunks} chunks, {report.references} "
            f"references ({report.resolved_references} resolved to corpus papers); {report.seconds:.1f} s")


def echo_built(settings: Settings, built: BuildReport) -> None:
    """The build's line (and the server load's, on the servers backend)."""
    removed = f", {built.removed_papers} removed" if built.removed_papers else ""
    resumed = f", {built.resumed_papers} resumed from an interrupted build" if built.resumed_papers else ""
    how = "unchanged, kept" if built.skipped else (
        f"{built.encoded_papers} paper(s) encoded{removed}{resumed}, {built.neighbours} SIMILAR_TO edges; "
        f"{built.seconds['total']:.1f} s")
    click.echo(f"index in {settings.index_dir}: {how}")
    if built.servers:
        sv = built.servers
        click.echo(f"servers ({settings.neo4j.uri}, {settings.opensearch.url} {settings.opensearch.index_prefix}-*): "
                   f"{sv['papers']} paper(s), {sv['written']} written, {sv['deleted']} deleted "
                   f"(Neo4j {sv['neo4j']['nodes_per_s']:.0f} nodes/s, OpenSearch "
                   f"{sv['opensearch']['docs_per_s']:.0f} docs/s); {sv['seconds']:.1f} s")
