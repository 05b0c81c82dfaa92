"""click parameter types of the ``lit3r`` commands: each parses one kind of value and fails
with one line that says how to write it."""

from __future__ import annotations

import csv
import json
import re
from typing import Any, Optional

import click

from graph.errors import one_line_message, shown_id
from lit3r.llm.providers import NAMES as PROVIDER_NAMES

#: click >= 8.2 raises this for a group run without a command: it prints the group's help.
_NO_ARGS_IS_HELP: tuple[type, ...] = tuple(
    t for t in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if t is not None)


class OneLineUsageError(click.UsageError):
    """A usage error printed as one line, ``Error: <what>``, instead of click's three (Usage /
    Try / Error); exit code 2, as click's. Raised as is when the message says the fix; click's
    own (unknown option or command, missing or bad argument) become one with :meth:`of`."""

    @classmethod
    def of(cls, exc: click.UsageError, path: Optional[str] = None) -> click.UsageError:
        """The one-line form of click's ``exc``, naming ``COMMAND --help`` (the command path of
        its context, else ``path``: click raises a few, such as an option missing its value,
        without a context); ``exc`` itself when it is one already, or a group's help."""
        if isinstance(exc, (cls, *_NO_ARGS_IS_HELP)):  # `lit3r graph` alone: its help
            return exc
        path = exc.ctx.command_path if exc.ctx is not None else (path or "lit3r")
        what = " ".join(one_line_message(exc.format_message().strip()).split()).rstrip(".")  # a newline in a path shows as \n
        fix = f"run `{path} --help` for the usage"
        return cls(f"{what} {fix[0].upper()}{fix[1:]}" if what.endswith("?") else f"{what}: {fix}", exc.ctx)

    def show(self, file: Any = None) -> None:
        click.echo(f"Error: {one_line_message(self.format_message())}", err=True, file=file)


def command_path_of(ctx: click.Context, args: list[str]) -> str:
    """The path of the (sub)command that ``args`` (those after the group of ``ctx``) name:
    ``lit3r trace list`` for ``["trace", "list", "--run"]``; as far as the names resolve."""
    path, cmd = ctx.command_path, ctx.command
    for arg in args:
        if not isinstance(cmd, click.Group):
            break
        if arg.startswith("-"):  # a group's own option (only --help here)
            continue
        sub = cmd.get_command(ctx, arg)
        if sub is None:
            break
        path, cmd = f"{path} {arg}", sub
    return path


class OptionType(click.ParamType):
    """``--option LABEL=TEXT`` -> ``(LABEL upper-cased, TEXT)``."""

    name = "LABEL=TEXT"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value
        label, sep, text = str(value).partition("=")
        if not sep or not label.strip() or not text.strip():
            self.fail(f"bad --option {shown_id(value)}: write it as LABEL=TEXT, e.g. --option A=78.77", param, ctx)
        return label.strip().upper(), text.strip()


def options_dict(pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """``(label, text)`` pairs -> ``{label: text}``; a label given twice is an error."""
    out: dict[str, str] = {}
    for label, text in pairs:
        if label in out:
            raise OneLineUsageError(f"option {shown_id(label)} is given twice: give each label once")
        out[label] = text
    return out


class PaperIdsType(click.ParamType):
    """``--papers ID,ID`` -> the list of paper ids. An id holding a comma, a space or a double
    quote is written in double quotes, a quote in it doubled (CSV quoting):
    ``--papers '2007.14062,"my paper, v2"'``. Ids made from file names never need quotes
    (:func:`ingest.corpus.paper_id_from_name`)."""

    name = "ID,ID"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> list[str]:
        if isinstance(value, list):
            return value
        text = str(value)
        try:
            fields = next(csv.reader([text], skipinitialspace=True, strict=True), [])
        except csv.Error:
            self.fail(f"bad quoting in --papers {shown_id(text)}: put an id with a comma or space in double quotes, "
                      f'e.g. --papers \'2007.14062,"my paper, v2"\'', param, ctx)
        ids = [p.strip() for p in fields if p.strip()]
        if not ids:
            self.fail("--papers is empty: pass ids like 2007.14062,1706.03762", param, ctx)
        if '"' not in text and any(len(p.split()) > 1 for p in ids):
            self.fail("separate paper ids with commas, e.g. 2007.14062,1706.03762 (an id with a space goes in "
                      "double quotes)", param, ctx)
        return ids


class TableSchemaType(click.ParamType):
    """``--table-schema JSON`` -> ``[{name, type, is_row_key}]`` (type defaults to string)."""

    name = "JSON"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> list[dict]:
        if isinstance(value, list):
            return value
        try:
            schema = json.loads(value)
        except (json.JSONDecodeError, RecursionError) as exc:
            self.fail(f"not valid JSON ({getattr(exc, 'msg', 'nested too deeply')}): pass a JSON list of columns",
                      param, ctx)
        if not isinstance(schema, list) or not schema or not all(
                isinstance(c, dict) and isinstance(c.get("name"), str) for c in schema):
            self.fail('must be a list of columns like [{"name": "Method", "type": "string", "is_row_key": true}]',
                      param, ctx)
        seen = set()
        for c in schema:
            c.setdefault("type", "string")
            if not c["name"].strip():
                self.fail("a column has an empty name: name every column", param, ctx)
            if c["name"].casefold().strip() in seen:  # "Model" and "model" would be one column of the answer
                self.fail(f"column {shown_id(c['name'])} is given twice (names differ in case or spaces only): "
                          f"name columns uniquely", param, ctx)
            seen.add(c["name"].casefold().strip())
            if c["type"] not in ("string", "number", "boolean"):
                self.fail(f"column {shown_id(c['name'])}: type must be string, number or boolean", param, ctx)
            if not isinstance(c.get("is_row_key", False), bool):
                self.fail(f"column {shown_id(c['name'])}: is_row_key must be true or false", param, ctx)
        return schema


class CypherParamType(click.ParamType):
    """``--param KEY=VALUE`` -> ``(key, value)``: int for digits, JSON for lists, maps,
    true/false/null, else the string (paper ids such as 2007.14062 stay strings)."""

    name = "KEY=VALUE"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> tuple[str, Any]:
        if isinstance(value, tuple):
            return value
        key, sep, raw = str(value).partition("=")
        if not sep or not key.strip():
            self.fail(f"bad --param {shown_id(value)}: write it as KEY=VALUE", param, ctx)
        return key.strip(), _param_value(raw)


def _param_value(raw: str) -> Any:
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if raw[:1] in "[{" or raw in ("true", "false", "null"):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            pass
    return raw


OPTION = OptionType()
PAPER_IDS = PaperIdsType()
TABLE_SCHEMA = TableSchemaType()
CYPHER_PARAM = CypherParamType()
#: ``--llm`` of ``lit3r ask`` and ``lit3r run``: the provider registry's names (:data:`lit3r.llm.providers.PROVIDERS`).
LLM_CHOICE = click.Choice(list(PROVIDER_NAMES))
