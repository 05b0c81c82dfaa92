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


def test_llm_profile_is_chosen_from_the_provider_and_the_model_size(monkeypatch, tmp_path):
    from lit3r.config import PROFILES, SMALL_MODEL_BYTES, llm_profile

    monkeypatch.setenv("LIT3R_HOME", str(tmp_path))
    monkeypatch.delenv("LIT3R_CONFIG", raising=False)
    small, big = tmp_path / "small.gguf", tmp_path / "big.gguf"
    small.write_bytes(b"x" * 10)
    with big.open("wb") as fh:  # a sparse file of the threshold's size
        fh.truncate(SMALL_MODEL_BYTES)
    assert llm_profile("auto", "local", None) == "small"  # the packaged SmolLM2-135M
    assert llm_profile("auto", "local", str(small)) == "small"
    assert llm_profile("auto", "local", str(big)) == "full"
    assert llm_profile("auto", "openai", None) == "full" and llm_profile("auto", "none", None) == "full"
    assert llm_profile("small", "openai", None) == "small" and llm_profile("full", "local", None) == "full"
    small_read, small_retrieve = PROFILES["small"]["read"], PROFILES["small"]["retrieve"]  # lit3r/profiles/small.toml
    assert small_read["llm_papers"] < 50 and small_read["chunk_chars"] < 1200 and small_retrieve["verify_papers"] < 20
    s = load_settings(llm={"provider": "local"})
    assert s.llm.profile == "auto" and s.profile_trace()["name"] == "small"
    assert (s.read.llm_papers, s.read.chunk_chars, s.retrieve.verify_papers) == \
        (small_read["llm_papers"], small_read["chunk_chars"], small_retrieve["verify_papers"])
    full = load_settings()
    assert full.profile_trace()["name"] == "full"
    assert (full.read.llm_papers, full.read.chunk_chars, full.retrieve.verify_papers) == (50, 1200, 20)
    assert load_settings(llm={"provider": "local", "model_path": str(big)}).read.llm_papers == 50
    forced = load_settings(llm={"provider": "openai", "profile": "small"})
    assert forced.read.llm_papers == forced.profile_trace()["settings"]["read.llm_papers"] == small_read["llm_papers"]
    with pytest.raises(ValueError, match="unknown LLM profile 'tiny'"):
        load_settings(llm={"profile": "tiny"})


def test_settings_set_explicitly_win_over_the_llm_profile(monkeypatch, tmp_path):
    from lit3r.config import PROFILES

    small = PROFILES["small"]
    monkeypatch.setenv("LIT3R_HOME", str(tmp_path))
    monkeypatch.delenv("LIT3R_CONFIG", raising=False)
    (tmp_path / "config.toml").write_text('[read]\nllm_papers = 50\n[llm]\nprovider = "local"\n')
    monkeypatch.setenv("LIT3R_RETRIEVE__VERIFY_PAPERS", "7")
    s = load_settings(read={"chunk_chars": 900})
    assert s.profile_trace()["name"] == "small"
    assert s.read.llm_papers == 50  # the file's value, although it is the default
    assert s.retrieve.verify_papers == 7 and s.read.chunk_chars == 900  # a variable, an argument
    # the rest from the profile
    assert (s.read.chunks_per_paper, s.retrieve.max_rounds) == (small["read"]["chunks_per_paper"],
                                                                small["retrieve"]["max_rounds"]) != (6, 3)
    trace = s.profile_trace()["settings"]
    assert trace["read.llm_papers"] == 50 and trace["read.chunks_per_paper"] == small["read"]["chunks_per_paper"]
    monkeypatch.setenv("LIT3R_LLM__PROFILE", "full")
    s = load_settings()
    assert s.profile_trace()["name"] == "full" and (s.read.chunks_per_paper, s.retrieve.max_rounds) == (6, 3)
