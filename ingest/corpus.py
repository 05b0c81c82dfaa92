"""Ingest a folder of PDFs into a corpus folder of records, in parallel, resumable, idempotent.

Layout of the corpus folder ``OUT``::

    OUT/papers.jsonl        one graph.records.Paper per line, sorted by paper_id
    OUT/chunks.jsonl        one graph.records.Chunk per line, by paper_id then seq
    OUT/references.jsonl    one graph.records.Reference per line, by paper_id then number
    OUT/report.json         counts, failures and warnings of the last run
    OUT/corpus.json         the corpus version: a hash of the three files (ingest/stamp.py)
    OUT/images/<paper_id>/  PNG crops of tables and figures (Chunk.image points here)
    OUT/.state/<paper_id>.json   per-paper parse results (the resume journal)

(``<paper_id>`` in file names is percent-encoded by :func:`file_name`, so "/" or ".." in an id
stays inside OUT.)

Each paper's parse is journaled as soon as it finishes (atomic rename), so an interrupted run
loses at most the papers in flight; a re-run skips papers whose file hash, metadata and parser
version are unchanged, then rewrites the three JSONL files from the journal (no duplicates).
Reference resolution to corpus papers runs over the whole journal at that point, so adding
PDFs later also resolves older papers' references to the new ones.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import stat
import time
import urllib.parse
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

from graph.atomic import write_lines_atomic
from graph.errors import Lit3rError, NotBuiltError
from graph.progress import Reporter
from graph.records import MAX_CHUNK_CHARS, Chunk, Paper, Reference, Source, chunk_id_for
from ingest.chunking import build_chunks, title_abstract_text
from ingest.document import BadInputError, ParsedDocument, RawReference
from ingest.identity import recorded_file, refusal, taken_by
from ingest.metadata import PaperMeta, load_metadata
from ingest.parsers import get_parser, parser_names
from ingest.references import TitleResolver, build_references, consolidate_work_ids
from ingest.stamp import clear_stamp, corpus_version, write_stamp

#: Bump when parsing or chunking output changes: journaled papers of older versions re-parse.
PARSER_VERSION = "3"


def _code_version() -> str:
    """PARSER_VERSION plus a hash of this package's sources (parsers included) and of
    graph/records.py, so that a changed parser never serves stale journal entries."""
    h = hashlib.sha1(PARSER_VERSION.encode())
    here = Path(__file__).resolve().parent
    for src in sorted(here.rglob("*.py")) + [here.parent / "graph" / "records.py"]:
        if src.is_file():
            h.update(src.read_bytes())
    return h.hexdigest()[:12]


#: The parser names ``ingest_corpus`` accepts (from the registry :mod:`ingest.parsers`), default first.
PARSERS = parser_names()


def file_name(paper_id: str) -> str:
    """A paper id as one safe file or folder name ("cs/0112017" -> "cs%2F0112017"): journal
    entries and image folders never leave the corpus folder, whatever the id holds."""
    name = urllib.parse.quote(paper_id, safe=" ()+,;=@[]_-")
    return name.replace(".", "%2E") if set(name) == {"."} else name


def paper_id_of(name: str) -> str:
    """The inverse of :func:`file_name`."""
    return urllib.parse.unquote(name)


@dataclass
class IngestReport:
    """Outcome of one ingest run. ``failures`` holds ``(file, one-line reason)`` pairs of files
    that were skipped (bad or unreadable PDFs, clashing ids); ``duplicates`` ``(file, one line)``
    pairs of PDFs whose bytes are another paper's (ingested once); ``problems`` one line per
    problem of the input that stopped nothing (metadata lines, unreadable folders, symlink loops)."""

    files: int = 0
    parsed: int = 0
    unchanged: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    papers: int = 0
    pages_parsed: int = 0
    chunks: int = 0
    references: int = 0
    resolved_references: int = 0
    pruned: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


@dataclass
class Job:
    """One file to parse (picklable: sent to worker processes)."""

    paper_id: str
    pdf: str
    sha256: str
    parser: str
    out_dir: str
    images: bool
    meta: Optional[dict]
    key: str


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for blk in iter(lambda: fh.read(1 << 20), b""):
            h.update(blk)
    return h.hexdigest()


def paper_id_from_name(name: str) -> str:
    """The paper id made from a file or folder name: runs of characters other than letters,
    digits, ``.``, ``-`` and ``_`` become one ``_`` ("Big Bird, 2020 (v2)" -> "Big_Bird_2020_v2"),
    so that every id made from a file name can be passed back to ``--papers ID,ID`` as it is.
    A name whose id would make a journal file name longer than :data:`MAX_ID_FILE_NAME` bytes
    (:func:`file_name`: a long title, or one in a non-Latin script, each character quoted as up to
    9 bytes) is cut and ends with ``_`` and 10 hex digits of the name's SHA-1, so that it stays
    one paper, the same on every run."""
    pid = _NOT_ID.sub("_", name).strip("_") or "paper"
    if len(file_name(pid)) <= MAX_ID_FILE_NAME:
        return pid
    tag = "_" + hashlib.sha1(name.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    while pid and len(file_name(pid + tag)) > MAX_ID_FILE_NAME:
        pid = pid[: min(len(pid) - 1, MAX_ID_FILE_NAME - len(tag))]
    return pid.rstrip("_") + tag


#: Bytes the journal file name of an id made from a file name may take (:func:`file_name`): the
#: file system's name limit (255 bytes) less room for ``.json`` and a temporary-file suffix.
MAX_ID_FILE_NAME = 160


_NOT_ID = re.compile(r"[^\w.\-]+")


def _pdf_files(root: Path, problems: list[str]) -> list[Path]:
    """The ``*.pdf`` files under the folder ``root`` (recursive, sorted, absolute), following
    symbolic links to folders. A folder that cannot be read, a link that loops (to itself or to
    a folder above it, ``root``'s parents included), a ``.pdf`` link that points nowhere and a
    ``.pdf`` that is not a regular file (a FIFO, a device such as a link to /dev/zero: read
    without end) are each one line in ``problems`` and skipped."""
    files: list[Path] = []
    walked: set[tuple[int, int]] = set()

    def walk(folder: Path, above: frozenset) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            problems.append(f"{folder}: folder cannot be read ({exc.strerror or exc}): fix its permissions "
                            f"(chmod +rx) to ingest its PDFs")
            return
        for entry in entries:
            path = Path(entry.path)
            try:
                st = path.stat()  # follows links
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    problems.append(f"{path}: symbolic link loop: skipped (point the link at a file or folder)")
                elif entry.is_symlink() and path.suffix.lower() == ".pdf":
                    problems.append(f"{path}: symbolic link to a missing file ({os.readlink(path)}): skipped")
                elif path.suffix.lower() == ".pdf":
                    problems.append(f"{path}: cannot be read ({exc.strerror or exc}): skipped")
                continue
            if stat.S_ISDIR(st.st_mode):
                key = (st.st_dev, st.st_ino)
                if key in above:
                    problems.append(f"{path}: symbolic link loop (it points to {path.resolve()}, a folder above "
                                    f"it): not followed")
                elif entry.is_symlink() and real_root.is_relative_to(path.resolve()):
                    problems.append(f"{path}: symbolic link to {path.resolve()}, a folder that holds {root}: "
                                    f"not followed (it would ingest PDFs from outside {root})")
                elif key not in walked:  # a folder reached by two links is read once
                    walked.add(key)
                    walk(path, above | {key})
            elif stat.S_ISREG(st.st_mode) and path.suffix.lower() == ".pdf":
                files.append(path.absolute())
            elif path.suffix.lower() == ".pdf":  # a FIFO, a device (a link to /dev/zero), a socket
                problems.append(f"{path}: not a regular file ({_kind(st.st_mode)}{_link(entry, path)}): skipped "
                                f"(pass PDF files)")

    st = root.stat()
    real_root = root.resolve()
    walked.add((st.st_dev, st.st_ino))
    walk(root, frozenset({(st.st_dev, st.st_ino)}))
    return sorted(files)


def _kind(mode: int) -> str:
    """What a file that is not a regular file or a folder is, in words."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a file"


def _link(entry: os.DirEntry, path: Path) -> str:
    """`` reached by a link to TARGET`` for a symbolic link, else empty."""
    return f" reached by a link to {os.readlink(path)}" if entry.is_symlink() else ""


def discover(pdf_dir: Path, metadata: dict[str, PaperMeta],
             problems: Optional[list[str]] = None) -> list[tuple[str, Path, Optional[PaperMeta]]]:
    """PDF files under ``pdf_dir`` (recursive, see :func:`_pdf_files`) with their paper ids.

    ``pdf_dir`` may also be one PDF file. The id is the metadata ``paper_id`` when a metadata
    line matches the file (by the file name of its ``pdf``, or by id = file stem); else
    :func:`paper_id_from_name` of the file stem; files whose stems collide (``<id>/paper.pdf``
    layouts) take their parent folder's name. Paths are absolute. Appends to ``problems`` one
    line per unreadable folder, symlink loop, and metadata line whose ``pdf`` names no file found.
    Raises BadInputError when ``pdf_dir`` does not exist or holds no PDF.
    """
    pdf_dir = Path(pdf_dir)
    problems = [] if problems is None else problems
    if pdf_dir.is_file() and pdf_dir.suffix.lower() == ".pdf":
        files = [pdf_dir.absolute()]
    elif pdf_dir.is_dir():
        files = _pdf_files(pdf_dir, problems)
    elif pdf_dir.exists():
        raise BadInputError(f"{pdf_dir} is not a PDF file or a folder: pass a folder of PDF files")
    else:
        raise BadInputError(f"PDF folder not found: {pdf_dir}: pass a folder of PDF files")
    if not files:
        why = f" ({'; '.join(problems)})" if problems else ""
        raise BadInputError(f"no PDF files under {pdf_dir}{why}: pass a folder that holds *.pdf files")
    stems: dict[str, int] = {}
    for p in files:
        stems[p.stem] = stems.get(p.stem, 0) + 1
    by_pdf = {Path(m.pdf).name: m for m in metadata.values() if m.pdf}
    out = []
    for p in files:
        meta = by_pdf.get(p.name) or metadata.get(p.stem)
        if meta is None and stems[p.stem] > 1:
            meta = metadata.get(p.parent.name)
        pid = meta.paper_id if meta else paper_id_from_name(p.stem if stems[p.stem] == 1 else p.parent.name)
        out.append((pid, p, meta))
    names = {p.name for p in files}
    for name, m in sorted(by_pdf.items(), key=lambda kv: kv[1].where):
        if name not in names:
            problems.append(f"{m.where or 'metadata'}: pdf {m.pdf!r} is not under {pdf_dir}: the line is used for "
                            f"no file (fix the file name)")
    return out


# ----------------------------------------------------------------------------- one paper


def _parse(job: Job) -> tuple[ParsedDocument, Path]:
    """Parse ``job.pdf`` with the job's parser (crops under ``images/<file_name(paper_id)>/``
    of the corpus folder when ``job.images``). Raises BadInputError for a bad file."""
    pdf = Path(job.pdf)
    img_rel = f"images/{file_name(job.paper_id)}/"
    img_dir = Path(job.out_dir) / img_rel if job.images else None
    return get_parser(job.parser)(img_dir, img_rel).parse(pdf, job.paper_id), pdf


def process(job: Job) -> dict:
    """Parse and chunk one file; returns the journal entry (a JSON-able dict).

    On bad input returns ``{"paper_id", "file", "error": one-line reason}`` instead of raising,
    so that one file never stops the corpus.
    """
    try:
        parsed, pdf = _parse(job)
    except BadInputError as exc:
        return {"paper_id": job.paper_id, "file": job.pdf, "error": str(exc)}
    except OSError as exc:  # gone or made unreadable since it was hashed
        return {"paper_id": job.paper_id, "file": job.pdf, "error": _unreadable(Path(job.pdf), exc)}
    except Exception as exc:  # a parser bug on one file must not stop the corpus
        return {"paper_id": job.paper_id, "file": job.pdf,
                "error": f"{Path(job.pdf).name}: parser error ({type(exc).__name__}: {exc}): please report it"}
    parsed.warnings = [w if w.startswith(job.paper_id) else f"{job.paper_id}: {w}" for w in parsed.warnings]
    meta = PaperMeta.model_validate(job.meta) if job.meta else None
    paper = Paper(
        paper_id=job.paper_id,
        title=(meta.title if meta and meta.title else parsed.title) or "",
        authors=(meta.authors if meta and meta.authors else parsed.authors),
        venue=(meta.venue if meta and meta.venue else parsed.venue),
        year=(meta.year if meta and meta.year else parsed.year),
        abstract=(meta.abstract if meta and meta.abstract else parsed.abstract) or "",
        source=Source(file=recorded_file(job.pdf), sha256=job.sha256),
        n_pages=parsed.n_pages,
        parser=job.parser,
    )
    refs = build_references(job.paper_id, parsed.references)
    chunks = build_chunks(
        job.paper_id, parsed, title=paper.title, abstract=paper.abstract, venue=paper.venue,
        year=paper.year, references=refs,
    )
    return {
        "paper_id": job.paper_id,
        "file": recorded_file(job.pdf),
        "key": job.key,
        "paper": paper.model_dump(mode="json"),
        "chunks": [c.model_dump(mode="json") for c in chunks],
        "raw_references": [asdict(r) for r in parsed.references],
        "warnings": parsed.warnings,
    }


# ----------------------------------------------------------------------------- the corpus


def _corpus_folder(out_dir: Path) -> Path:
    """``out_dir`` as a Path; raises NotADirectoryError when it is a file."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise BadInputError(f"--out {out_dir} is a file: pass a folder for the corpus")
    return out_dir


def _journaled(journal: Path, key: str) -> bool:
    """Does the journal entry at ``journal`` exist with this job ``key`` (same code, parser,
    file hash, metadata and image setting)? A torn entry does not count: the file parses again."""
    if not journal.is_file():
        return False
    try:
        return json.loads(journal.read_text(encoding="utf-8")).get("key") == key
    except json.JSONDecodeError:
        return False  # a torn journal entry: parse again


def _unreadable(pdf: Path, exc: OSError) -> str:
    """The one-line failure of a PDF that cannot be read, or whose crops cannot be written on a
    full disk (ENOSPC, EDQUOT: the path and the fix are the disk's, not the file's)."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (f"{pdf.name}: its crops could not be written ({exc.strerror}: {exc.filename or 'the data folder'}): "
                f"free space on that disk, then run the same command again (parsed papers are kept)")
    return f"{pdf.name}: cannot be read ({exc.strerror or exc}): fix its permissions (chmod +r) or remove it"


