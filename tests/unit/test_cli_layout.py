"""The CLI stays thin (issue 26, item 3): ``lit3r/cli/__init__.py`` holds the group and the
registrations, CLI modules share only public names, no function of ``lit3r/cli`` is more complex
than ruff's mccabe limit of the project, and ``--llm`` offers the provider registry's names."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click

from lit3r.cli import main
from lit3r.llm.providers import PROVIDERS

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "lit3r" / "cli"
#: Most lines of lit3r/cli/__init__.py (the group and the command registrations).
MAX_INIT_LINES = 300
#: ruff's mccabe limit (pyproject.toml, [tool.ruff.lint.mccabe]).
MAX_COMPLEXITY = 15


def test_the_package_face_is_the_group_and_the_registrations() -> None:
    lines = (CLI / "__init__.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) < MAX_INIT_LINES, len(lines)
    tree = ast.parse("\n".join(lines))
    defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert defined == ["main"], defined  # the commands are modules of their own


def private_imports(source: str) -> list[str]:
    """``from lit3r.cli[.X] import _name`` statements of ``source`` (at any depth), as text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[:2] == ["lit3r", "cli"]:
            found += [f"from {node.module} import {a.name}" for a in node.names if a.name.startswith("_")]
    return found


def test_no_cli_module_imports_a_private_name_of_another() -> None:
    assert private_imports("def f():\n    from lit3r.cli.graph import _file_option\n") == [
        "from lit3r.cli.graph import _file_option"]  # the check finds one inside a function
    bad = {p.name: private_imports(p.read_text(encoding="utf-8")) for p in sorted(CLI.glob("*.py"))}
    assert not {k: v for k, v in bad.items() if v}


def test_no_function_of_the_cli_is_above_the_complexity_limit() -> None:
    res = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "C901", "--config",
                          f"lint.mccabe.max-complexity={MAX_COMPLEXITY}", "--output-format", "concise", str(CLI)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


def test_llm_choices_are_the_provider_registry() -> None:
    with_llm = {}
    for name, cmd in main.commands.items():
        for p in cmd.params:
            if isinstance(p, click.Option) and "--llm" in p.opts:
                assert isinstance(p.type, click.Choice)
                with_llm[name] = list(p.type.choices)
    assert len(with_llm) == 2 and all(choices == list(PROVIDERS) for choices in with_llm.values()), with_llm
