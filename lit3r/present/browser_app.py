"""The Neo4j Browser web application, as Maven Central ships it, for ``lit3r browser``.

Neo4j publishes its Browser as ``org.neo4j.client:neo4j-browser`` (a jar whose ``browser/`` folder is
the whole single-page application: ``index.html``, bundles, fonts). Neo4j's own server distribution
serves that folder at ``/browser/``; the no-Docker test server (``tests/servers/``, Neo4j's harness)
does not, so ``lit3r browser`` serves it next to Lit3R's guide and style, and the Browser connects to
Neo4j over Bolt (WebSocket on the Bolt port) from the user's browser.

The jar is looked up in Maven's local repository (``~/.m2/repository``, or ``$NEO4J_BROWSER_JAR``
naming the jar itself) and, when missing, fetched once with ``mvn dependency:get`` (as the test
servers fetch their jars). Errors: :class:`BrowserAppMissing` with one line saying what to do.
"""

from __future__ import annotations

import mimetypes
import os
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Callable, Optional

from lit3r.errors import Lit3rError

#: The Browser release served (the newest on Maven Central when this was written).
VERSION = "5.24.0"
GROUP, ARTIFACT = "org.neo4j.client", "neo4j-browser"
#: Seconds ``mvn dependency:get`` may take (a 15 MB download).
FETCH_TIMEOUT = 600


class BrowserAppMissing(Lit3rError):
    """The Browser jar is neither in Maven's local repository nor fetchable (no ``mvn``, offline)."""


def jar_path(version: str = VERSION) -> Path:
    """Where the Browser jar is: ``$NEO4J_BROWSER_JAR`` if set, else its place in Maven's local
    repository (``~/.m2/repository/org/neo4j/client/neo4j-browser/V/neo4j-browser-V.jar``)."""
    named = os.environ.get("NEO4J_BROWSER_JAR")
    if named:
        return Path(named)
    repo = Path.home() / ".m2" / "repository"
    return repo / Path(*GROUP.split(".")) / ARTIFACT / version / f"{ARTIFACT}-{version}.jar"


def _docker_hint() -> str:
    return "or use the Browser of `docker compose up -d neo4j` at http://localhost:7474"


def fetch_jar(version: str = VERSION, say: Callable[[str], None] = print) -> Path:
    """The Browser jar, fetched from Maven Central with ``mvn dependency:get`` when not there yet.
    ``say`` gets one progress line before a download. Raises BrowserAppMissing (one line) when
    ``mvn`` is missing, fails or the jar is no zip."""
    path = jar_path(version)
    if not path.is_file() and not os.environ.get("NEO4J_BROWSER_JAR"):
        mvn = shutil.which("mvn")
        if mvn is None:
            raise BrowserAppMissing(f"Neo4j Browser {version} is not in {path.parent} and `mvn` is not on PATH: install "
                                    f"Maven (or run `mvn dependency:get -Dartifact={GROUP}:{ARTIFACT}:{version}` where "
                                    f"it is), {_docker_hint()}")
        say(f"fetching Neo4j Browser {version} from Maven Central with mvn (15 MB, once) ...")
        try:
            proc = subprocess.run([mvn, "-q", "-B", "dependency:get", f"-Dartifact={GROUP}:{ARTIFACT}:{version}",
                                   "-Dtransitive=false"], capture_output=True, text=True, timeout=FETCH_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise BrowserAppMissing(f"`mvn dependency:get` did not fetch Neo4j Browser {version} within "
                                    f"{FETCH_TIMEOUT} s: check the network, {_docker_hint()}") from None
        if proc.returncode != 0 or not path.is_file():
            last = next((ln.strip() for ln in reversed((proc.stdout + proc.stderr).splitlines()) if ln.strip()), "")
            raise BrowserAppMissing(f"`mvn dependency:get` could not fetch Neo4j Browser {version} "
                                    f"(exit {proc.returncode}: {last[:200]}): check the network, {_docker_hint()}")
    if not path.is_file():
        raise BrowserAppMissing(f"NEO4J_BROWSER_JAR names {path}, which is no file: point it at neo4j-browser-"
                                f"{version}.jar or unset it")
    if not zipfile.is_zipfile(path):
        raise BrowserAppMissing(f"{path} is no jar (a broken download?): delete it and run `lit3r browser` again")
    return path


class BrowserApp:
    """The files of the jar's ``browser/`` folder, read on demand: ``get("index.html")`` ->
    ``(content type, bytes)`` or None. Raises BrowserAppMissing when the jar has no Browser."""

    def __init__(self, jar: Path) -> None:
        self.jar = jar
        self._zip = zipfile.ZipFile(jar)
        self._names = {n[len("browser/"):] for n in self._zip.namelist()
                       if n.startswith("browser/") and not n.endswith("/")}
        if "index.html" not in self._names:
            raise BrowserAppMissing(f"{jar} holds no browser/index.html: is it {ARTIFACT}-{VERSION}.jar?")

    def get(self, path: str) -> Optional[tuple[str, bytes]]:
        """The file at ``path`` (relative to ``/browser/``; empty or a folder: ``index.html``)."""
        path = path.strip("/") or "index.html"
        if path not in self._names:
            return None
        ctype = mimetypes.guess_type(path)[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype in ("application/javascript", "application/json"):
            ctype += "; charset=utf-8"
        return ctype, self._zip.read("browser/" + path)

    def close(self) -> None:
        self._zip.close()
