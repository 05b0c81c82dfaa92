"""Which JDK runs the test servers, and with which JIT options.

The test Neo4j and OpenSearch run on the newest installed JDK of feature version
:data:`OLDEST` to :data:`NEWEST` (both servers support 17 to 25): the JDKs are the folders of
:data:`JVM_ROOT` (``/usr/lib/jvm``; ``TEST_SERVERS_JVM_ROOT`` moves it) whose ``release`` file names a
``JAVA_VERSION``; with none there, ``java`` on PATH. ``TEST_SERVERS_JAVA_HOME`` names one JDK and
overrides the choice.

Two JIT modes (:func:`jit_options`):

- ``full_jit=False`` (the tests): C1 only (``-XX:TieredStopAtLevel=1``): a server starts in about
  half the time on 2 cores, and short test workloads finish sooner without C2 competing for them.
- ``full_jit=True`` (the load benches, ``python -m tests.servers``): the full tiered JIT (C2), and
  on a JDK 20+ Lucene's SIMD vector code (the dot products of the HNSW build and k-NN search):
  ``--add-modules jdk.incubator.vector`` and
  ``-Dorg.apache.lucene.vectorization.upperJavaFeatureVersion=<the JDK's version>`` (Lucene 9.12
  turns its vector API on only up to the JDK it was released with unless told otherwise). Lucene
  keeps its scalar code under C1, so the flags are only given with the full JIT.

``TEST_SERVERS_FULL_JIT=1`` turns the full JIT on for every server start that does not ask.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

#: The oldest and newest JDK feature versions both test servers run on.
OLDEST, NEWEST = 17, 25
#: Where the system's JDKs are installed (Debian/Ubuntu, Temurin's packages).
JVM_ROOT = Path("/usr/lib/jvm")
#: The first JDK whose ``jdk.incubator.vector`` Lucene 9.12 can use (its MemorySegment code).
VECTOR_API_FROM = 20

_VERSION = re.compile(r'^JAVA_VERSION="?(\d+)(?:\.(\d+))?', re.M)


@dataclass(frozen=True)
class Jdk:
    """One JDK: ``java`` the binary's path, ``version`` its feature version (17, 21, 25, ...;
    None: unknown, ``java`` from PATH)."""

    java: str
    version: Optional[int]


def release_version(home: Path) -> Optional[int]:
    """The feature version in ``home/release`` (``JAVA_VERSION="25.0.3"`` -> 25, ``"26-ea"`` -> 26,
    ``"1.8.0_412"`` -> 8); None when the file is missing or names no version."""
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = _VERSION.search(text)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def installed(root: Path = JVM_ROOT) -> list[Jdk]:
    """The JDKs under ``root`` with a ``bin/java`` and a release version, one per real folder
    (the distribution's aliases are symbolic links), newest first."""
    found: dict[Path, Jdk] = {}
    try:
        homes = sorted(root.iterdir())
    except OSError:
        return []
    for home in homes:
        java = home / "bin" / "java"
        version = release_version(home)
        real = home.resolve()
        if version is None or not java.is_file() or real in found:
            continue
        found[real] = Jdk(str(java), version)
    return sorted(found.values(), key=lambda j: (-(j.version or 0), j.java))


def choose(env: Mapping[str, str] = os.environ) -> Jdk:
    """The JDK of the test servers (module docstring). Raises RuntimeError with what to do when
    no JDK is found at all."""
    home = env.get("TEST_SERVERS_JAVA_HOME")
    if home:
        java = Path(home) / "bin" / "java"
        if not java.is_file():
            raise RuntimeError(f"TEST_SERVERS_JAVA_HOME={home} has no bin/java: point it at a JDK {OLDEST}-{NEWEST}")
        return Jdk(str(java), release_version(Path(home)))
    for jdk in installed(Path(env.get("TEST_SERVERS_JVM_ROOT") or JVM_ROOT)):
        if jdk.version is not None and OLDEST <= jdk.version <= NEWEST:
            return jdk
    java = shutil.which("java", path=env.get("PATH"))
    if not java:
        raise RuntimeError(f"no JDK {OLDEST}-{NEWEST} in {JVM_ROOT} and no `java` on PATH: install one "
                           f"(e.g. apt-get install openjdk-17-jdk-headless) or set TEST_SERVERS_JAVA_HOME")
    return Jdk(java, None)


def full_jit_default(env: Mapping[str, str] = os.environ) -> bool:
    """Whether ``TEST_SERVERS_FULL_JIT`` asks for the full JIT ("1", "true", "yes")."""
    return env.get("TEST_SERVERS_FULL_JIT", "").strip().lower() in ("1", "true", "yes")


def jit_options(jdk: Jdk, full_jit: bool, vector_api: bool = True) -> list[str]:
    """JVM options of the JIT mode (module docstring); ``vector_api``: Lucene's SIMD code where
    the JDK and the full JIT allow it (OpenSearch; Neo4j's load has no vector work)."""
    if not full_jit:
        return ["-XX:TieredStopAtLevel=1"]
    if vector_api and jdk.version is not None and jdk.version >= VECTOR_API_FROM:
        return ["--add-modules", "jdk.incubator.vector",
                f"-Dorg.apache.lucene.vectorization.upperJavaFeatureVersion={jdk.version}"]
    return []
