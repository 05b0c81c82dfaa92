"""What every ``lit3r`` command shares: the effective settings of one run (the group's ``--home``
and the command's overrides), the secrets to mask in what it prints, and the stale-index warning.

Commands never change the settings they load: options become overrides. The loaded settings are
kept in ``ctx.obj["settings"]``, where the group's error handler (:mod:`lit3r.cli.errors`) reads
the addresses and folders its messages name.
"""

from __future__ import annotations

from typing import Any

import click

from graph.errors import shown_text
from lit3r.config import Settings, load_settings
from lit3r.errors import Lit3rError, PermissionDenied
from lit3r.present.redact import secret_values


def settings_of(ctx: click.Context, **overrides: Any) -> Settings:
    """Effective settings with the command's ``overrides`` (nested dicts merge into the
    configured values), kept in ``ctx.obj``; raises :class:`click.ClickException` with one line
    naming the bad field, or the data folder that cannot be used and what to do."""
    try:
        settings = load_settings(**{"home": (ctx.obj or {}).get("home"), **overrides})
    except OSError as exc:  # the data folder (or a file in it) cannot be used: say which and what to do
        import errno

        where = shown_text(exc.filename if exc.filename is not None else (ctx.obj or {}).get("home"), 120)
        if exc.errno == errno.ENAMETOOLONG:
            raise click.ClickException(f"the data folder path is too long ({where}): pass a shorter --home "
                                       f"(or LIT3R_HOME)") from None
        if isinstance(exc, PermissionError):
            raise click.ClickException(str(PermissionDenied.of(exc))) from None
        raise click.ClickException(f"bad configuration: {exc.strerror or exc} ({where}): pass another --home (or "
                                   f"LIT3R_HOME) or fix that path") from None
    except Lit3rError as exc:
        raise click.ClickException(f"bad configuration: {' '.join(str(exc).split())}") from None
    if ctx.obj is None:
        ctx.obj = {}
    ctx.obj["settings"] = settings  # the group's dict too: its error handler reads them
    return settings


def secrets_of(ctx: click.Context) -> list[str]:
    """The secret values of the loaded settings and the environment (:mod:`lit3r.present.redact`)."""
    return secret_values((ctx.obj or {}).get("settings"))


def warn_stale(settings: Settings) -> None:
    """One ``warning:`` line on stderr when the index is older than the corpus (lit3r/index/state.py)."""
    from lit3r.index.state import stale_index_message

    stale = stale_index_message(settings)
    if stale:
        click.echo(f"warning: {stale}", err=True)


def llm_option(f: Any) -> Any:
    """``--llm NAME``: the LLM provider for this run, one of the provider registry's names
    (:data:`lit3r.cli.params.LLM_CHOICE`: a provider added there is a choice here)."""
    from lit3r.cli.params import LLM_CHOICE

    return click.option("--llm", "llm", type=LLM_CHOICE, default=None,
                        help="Override the configured LLM provider for this run.")(f)
