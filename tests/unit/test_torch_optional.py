"""PyTorch is the optional extra ``lit3r[torch]`` (issue 27): the default settings need none of it,
and every setting that does (``encoder_backend = "torch"``, a SPECTER2 adapter, the cross-encoder
reranker, a hub model name) is refused with one line naming the setting and the fix, before any
work and without a traceback. The CLI runs with the fast tier's guard (tests/fast_tier/
sitecustomize.py), so ``import torch`` fails in it as on a machine without the extra."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lit3r.config import load_settings
from lit3r.encoders import runtime
from lit3r.errors import ModelError
from tests.conftest import ROOT

PIP = runtime.TORCH_EXTRA  # <python> -m pip install -e '<this clone>[torch]'
TORCH_LINE = f"models.encoder_backend = 'torch' needs PyTorch: {PIP}, or set models.encoder_backend = \"openvino\""
#: config.toml [models] lines -> the one line `lit3r ingest` must print without torch
REFUSED = {
    'encoder_backend = "torch"': TORCH_LINE,
    'paper_adapter = "allenai/specter2"': "models.paper_adapter = 'allenai/specter2' needs PyTorch: "
                                          f"{PIP}, or unset models.paper_adapter",
    'reranker = "cross-encoder"\nreranker_model = "cross-encoder/ms-marco-MiniLM-L6-v2"':
        "models.reranker = 'cross-encoder' needs PyTorch: " + PIP + ", or set models.reranker = "
        "\"bi-encoder\"",
    'chunk_encoder = "BAAI/bge-small-en-v1.5"': "the hub model 'BAAI/bge-small-en-v1.5' needs PyTorch: "
                                                f"{PIP} and set models.encoder_backend = \"torch\"",
}


def _without_torch(monkeypatch) -> None:
    real = runtime.has_module
    monkeypatch.setattr(runtime, "has_module", lambda name: name not in ("torch", "sentence_transformers")
                        and real(name))


@pytest.mark.parametrize("models", list(REFUSED), ids=["backend", "adapter", "reranker", "hub-model"])
def test_ingest_without_torch_refuses_a_torch_setting_in_one_line(models, tmp_path):
    home, pdfs = tmp_path / "home", tmp_path / "pdfs"
    home.mkdir()
    pdfs.mkdir()
    (pdfs / "paper.pdf").write_bytes(b"%PDF-1.4\n")  # never read: the refusal comes before parsing
    (home / "config.toml").write_text(f"[models]\n{models}\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'tests' / 'fast_tier'}{os.pathsep}{ROOT}"}
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs)], cwd=ROOT,
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert REFUSED[models] in lines[0], lines[0]
    assert not (home / "papers.jsonl").exists()  # nothing parsed


def test_the_default_settings_need_no_torch(monkeypatch, tmp_path):
    _without_torch(monkeypatch)
    settings = load_settings(home=tmp_path)
    assert settings.models.encoder_backend == "openvino"
    assert runtime.runtime_missing(settings.models) is None
    assert runtime.runtime_missing(load_settings(home=tmp_path, models={"chunk_encoder": "hashing:64",
                                                                        "paper_encoder": "hashing:64"}).models) is None


def test_the_loaders_refuse_without_importing_torch(monkeypatch):
    from lit3r.config import PACKAGED_MINILM
    from lit3r.models import CrossEncoderReranker, SentenceEncoder, load_encoder

    _without_torch(monkeypatch)
    before = {m for m in ("torch", "sentence_transformers") if m in sys.modules}
    with pytest.raises(ModelError) as info:
        load_encoder(PACKAGED_MINILM, backend="torch", dtype="auto")  # dtype auto: picked by torch, not reached
    assert str(info.value) == TORCH_LINE
    with pytest.raises(ModelError, match=r"^models.encoder_backend = 'torch' needs PyTorch"):
        SentenceEncoder(PACKAGED_MINILM)
    with pytest.raises(ModelError, match=r"^models.paper_adapter = 'allenai/specter2' needs PyTorch"):
        load_encoder(PACKAGED_MINILM, backend="openvino", adapter="allenai/specter2")
    with pytest.raises(ModelError, match=r"^models.reranker = 'cross-encoder' needs PyTorch"):
        CrossEncoderReranker("cross-encoder/ms-marco-MiniLM-L6-v2")
    assert {m for m in ("torch", "sentence_transformers") if m in sys.modules} == before


def test_a_missing_openvino_is_one_line(monkeypatch, tmp_path):
    real = runtime.has_module
    monkeypatch.setattr(runtime, "has_module", lambda name: name != "openvino" and real(name))
    line = runtime.runtime_missing(load_settings(home=tmp_path).models)
    assert line == ("models.encoder_backend = 'openvino' needs the openvino package: pip install openvino, or set "
                    "models.encoder_backend = \"onnx\"")


def test_the_paper_preset_without_torch_is_not_sent_to_openvino(monkeypatch, tmp_path):
    """The `paper` preset's hub models run on PyTorch only: its line offers the extra or the default
    models, not another backend that would be refused in turn."""
    _without_torch(monkeypatch)
    (tmp_path / "config.toml").write_text('preset = "paper"\n', encoding="utf-8")
    line = runtime.runtime_missing(load_settings(home=tmp_path).models)
    assert line == (f"models.encoder_backend = 'torch' needs PyTorch: {PIP} (the hub model "
                    "'Qwen/Qwen3-Embedding-8B' runs on PyTorch only), or go back to the default models "
                    "(preset = \"offline\")"), line
