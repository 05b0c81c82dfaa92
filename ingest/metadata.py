"""Paper metadata from a JSONL file, overriding what is read from page 1.

One JSON object per line with ``paper_id``, ``title``, ``authors``, ``venue``, ``year``,
``abstract``, ``pdf`` (file name or path of the PDF, relative to the PDF folder). The field names
of LitTraceQA-style manifests are accepted too (``id`` for ``paper_id``, ``venue_or_arxiv`` for
``venue``). Bad lines are reported one by one with their line number (:func:`load_metadata`).
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Callable, Iterator, Optional

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from graph.errors import Lit3rError
from graph.lines import jsonl_lines


class MetadataError(Lit3rError, ValueError):
    """A metadata file that cannot be read; the message names the file and line."""


class PaperMeta(BaseModel):
    """One metadata line. Unknown fields are ignored; every field but ``paper_id`` is optional."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    paper_id: str = Field(validation_alias=AliasChoices("paper_id", "id"), min_length=1)
    title: Optional[str] = None
    authors: Optional[list[str]] = None
    venue: Optional[str] = Field(default=None, validation_alias=AliasChoices("venue", "venue_or_arxiv"))
    year: Optional[int] = None
    abstract: Optional[str] = None
    pdf: Optional[str] = None
    #: ``"FILE:LINE"`` of the line this came from ("" when built otherwise); not part of the dump.
    _where: str = PrivateAttr(default="")

    @property
    def where(self) -> str:
        """``"FILE:LINE"`` of the metadata line (for messages), or ""."""
        return self._where

    @field_validator("authors", mode="before")
    @classmethod
    def _split_authors(cls, v):
        if isinstance(v, str):
            return [a.strip() for a in re.split(r";|,| and ", v) if a.strip()]
        return v

    @field_validator("venue")
    @classmethod
    def _short_venue(cls, v: Optional[str]) -> Optional[str]:
        """"NIPS 2017 / arXiv:1706.03762v7 [cs.CL]" -> "NIPS"; "arXiv:2002.09402v3" -> "arXiv"."""
        if not v:
            return None
        v = v.split("/")[0].strip()
        if v.lower().startswith("arxiv"):
            return "arXiv"
        m = re.match(r"[A-Za-z][\w&\-]*", v)  # the venue's name: "ICML 2020 (PMLR 119)" -> "ICML"
        name = m.group(0) if m else ""
        return name if name and name.lower() not in ("unknown", "none", "n") else None


def load_metadata(path: Path, problems: Optional[list[str]] = None) -> dict[str, PaperMeta]:
    """Read a metadata JSONL file; returns ``{key: PaperMeta}`` keyed by both ``paper_id`` and
    the PDF file stem (when ``pdf`` is given), so either can be matched to a file.

    The file is UTF-8 (a UTF-8 byte-order mark is accepted; a UTF-16 file with its byte-order
    mark is read as UTF-16). Each bad line is one problem ``"FILE:LINE: what: what to do"``: a
    line that is not UTF-8, not JSON or not a JSON object, a line that does not validate, a
    ``paper_id`` already on an earlier line, a ``pdf`` already named by an earlier line (the
    earlier line wins). With a ``problems`` list, problems are appended to it and the bad lines
    skipped; without one, the first raises :class:`MetadataError`. A missing file, a folder or a
    binary file (a PDF passed by mistake) always raises MetadataError.
    """
    path = Path(path)
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "not found"
        raise MetadataError(f"metadata file {what}: {path}: pass a JSONL file to --metadata")

    def problem(message: str) -> None:
        if problems is None:
            raise MetadataError(message)
        problems.append(message)

    out: dict[str, PaperMeta] = {}
    first_line: dict[str, int] = {}  # paper_id -> line
    pdf_line: dict[str, int] = {}  # pdf file name -> line
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MetadataError(f"metadata file {path} cannot be read ({exc.strerror or exc}): fix its permissions "
                            f"or pass another file to --metadata") from None
    if data.startswith(b"%PDF") or (b"\x00" in data[:4096] and not data.startswith((codecs.BOM_UTF16_LE,
                                                                                     codecs.BOM_UTF16_BE))):
        raise MetadataError(f"metadata file {path} is not a UTF-8 text file (binary data): pass the JSONL file "
                            f"to --metadata")
    for no, line in _lines(path, data, problem):
        if not line.strip():
            continue
        where = f"{path}:{no}"
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                problem(f"{where}: not a JSON object (a {type(row).__name__}): write one object per line")
                continue
            meta = PaperMeta.model_validate(row)
        except (json.JSONDecodeError, RecursionError) as exc:
            problem(f"{where}: not valid JSON ({getattr(exc, 'msg', 'nested too deeply')} at column "
                    f"{getattr(exc, 'colno', 1)}): fix or remove the line")
            continue
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"]) or "line"
            problem(f"{where}: field {field!r}: {err['msg']}: fix or remove the line")
            continue
        if meta.paper_id in first_line:
            problem(f"{where}: paper_id {meta.paper_id!r} is already on line {first_line[meta.paper_id]}: this "
                    f"line is ignored (remove it or give it another id)")
            continue
        pdf_name = Path(meta.pdf).name if meta.pdf else None
        if pdf_name and pdf_name in pdf_line:
            problem(f"{where}: pdf {meta.pdf!r} is already named on line {pdf_line[pdf_name]}: this line is "
                    f"ignored (one line per PDF)")
            continue
        meta._where = where
        first_line[meta.paper_id] = no
        out[meta.paper_id] = meta
        if meta.pdf and pdf_name:
            pdf_line[pdf_name] = no
            out.setdefault(Path(meta.pdf).stem, meta)
    return out


