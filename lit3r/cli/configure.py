"""``lit3r config show`` and ``lit3r doctor``: the effective configuration (defaults, the TOML
file, ``LIT3R_*`` variables) as TOML with each setting's description, or as JSON, secrets masked;
the doctor adds the check of each component (:func:`lit3r.cli.doctor.run_checks`, exit 1 when one
fails)."""

from __future__ import annotations

import json
import sys

import click

from lit3r.cli.common import secrets_of, settings_of
from lit3r.cli.render import toml
from lit3r.present.redact import masked


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Print the effective configuration and check each component."""
    from lit3r.cli.doctor import run_checks

    settings = settings_of(ctx)
    checks = run_checks(settings)  # details with secrets masked
    config = masked(settings.model_dump(mode="json"), secrets_of(ctx))
    if as_json:
        click.echo(json.dumps({"config": config, "checks": checks}, indent=2))
    else:
        click.echo(f"# effective configuration\n{toml(config)}\n# checks")
        for c in checks:
            click.echo(f"[{'ok' if c['ok'] else 'FAIL'}] {c['name']}: {c['detail']}")
    if not all(c["ok"] for c in checks):
        sys.exit(1)


@click.group()
def config() -> None:
    """The effective configuration (defaults, the TOML file, LIT3R_* variables)."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON.")
@click.option("--changed", is_flag=True, help="Only the settings that differ from the defaults.")
@click.pass_context
def config_show(ctx: click.Context, as_json: bool, changed: bool) -> None:
    """Print the effective configuration with each setting's description, secrets masked
    (`lit3r doctor` checks it)."""
    from lit3r.config import config_file, descriptions

    settings = settings_of(ctx.find_root())
    data = settings.model_dump(mode="json", exclude_defaults=changed)
    path = config_file(settings.home)
    data = masked(data, secrets_of(ctx))
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"# configuration file: {path or 'none'}; LIT3R_* variables override it\n"
               f"{toml(data, notes=descriptions())}")
