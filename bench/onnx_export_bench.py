"""The torch-free ONNX export (lit3r/encoders/bert_onnx.py) against ``torch.onnx.export`` (issue 27):
the seconds of each export of the packaged MiniLM, the largest difference of their token states on
16 chunks of the home, and the cosine of every chunk vector encoded through the torch-free export
(ONNX Runtime, :class:`lit3r.encoders.onnx_encoder.OnnxEncoder`) with the vector stored in the
home's index (a home built with ``encoder_backend = "onnx"`` before EXPORT_VERSION 2 holds the
torch export's vectors). Needs torch for the comparison export only; writes into a temporary folder, removed at the end.

    .venv/bin/python bench/onnx_export_bench.py --home H60 [--sample N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _states(path: Path, texts: list[str], tokenizer) -> tuple[np.ndarray, np.ndarray]:
    import onnxruntime as ort

    enc = tokenizer.encode_batch(texts)
    ids = np.asarray([e.ids for e in enc], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0], mask


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--sample", type=int, default=0, help="chunks to encode, evenly spaced (0: every chunk)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lit3r-export-bench-") as work:
        run(args, Path(work))


def run(args: argparse.Namespace, work: Path) -> None:
    """Both exports into ``work`` (the model cache too), then the comparisons (module docstring)."""
    os.environ["LIT3R_MODEL_CACHE"] = str(work / "cache")
    from graph.search.embedded import EmbeddedSearchIndex
    from lit3r.config import PACKAGED_MINILM
    from lit3r.encoders.onnx_encoder import OnnxEncoder, exported_model
    from lit3r.encoders.spec import resolve_model_path

    model = Path(resolve_model_path(PACKAGED_MINILM))
    t = time.perf_counter()
    built = exported_model(model)
    print(f"torch-free export: {time.perf_counter() - t:.1f} s", flush=True)
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "lit3r.encoders.onnx_encoder", str(model), str(work / "torch.onnx")],
                         capture_output=True, text=True)
    print(f"torch.onnx.export (child process): {time.perf_counter() - t:.1f} s, exit {res.returncode}", flush=True)
    rows = [json.loads(line) for line in (args.home / "chunks.jsonl").open(encoding="utf-8")]
    if args.sample and args.sample < len(rows):
        rows = [rows[int(i)] for i in np.linspace(0, len(rows) - 1, args.sample)]
    texts = [r["text"] for r in rows]
    if res.returncode == 0:
        tokenizer = OnnxEncoder._load_tokenizer(model)
        few = [texts[int(i)] for i in np.linspace(0, len(texts) - 1, 16)]
        (a, mask), (b, _) = _states(built, few, tokenizer), _states(work / "torch.onnx", few, tokenizer)
        print(f"token states, 16 chunks: max abs difference {np.abs(a - b)[mask.astype(bool)].max():.2e}")
    stored = np.asarray(EmbeddedSearchIndex.open(args.home / "index").vectors_of([r["chunk_id"] for r in rows]),
                        dtype=np.float64)
    t, c = time.perf_counter(), time.process_time()
    vecs = OnnxEncoder(PACKAGED_MINILM, batch_size=64).encode(texts).astype(np.float64)
    print(f"encoded {len(texts)} chunks: {time.perf_counter() - t:.0f} s wall, {time.process_time() - c:.0f} CPU s")
    cos = (vecs * stored).sum(axis=1) / np.linalg.norm(vecs, axis=1) / np.linalg.norm(stored, axis=1)
    print(f"cosine with the stored vectors: min {cos.min():.9f} mean {cos.mean():.9f}, "
          f"largest component difference {np.abs(vecs - stored).max():.2e}")


if __name__ == "__main__":
    main()
