"""Bounded reading of the JSONL files a user passes (questions, gold, a submission, traces):
split on "\n" only (:func:`graph.lines.jsonl_lines`, re-exported here); only a regular file is
read (a FIFO or a device such as /dev/zero would be read without end), one line is at most
:data:`MAX_LINE_BYTES`, and a line is parsed as strict JSON (no ``NaN`` or ``Infinity``, no
number that overflows), each failure one line naming ``FILE:LINE``."""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any, Optional

from graph.errors import shown_text
from graph.lines import jsonl_lines
from lit3r.errors import InputError

#: The longest line a JSONL input may have (bytes); a longer one is an error naming it.
MAX_LINE_BYTES = 64 * 1024 * 1024


def read_capped(path: Path, max_line: int = MAX_LINE_BYTES) -> bytes:
    """The bytes of the regular file ``path``, read line by line; InputError for a file that is
    not a regular file, cannot be read, or has a line longer than ``max_line`` bytes."""
    where = shown_text(path, 200)
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
            raise InputError(f"{where}: not a regular file ({kind}, which could be read without end): pass a "
                             f"JSONL file")
        parts: list[bytes] = []
        with open(path, "rb") as fh:
            no = 0
            while True:
                line = fh.readline(max_line + 1)
                if not line:
                    break
                no += 1
                if len(line) > max_line and not (len(line) == max_line + 1 and line.endswith(b"\n")):
                    raise InputError(f"{where}:{no}: the line is longer than {max_line // (1024 * 1024)} MB: "
                                     f"fix the line (one JSON object per line)")
                parts.append(line)
    except PermissionError:
        raise InputError(f"{where} cannot be read (permission denied): fix its permissions (chmod/chown)") from None
    except OSError as exc:
        raise InputError(f"{where}: cannot be read ({exc.strerror or exc}): pass a readable JSONL file") from None
    return b"".join(parts)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]}{'...' if len(text) > 20 else ''} is too large")
    return value


def loads_line(line: str | bytes) -> Any:
    """One JSON line, strictly: raises ValueError (``json.JSONDecodeError`` for bad syntax) for
    ``NaN``/``Infinity``, a float that overflows (``1e400``) or an int over Python's digit limit."""
    return json.loads(line, parse_constant=_no_constant, parse_float=_finite)


def why_not_json(exc: BaseException) -> str:
    """The reason of a :func:`loads_line` failure, for ``FILE:LINE: not valid JSON (WHY)``."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    text = str(exc)
    if "digits" in text:  # int max_str_digits
        return "a number with over 4,300 digits"
    return text


def torn_tail(data: bytes) -> Optional[int]:
    """Where the torn last line of a JSONL file written by :func:`lit3r.littraceqa.batch` (its ``_append``) starts (a byte
    offset into ``data``), or None: a last line without its newline that looks like the start
    of a JSON object (``{``) but does not parse as one. A complete object without its newline,
    or a last line that does not start with ``{``, is not torn."""
    if not data or data.endswith(b"\n"):
        return None
    start = data.rfind(b"\n") + 1
    last = data[start:]
    try:
        complete = isinstance(json.loads(last), dict)
    except (ValueError, RecursionError):
        complete = False
    return start if not complete and last.lstrip().startswith(b"{") else None


def read_rows(path: Path, torn: list[str] | None = None) -> list[dict]:
    """The JSON lines of ``path`` (blank lines skipped); raises InputError naming ``path:line``
    of a bad line, or a file that is not UTF-8 text (and what :func:`read_capped` raises).

    ``torn``: for a file ``lit3r run`` writes (the submission, its traces), a torn last line (a
    killed run, :func:`torn_tail`) is skipped and one warning naming the
    file and the repair is appended to this list; without it (the gold file) it is an error too."""

    data = read_capped(path)  # a regular file only, each line bounded
    cut = torn_tail(data) if torn is not None else None
    if cut is not None and torn is not None:  # (cut before decoding: a torn line can end inside a character)
        line_no = data.count(b"\n", 0, cut) + 1
        torn.append(f"{path}:{line_no}: the last line is cut short (a `lit3r run` was killed while writing it) and "
                    f"is skipped: run `lit3r run` again with the same --out to repair it")
        data = data[:cut]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file: pass a JSONL file") from None
    rows = []
    for no, line in jsonl_lines(text):
        if line.strip():
            try:
                rows.append(loads_line(line))
            except (ValueError, RecursionError) as exc:  # also NaN, Infinity, 1e400, a 5,000-digit int
                raise InputError(f"{path}:{no}: not valid JSON ({why_not_json(exc)}): fix the line") from None
    return rows


__all__ = ["MAX_LINE_BYTES", "jsonl_lines", "loads_line", "read_capped", "read_rows", "why_not_json"]
