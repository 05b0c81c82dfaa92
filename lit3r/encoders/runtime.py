"""What the configured encoders and reranker need installed: PyTorch and sentence-transformers (the
optional extra ``lit3r[torch]``) for ``models.encoder_backend = "torch"``, a SPECTER2 adapter, the
cross-encoder reranker and hub models; the ``openvino`` package for the default backend. Checked
with ``importlib.util.find_spec`` (nothing is imported), so ``lit3r ingest`` refuses a configuration
it cannot run with one line before parsing, and the loaders of :mod:`lit3r.models` refuse it before
importing anything."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from lit3r.encoders.spec import resolve_model_path
from lit3r.errors import ModelError, install_extra

if TYPE_CHECKING:  # pragma: no cover
    from lit3r.config import ModelSettings



#: The command that installs PyTorch (the extra ``lit3r[torch]``) here; :data:`TORCH_FIX` the whole fix.
TORCH_EXTRA = install_extra("torch")
TORCH_FIX = f"{TORCH_EXTRA}, or set models.encoder_backend = \"openvino\""


def has_module(name: str) -> bool:
    """True when the top-level package ``name`` can be imported (found, not imported: no cost)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses it (the fast tier's no-torch guard)
        return False


def has_torch() -> bool:
    """True when both torch and sentence-transformers are installed (the extra ``lit3r[torch]``)."""
    return has_module("torch") and has_module("sentence_transformers")


def torch_line(what: str, fix: str = TORCH_FIX) -> str:
    """``<what> needs PyTorch: <fix>``: the one line of every setting that needs the extra ``lit3r[torch]``."""
    return f"{what} needs PyTorch: {fix}"


def needs_torch(spec: str, backend: str, adapter: Optional[str]) -> Optional[str]:
    """Why loading ``spec`` on ``backend`` (with ``adapter``) needs PyTorch, as the setting to name; None when it
    does not (hashing specs, servers, and local folders on onnx/openvino)."""
    if spec.startswith("hashing:") or backend == "server" and not adapter:
        return None
    if adapter:
        return torch_line(f"models.paper_adapter = {adapter!r}",
                      f"{TORCH_EXTRA}, or unset models.paper_adapter (SPECTER2 runs on PyTorch only)")
    try:
        path: Optional[str] = str(resolve_model_path(spec))
    except ModelError:
        path = None  # the loader's own line (package missing, folder missing) says it
    hub = path is not None and not Path(path).expanduser().is_dir()  # only sentence-transformers downloads it
    if backend == "torch":
        # a hub model (the `paper` preset's) runs on PyTorch whatever the backend: no other backend to suggest
        return torch_line("models.encoder_backend = 'torch'", f"{TORCH_EXTRA} (the hub model {spec!r} runs on "
                          "PyTorch only), or go back to the default models (preset = \"offline\")") if hub \
            else torch_line("models.encoder_backend = 'torch'")
    if hub:
        return torch_line(f"the hub model {spec!r}",
                      f"{TORCH_EXTRA} and set models.encoder_backend = \"torch\", or use a local model folder")
    return None


def runtime_missing(models: "ModelSettings") -> Optional[str]:
    """The one line for a configuration whose encoders or reranker need a package that is not
    installed: PyTorch (``lit3r[torch]``) for ``encoder_backend = "torch"``, a SPECTER2
    ``paper_adapter``, ``reranker = "cross-encoder"`` or a hub model name, OpenVINO for
    ``encoder_backend = "openvino"``; None when everything needed is there. Costs no import
    (``importlib.util.find_spec`` only); ``lit3r ingest`` calls it before parsing."""
    if models.encoder_backend == "openvino" and not has_module("openvino"):
        from lit3r.encoders.openvino_encoder import INSTALL_FIX

        if not all(s.startswith("hashing:") for s in (models.chunk_encoder, models.paper_encoder)):
            return f"models.encoder_backend = 'openvino' needs the openvino package: {INSTALL_FIX}"
    if has_torch():
        return None
    for spec, adapter in ((models.chunk_encoder, None), (models.paper_encoder, models.paper_adapter)):
        line = needs_torch(spec, models.encoder_backend, adapter)
        if line:
            return line
    if models.reranker == "cross-encoder":
        return torch_line("models.reranker = 'cross-encoder'",
                      f"{TORCH_EXTRA}, or set models.reranker = \"bi-encoder\"")
    return None
