"""The ``lit3r`` command line (click). Errors are one sentence plus the fix, never a traceback."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import click

from ingest.corpus import PARSERS, ingest_corpus
from ingest.metadata import MetadataError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lit3r")
def main() -> None:
    """Lit3R: question answering over research papers, with evidence traces."""


@main.command()
@click.argument("pdf_dir", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("lit3r_data/corpus"),
              show_default=True, help="Corpus folder to write (papers/chunks/references JSONL).")
@click.option("--metadata", "metadata_file", type=click.Path(path_type=Path), default=None,
              help="JSONL with paper_id, title, authors, venue, year, abstract, pdf (overrides page 1).")
@click.option("--parser", type=click.Choice(PARSERS), default="pymupdf", show_default=True,
              help="pymupdf (offline default) or mineru (reads MinerU content_list.json beside each PDF).")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Parser processes (default: CPU count).")
@click.option("--images/--no-images", default=True, show_default=True,
              help="Save PNG crops of table and figure regions.")
@click.option("--prune", is_flag=True, help="Drop papers of earlier runs whose PDF is no longer under PDF_DIR.")
@click.option("--json", "as_json", is_flag=True, help="Print the run report as JSON.")
def ingest(pdf_dir: Path, out_dir: Path, metadata_file, parser: str, workers, images: bool, prune: bool,
           as_json: bool) -> None:
    """Parse the PDFs under PDF_DIR (a folder, or one PDF) into papers, chunks and references.

    Re-running is idempotent and resumes an interrupted run; bad files are reported and skipped;
    new PDFs are added to the corpus folder (use --prune to drop papers whose PDF is gone).
    Exits 1 when no file could be ingested.
    """
    try:
        report = ingest_corpus(pdf_dir, out_dir, metadata_file=metadata_file, parser=parser, workers=workers,
                               images=images, progress=sys.stderr.isatty() and not as_json, prune=prune)
    except (FileNotFoundError, NotADirectoryError, MetadataError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        click.echo("Error: interrupted: parsed papers are kept; run the same command again to resume", err=True)
        sys.exit(130)
    if as_json:
        click.echo(json.dumps(asdict(report), indent=2))
        return
    for _file, reason in report.failures:
        click.echo(f"skipped {reason}", err=True)
    pruned = f", {report.pruned} pruned" if report.pruned else ""
    click.echo(
        f"{report.papers} paper(s) in {out_dir} ({report.parsed} parsed, {report.unchanged} unchanged, "
        f"{len(report.failures)} skipped{pruned}): {report.chunks} chunks, {report.references} references "
        f"({report.resolved_references} resolved to corpus papers); {report.seconds:.1f} s"
    )
    if report.failures and report.parsed + report.unchanged == 0:
        raise click.ClickException(f"none of the {report.files} PDF file(s) could be ingested (reasons above)")


if __name__ == "__main__":  # pragma: no cover
    main()
