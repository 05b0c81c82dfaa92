"""The ONNX graph of a BERT encoder written from its safetensors weights: no PyTorch.

:func:`build` reads ``config.json`` (``model_type`` ``"bert"``, absolute position embeddings) and
the ``model.safetensors`` weights (or the shards named by ``model.safetensors.index.json``) with
``safetensors.numpy`` and writes the graph with ``onnx.helper`` at opset :data:`OPSET`, the same
interface as ``torch.onnx.export`` of Hugging Face's ``BertModel``: inputs ``input_ids``,
``attention_mask``, ``token_type_ids`` (int64, [batch, sequence], both axes dynamic), output
``last_hidden_state`` (float32, [batch, sequence, hidden_size]).

The computation is BERT's (Devlin et al. 2019) as ``transformers.models.bert.modeling_bert`` runs
it in eval mode: embeddings (word + absolute position + token type, LayerNormalization with
``layer_norm_eps``); the additive attention mask ``(1 - attention_mask) * finfo(float32).min``
(HF's ``get_extended_attention_mask``) broadcast to [batch, 1, 1, sequence]; per layer Q/K/V
projections split into ``num_attention_heads`` heads, ``softmax(Q K^T / sqrt(head_dim) + mask) V``,
the output projection + residual + LayerNormalization, the intermediate projection with
``hidden_act`` (``gelu``: the erf form, ``gelu_new``/``gelu_pytorch_tanh``: the tanh form,
``relu``) and the output projection + residual + LayerNormalization. The GELU is written as the
Div/Erf/Add/Mul chain that ONNX Runtime's graph optimiser fuses into one Gelu kernel.

Weight names are found under whatever prefix the checkpoint uses (none for a bare ``BertModel``,
``bert.`` for ``BertFor...`` heads); TensorFlow-era ``gamma``/``beta`` LayerNorm names are read too.
float16 weights are widened to float32. :func:`unsupported` says why a folder cannot be built
(then the caller falls back to the torch export).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import numpy as np

#: ONNX opset of the graph (LayerNormalization needs 17).
OPSET = 17
#: hidden_act values and the activation written for them.
ACTIVATIONS = {"gelu": "erf", "gelu_new": "tanh", "gelu_pytorch_tanh": "tanh", "relu": "relu"}
#: a graph over this many bytes of weights would need ONNX's external data files: the torch export writes those.
MAX_BYTES = 1_900_000_000


class Damaged(ValueError):
    """The model folder's files are broken (a ``config.json`` that is not a JSON object, a weight
    file safetensors cannot read, a tensor the config needs missing): exporting with PyTorch
    would not help, the folder must be restored."""


def _first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message, or its repr when it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else repr(exc)


def _config(model_dir: Path) -> dict:
    """``config.json`` as a dict; {} when there is none. Raises :class:`Damaged` when it is not a JSON object."""
    path = model_dir / "config.json"
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise Damaged(f"cannot read config.json: {_first_line(exc)}") from None
    if not isinstance(cfg, dict):
        raise Damaged("config.json is not a JSON object")
    return cfg


def _weight_files(model_dir: Path) -> list[Path]:
    """``model.safetensors``, or the shards named by ``model.safetensors.index.json``; [] when neither."""
    index = model_dir / "model.safetensors.index.json"
    if index.is_file():
        try:
            names = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (OSError, ValueError, KeyError, AttributeError):
            return []
        return [model_dir / n for n in names]
    single = model_dir / "model.safetensors"
    return [single] if single.is_file() else []


def unsupported(model_dir: Path) -> Optional[str]:
    """None when :func:`build` can write ``model_dir``'s graph, else the reason (a short phrase)."""
    cfg = _config(model_dir)
    if cfg.get("model_type") != "bert":
        return f"model_type {cfg.get('model_type')!r} is not 'bert'"
    if cfg.get("position_embedding_type", "absolute") != "absolute" or cfg.get("is_decoder"):
        return "not an encoder with absolute position embeddings"
    missing = [k for k in ("hidden_size", "num_attention_heads", "num_hidden_layers") if not isinstance(cfg.get(k), int)]
    if missing:
        return f"config.json has no {', '.join(missing)}"
    if str(cfg.get("hidden_act", "gelu")) not in ACTIVATIONS:
        return f"hidden_act {cfg.get('hidden_act')!r} is not one of {', '.join(ACTIVATIONS)}"
    files = _weight_files(model_dir)
    if not files or not all(f.is_file() for f in files):
        return "no model.safetensors"
    if sum(f.stat().st_size for f in files) > MAX_BYTES:
        return "weights over 1.9 GB"
    return None


