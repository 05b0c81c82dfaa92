"""Encoder backend settings: what the index records, what forces a rebuild, what is refused."""

import pytest

from lit3r.config import PACKAGED_MINILM, encoder_identity, load_settings
from lit3r.encoders.remote_models import endpoint
from lit3r.errors import ConfigError


def test_the_identity_names_the_backend_but_for_torch_and_hashing():
    assert encoder_identity(PACKAGED_MINILM, "torch") == PACKAGED_MINILM
    assert encoder_identity(PACKAGED_MINILM, None) == PACKAGED_MINILM  # a manifest from before backends
    assert encoder_identity(PACKAGED_MINILM, "onnx") == f"{PACKAGED_MINILM}@onnx"
    assert encoder_identity("hashing:64", "onnx") == "hashing:64"
    assert load_settings(home="/tmp/x").models.chunk_identity == f"{PACKAGED_MINILM}@openvino"  # the default


def test_an_index_format_from_before_backends_still_matches_torch(tmp_path):
    from lit3r.index.build import _format

    old = {"chunk_encoder": PACKAGED_MINILM, "paper_encoder": PACKAGED_MINILM, "paper_adapter": None,
           "reranker": "bi-encoder", "reranker_model": None, "device": "auto", "dtype": "auto", "batch_size": 64,
           "query_prompt": None}
    torch = _format(load_settings(home=tmp_path, models={"encoder_backend": "torch", "server_timeout_s": 9}))
    assert torch["models"] == old
    default = _format(load_settings(home=tmp_path))
    assert default["models"] == {**old, "encoder_backend": "openvino"}


def test_server_settings_are_checked_and_the_key_is_never_dumped(tmp_path):
    with pytest.raises(ConfigError, match="server_url"):
        load_settings(home=tmp_path, models={"encoder_backend": "server"})
    with pytest.raises(ConfigError, match="reranker_url"):
        load_settings(home=tmp_path, models={"reranker": "server", "reranker_model": "m"})
    s = load_settings(home=tmp_path, models={"encoder_backend": "server", "server_url": "http://h:1",
                                             "server_api_key": "sk-secret"})
    assert "sk-secret" not in str(s.models.model_dump()) and s.models.endpoint("u")[1] == "sk-secret"


def test_endpoints_accept_a_root_or_an_openai_base_url():
    assert endpoint("http://h:1", "/v1/embeddings") == "http://h:1/v1/embeddings"
    assert endpoint("http://h:1/v1/", "/v1/embeddings") == "http://h:1/v1/embeddings"
    assert endpoint("http://h:1/v1", "/rerank") == "http://h:1/v1/rerank"


@pytest.mark.parametrize(("built", "env", "fix"), [
    (f"{PACKAGED_MINILM}@openvino", {"LIT3R_MODELS__ENCODER_BACKEND": "onnx"}, 'set models.encoder_backend = "openvino" (in '),
    (PACKAGED_MINILM, {}, 'set models.encoder_backend = "torch" (in '),
    ("/models/other@openvino", {}, 'set models.chunk_encoder = "/models/other" (in '),
])
def test_the_refusal_of_another_encoder_names_the_settings_that_give_it_back(built, env, fix, tmp_path, monkeypatch):
    """An index built with another encoder: the second fix of `lit3r ask`'s refusal names the exact
    settings and values (newuser27: "set ... back" left the user to guess the value)."""
    from lit3r.factory import _settings_of_identity

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    line = _settings_of_identity(built, load_settings(home=tmp_path))
    assert line.startswith(fix) and str(tmp_path / "config.toml") in line, line
