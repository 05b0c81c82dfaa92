"""Reading a corpus folder's record files (``papers.jsonl``, ``chunks.jsonl``,
``references.jsonl``, written by :func:`ingest.corpus.ingest_corpus`) paper by paper, as raw
lines (:class:`PaperRecords`, :func:`iter_corpus`) or as records (:func:`load_corpus`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Iterable, Iterator, Optional

from graph.errors import Lit3rError, NotBuiltError
from graph.records import Chunk, Paper, Reference


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
