"""Secrets masked in configuration dumps and in any text (lit3r/present/redact.py)."""

from __future__ import annotations

from lit3r.config import load_settings
from lit3r.present.redact import masked, redact, redact_data, secret_values


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


def test_keys_are_masked_by_shape_and_by_value_wherever_they_come_from(monkeypatch):
    from lit3r.present.redact import key_mask, remember

    for name in [n for n in __import__("os").environ if n.endswith("API_KEY") or n.startswith("LIT3R_")]:
        monkeypatch.delenv(name)
    key = "sk-proj-Zq8XwR4tY7uIo0pAs5dF6gH2jK9lL3mNvB1c"
    assert key_mask(key) == "sk-...vB1c" and key_mask("short-key") == "***"
    # by shape, never told the value: a server's echo in a 401 body
    out = redact(f"Incorrect API key provided: Bearer {key}. Key {key} (api_key={key})")
    assert key not in out and key[8:-4] not in out and out.count("sk-...vB1c") == 3, out
    assert redact("Authorization: Bearer eyJhbGciOi.eyJzdWIiOiIx.c2lnbmF0dXJlX2hlcmU=, then") == \
        "Authorization: Bearer ...cmU=, then"  # a JWT, its dots and padding
    assert redact('{"api_key": "my-own-gateway-secret"}') == '{"api_key": "my-...cret"}'
    # by value once a provider was given the key, whatever its shape
    odd = "gateway/Secret+Value_42"
    remember(odd)
    assert odd not in redact(f"echo: {odd} and {odd.replace('/', '%2F').replace('+', '%2B')}")
    assert redact("no secret here: bolt://localhost:7687 and a sk-short") == \
        "no secret here: bolt://localhost:7687 and a sk-short"


def test_the_lit3r_loggers_mask_what_they_log(caplog):
    import logging

    from lit3r.present.redact import logger

    key = "sk-ant-api03-Zq8XwR4tY7uIo0pAs5dF6gH2jK9l"
    caplog.set_level(logging.WARNING)
    logger("lit3r.test").warning("server said: %s", f"bad key Bearer {key}")
    assert caplog.records and key not in caplog.text and "Bearer sk-...jK9l" in caplog.text