def _corpus_hashes(out_dir: Path) -> dict[str, tuple[str, str]]:
    """``{sha256: (paper_id, file)}`` of the PDF papers in the corpus folder's ``papers.jsonl``
    (the smallest id when several share a hash); empty when there is none."""
    path = out_dir / "papers.jsonl"
    out: dict[str, tuple[str, str]] = {}
    if not path.is_file():
        return out
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                paper = json.loads(line)
            except json.JSONDecodeError:
                continue
            src = paper.get("source") or {}
            if paper.get("parser") != "metadata" and src.get("sha256"):
                pid = paper["paper_id"]
                if src["sha256"] not in out or pid < out[src["sha256"]][0]:
                    out[src["sha256"]] = (pid, src.get("file") or "")
    return out


def _winners(hashed: list[tuple[str, Path, Optional[PaperMeta], str]],
             existing: dict[str, tuple[str, str]]) -> dict[str, str]:
    """``{sha256: paper_id}``: the one paper of each set of byte-identical PDFs. A paper of the
    corpus with those bytes keeps them (so adding a copy never renames a paper), unless its PDF
    is one of this run's files under another id (its id changed); else the smallest id wins."""
    groups: dict[str, set[str]] = {}
    for pid, _pdf, _meta, digest in hashed:
        groups.setdefault(digest, set()).add(pid)
    files = {recorded_file(pdf) for _pid, pdf, _meta, _digest in hashed}
    out = {}
    for digest, ids in groups.items():
        ex = existing.get(digest)
        out[digest] = ex[0] if ex and (ex[0] in ids or ex[1] not in files) else min(ids)
    return out


