"""Finding the PDFs of an ingest and naming their papers: the ``*.pdf`` files under a folder
(links followed, loops and unreadable folders reported), a paper id per file (from the metadata
or the file name, :func:`paper_id_from_name`), the safe file name of an id (:func:`file_name`)
and a file's sha256. Used by :func:`ingest.corpus.ingest_corpus`.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import urllib.parse
from pathlib import Path
from typing import Optional

from ingest.document import BadInputError
from ingest.metadata import PaperMeta


def file_name(paper_id: str) -> str:
    """A paper id as one safe file or folder name ("cs/0112017" -> "cs%2F0112017"): journal
    entries and image folders never leave the corpus folder, whatever the id holds."""
    name = urllib.parse.quote(paper_id, safe=" ()+,;=@[]_-")
    return name.replace(".", "%2E") if set(name) == {"."} else name


def paper_id_of(name: str) -> str:
    """The inverse of :func:`file_name`."""
    return urllib.parse.unquote(name)


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
