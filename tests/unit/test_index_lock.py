"""One lock mechanism and one error for the build-and-load wing (lit3r/index/lock.py): a second
ingest or build of a data folder that another process holds stops at once with Locked."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from lit3r.errors import Lit3rError, Locked
from lit3r.index.lock import build_lock, ingest_lock

HOLD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from lit3r.index.lock import build_lock, ingest_lock
    lock = {"build": build_lock, "ingest": ingest_lock}[sys.argv[1]]
    with lock(Path(sys.argv[2])):
        print("held", flush=True)
        sys.stdin.read()
""")


def _held(kind: str, home) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, kind, str(home)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


@pytest.mark.parametrize("kind, lock, words", [("build", build_lock, r"another build of .* is running \(pid \d+\)"),
                                               ("ingest", ingest_lock, r"another `lit3r ingest` into .* is running")])
def test_a_second_holder_gets_locked_at_once_and_the_lock_is_free_after(tmp_path, kind, lock, words):
    tmp_path.mkdir(exist_ok=True)
    proc = _held(kind, tmp_path)
    try:
        with pytest.raises(Locked, match=words + ": wait for it to finish, then run the command again"):
            with lock(tmp_path):
                pass
    finally:
        proc.communicate("", timeout=60)
    with lock(tmp_path):  # the holder is gone: free again, and re-entered after its release
        pass
    with lock(tmp_path):
        pass


def test_locked_is_the_one_lock_error():
    import lit3r.errors as errors

    assert issubclass(Locked, Lit3rError)
    assert not hasattr(errors, "BuildLocked") and not hasattr(errors, "IngestLocked")


def test_an_unwritable_data_folder_is_one_line_not_a_lock_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(Lit3rError, match="the corpus folder must be writable") as info:
        with ingest_lock(blocker / "home"):
            pass
    assert not isinstance(info.value, Locked)