def _load_weights(files: list[Path]) -> dict[str, np.ndarray]:
    """Every tensor of the files, keyed without the checkpoint's prefix (the part before
    ``embeddings.word_embeddings``), float tensors as float32. Raises ValueError for a dtype numpy
    cannot hold (bfloat16) or a damaged file."""
    from safetensors.numpy import load_file

    raw: dict[str, np.ndarray] = {}
    for f in files:
        try:
            raw.update(load_file(str(f)))
        except TypeError as exc:  # bfloat16: numpy has no such dtype (PyTorch can export it)
            raise ValueError(f"cannot read {f.name} with safetensors.numpy: {exc}") from None
        except Exception as exc:  # a damaged file (SafetensorError, OSError)
            raise Damaged(f"cannot read {f.name}: {_first_line(exc)}") from None
    anchor = next((k for k in raw if k.endswith("embeddings.word_embeddings.weight")), None)
    if anchor is None:
        raise ValueError("no embeddings.word_embeddings.weight among the weights")
    prefix = anchor[: -len("embeddings.word_embeddings.weight")]
    out = {}
    for key, value in raw.items():
        if key.startswith(prefix):
            name = key[len(prefix):].replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta",
                                                                                            "LayerNorm.bias")
            out[name] = value.astype(np.float32) if value.dtype.kind == "f" else value
    return out


