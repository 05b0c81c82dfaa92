"""LLM profiles as data: one TOML file per profile (``llm.profile = "<name>"`` in the settings;
sections and keys as in config.toml). A profile sets its values on every setting not set
explicitly; ``full`` (no file) is the defaults."""
