"""The bi-encoder run by OpenVINO on the CPU (``models.encoder_backend = "openvino"``, the default):
the fastest correct CPU path measured for all-MiniLM-L6-v2 (issue 27, docs/ENCODERS.md).

OpenVINO compiles the same ONNX file that :mod:`lit3r.encoders.onnx_encoder` exports once and caches (no
download, no torch at question time); tokenising, length-sorted batching, pooling and
normalisation are :class:`lit3r.encoders.onnx_encoder.OnnxEncoder`'s. The inference precision follows
``models.dtype``: ``auto`` runs the MatMuls in bfloat16 where the CPU has native bf16
(OpenVINO's ``INFERENCE_PRECISION_HINT``; AVX-512 BF16 or AMX) and float32 elsewhere,
``float32`` forces float32. Measured on the 60 papers' 8,976 chunks: every vector within cosine
0.9999 of PyTorch float32 in bfloat16. Static int8 (NNCF post-training quantisation, calibrated
on real chunks) was faster still but fell below cosine 0.99 on some chunks, so it is not offered.

The compiled model uses the ``THROUGHPUT`` performance hint for :data:`INFLIGHT` requests (one
stream each, the process's cores shared among them) and keeps them all busy with runs of the
length-sorted texts (``AsyncInferQueue``): on the 2-core EPYC, 1,024 chunks at 43-44 chunks per CPU
second against 37-39 with the ``LATENCY`` hint and one run at a time (``inflight=1``, kept for
``bench/encoder_bench.py --backends openvino-latency``), and faster per wall second in each of three
alternated pairs; vectors within cosine 0.9999 of each other. A question (one short run) goes to
one request. Threads come from OpenVINO's own pool (``inference_num_threads`` unset: the cores this
process may run on). The compiled blob is
cached by OpenVINO itself (its ``CACHE_DIR`` property, :func:`compile_cache` under
:func:`lit3r.encoders.onnx_encoder.cache_root`), so a cold ``lit3r ask`` loads it instead of
compiling the ONNX graph again; OpenVINO keys the blob on the model, the device and the settings.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Optional

import numpy as np

from lit3r.encoders.onnx_encoder import OnnxEncoder, cache_root, exported_model, pool
from lit3r.encoders.spec import normalise
from lit3r.errors import ModelError

#: Texts per OpenVINO run at most (``models.batch_size`` when smaller): on the 2-core AVX-512 BF16
#: EPYC, 256 chunks of the 60 papers ran at 38.5 chunks per CPU second in runs of 16, 36.3 in 32,
#: 31.4 in 64 (less padding per run, and the activations stay in cache; docs/ENCODERS.md).
RUN_BATCH = 16
#: Runs in flight at once (the ``THROUGHPUT`` hint's requests): 2 on the 2-core EPYC gave 1.15x the
#: chunks per CPU second of one run at a time with the ``LATENCY`` hint (docs/ENCODERS.md).
INFLIGHT = 2
#: The one-line fix when the openvino package is missing (a dependency of lit3r: a broken or partial install).
INSTALL_FIX = "pip install openvino, or set models.encoder_backend = \"onnx\""


def compile_cache() -> Path:
    """The folder of OpenVINO's compiled-model cache: ``<cache_root()>/openvino``."""
    return cache_root() / "openvino"


def _precision(core: Any, dtype: str) -> str:
    """OpenVINO's inference precision for ``models.dtype``: ``bf16`` for ``auto``/``bfloat16`` on a
    CPU that lists BF16 among its optimisation capabilities, else ``f32``."""
    if dtype in ("auto", "bfloat16") and "BF16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"):
        return "bf16"
    return "f32"


