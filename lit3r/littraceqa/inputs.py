"""LitTraceQA question lines (the shared task's question input, restated by the models below) as
pydantic models, and a check of a whole input file that names every bad line and its field.

A line is one JSON object: ``query_id`` (a non-empty string, unique in the file), ``question``
(a non-empty string), ``answer_types`` (a non-empty list of ``freeform``, ``multiple_choice``,
``table``; default ``["freeform"]``), ``multiple_choice_options`` (a list of two or more
``{label, text}`` with distinct labels, case aside; required when ``multiple_choice`` is asked),
``table_schema`` (a list of ``{name, type: string | number | boolean, is_row_key: bool}`` with
distinct names). Other fields (``benchmark``, ``task_family``, ...) are kept and never read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from graph.errors import shown_id
from lit3r.errors import InputError
from lit3r.littraceqa.format import normalize_text
from lit3r.littraceqa.jsonl import jsonl_lines, loads_line, read_capped, why_not_json

#: The answer types of the format.
ANSWER_TYPES = ("freeform", "multiple_choice", "table")
AnswerType = Literal["freeform", "multiple_choice", "table"]


class McOption(BaseModel):
    """One multiple-choice option: ``label`` ("A") and ``text``."""

    model_config = ConfigDict(extra="allow")
    label: StrictStr = Field(min_length=1)
    text: StrictStr

    @field_validator("label")
    @classmethod
    def _label(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the label is empty")
        return v.strip()


class Column(BaseModel):
    """One column of a table answer: ``name``, ``type`` (default string), ``is_row_key``."""

    model_config = ConfigDict(extra="allow")
    name: StrictStr
    type: Literal["string", "number", "boolean"] = "string"
    is_row_key: StrictBool = False

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the column name is empty")
        return v


def _freeform() -> list[AnswerType]:
    return ["freeform"]


class QuestionInput(BaseModel):
    """One question line (see the module doc)."""

    model_config = ConfigDict(extra="allow")
    query_id: StrictStr
    question: StrictStr
    answer_types: list[AnswerType] = Field(default_factory=_freeform, min_length=1)
    multiple_choice_options: Optional[list[McOption]] = None
    table_schema: Optional[list[Column]] = None

    @field_validator("query_id", "question")
    @classmethod
    def _not_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("is empty")
        return v

    @field_validator("multiple_choice_options")
    @classmethod
    def _distinct_labels(cls, v: Optional[list[McOption]]) -> Optional[list[McOption]]:
        if v is not None and len(v) == 1:
            raise ValueError("one option only: give at least two")
        seen: set[str] = set()
        for o in v or []:
            if o.label.upper() in seen:
                raise ValueError(f"label {shown_id(o.label)} is given twice: give each option its own label")
            seen.add(o.label.upper())
        return v

    @field_validator("table_schema")
    @classmethod
    def _distinct_columns(cls, v: Optional[list[Column]]) -> Optional[list[Column]]:
        seen: set[str] = set()
        for c in v or []:
            if normalize_text(c.name) in seen:
                raise ValueError(f"column {shown_id(c.name)} is given twice: name the columns uniquely")
            seen.add(normalize_text(c.name))
        return v

    @model_validator(mode="after")
    def _options_for_multiple_choice(self) -> "QuestionInput":
        if "multiple_choice" in self.answer_types and not self.multiple_choice_options:
            # "FIELD: message": :func:`_message` names the field of a whole-line check
            raise ValueError('multiple_choice_options: missing while answer_types has "multiple_choice": give '
                             'the options')
        if "table" in self.answer_types and self.table_schema is not None and not self.table_schema:
            raise ValueError('table_schema: empty while answer_types has "table": give at least one column')
        return self

    def row(self) -> dict[str, Any]:
        """The line as a dict: every field it had, answer types without repeats, schema columns
        with their defaults filled in."""
        out = self.model_dump(exclude_none=True)
        out["answer_types"] = list(dict.fromkeys(self.answer_types))
        return out


def _field(loc: tuple) -> str:
    """A pydantic error location as a JSON path: ``multiple_choice_options[1].text``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _message(exc: ValidationError) -> tuple[str, str]:
    """``(field, what is wrong)`` of the first error of a validation, the count of the others added."""
    errors = exc.errors()
    err = errors[0]
    loc = tuple(x for x in err["loc"] if not (isinstance(x, str) and x.startswith(("literal[", "list["))))
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "missing":
        msg = "missing"
    elif err["type"] == "literal_error":
        msg = f"{shown_id(err.get('input'))} is not one of {msg.removeprefix('Input should be ')}"
    elif err["type"] == "extra_forbidden":
        msg = "unknown field"
    name = _field(loc)
    if not name and ": " in msg:  # a whole-line check names its field first
        name, msg = msg.split(": ", 1)
    more = f" (and {len(errors) - 1} more problem(s) on this line)" if len(errors) > 1 else ""
    return name or "line", msg[:1].lower() + msg[1:] + more


def scan_inputs(path: Path) -> tuple[list[dict], list[str]]:
    """Check every line of a question file before any work. Returns ``(rows, problems)``: the
    good lines as dicts (:meth:`QuestionInput.row`) in file order, and one line per bad line,
    ``"FILE:LINE: field "F": what is wrong: fix the line"`` (bad JSON, not an object, a field
    that does not validate, a query_id of an earlier line). Raises InputError only for a file
    that cannot be read or is not UTF-8 (a UTF-8 byte-order mark is accepted)."""
    try:
        text = read_capped(Path(path)).decode("utf-8-sig")  # a regular file only, each line bounded
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not a UTF-8 text file (byte 0x{exc.object[exc.start]:02x} at offset "
                         f"{exc.start}): pass a JSONL file of questions") from None
    rows: list[dict] = []
    problems: list[str] = []
    first: dict[str, int] = {}
    for no, line in jsonl_lines(text):
        if not line.strip():
            continue
        where = f"{path}:{no}"
        try:
            raw = loads_line(line)
        except (ValueError, RecursionError) as exc:
            problems.append(f"{where}: not valid JSON ({why_not_json(exc)}): fix the line")
            continue
        if not isinstance(raw, dict):
            problems.append(f"{where}: not a JSON object (a {type(raw).__name__}): write one question object per "
                            f"line")
            continue
        qid = raw.get("query_id")
        if isinstance(qid, str) and qid in first:  # a bad line's id counts too: fixed, it would clash
            problems.append(f"{where}: field \"query_id\": {shown_id(qid)} is already on line {first[qid]}: "
                            f"make query ids unique")
            continue
        if isinstance(qid, str) and qid.strip():
            first[qid] = no
        try:
            q = QuestionInput.model_validate(raw)
        except ValidationError as exc:
            name, msg = _message(exc)
            named = f" (query_id {shown_id(qid)})" if isinstance(qid, str) and qid.strip() else ""
            problems.append(f"{where}{named}: field \"{name}\": {msg}: fix the line")
            continue
        rows.append(q.row())
    return rows, problems
