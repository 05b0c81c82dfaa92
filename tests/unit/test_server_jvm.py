"""The test servers' JDK choice and JIT options (tests/servers/jvm.py), on JDK folders made here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.servers import jvm, neo4j_server, opensearch_server


def _jdk(root: Path, name: str, version: str) -> Path:
    """A JDK folder as the distributions lay it out: ``release`` and an executable ``bin/java``."""
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "release").write_text(f'IMPLEMENTOR="Test"\nJAVA_VERSION="{version}"\nLIBC="gnu"\n')
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    return home


def test_the_release_file_gives_the_feature_version(tmp_path):
    assert jvm.release_version(_jdk(tmp_path, "t25", "25.0.3")) == 25
    assert jvm.release_version(_jdk(tmp_path, "o17", "17.0.15")) == 17
    assert jvm.release_version(_jdk(tmp_path, "ea", "26-ea")) == 26
    assert jvm.release_version(_jdk(tmp_path, "old", "1.8.0_412")) == 8
    (tmp_path / "bare").mkdir()
    assert jvm.release_version(tmp_path / "bare") is None


def test_the_newest_jdk_from_17_to_25_is_chosen_and_aliases_count_once(tmp_path):
    _jdk(tmp_path, "java-17-openjdk-amd64", "17.0.15")
    (tmp_path / "openjdk-17").symlink_to(tmp_path / "java-17-openjdk-amd64")
    t25 = _jdk(tmp_path, "temurin-25-jdk-amd64", "25.0.3")
    _jdk(tmp_path, "jdk-26-ea", "26-ea")      # newer than both servers support
    _jdk(tmp_path, "java-11-openjdk", "11.0.2")  # older
    (tmp_path / "broken").mkdir()               # no release file, no java
    found = jvm.installed(tmp_path)
    assert [j.version for j in found] == [26, 25, 17, 11]
    chosen = jvm.choose({"TEST_SERVERS_JVM_ROOT": str(tmp_path), "PATH": ""})
    assert chosen == jvm.Jdk(str(t25 / "bin" / "java"), 25)


def test_openjdk_17_alone_is_chosen(tmp_path):
    o17 = _jdk(tmp_path, "java-17-openjdk-amd64", "17.0.15")
    assert jvm.choose({"TEST_SERVERS_JVM_ROOT": str(tmp_path), "PATH": ""}) == jvm.Jdk(str(o17 / "bin" / "java"), 17)


def test_without_a_jdk_folder_java_on_path_is_used_and_without_either_one_line_says_what_to_do(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    java = bin_dir / "java"
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    assert jvm.choose({"TEST_SERVERS_JVM_ROOT": str(tmp_path / "none"), "PATH": str(bin_dir)}) == jvm.Jdk(str(java), None)
    with pytest.raises(RuntimeError, match="TEST_SERVERS_JAVA_HOME"):
        jvm.choose({"TEST_SERVERS_JVM_ROOT": str(tmp_path / "none"), "PATH": str(tmp_path / "empty")})


def test_lit3r_test_java_home_overrides_the_choice(tmp_path):
    _jdk(tmp_path / "root", "temurin-25", "25.0.3")
    o17 = _jdk(tmp_path, "mine", "17.0.15")
    env = {"TEST_SERVERS_JVM_ROOT": str(tmp_path / "root"), "TEST_SERVERS_JAVA_HOME": str(o17)}
    assert jvm.choose(env) == jvm.Jdk(str(o17 / "bin" / "java"), 17)
    with pytest.raises(RuntimeError, match="has no bin/java"):
        jvm.choose({"TEST_SERVERS_JAVA_HOME": str(tmp_path / "nothing")})


def test_tests_keep_c1_and_the_full_jit_turns_lucenes_vector_api_on_from_jdk_20():
    j25, j21, j17, unknown = jvm.Jdk("j", 25), jvm.Jdk("j", 21), jvm.Jdk("j", 17), jvm.Jdk("j", None)
    assert jvm.jit_options(j25, full_jit=False) == ["-XX:TieredStopAtLevel=1"]
    assert jvm.jit_options(j25, full_jit=True) == [
        "--add-modules", "jdk.incubator.vector", "-Dorg.apache.lucene.vectorization.upperJavaFeatureVersion=25"]
    assert jvm.jit_options(j21, full_jit=True)[-1].endswith("=21")
    assert jvm.jit_options(j17, full_jit=True) == []
    assert jvm.jit_options(unknown, full_jit=True) == []
    assert jvm.jit_options(j25, full_jit=True, vector_api=False) == []
    assert jvm.full_jit_default({"TEST_SERVERS_FULL_JIT": "1"}) and not jvm.full_jit_default({})


def test_the_launch_commands_carry_the_chosen_jdk_the_jit_mode_and_the_page_cache(tmp_path, monkeypatch):
    t25 = _jdk(tmp_path, "temurin-25", "25.0.3")
    for name in ("TEST_SERVERS_JAVA_HOME", "OPENSEARCH_JAVA", "OPENSEARCH_JAVA_OPTS", "NEO4J_TEST_PAGECACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEST_SERVERS_JVM_ROOT", str(tmp_path))
    monkeypatch.setenv("NEO4J_TEST_HEAP", "3g")
    neo = neo4j_server.java_command(1, 2, tmp_path / "data", full_jit=False)
    assert neo[0] == str(t25 / "bin" / "java") and "-XX:TieredStopAtLevel=1" in neo
    assert neo[neo.index("--pagecache") + 1] == str(64 * 2**20)
    assert "-Xmx3g" in neo and "-Xms128m" in neo  # the tests' small graphs: the heap grows as needed
    neo = neo4j_server.java_command(1, 2, tmp_path / "data", full_jit=True, page_cache="1g")
    assert "-XX:TieredStopAtLevel=1" not in neo and "jdk.incubator.vector" not in neo  # no vector work in Neo4j
    assert "-Xmx3g" in neo and "-Xms3g" in neo  # a load: the whole heap from the start
    assert neo[neo.index("--pagecache") + 1] == str(2**30)
    osr = opensearch_server._java_cmd([9200], tmp_path / "data", full_jit=True)
    assert osr[0] == str(t25 / "bin" / "java") and "jdk.incubator.vector" in osr
    assert "-XX:TieredStopAtLevel=1" in opensearch_server._java_cmd([9200], tmp_path / "data", full_jit=False)


def test_page_cache_sizes_are_read_in_bytes_and_other_text_is_refused():
    assert neo4j_server.size_bytes("64m") == 64 * 2**20
    assert neo4j_server.size_bytes("1G") == 2**30
    assert neo4j_server.size_bytes("4096") == 4096
    with pytest.raises(ValueError, match="write e.g. 64m or 1g"):
        neo4j_server.size_bytes("lots")


def test_this_machine_runs_the_servers_on_its_newest_supported_jdk():
    """On the machine running the tests: the chosen JDK is the newest 17-25 installed (if any)."""
    supported = [j for j in jvm.installed(Path(os.environ.get("TEST_SERVERS_JVM_ROOT") or jvm.JVM_ROOT))
                 if j.version is not None and jvm.OLDEST <= j.version <= jvm.NEWEST]
    if "TEST_SERVERS_JAVA_HOME" not in os.environ and supported:
        assert jvm.choose().version == supported[0].version


def test_the_jdk_variables_leave_lit3rs_own_settings_alone(tmp_path, monkeypatch):
    """Lit3R refuses unknown LIT3R_* variables; the test servers' own do not start with it, so a
    bench or test run with them set still loads Lit3R's settings."""
    from lit3r.config import load_settings

    for name in ("TEST_SERVERS_JAVA_HOME", "TEST_SERVERS_JVM_ROOT", "TEST_SERVERS_FULL_JIT"):
        assert not name.startswith("LIT3R_") and name in (Path(jvm.__file__).read_text())
        monkeypatch.setenv(name, str(tmp_path))
    assert load_settings(home=tmp_path).home == tmp_path
