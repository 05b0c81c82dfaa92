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
import shutil
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

from graph.atomic import write_lines_atomic
from graph.progress import Reporter
from graph.records import MAX_CHUNK_CHARS, Chunk, Paper, Source, chunk_id_for
from ingest.chunking import build_chunks, title_abstract_text
from ingest.corpus_files import CorpusOrderError, PaperRecords, corpus_size, iter_corpus, load_corpus
from ingest.discover import discover, file_name, paper_id_from_name, paper_id_of, sha256_of
from ingest.document import BadInputError, ParsedDocument, RawReference
from ingest.identity import recorded_file, refusal, taken_by
from ingest.metadata import PaperMeta, load_metadata
from ingest.parsers import get_parser, parser_names
from ingest.references import TitleResolver, build_references, consolidate_work_ids
from ingest.stamp import clear_stamp, corpus_version, write_stamp

#: The corpus-file reader (:mod:`ingest.corpus_files`) and the file discovery (:mod:`ingest.discover`)
#: stay importable from here.
__all__ = ["PARSER_VERSION", "PARSERS", "IngestReport", "Job", "ingest_corpus", "ingest_metadata_only", "process",
           "CorpusOrderError", "PaperRecords", "corpus_size", "iter_corpus", "load_corpus", "discover", "file_name",
           "paper_id_from_name", "paper_id_of", "sha256_of"]

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