def _plan(found: list[tuple[str, Path, Optional[PaperMeta]]], out_dir: Path, parser: str, images: bool,
          report: IngestReport, replace: bool = False) -> tuple[list[Job], dict[str, str]]:
    """The jobs of the files :func:`discover` found, and ``{sha256: paper_id}`` of the papers
    kept (:func:`_winners`). A file that cannot be read, or a second file with a paper id
    already seen, is a failure; a file with the bytes of another paper is a duplicate (one
    paper per content); a file whose journal entry has the same key is counted ``unchanged``; a
    file whose paper id another stored paper holds is a failure unless ``replace``
    (:mod:`ingest.identity`)."""
    state = out_dir / ".state"
    hashed = []
    for pid, pdf, meta in found:
        try:
            # empty files are skipped when parsed: two of them are not copies of one paper
            digest = f"empty:{pdf}" if pdf.stat().st_size == 0 else sha256_of(pdf)
            hashed.append((pid, pdf, meta, digest))
        except OSError as exc:
            report.failures.append((str(pdf), _unreadable(pdf, exc)))
    existing = _corpus_hashes(out_dir)
    winners = _winners(hashed, existing)
    jobs: list[Job] = []
    seen: set[str] = set()
    kept: dict[str, Path] = {}  # sha256 -> the file planned for it
    win_file: dict[str, Path] = {}  # sha256 -> the file of its winner in this run
    for pid, pdf, _meta, digest in hashed:
        if winners[digest] == pid:
            win_file.setdefault(digest, pdf)
    code = _code_version()
    for pid, pdf, meta, digest in hashed:
        win = winners[digest]
        if win != pid or digest in kept:
            if digest in kept or digest in win_file:
                line = f"the same bytes as {kept.get(digest, win_file[digest]).name}: ingested once, as paper {win!r}"
            else:
                line = f"the same bytes as paper {win!r}, already in the corpus: not added again"
            report.duplicates.append((str(pdf), f"{pdf.name}: {line}"))
            continue
        if pid in seen:
            report.failures.append((str(pdf), f"{pdf.name}: duplicate paper id {pid!r}: rename the file or fix --metadata"))
            continue
        seen.add(pid)
        old = None if replace else taken_by(state / f"{file_name(pid)}.json", pdf, digest)
        if old is not None:  # the stored paper stays as it is
            report.failures.append((str(pdf), refusal(pdf, pid, old)))
            continue
        kept[digest] = pdf
        meta_json = meta.model_dump(mode="json") if meta else None
        key = hashlib.sha1(
            json.dumps([code, parser, digest, meta_json, images], sort_keys=True).encode()
        ).hexdigest()
        if _journaled(state / f"{file_name(pid)}.json", key):
            report.unchanged += 1
            continue
        jobs.append(Job(pid, str(pdf), digest, parser, str(out_dir), images, meta_json, key))
    return jobs, winners


