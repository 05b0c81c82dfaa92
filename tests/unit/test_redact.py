"""Secrets masked in configuration dumps and in any text (lit3r/redact.py)."""

from __future__ import annotations

from lit3r.config import load_settings
from lit3r.redact import masked, redact, redact_data, secret_values


def _settings(monkeypatch, tmp_path):
    (tmp_path / "config.toml").write_text('[neo4j]\npassword = "neo-pw-1234"\n[llm]\napi_key = "sk-key-5678"\n')
    monkeypatch.setenv("LIT3R_HOME", str(tmp_path))
    monkeypatch.delenv("LIT3R_CONFIG", raising=False)
    monkeypatch.setenv("LIT3R_OPENSEARCH__PASSWORD", "os-pw-9012")
    monkeypatch.setenv("LIT3R_OPENSEARCH__URL", "http://admin:url-pw-3456@localhost:9200")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-7890")
    return load_settings()


def test_secret_values_come_from_settings_urls_and_environment(monkeypatch, tmp_path):
    values = secret_values(_settings(monkeypatch, tmp_path))
    assert set(values) >= {"neo-pw-1234", "sk-key-5678", "os-pw-9012", "url-pw-3456", "sk-env-7890"}
    monkeypatch.setenv("LIT3R_NEO4J__PASSWORD", "abc")  # too short to look for in text
    assert "abc" not in secret_values(None) and "os-pw-9012" in secret_values(None)


def test_masked_dump_and_redacted_text(monkeypatch, tmp_path):
    settings = _settings(monkeypatch, tmp_path)
    secrets = secret_values(settings)
    dump = masked(settings.model_dump(mode="json"), secrets)
    assert dump["neo4j"]["password"] == dump["opensearch"]["password"] == dump["llm"]["api_key"] == "***"
    assert dump["opensearch"]["url"] == "http://***@localhost:9200"
    assert dump["neo4j"]["user"] == "neo4j" and dump["retrieve"]["rrf_k"] == 60  # the rest as is
    text = ("401: bad key Bearer sk-key-5678 at http://u:url-pw-3456@h/v1?api-key=sk-env-7890&x=1; "
            "password neo-pw-1234, os-pw-9012!")
    out = redact(text, secrets)
    assert not any(s in out for s in secrets), out
    assert "Bearer ***" in out and "http://***@h/v1?api-key=***&x=1" in out
    assert redact("sent p%40ss%20w0rd", ["p@ss w0rd"]) == "sent ***"  # URL-encoded too
    assert redact("no secret here: bolt://localhost:7687", secrets) == "no secret here: bolt://localhost:7687"
    assert redact_data({"notes": ["sk-key-5678"], "n": 1, "k": None}, secrets) == {"notes": ["***"], "n": 1, "k": None}
