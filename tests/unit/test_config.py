import pytest

from lit3r.config import PACKAGED_MINILM, load_settings


def test_defaults_are_the_seed_papers(monkeypatch, tmp_path):
    monkeypatch.setenv("LIT3R_HOME", str(tmp_path))
    monkeypatch.delenv("LIT3R_CONFIG", raising=False)
    s = load_settings()
    assert s.home == tmp_path and s.index_dir == tmp_path / "index"
    assert (s.retrieve.rrf_k, s.retrieve.prf_chars, s.retrieve.rerank_depth, s.retrieve.rerank_pin) == (60, 512, 200, 20)
    assert s.retrieve.rerank_weights == (0.6, 0.4) and (s.retrieve.bm25_k1, s.retrieve.bm25_b) == (1.5, 0.75)
    assert (s.relate.seed_query_chars, s.relate.keep, s.relate.ab_rrf_k, s.relate.top_candidates) == (1200, 100, 10, 50)
    assert s.models.chunk_encoder == PACKAGED_MINILM and s.models.reranker == "bi-encoder"


def test_toml_then_env_then_arguments(monkeypatch, tmp_path):
    (tmp_path / "config.toml").write_text('[retrieve]\nrrf_k = 30\nprf_chars = 100\n[models]\nbatch_size = 8\n')
    monkeypatch.setenv("LIT3R_HOME", str(tmp_path))
    monkeypatch.delenv("LIT3R_CONFIG", raising=False)
    monkeypatch.setenv("LIT3R_RETRIEVE__PRF_CHARS", "256")
    s = load_settings()
    assert (s.retrieve.rrf_k, s.retrieve.prf_chars, s.models.batch_size) == (30, 256, 8)
    assert load_settings(home=tmp_path / "other").home == tmp_path / "other"


def test_paper_preset_and_validation(monkeypatch, tmp_path):
    monkeypatch.setenv("LIT3R_HOME", str(tmp_path))
    monkeypatch.delenv("LIT3R_CONFIG", raising=False)
    s = load_settings(preset="paper")
    assert s.models.chunk_encoder == "Qwen/Qwen3-Embedding-8B" and s.models.reranker == "cross-encoder"
    assert s.models.paper_adapter == "allenai/specter2"
    with pytest.raises(ValueError, match="reranker_model"):
        load_settings(models={"reranker": "cross-encoder"})
    with pytest.raises(ValueError, match=r"retrieve.rrf_k \(or LIT3R_RETRIEVE__RRF_K\)"):
        load_settings(retrieve={"rrf_k": "abc"})
    monkeypatch.setenv("LIT3R_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ValueError, match="LIT3R_CONFIG"):
        load_settings()


def test_home_config_toml_is_read_and_checked(monkeypatch, tmp_path):
    monkeypatch.delenv("LIT3R_HOME", raising=False)
    monkeypatch.delenv("LIT3R_CONFIG", raising=False)
    (tmp_path / "config.toml").write_text("[retrieve]\nrrf_k = 7\n")
    assert load_settings(home=tmp_path).retrieve.rrf_k == 7  # --home's config.toml applies
    (tmp_path / "config.toml").write_text("[retrieve]\nrrf_kk = 7\n")
    with pytest.raises(ValueError, match="unknown key retrieve.rrf_kk"):
        load_settings(home=tmp_path)
    (tmp_path / "config.toml").write_text("[retrieve\n")
    with pytest.raises(ValueError, match="config.toml: not valid TOML"):
        load_settings(home=tmp_path)