def _record(entry: dict, state: Path, report: IngestReport) -> None:
    """Count one finished job and journal it (atomically) under ``state``; a bad file is a failure."""
    if "error" in entry:
        report.failures.append((entry["file"], entry["error"]))
        return
    report.parsed += 1
    report.pages_parsed += entry["paper"]["n_pages"]
    write_lines_atomic(state / f"{file_name(entry['paper_id'])}.json", [json.dumps(entry, ensure_ascii=False)])


def _run(jobs: list[Job], workers: Optional[int], progress: bool, record: Callable[[dict], None]) -> None:
    """:func:`process` every job and pass each entry to ``record`` as it finishes: in this
    process for one worker or one job, else in ``workers`` processes (default: CPU count)."""
    n_workers = workers or os.cpu_count() or 1
    with Reporter(enabled=progress and bool(jobs)).bar("parsing PDFs", len(jobs), "pdf") as bar:
        if n_workers == 1 or len(jobs) <= 1:
            for job in jobs:
                record(process(job))
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=min(n_workers, len(jobs))) as pool:
                futures = [pool.submit(process, job) for job in jobs]
                for fut in as_completed(futures):
                    record(fut.result())
                    bar.update()


def _prune(out_dir: Path, keep: set[str], report: IngestReport) -> None:
    """Drop the journal entries and images of papers parsed from a PDF whose id is not in
    ``keep`` (papers added from metadata alone stay)."""
    for path in (out_dir / ".state").glob("*.json"):
        if paper_id_of(path.stem) not in keep and '"parser": "metadata"' not in path.read_text(encoding="utf-8"):
            path.unlink()
            shutil.rmtree(out_dir / "images" / path.stem, ignore_errors=True)
            report.pruned += 1


