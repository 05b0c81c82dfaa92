"""Model presets as data: one TOML file per preset (``preset = "<name>"`` in the settings)."""