def _reason(exc: BaseException) -> str:
    """The line of an OpenVINO exception that says what failed (e.g. ``Model can't be parsed``): the
    last line that is not a ``Exception from <source file>`` location; the first line when all are."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    said = [ln for ln in lines if not ln.startswith(("Exception from ", "Check '"))]
    return (said or lines or [repr(exc)])[-1]


class _Session:
    """An OpenVINO compiled model with ONNX Runtime's ``get_inputs``/``run`` (one infer request,
    reused: the encoder runs one batch at a time). ``inflight`` > 1 compiles with the ``THROUGHPUT``
    hint for that many requests (one stream each) and :meth:`run_many` keeps them all busy
    (``AsyncInferQueue``)."""

    def __init__(self, path: Path, dtype: str, inflight: int = 1) -> None:
        try:
            import openvino as ov
        except ImportError:
            raise ModelError(f"models.encoder_backend = 'openvino' needs the openvino package: {INSTALL_FIX}") from None
        core = ov.Core()
        self.precision = _precision(core, dtype)
        config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": self.precision}
        if inflight > 1:
            config.update(PERFORMANCE_HINT="THROUGHPUT", PERFORMANCE_HINT_NUM_REQUESTS=inflight)
        self.inflight = inflight
        try:
            compile_cache().mkdir(parents=True, exist_ok=True)
            config["CACHE_DIR"] = str(compile_cache())
        except OSError:  # an unwritable cache: compile each time (as before the cache)
            pass
        try:
            self._model = core.compile_model(str(path), "CPU", config)
        except Exception as exc:  # a damaged cache file: the fix is to delete it
            raise ModelError(f"OpenVINO cannot compile the ONNX export {path}: {_reason(exc)}: delete "
                             f"{path.parent} to export again, or {INSTALL_FIX.split(', or ')[1]}") from None
        self._request = self._model.create_infer_request()
        self._lock = threading.Lock()
        self._inputs = [type("Input", (), {"name": p.get_any_name()})() for p in self._model.inputs]

    def get_inputs(self) -> list:
        return self._inputs

    def run(self, _outputs: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        """``[last_hidden_state]`` (batch, seq, dim) float32 for the feeds (batch, seq) int64. Safe
        from several threads (`lit3r run --workers N` shares the encoder): the one infer request is
        taken in turn, and its output copied before the next run reuses the buffer."""
        with self._lock:
            result = self._request.infer(feeds)
            return [np.array(next(iter(result.values())), dtype=np.float32)]

    def run_many(self, feeds: list[dict[str, np.ndarray]]) -> list[np.ndarray]:
        """``last_hidden_state`` of each feed, ``inflight`` runs at a time (in the feeds' order)."""
        import openvino as ov

        out: list[Any] = [None] * len(feeds)

        def done(request: Any, i: int) -> None:
            out[i] = np.array(request.get_output_tensor(0).data, dtype=np.float32)  # a copy: the buffer is reused

        queue = ov.AsyncInferQueue(self._model, self.inflight)
        queue.set_callback(done)
        for i, feed in enumerate(feeds):
            queue.start_async(feed, i)
        queue.wait_all()
        return out


class OpenVinoEncoder(OnnxEncoder):
    """:class:`lit3r.encoders.onnx_encoder.OnnxEncoder` with the exported model compiled by OpenVINO.

    ``batch_size``: texts per run, at most :data:`RUN_BATCH`; ``inflight``: runs at once (1: the
    ``LATENCY`` hint, one run at a time). ``dtype``: ``models.dtype`` (``auto``/``bfloat16``: bf16 where native, ``float32``/``float16``:
    float32). Attributes as the ONNX encoder's, ``backend`` = ``"openvino"`` and ``precision``
    (``"bf16"`` or ``"f32"``). Raises :class:`ModelError` (one line with the fix) when the
    openvino package is missing, besides the ONNX encoder's errors.
    """

    def __init__(self, spec: str, *, batch_size: int = 64, query_prompt: Optional[str] = None,
                 dtype: str = "auto", inflight: int = INFLIGHT) -> None:
        import importlib.util

        if importlib.util.find_spec("openvino") is None:  # before the export: fail in a second, not after it
            raise ModelError(f"models.encoder_backend = 'openvino' needs the openvino package: {INSTALL_FIX}")
        self._dtype = dtype
        self._inflight = max(1, int(inflight))
        super().__init__(spec, batch_size=batch_size, query_prompt=query_prompt)
        self.backend = "openvino"
        self.batch_size = min(self.batch_size, RUN_BATCH)
        self.precision = self._session.precision

    def _open_session(self, folder: Path, quantize: bool) -> Any:
        return _Session(exported_model(folder, quantize=quantize), self._dtype, self._inflight)

    def _embed(self, texts: list[str], progress: bool = False) -> np.ndarray:
        """As the ONNX encoder's; with ``inflight`` > 1 the length-sorted runs go through
        :meth:`_Session.run_many` (the ``THROUGHPUT`` hint's parallel requests)."""
        if self._inflight == 1 or len(texts) <= self.batch_size:
            return super()._embed(texts, progress)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        runs = [order[start:start + self.batch_size] for start in range(0, len(texts), self.batch_size)]
        feeds, masks = [], []
        names = {i.name for i in self._session.get_inputs()}
        for idx in runs:
            enc = self._tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.asarray([e.ids for e in enc], dtype=np.int64)
            mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            feeds.append({k: v for k, v in feed.items() if k in names})
            masks.append(mask)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for idx, hidden, mask in zip(runs, self._session.run_many(feeds), masks):
            out[idx] = pool(hidden, mask, self._mode)
        return normalise(out)

    def __repr__(self) -> str:
        return f"OpenVinoEncoder({self.name!r}, dim={self.dim}, precision={self.precision!r})"