class _Graph:
    """Nodes and initialisers of the graph under construction; each op returns its output's name."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._names: set[str] = set()
        self._n = 0

    def const(self, name: str, value: Any) -> str:
        """The initialiser ``name`` holding ``value`` (added once: a later call with the name reuses it)."""
        from onnx import numpy_helper

        if name not in self._names:
            self._names.add(name)
            self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def weight(self, key: str, transpose: bool = False) -> str:
        if key not in self.weights:
            raise Damaged(f"the weights have no {key}")
        value = self.weights[key]
        return self.const(key, value.T if transpose else value)

    def op(self, kind: str, *inputs: str, **attrs: Any) -> str:
        from onnx import helper

        self._n += 1
        out = f"{kind.lower()}_{self._n}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], name=f"{kind}_{self._n}", **attrs))
        return out

    def dense(self, x: str, key: str) -> str:
        """``x @ W^T + b`` of the torch Linear ``key`` (weight [out, in], stored transposed)."""
        return self.op("Add", self.op("MatMul", x, self.weight(f"{key}.weight", True)), self.weight(f"{key}.bias"))

    def layer_norm(self, x: str, key: str, eps: float) -> str:
        return self.op("LayerNormalization", x, self.weight(f"{key}.weight"), self.weight(f"{key}.bias"), axis=-1,
                       epsilon=eps)


def _activation(g: _Graph, x: str, form: str) -> str:
    if form == "relu":
        return g.op("Relu", x)
    one = g.const("act_one", np.float32(1.0))
    if form == "erf":  # 0.5 x (1 + erf(x / sqrt 2))
        inner = g.op("Add", g.op("Erf", g.op("Div", x, g.const("act_sqrt2", np.float32(np.sqrt(2.0))))), one)
    else:  # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        cube = g.op("Mul", g.const("act_k", np.float32(0.044715)),
                    g.op("Pow", x, g.const("act_three", np.float32(3.0))))
        inner = g.op("Add", g.op("Tanh", g.op("Mul", g.const("act_c", np.float32(np.sqrt(2.0 / np.pi))),
                                              g.op("Add", x, cube))), one)
    return g.op("Mul", g.op("Mul", x, inner), g.const("act_half", np.float32(0.5)))


def _attention(g: _Graph, x: str, mask: str, key: str, heads: int, head_dim: int) -> str:
    """Multi-head self-attention of layer ``key`` on x [B, S, H] -> context [B, S, H]."""
    split = g.const("attn_split_shape", np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge = g.const("attn_merge_shape", np.array([0, 0, heads * head_dim], dtype=np.int64))
    scale = g.const("attn_scale", np.float32(1.0 / np.sqrt(head_dim)))

    def heads_of(name: str, perm: list[int]) -> str:
        return g.op("Transpose", g.op("Reshape", g.dense(x, f"{key}.self.{name}"), split), perm=perm)

    q = heads_of("query", [0, 2, 1, 3])  # [B, heads, S, d]
    k = heads_of("key", [0, 2, 3, 1])  # [B, heads, d, S]
    v = heads_of("value", [0, 2, 1, 3])
    scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), mask)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)  # [B, heads, S, d]
    return g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge)


def build(model_dir: Path) -> Any:
    """The ``onnx.ModelProto`` of the BERT in ``model_dir`` (module docstring), checked by
    ``onnx.checker``. Raises ValueError when :func:`unsupported` gives a reason or a weight is
    missing or unreadable."""
    import onnx
    from onnx import TensorProto, helper

    reason = unsupported(model_dir)
    if reason:
        raise ValueError(reason)
    cfg = _config(model_dir)
    hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
    eps, form = float(cfg.get("layer_norm_eps", 1e-12)), ACTIVATIONS[str(cfg.get("hidden_act", "gelu"))]
    if hidden % heads:
        raise ValueError(f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    g = _Graph(_load_weights(_weight_files(model_dir)))
    # embeddings: word + position (the first `sequence` rows) + token type, then LayerNorm
    seq_len = g.op("Slice", g.op("Shape", "input_ids"), g.const("one_i", np.array([1], dtype=np.int64)),
                   g.const("two_i", np.array([2], dtype=np.int64)))
    positions = g.op("Slice", g.weight("embeddings.position_embeddings.weight"),
                     g.const("zero_i", np.array([0], dtype=np.int64)), seq_len, "zero_i")
    x = g.op("Add", g.op("Add", g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids"),
                         g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids")),
             positions)
    x = g.layer_norm(x, "embeddings.LayerNorm", eps)
    # the additive mask: (1 - mask) * finfo(float32).min, [B, 1, 1, S]
    keep = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    blocked = g.op("Sub", g.const("mask_one", np.float32(1.0)), keep)
    mask = g.op("Unsqueeze", g.op("Mul", blocked, g.const("mask_min", np.float32(np.finfo(np.float32).min))),
                g.const("mask_axes", np.array([1, 2], dtype=np.int64)))
    for i in range(int(cfg["num_hidden_layers"])):
        key = f"encoder.layer.{i}"
        context = _attention(g, x, mask, f"{key}.attention", heads, hidden // heads)
        x = g.layer_norm(g.op("Add", g.dense(context, f"{key}.attention.output.dense"), x),
                         f"{key}.attention.output.LayerNorm", eps)
        inner = _activation(g, g.dense(x, f"{key}.intermediate.dense"), form)
        x = g.layer_norm(g.op("Add", g.dense(inner, f"{key}.output.dense"), x), f"{key}.output.LayerNorm", eps)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    dims = ["batch", "sequence"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, dims)
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, hidden])
    graph = helper.make_graph(g.nodes, "bert", inputs, [output], initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="lit3r")
    model.ir_version = min(model.ir_version, 8)  # readable by ONNX Runtime >= 1.14 and OpenVINO
    onnx.checker.check_model(model)
    return model


def write(model_dir: Path, out: Path) -> None:
    """Build the graph of ``model_dir`` and save it to ``out`` (one file, weights inside).
    Raises ValueError as :func:`build`, OSError when ``out`` cannot be written."""
    import onnx

    onnx.save_model(build(model_dir), str(out))