def _lines(path: Path, data: bytes, problem: Callable[[str], None]) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of the bytes ``data`` of the metadata file ``path``: UTF-8 with or
    without a byte-order mark, or UTF-16 with one; a line that is not UTF-8 is passed to
    ``problem`` and left out."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            problem(f"{path}: not a valid UTF-16 file: save it as UTF-8")
            return
        yield from jsonl_lines(text)
        return
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    for no, raw in enumerate(data.split(b"\n"), start=1):
        try:
            yield no, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problem(f"{path}:{no}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}): save the "
                    f"file as UTF-8")


#: The venue abbreviations recognised on page 1 and in questions (one regex alternation).
VENUE_PATTERN = ("ACL|EMNLP|NAACL|EACL|AACL|COLING|LREC|TACL|NeurIPS|NIPS|ICML|ICLR|CVPR|ICCV|ECCV|WACV|AAAI|IJCAI|"
                 "KDD|SIGIR|WSDM|CIKM|WWW|CHI|UIST|CSCW|JCDL|MIDL|MICCAI|COLM|JMLR|TMLR")
_LONG_VENUES = {
    "Annual Meeting of the Association for Computational Linguistics": "ACL",
    "Empirical Methods in Natural Language Processing": "EMNLP",
    "North American Chapter of the Association for Computational Linguistics": "NAACL",
    "European Chapter of the Association for Computational Linguistics": "EACL",
    "Neural Information Processing Systems": "NeurIPS",
    "International Conference on Machine Learning": "ICML",
    "International Conference on Learning Representations": "ICLR",
    "Conference on Human Factors in Computing Systems": "CHI",
}
_YEAR_RE = r"((?:19|20)\d\d)"
_ARXIV_STAMP = re.compile(r"arXiv:\s*\d{4}\.\d{4,5}(?:v\d+)?\s*\[[\w.\-]+\]\s*(?:\d{1,2}\s+\w{3,9}\s+" + _YEAR_RE + ")?")


def venue_year_from_text(text: str) -> tuple[Optional[str], Optional[int]]:
    """Venue acronym and year printed on page 1, or (None, None).

    Looks for, in order: "conference paper at ICLR 2022"; an acronym with a year ("NIPS 2017",
    "ACL 2020"); a spelled-out venue name with a year on the same or the next line ("... Neural Information
    Processing Systems ... 2017"); the arXiv stamp ("arXiv:1706.03762v7 [cs.CL] 2 Aug 2023" ->
    arXiv 2023, the version date). ``text`` is page-1 text with newlines.
    """
    m = re.search(r"conference paper at (" + VENUE_PATTERN + r")\s*" + _YEAR_RE, text)
    if m:
        return m.group(1), int(m.group(2))
    m = re.search(r"\b(" + VENUE_PATTERN + r")[\s'\u2019-]*" + _YEAR_RE + r"\b", text)
    if m:
        return ("NeurIPS" if m.group(1) == "NIPS" and int(m.group(2)) >= 2018 else m.group(1)), int(m.group(2))
    lines = text.splitlines()
    for i, line in enumerate(lines):
        for long, short in _LONG_VENUES.items():
            if long.lower() in line.lower():
                y = re.search(_YEAR_RE, " ".join(lines[i : i + 2]))
                if y:
                    return short, int(y.group(1))
    m = _ARXIV_STAMP.search(text)
    if m:
        return "arXiv", int(m.group(1)) if m.group(1) else None
    return None, None
