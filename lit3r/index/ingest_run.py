"""One ``lit3r ingest`` run as a library call: parse the PDFs of a folder (or add a metadata-only
paper pool) into the corpus folder, then embed the chunks and build the index (and, on the
servers backend, load Neo4j and OpenSearch), under the data folder's ingest lock.

The parse step is :func:`lit3r.index.recipe.ingest_kept` (the folder's kept recipe fills the settings
not given) or :func:`ingest.corpus.ingest_metadata_only`; the build is
:func:`lit3r.index.build.build_stores`. Failures come out as :class:`lit3r.errors.Lit3rError` with one
line saying what is kept and what to do (a full disk, an unwritable folder, a damaged index, a
server that fails during the load); Ctrl-C as :class:`lit3r.errors.Interrupted`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from graph.sqlite import DatabaseError
from lit3r.config import Settings
from lit3r.errors import InputError, Interrupted, Lit3rError, clean_line
from lit3r.index.disk import full_disk_line
from lit3r.present.server_errors import server_errors, server_message

if TYPE_CHECKING:
    from ingest.corpus import IngestReport
    from lit3r.index.build import BuildReport


@dataclass(frozen=True)
class IngestRequest:
    """What to ingest: ``pdf_dir`` (a folder or one PDF; None with ``metadata_only``),
    ``metadata_file`` (JSONL records overriding page 1, or the pool of ``metadata_only``),
    ``parser``, ``images``, ``reuse`` (None: not given, the kept recipe decides), ``workers``
    (parser processes, None: CPU count), ``prune`` (drop papers whose PDF is gone), ``replace``
    (a file takes the paper id another stored paper holds), ``build`` (also build the index),
    ``rebuild`` (build from scratch)."""

    pdf_dir: Optional[Path] = None
    metadata_file: Optional[Path] = None
    parser: Optional[str] = None
    images: Optional[bool] = None
    reuse: bool = True
    workers: Optional[int] = None
    prune: bool = False
    replace: bool = False
    metadata_only: bool = False
    build: bool = True
    rebuild: bool = False


@dataclass
class IngestRun:
    """The outcome: the parse step's report and the build's (None when nothing was built)."""

    report: IngestReport
    built: Optional[BuildReport]

    def failure(self, request: IngestRequest) -> Optional[str]:
        """The one line of a run that ingested nothing it was given (the command exits 1 on it), else None."""
        report = self.report
        if request.metadata_only and report.parsed + report.unchanged == 0:
            return f"no paper with a title in {request.metadata_file}: give lines with paper_id and title"
        if report.failures and report.parsed + report.unchanged == 0:
            return f"none of the {report.files} PDF file(s) could be ingested (reasons above)"
        return None


def ingest_run(settings: Settings, request: IngestRequest, *, progress: bool = True,
               say: Callable[[str], None] = print) -> IngestRun:
    """Parse, then build (module docstring), holding the ingest lock of ``settings.home``;
    ``progress``: progress bars and the build's notice on stderr; ``say``: gets the lines meant
    for the user while it runs (what the kept recipe fills in, the build's notice).
    Raises Lit3rError (one line with the fix), Interrupted on Ctrl-C; ModelError before any work
    when the encoders or reranker need a package that is not installed (PyTorch for the torch
    backend: :func:`lit3r.encoders.runtime.runtime_missing`)."""
    from lit3r.encoders.runtime import runtime_missing
    from lit3r.errors import ModelError
    from lit3r.index.lock import ingest_lock

    missing = runtime_missing(settings.models) if request.build else None
    if missing:
        raise ModelError(missing)
    out_dir = settings.home
    with ingest_lock(out_dir):  # one ingest per data folder (lit3r/index/lock.py; the servers: a lease)
        report = _parse(out_dir, request, progress, say)
        built = _build(settings, request.rebuild, progress, say) if request.build and report.papers else None
    return IngestRun(report, built)


def _parse(out_dir: Path, request: IngestRequest, progress: bool, say: Callable[[str], None]) -> IngestReport:
    from ingest.corpus import ingest_metadata_only
    from lit3r.index.recipe import ingest_kept

    try:
        if request.metadata_only or request.pdf_dir is None:
            if request.metadata_file is None:  # (the command refuses it as a usage error before)
                raise InputError("nothing to ingest: pass a folder of PDFs, or a metadata file with metadata_only")
            return ingest_metadata_only(request.metadata_file, out_dir)
        return ingest_kept(request.pdf_dir, out_dir, (request.metadata_file, request.parser, request.images,
                                                      request.reuse), request.workers, progress, request.prune,
                           say, replace=request.replace)
    except OSError as exc:  # a full disk, an unwritable or vanished output folder
        full = full_disk_line(exc, out_dir, "parsed papers are kept")
        raise Lit3rError(full or f"{exc.filename or out_dir}: {exc.strerror or exc}: the corpus folder must be "
                         f"writable (choose another with --home or --out)") from None
    except KeyboardInterrupt:
        raise Interrupted("interrupted: parsed papers are kept; run the same command again to resume") from None


def _build(settings: Settings, rebuild: bool, progress: bool, say: Callable[[str], None]) -> BuildReport:
    """:func:`lit3r.index.build.build_stores` with its failures as one line each."""
    from lit3r.index.build import build_stores

    if progress:
        say(f"updating the index in {settings.index_dir} (new or changed papers are embedded: with the "
            "default encoder about 15-30 s per 1,000 chunks on 2 CPU cores)...")
    try:
        return build_stores(settings, progress=progress, force=rebuild)
    except server_errors() as exc:
        raise Lit3rError(server_message(settings, exc) + "; the local index is built, and the next `lit3r ingest` "
                         "finishes the server load") from None
    except (DatabaseError, OSError) as exc:
        full = full_disk_line(exc, settings.index_dir, "the previous index still answers") \
            if isinstance(exc, OSError) else None
        if full:
            raise Lit3rError(full) from None
        raise Lit3rError(f"the index in {settings.index_dir} could not be updated ({clean_line(exc)}): run "
                         f"`lit3r ingest PDF_DIR --rebuild` to rebuild it") from None
    except KeyboardInterrupt:
        before = "the previous index still answers" if (settings.index_dir / "lit3r.sqlite").is_file() else \
            "no index is published yet"
        raise Interrupted(f"interrupted: {before}; run the same command again to resume the build") from None
