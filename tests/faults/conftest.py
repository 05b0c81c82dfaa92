"""Fixtures of the fault suite (docs/RELIABILITY.md): a small data folder built with the
model-free hashing encoder, and the real `lit3r` command line in a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import pytest

from tests.conftest import CORPUS, ROOT

#: The two papers of the small data folder.
PAPERS = ("1706.03762", "2007.14062")
QUESTION = "Which attention mechanism does the Transformer use?"


def lit3r(home: Optional[Path], *args: str, timeout: float = 300, env: Optional[dict] = None,
          cwd: Path = ROOT) -> tuple[subprocess.CompletedProcess, float]:
    """``(CompletedProcess, wall seconds)`` of one real `lit3r` command (embedded backend, no LLM)."""
    home_args = ["--home", str(home)] if home is not None else []
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", *home_args, *args], cwd=cwd, capture_output=True,
                         text=True, timeout=timeout, env={**os.environ, "LIT3R_BACKEND": "embedded",
                                                          "LIT3R_LLM__PROVIDER": "none", **(env or {})})
    return res, time.perf_counter() - t0


def errors(stderr: str) -> list[str]:
    """The message lines of stderr (progress lines left out)."""
    return [line for line in stderr.splitlines()
            if line.strip() and not line.startswith(("parsing PDFs:", "updating the index", "encoding", "questions:"))]


@pytest.fixture(scope="session")
def small_home(shared_data, tmp_path_factory) -> Path:
    """A data folder with :data:`PAPERS` ingested and built by a real `lit3r ingest` with the
    hashing:64 encoder (seconds). Shared: a test that changes it works on a copy (:func:`home_copy`)."""
    pdfs, home = tmp_path_factory.mktemp("faults-pdfs"), tmp_path_factory.mktemp("faults-home")
    for pid in PAPERS:
        os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
    (home / "config.toml").write_text('[models]\nchunk_encoder = "hashing:64"\npaper_encoder = "hashing:64"\n')
    res, _ = lit3r(home, "ingest", str(pdfs), "--no-images", timeout=600)
    assert res.returncode == 0 and "2 paper(s) encoded" in res.stdout, res.stderr[-2000:]
    return home


@pytest.fixture
def home_copy(small_home, tmp_path) -> Path:
    """A copy of :func:`small_home` this test may change."""
    home = tmp_path / "home"
    shutil.copytree(small_home, home)
    return home
