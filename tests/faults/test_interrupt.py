"""Fault class: an ingest stopped from outside (bad-27). SIGTERM (``kill PID``, a service manager
stopping the run) during the encoding stops ``lit3r ingest`` as Ctrl-C does: one line saying the
previous index still answers and to run the command again, exit 130, and the previous index
still answers (before, the process died without a word, exit 143)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from tests.conftest import CORPUS, ROOT
from tests.faults.conftest import PAPERS, QUESTION, errors, lit3r


def test_sigterm_during_encoding_stops_like_ctrl_c_and_keeps_the_previous_index(home_copy, tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    for pid in PAPERS:
        os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
    hashing = (home_copy / "config.toml").read_text()
    (home_copy / "config.toml").write_text("")  # the default encoder: every chunk is encoded again
    env = {**os.environ, "LIT3R_BACKEND": "embedded", "LIT3R_LLM__PROVIDER": "none"}
    proc = subprocess.Popen([sys.executable, "-m", "lit3r.cli", "--home", str(home_copy), "ingest", str(pdfs),
                             "--no-images"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(lambda: proc.stderr.read(1), "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 600
    while "encoding" not in "".join(seen) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "".join(seen)[-2000:]  # still encoding when the signal goes
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=300)
    reader.join(timeout=30)
    stderr = "".join(seen).replace("\r", "\n")
    assert proc.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-2000:]
    assert errors(stderr) == ["Error: interrupted: the previous index still answers; run the same command again "
                              "to resume the build"], stderr[-2000:]
    (home_copy / "config.toml").write_text(hashing)
    res, _ = lit3r(home_copy, "ask", QUESTION, "--json")
    assert res.returncode == 0, res.stderr[-2000:]
