"""Integration fixtures: real data, one built 10-paper corpus shared by the modules."""

import os
import subprocess
import sys

import pytest

from tests.conftest import CORPUS, ROOT

#: A 10-paper subset: gold papers of six single-paper dev questions plus related papers.
SUBSET = ["2309.06275", "2406.08177", "2501.12948", "2501.10120", "2309.09117", "1706.03762", "2007.14062",
          "2006.04768", "2201.11903", "2511.11007"]


@pytest.fixture(autouse=True)
def _needs_shared_data(shared_data):
    """Every integration test reads ../shared/data: fail with one clear message without it."""
    return shared_data


@pytest.fixture(scope="session")
def subset_home(shared_data, tmp_path_factory):
    """A data folder with the SUBSET ingested and built by a real `lit3r ingest` run."""
    pdfs = tmp_path_factory.mktemp("pdfs")
    for pid in SUBSET:
        os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
    home = tmp_path_factory.mktemp("home")
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), "--metadata",
                          str(CORPUS / "manifest.jsonl"), "--no-images"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "10 paper(s)" in res.stdout and "10 paper(s) encoded" in res.stdout
    return home