def _finish(out_dir: Path, report: IngestReport, t0: float, winners: Optional[dict[str, str]] = None) -> IngestReport:
    """Rewrite the corpus files from the journal (``winners``: see :func:`_merge`), time the run
    from ``t0`` (``time.perf_counter``) and write ``report.json``."""
    _merge(out_dir, report, winners or {})
    report.seconds = time.perf_counter() - t0
    (out_dir / "report.json").write_text(json.dumps(asdict(report), indent=2), encoding="utf-8")
    return report


def ingest_corpus(
    pdf_dir: Path,
    out_dir: Path,
    *,
    metadata_file: Optional[Path] = None,
    parser: str = "pymupdf",
    workers: Optional[int] = None,
    images: bool = True,
    progress: bool = True,
    prune: bool = False,
    replace: bool = False,
) -> IngestReport:
    """Parse every PDF under ``pdf_dir`` into the corpus folder ``out_dir`` (see module doc).

    ``parser``: a name of :data:`PARSERS`. ``workers``: parser processes (default: CPU count;
    1 parses in this process). Bad or unreadable files are reported in ``IngestReport.failures``
    and skipped; of byte-identical PDFs one paper is made, the others are reported in
    ``duplicates``; bad metadata lines, unreadable folders and symlink loops in ``problems``.
    Ids made from file names are :func:`paper_id_from_name` of the stem.
    ``prune``: drop papers of earlier runs whose PDF (its bytes, under any name) is not under ``pdf_dir`` (by default the
    corpus only grows, so that several folders can be added one after another). ``replace``: a
    file whose paper id another stored paper holds replaces it (by default it is refused,
    :mod:`ingest.identity`). Raises
    FileNotFoundError for a missing folder or one without PDFs, NotADirectoryError when
    ``out_dir`` is a file, ``ingest.metadata.MetadataError`` for a missing metadata file, ValueError
    for an unknown parser (:class:`ingest.parsers.UnknownParserError`) or a worker count below 1.
    """
    get_parser(parser)
    if workers is not None and workers < 1:
        raise BadInputError(f"--workers must be 1 or more, got {workers}")
    t0 = time.perf_counter()
    out_dir = _corpus_folder(out_dir)
    state = out_dir / ".state"
    state.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    metadata = load_metadata(metadata_file, problems) if metadata_file else {}
    found = discover(pdf_dir, metadata, problems)
    report = IngestReport(files=len(found), problems=problems)
    jobs, winners = _plan(found, out_dir, parser, images, report, replace)
    _run(jobs, workers, progress, lambda entry: _record(entry, state, report))
    if prune:  # a paper whose bytes are here under another name (a renamed file) is kept: winners
        copies = {f for f, _ in report.duplicates}
        _prune(out_dir, {pid for pid, pdf, _ in found if str(pdf) not in copies} | set(winners.values()), report)
    return _finish(out_dir, report, t0, winners)


