"""The test tiers (tests/tiers.py): what a test needs is found from its code and its fixtures, and
the fast tier's guard (tests/fast_tier/sitecustomize.py) refuses torch and the network."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from tests.tiers import code_needs

DATA = Path("/data-for-the-tier-test")
#: sample tests and helpers, compiled apart so that this module's own tests do not use them by name
#: (the classifier would mark them)
SOURCE = """
from pathlib import Path
DATA = Path("/data-for-the-tier-test")
PDF = DATA / "corpus" / "pdfs" / "x.pdf"

def plain():
    return 1 + 1

def names_the_folder():
    return DATA / "hard"

def in_a_comprehension():
    return [p for p in (PDF,)]

def _reads_a_constant():
    return PDF.is_file()

def through_a_helper():
    return _reads_a_constant()

def _starts_a_server():
    from tests.servers import neo4j_server
    return neo4j_server.start

def through_a_server_helper():
    return _starts_a_server()

def llm_server():
    from tests.servers import llama_server
    return llama_server

def uses_torch():
    import torch
    return torch

def runs_the_cli_ask(runner, main):
    return runner.invoke(main, ["ask", "Which method is linear?"])
"""
SAMPLES: dict = {"__name__": "tests.unit.tier_samples"}
exec(compile(SOURCE, "tier_samples", "exec"), SAMPLES)


def test_code_that_names_a_data_path_or_starts_a_server_needs_it():
    want = {"plain": set(), "names_the_folder": {"data"}, "in_a_comprehension": {"data"},
            "through_a_helper": {"data"}, "through_a_server_helper": {"servers"}, "llm_server": {"llm"},
            "uses_torch": {"models"}, "runs_the_cli_ask": {"models"}}
    assert {name: code_needs(SAMPLES[name], DATA) for name in want} == want
    assert code_needs(SAMPLES["names_the_folder"], Path("/elsewhere")) == set()


def test_the_fast_tiers_guard_refuses_torch_and_the_network():
    code = ("import socket\n"
            "for f in (lambda: __import__('torch'), lambda: socket.create_connection(('192.0.2.1', 80), 1),"
            " lambda: socket.getaddrinfo('example.org', 80)):\n"
            "    try:\n        f()\n        print('allowed')\n"
            "    except (ImportError, OSError) as e:\n        print(type(e).__name__, 'fast test tier' in str(e))\n"
            "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)\n"
            "socket.create_connection(s.getsockname(), 5).close(); print('loopback')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT / "tests" / "fast_tier"), "PATH": "/usr/bin:/bin"})
    assert res.stdout.split("\n") == ["ModuleNotFoundError True", "OSError True", "OSError True", "loopback", ""], res
