"""One registry per choice: the storage backends (lit3r/backends/) and the LLM providers
(lit3r/llm/providers.py). The settings' choices, ``--llm`` and the MCP tool's ``llm`` are the
registries' keys, and no module outside lit3r/backends/ branches on a backend name."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import click

from lit3r.backends import BACKENDS, NAMES, backend_of
from lit3r.config import LLMSettings, Settings, load_settings
from lit3r.llm.providers import PROVIDERS

ROOT = Path(__file__).resolve().parents[2]
#: Where a branch on a backend name would be a second registry.
SCANNED = ("lit3r", "graph", "ingest", "bench")


def _choices(model, field: str) -> tuple[str, ...]:
    return get_args(model.model_fields[field].annotation)


def test_the_settings_backend_choices_are_the_registrys_names():
    assert _choices(Settings, "backend") == NAMES == tuple(BACKENDS)
    assert Settings.model_fields["backend"].default == NAMES[0]
    for name in NAMES:
        assert name in Settings.model_fields["backend"].description


def test_every_backend_opens_its_stores_and_names_doctor_checks_that_exist(tmp_path):
    from lit3r.cli.doctor import STORE_CHECKS

    for name, backend in BACKENDS.items():
        assert backend.name == name
        assert backend_of(load_settings(home=tmp_path, backend=name)) is backend
        assert all(callable(f) for f in (backend.open_stores, backend.open_graph, backend.open_traces,
                                         backend.unknown_id_line))
        for check in (*backend.doctor_checks[0], *backend.doctor_checks[1]):
            assert check in STORE_CHECKS, (name, check)
        # a backend that runs Cypher has a Neo4j store, read live; the embedded one is its own build
        assert backend.reads_live == (backend.load_targets is not None)


def test_the_llm_choices_are_the_provider_registrys_keys():
    from lit3r.cli import main
    from lit3r.serve.server import LLMName

    keys = tuple(PROVIDERS)
    assert _choices(LLMSettings, "provider") == keys
    assert LLMSettings.model_fields["provider"].default == keys[0]
    assert get_args(LLMName) == keys
    for command in ("ask", "run"):
        option = next(p for p in main.commands[command].params if p.name == "llm")
        assert isinstance(option.type, click.Choice) and tuple(option.type.choices) == keys


def _backend_branches(path: Path, root: Path = ROOT) -> list[str]:
    """Comparisons with ``X.backend`` or a backend name, and lookups keyed by ``X.backend``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def is_backend(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "backend") or \
            (isinstance(node, ast.Constant) and node.value in NAMES)

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(is_backend(n) for n in (node.left, *node.comparators)):
            found.append(f"{path.relative_to(root)}:{node.lineno}")
        elif isinstance(node, ast.Subscript) and is_backend(node.slice):
            found.append(f"{path.relative_to(root)}:{node.lineno}")
        elif isinstance(node, ast.Dict) and any(k is not None and is_backend(k) for k in node.keys):
            found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_module_outside_lit3r_backends_branches_on_a_backend_name():
    branches = [hit for top in SCANNED for path in sorted((ROOT / top).rglob("*.py"))
                if "backends" not in path.relative_to(ROOT).parts[:2] for hit in _backend_branches(path)]
    assert branches == [], "branch on the Backend's fields (lit3r/backends/) instead: " + ", ".join(branches)


def test_the_branch_finder_finds_the_branches_it_looks_for(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('def f(settings):\n    if settings.backend == "embedded":\n        return 1\n'
                     '    return {"neo4j+opensearch": 2}[settings.backend] if "neo4j" in settings.backend else 3\n')
    assert _backend_branches(probe, tmp_path) == ["probe.py:2", "probe.py:4", "probe.py:4", "probe.py:4"]