def ingest_metadata_only(metadata_file: Path, out_dir: Path) -> IngestReport:
    """Add papers known only by their metadata (a paper pool without PDFs, e.g. LitTraceQA's
    ``paper_pool_partial.jsonl``: ``paper_id``, ``title``, ``venue``, ``year``, optional
    ``abstract`` and ``authors``) to the corpus folder ``out_dir``.

    Each becomes a Paper with ``parser = "metadata"`` and ``n_pages = 0`` (no PDF) and one
    ``title_abstract`` chunk on page 1, journaled like a parsed PDF, so that title-based lanes
    (paper BM25, dense title search, SPECTER2 neighbours) work; full-text lanes find nothing in
    them. A paper already ingested from its PDF is left as it is. Lines without a title are
    reported in ``failures``, bad lines in ``problems`` (:func:`ingest.metadata.load_metadata`).
    Raises ``ingest.metadata.MetadataError`` for a missing or unreadable file and
    NotADirectoryError when ``out_dir`` is a file.
    """
    t0 = time.perf_counter()
    out_dir = _corpus_folder(out_dir)
    problems: list[str] = []
    metas = {m.paper_id: m for m in load_metadata(metadata_file, problems).values()}
    state = out_dir / ".state"
    state.mkdir(parents=True, exist_ok=True)
    report = IngestReport(files=len(metas), problems=problems)
    code = _code_version()
    for pid, meta in sorted(metas.items()):
        if not meta.title:
            report.failures.append((str(metadata_file), f"{pid}: no title in {Path(metadata_file).name}: add one"))
            continue
        meta_json = meta.model_dump(mode="json")
        key = hashlib.sha1(json.dumps([code, "metadata", meta_json], sort_keys=True).encode()).hexdigest()
        journal = state / f"{file_name(pid)}.json"
        if journal.is_file():
            try:
                old = json.loads(journal.read_text(encoding="utf-8"))
                if old.get("key") == key or old.get("paper", {}).get("parser") != "metadata":
                    report.unchanged += 1  # same metadata, or the paper was parsed from its PDF
                    continue
            except json.JSONDecodeError:
                pass
        line = json.dumps(meta_json, sort_keys=True).encode()
        paper = Paper(paper_id=pid, title=meta.title, authors=meta.authors or [], venue=meta.venue, year=meta.year,
                      abstract=meta.abstract or "", n_pages=0, parser="metadata",
                      source=Source(file=str(metadata_file), sha256=hashlib.sha256(line).hexdigest()))
        text = title_abstract_text(paper.title, paper.abstract, paper.venue, paper.year)[:MAX_CHUNK_CHARS]
        chunk = Chunk(chunk_id=chunk_id_for(pid, 0), paper_id=pid, kind="title_abstract", page=1,
                      section="Abstract" if paper.abstract else "Title", text=text, seq=0)
        write_lines_atomic(journal, [json.dumps({"paper_id": pid, "file": str(metadata_file), "key": key,
                                            "paper": paper.model_dump(mode="json"),
                                            "chunks": [chunk.model_dump(mode="json")], "raw_references": [],
                                            "warnings": []}, ensure_ascii=False)])
        report.parsed += 1
    return _finish(out_dir, report, t0)


