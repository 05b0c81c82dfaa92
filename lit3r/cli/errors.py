"""The errors a ``lit3r`` command expects, each turned into one line in one place.

Every :class:`lit3r.errors.Lit3rError`, a file this user may not read, a damaged SQLite index and
the drivers' errors (:mod:`lit3r.present.server_errors`) become one ``Error: <what>: <fix>`` line (exit 1;
:class:`lit3r.errors.Interrupted`, a run stopped by Ctrl-C: exit 130), secrets masked
(:mod:`lit3r.present.redact`); click's usage errors become one line too (exit 2,
:class:`lit3r.cli.params.OneLineUsageError`). Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import click

from graph.errors import ServerFault, first_unreadable, one_line_message
from graph.sqlite import DatabaseError
from lit3r.backends import backend_of
from lit3r.cli.common import secrets_of
from lit3r.cli.params import OneLineUsageError, command_path_of
from lit3r.errors import Interrupted, Lit3rError, PermissionDenied, UnknownIdError, clean_line
from lit3r.present.redact import redact
from lit3r.present.server_errors import server_errors, server_message

if TYPE_CHECKING:
    from lit3r.config import Settings

#: ``ctx.meta`` key of the arguments the ``lit3r`` group resolves its command from.
ARGS_KEY = "lit3r.args"



class Stopped(click.ClickException):
    """A run stopped by Ctrl-C (:class:`lit3r.errors.Interrupted`): ``Error: <what is kept, how to
    resume>``, exit 130 (128 + SIGINT, as the shell gives it)."""

    exit_code = 130


def expected_line(exc: BaseException, settings: Optional[Settings]) -> Optional[str]:
    """The one line of an error Lit3R expects (module docstring), None for any other (a bug).
    ``settings``: those the command loaded (the folders and addresses the line names), or None.
    The drivers' errors are only imported once no other class matched."""
    if isinstance(exc, UnknownIdError):
        return backend_of(settings).unknown_id_line(exc) if settings is not None else str(exc)
    if isinstance(exc, ServerFault):  # a driver's error from a store: its one line, with the configured address
        return server_message(settings, exc)
    if isinstance(exc, Lit3rError):
        return str(exc)
    if isinstance(exc, PermissionError):  # a file or folder this user may not read: its permissions, not a rebuild
        return str(PermissionDenied.of(exc))
    if isinstance(exc, DatabaseError):
        blocked = first_unreadable(settings.index_dir, settings.index_dir / "lit3r.sqlite") \
            if settings is not None else None
        if blocked:  # SQLite says only "unable to open database file"
            return str(PermissionDenied(blocked))
        where = f"the index in {settings.index_dir}" if settings is not None else "the index"
        return f"{where} is damaged ({clean_line(exc)}): run `lit3r ingest PDF_DIR --rebuild` to rebuild it"
    if isinstance(exc, server_errors()):
        return server_message(settings, exc)
    return None


class Lit3rGroup(click.Group):
    """The ``lit3r`` group: runs a command and turns the errors Lit3R expects into one line,
    secrets masked."""

    def make_context(self, info_name: Optional[str], args: list[str], parent: Optional[click.Context] = None,
                     **extra: Any) -> click.Context:
        try:  # the group's own options (`lit3r --bogus`) are parsed here
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise OneLineUsageError.of(exc) from None

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[Optional[str], Optional[click.Command],
                                                                          list[str]]:
        ctx.meta[ARGS_KEY] = list(args)  # the command's name and arguments, for a usage error without a context
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return self._invoke(ctx)
        except click.UsageError as exc:  # click's own, about the arguments given (a subcommand's are parsed here)
            raise OneLineUsageError.of(exc, command_path_of(ctx, ctx.meta.get(ARGS_KEY, []))) from None
        except click.ClickException as exc:
            said = Stopped if isinstance(exc, Stopped) else click.ClickException
            raise said(one_line_message(redact(exc.format_message(), secrets_of(ctx)))) from None

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException:  # a usage error: said at once (the drivers' errors are not even imported)
            raise
        except Interrupted as exc:
            raise Stopped(str(exc)) from None
        except Exception as exc:
            line = expected_line(exc, (ctx.obj or {}).get("settings"))
            if line is None:
                raise
            raise click.ClickException(line) from None