def _merge(out_dir: Path, report: IngestReport, winners: dict[str, str]) -> None:
    """Rewrite papers/chunks/references JSONL from the journal, resolving references. Of journal
    entries parsed from byte-identical PDFs (left by an earlier version or an interrupted run)
    one is kept: ``winners[sha256]`` when it is among them, else the smallest id; each other is
    left out with a warning."""
    entries = []
    for path in sorted((out_dir / ".state").glob("*.json")):
        try:
            entries.append(json.loads(path.read_text(encoding="utf-8")))
        except json.JSONDecodeError:
            report.warnings.append(f"{path.name}: torn journal entry skipped; it re-parses on the next run")
    entries.sort(key=lambda e: e["paper_id"])
    entries = _one_per_content(entries, winners, report)
    resolver = TitleResolver({e["paper_id"]: e["paper"]["title"] for e in entries})
    papers: list = []
    chunks: list = []
    records: list = []
    for e in entries:
        papers.append(json.dumps(e["paper"], ensure_ascii=False))
        chunks.extend(json.dumps(c, ensure_ascii=False) for c in e["chunks"])
        raws = [RawReference(**r) for r in e["raw_references"]]
        records.extend(build_references(e["paper_id"], raws, resolver))
        report.warnings.extend(e.get("warnings", []))
    records = consolidate_work_ids(records)
    refs = [json.dumps(r.model_dump(mode="json"), ensure_ascii=False) for r in records]
    report.references = len(records)
    report.resolved_references = sum(r.cited_paper_id is not None for r in records)
    report.papers, report.chunks = len(papers), len(chunks)
    clear_stamp(out_dir)  # ingest/stamp.py: no version while the three files are being rewritten
    write_lines_atomic(out_dir / "papers.jsonl", papers)
    write_lines_atomic(out_dir / "chunks.jsonl", chunks)
    write_lines_atomic(out_dir / "references.jsonl", refs)
    write_stamp(out_dir, corpus_version(papers, chunks, refs))


def _one_per_content(entries: list[dict], winners: dict[str, str], report: IngestReport) -> list[dict]:
    """``entries`` (sorted by id) without the PDF papers whose bytes another kept entry has."""
    by_hash: dict[str, list[str]] = {}
    for e in entries:
        src = e["paper"].get("source") or {}
        if e["paper"].get("parser") != "metadata" and src.get("sha256"):
            by_hash.setdefault(src["sha256"], []).append(e["paper_id"])
    drop: dict[str, str] = {}
    for digest, ids in by_hash.items():
        if len(ids) > 1:
            keep = winners[digest] if winners.get(digest) in ids else ids[0]
            drop.update((pid, keep) for pid in ids if pid != keep)
    for pid, keep in sorted(drop.items()):
        report.warnings.append(f"{pid}: parsed from the same PDF bytes as {keep}: left out of the corpus "
                               f"(`lit3r ingest PDF_DIR --prune` drops it)")
    return [e for e in entries if e["paper_id"] not in drop]


class PaperRecords:
    """One paper of a corpus folder: its raw JSON lines as UTF-8 bytes (``lines``: ``paper``
    bytes, ``chunks`` and ``references`` lists of bytes) and their sha1 (``digest``); the
    records as dicts are parsed on first use (an unchanged paper costs one hash, no JSON)."""

    __slots__ = ("paper_id", "lines", "digest", "_parsed")

    def __init__(self, paper_id: str, lines: dict, digest: str) -> None:
        self.paper_id, self.lines, self.digest = paper_id, lines, digest
        self._parsed: Optional[tuple] = None

    def _parse(self) -> tuple:
        if self._parsed is None:
            self._parsed = (json.loads(self.lines["paper"]), [json.loads(x) for x in self.lines["chunks"]],
                            [json.loads(x) for x in self.lines["references"]])
        return self._parsed

    @property
    def paper(self) -> dict:
        return self._parse()[0]

    @property
    def chunks(self) -> list[dict]:
        return self._parse()[1]

    @property
    def references(self) -> list[dict]:
        return self._parse()[2]

    @property
    def n_chunks(self) -> int:
        return len(self.lines["chunks"])

    def text_lines(self) -> dict:
        """The raw lines as str (for storing them as they are)."""
        return {"paper": self.lines["paper"].decode("utf-8"),
                "chunks": [x.decode("utf-8") for x in self.lines["chunks"]],
                "references": [x.decode("utf-8") for x in self.lines["references"]]}


class CorpusOrderError(Lit3rError, ValueError):
    """The corpus files are not in paper order (papers.jsonl sorted, chunks and references
    grouped by paper in that order)."""


#: The ``paper_id`` key of a JSON record line (a key, never inside a string: quotes there are escaped).
_PAPER_ID = re.compile(rb'[{,]\s*"paper_id":\s*"((?:[^"\\]|\\.)*)"')


_KEY = b'"paper_id": "'


def _paper_id_of(line: bytes) -> str:
    # fast path: json.dumps' own spacing; the key's closing quote follows "d", so it is never
    # inside a string (there a quote is always escaped)
    i = line.find(_KEY)
    if i > 0:
        j = line.find(b'"', i + len(_KEY))
        pid = line[i + len(_KEY):j]
        if j > 0 and b"\\" not in pid:
            return pid.decode("utf-8")
    m = _PAPER_ID.search(line)
    if m is None:
        return json.loads(line)["paper_id"]
    pid = m.group(1)
    return json.loads(b'"' + pid + b'"') if b"\\" in pid else pid.decode("utf-8")


def _grouped(path: Path) -> Iterator[tuple[str, list[bytes]]]:
    """``(paper_id, raw lines)`` runs of a JSONL file grouped by ``paper_id``."""
    if not path.is_file():
        return
    pid: Optional[str] = None
    lines: list[bytes] = []
    with path.open("rb") as fh:
        for line in fh:
            line = line.rstrip(b"\r\n")
            if not line.strip():
                continue
            this = _paper_id_of(line)
            if this != pid:
                if pid is not None:
                    yield pid, lines
                pid, lines = this, []
            lines.append(line)
    if pid is not None:
        yield pid, lines


def corpus_size(out_dir: Path) -> int:
    """Number of papers in a corpus folder (lines of ``papers.jsonl``; 0 when there is none)."""
    path = Path(out_dir) / "papers.jsonl"
    if not path.is_file():
        return 0
    with path.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


def iter_corpus(out_dir: Path) -> Iterable[PaperRecords]:
    """Stream a corpus folder paper by paper (a merge join of the three files on paper_id);
    memory holds one paper. Raises FileNotFoundError when there is no ``papers.jsonl`` and
    :class:`CorpusOrderError` when the files are out of order (rewrite them with ``lit3r ingest``)."""
    out_dir = Path(out_dir)
    if not (out_dir / "papers.jsonl").is_file():
        raise NotBuiltError(f"no corpus in {out_dir}: run `lit3r ingest PDF_DIR --out {out_dir}` first")
    streams = {name: _grouped(out_dir / f"{name}.jsonl") for name in ("chunks", "references")}
    heads = {name: next(s, None) for name, s in streams.items()}

    def out_of_order(name: str, pid: str) -> CorpusOrderError:
        return CorpusOrderError(f"{name}.jsonl has records of {pid!r}, which is not in papers.jsonl or not in its "
                                f"order: run `lit3r ingest` again to rewrite the corpus files")

    last = None
    for pid, plines in _grouped(out_dir / "papers.jsonl"):
        if len(plines) > 1 or (last is not None and pid <= last):
            raise CorpusOrderError(f"{out_dir / 'papers.jsonl'} is not sorted by paper_id (or repeats it) at "
                                   f"{pid!r}: run `lit3r ingest` again to rewrite the corpus files")
        last = pid
        raw: dict = {"paper": plines[0]}
        parts = [plines[0]]
        for name in streams:
            head = heads[name]
            if head is not None and head[0] < pid:
                raise out_of_order(name, head[0])
            if head is not None and head[0] == pid:
                raw[name] = head[1]
                heads[name] = next(streams[name], None)
            else:
                raw[name] = []
            parts.append(b"\n".join(raw[name]))
        yield PaperRecords(pid, raw, hashlib.sha1(b"\0".join(parts)).hexdigest())
    for name, head in heads.items():
        if head is not None:
            raise out_of_order(name, head[0])


def load_corpus(out_dir: Path) -> tuple[list[Paper], list[Chunk], list[Reference]]:
    """Load a corpus folder written by :func:`ingest_corpus` into validated records.

    Raises FileNotFoundError when the folder holds no ``papers.jsonl`` (run ``lit3r ingest``).
    """
    out_dir = Path(out_dir)
    if not (out_dir / "papers.jsonl").is_file():
        raise NotBuiltError(f"no corpus in {out_dir}: run `lit3r ingest PDF_DIR --out {out_dir}` first")

    def read(name: str, model):
        with (out_dir / name).open(encoding="utf-8") as fh:
            return [model.model_validate_json(line) for line in fh if line.strip()]

    return read("papers.jsonl", Paper), read("chunks.jsonl", Chunk), read("references.jsonl", Reference)
