"""Settings resolution: the environment, then the stored settings, then the defaults.

Entry points call `resolve()` once and pass the frozen `Settings` down; nothing else reads the
environment. A value that is empty or only whitespace counts as unset at every level.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from lancelot_schema.layout import DEFAULT_TABLE, DEFAULT_TEXT_COLUMN
from lancelot_schema.local_models import Where

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
# How often a server re-checks a table on object storage for a new version: each check is a listing (a
# round trip of tens of milliseconds to S3), so not every query; well under the indexer's two-minute grace
# before an old version may be deleted, so a reader never holds one that is gone.
DEFAULT_REFRESH_SECONDS = 10.0
# What a server keeps of its tables in memory (Lance's index and metadata caches), in MiB: the full-text indexes of
# the PostgreSQL manual (9,116 passages) take 7 MiB, so this holds those of about 300,000 passages.
DEFAULT_CACHE_MB = 256

# Every setting, by its environment name, with its default (None: no default).
DEFAULTS: dict[str, str | None] = {
    "LANCEDB_PATH": None,
    "LANCEDB_TABLE": DEFAULT_TABLE,
    "LANCEDB_TEXT_COLUMN": DEFAULT_TEXT_COLUMN,
    "OPENAI_API_KEY": None,
    "OPENAI_BASE_URL": None,
    "EMBEDDING_MODEL": DEFAULT_EMBEDDING_MODEL,
    # Local models (local_models.py): one model's folder, a folder URL serving known models' files, and whether a
    # server may download a missing model (the indexer always may).
    "LANCELOT_EMBED_MODEL_PATH": None,
    "LANCELOT_EMBED_MODEL_URL": None,
    "LANCELOT_EMBED_DOWNLOAD": None,
    "LANCELOT_ALLOWED_ORIGINS": None,
    "LANCELOT_ALLOWED_HOSTS": None,
    "LANCELOT_BASE_PATH": None,
    # Several tables: the ones served besides LANCEDB_TABLE, or "*" for every table of the database.
    "LANCELOT_TABLES": None,
    # HTTP and Lambda authentication (auth.py): static bearer tokens, an OAuth 2.1 resource server, or both.
    "LANCELOT_AUTH_TOKENS": None,
    "LANCELOT_AUTH_TOKENS_FILE": None,
    "LANCELOT_OAUTH_ISSUER": None,
    "LANCELOT_OAUTH_RESOURCE": None,
    "LANCELOT_OAUTH_JWKS_URL": None,
    "LANCELOT_OAUTH_SCOPES": None,
    "LANCELOT_ALLOW_UNAUTHENTICATED": None,
    # Object storage (storage.py): a database on s3:// is looked for anew at most this often, in seconds.
    "LANCELOT_REFRESH_SECONDS": "10",
    # What a server keeps of its tables in memory, in MiB (0: Lance's own defaults, nothing loaded ahead).
    "LANCELOT_CACHE_MB": str(DEFAULT_CACHE_MB),
    # The AWS SDKs' names for an S3-compatible server and the region; credentials are left to Lance's chain.
    "AWS_ENDPOINT_URL_S3": None,
    "AWS_ENDPOINT_URL": None,
    "AWS_REGION": None,
    "AWS_DEFAULT_REGION": None,
}

# The settings that lancelot-init may store (the key is stored apart from the others, as a secret).
STORABLE = ("LANCEDB_PATH", "LANCEDB_TABLE", "OPENAI_API_KEY")

Origin = Literal["environment", "stored", "default", "unset"]


# Comma-separated settings; one that lists nothing (",") is blank like an empty one, not an empty list.
LIST_SETTINGS = frozenset(
    {
        "LANCELOT_ALLOWED_ORIGINS",
        "LANCELOT_ALLOWED_HOSTS",
        "LANCELOT_TABLES",
        "LANCELOT_AUTH_TOKENS",
        "LANCELOT_OAUTH_SCOPES",
    }
)
# Values of a yes/no setting that mean yes (anything else, or unset, is no).
YES = frozenset({"1", "true", "yes", "on"})


def _clean(value: str | None, name: str = "") -> str | None:
    if value is None:
        return None
    value = value.strip()
    if name in LIST_SETTINGS and not _split_list(value):
        return None
    return value or None


def _split_list(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = tuple(item.strip() for item in value.split(","))
    return tuple(item for item in items if item)


@dataclass(frozen=True)
class Auth:
    """How HTTP and Lambda requests prove who they are. Tokens are secrets: never in repr, never logged."""

    tokens: tuple[str, ...] = field(default=(), repr=False)
    tokens_file: str | None = None
    oauth_issuer: str | None = None
    oauth_resource: str | None = None
    oauth_jwks_url: str | None = None
    oauth_scopes: tuple[str, ...] = ()
    # The operator's explicit choice to serve a network address without authentication.
    allow_unauthenticated: bool = False

    @property
    def configured(self) -> bool:
        return bool(self.tokens or self.tokens_file or self.oauth_issuer)


@dataclass(frozen=True)
class Storage:
    """How a database on object storage is reached (`lancelot_schema.storage` turns it into storage options).

    Only what the AWS SDKs' environment says about where and how to connect; credentials are never copied
    here: Lance reads each cloud's standard chain itself (keys, profile, web identity, container, instance).
    """

    endpoint: str | None = None  # AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL (MinIO, Ceph, R2, a test server)
    region: str | None = None  # AWS_REGION, else AWS_DEFAULT_REGION
    refresh_seconds: float = DEFAULT_REFRESH_SECONDS  # LANCELOT_REFRESH_SECONDS
    cache_mb: int = DEFAULT_CACHE_MB  # LANCELOT_CACHE_MB


@dataclass(frozen=True)
class Settings:
    """Resolved settings. `origins` says where each one came from; the API key is never in repr."""

    db_path: str | None
    table: str
    text_column: str
    api_key: str | None = field(repr=False)
    base_url: str | None
    embedding_model: str
    allowed_origins: tuple[str, ...] | None
    allowed_hosts: tuple[str, ...] | None
    base_path: str | None
    # Tables served besides `table` (("*",): every table of the database); None: `table` alone.
    tables: tuple[str, ...] | None = None
    auth: Auth = field(default_factory=Auth)
    storage: Storage = field(default_factory=Storage)
    local: Where = field(default_factory=Where)
    origins: Mapping[str, Origin] = field(default_factory=dict, compare=False)
    # Problems met while reading what lancelot-init stored; the entry point logs each to stderr.
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def has_api_key(self) -> bool:
        return self.api_key is not None


def resolve(environ: Mapping[str, str], stored: Mapping[str, str] | None = None) -> Settings:
    """Resolve every setting from `environ` (usually `os.environ`), then `stored`, then defaults."""
    stored = stored or {}
    values: dict[str, str | None] = {}
    origins: dict[str, Origin] = {}
    for name, default in DEFAULTS.items():
        env_value = _clean(environ.get(name), name)
        stored_value = _clean(stored.get(name), name)
        if env_value is not None:
            values[name], origins[name] = env_value, "environment"
        elif stored_value is not None:
            values[name], origins[name] = stored_value, "stored"
        elif default is not None:
            values[name], origins[name] = default, "default"
        else:
            values[name], origins[name] = None, "unset"
    db_path = values["LANCEDB_PATH"]
    refresh, problem = _seconds("LANCELOT_REFRESH_SECONDS", values["LANCELOT_REFRESH_SECONDS"])
    cache_mb, cache_problem = _mebibytes("LANCELOT_CACHE_MB", values["LANCELOT_CACHE_MB"])
    return Settings(
        # A URI stays as written (Path would fold s3:// into s3:/); storage.locate says what it names.
        db_path=(db_path if "://" in db_path else str(Path(db_path).expanduser())) if db_path else None,
        table=values["LANCEDB_TABLE"] or DEFAULT_TABLE,
        text_column=values["LANCEDB_TEXT_COLUMN"] or DEFAULT_TEXT_COLUMN,
        api_key=values["OPENAI_API_KEY"],
        base_url=values["OPENAI_BASE_URL"],
        embedding_model=values["EMBEDDING_MODEL"] or DEFAULT_EMBEDDING_MODEL,
        allowed_origins=_split_list(values["LANCELOT_ALLOWED_ORIGINS"]),
        allowed_hosts=_split_list(values["LANCELOT_ALLOWED_HOSTS"]),
        base_path=values["LANCELOT_BASE_PATH"],
        tables=_split_list(values["LANCELOT_TABLES"]),
        auth=Auth(
            tokens=_split_list(values["LANCELOT_AUTH_TOKENS"]) or (),
            tokens_file=values["LANCELOT_AUTH_TOKENS_FILE"],
            oauth_issuer=values["LANCELOT_OAUTH_ISSUER"],
            oauth_resource=values["LANCELOT_OAUTH_RESOURCE"],
            oauth_jwks_url=values["LANCELOT_OAUTH_JWKS_URL"],
            oauth_scopes=_split_list((values["LANCELOT_OAUTH_SCOPES"] or "").replace(" ", ",")) or (),
            allow_unauthenticated=(values["LANCELOT_ALLOW_UNAUTHENTICATED"] or "").lower() in YES,
        ),
        storage=Storage(
            endpoint=values["AWS_ENDPOINT_URL_S3"] or values["AWS_ENDPOINT_URL"],
            region=values["AWS_REGION"] or values["AWS_DEFAULT_REGION"],
            refresh_seconds=refresh,
            cache_mb=cache_mb,
        ),
        local=Where(
            path=values["LANCELOT_EMBED_MODEL_PATH"],
            cache=models_cache(environ),
            url=values["LANCELOT_EMBED_MODEL_URL"],
            download=(values["LANCELOT_EMBED_DOWNLOAD"] or "").lower() in YES,
        ),
        origins=origins,
        warnings=tuple(warning for warning in (problem, cache_problem) if warning),
    )


def _seconds(name: str, value: str | None) -> tuple[float, str | None]:
    """A number of seconds, 0 or more; a value that is not one is replaced by the default, with a warning."""
    try:
        seconds = float(value) if value is not None else DEFAULT_REFRESH_SECONDS
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        return DEFAULT_REFRESH_SECONDS, (
            f"{name}={value!r} is not a number of seconds (0 or more); using {DEFAULT_REFRESH_SECONDS:g}."
        )
    return seconds, None


def _mebibytes(name: str, value: str | None) -> tuple[int, str | None]:
    """A whole number of MiB, 0 or more; a value that is not one is replaced by the default, with a warning."""
    text = (value or "").strip()
    if value is None or (text.isascii() and text.isdigit()):
        return (int(text) if value is not None else DEFAULT_CACHE_MB), None
    return DEFAULT_CACHE_MB, f"{name}={value!r} is not a whole number of MiB (0 or more); using {DEFAULT_CACHE_MB}."


def load(environ: Mapping[str, str]) -> Settings:
    """The one call every entry point makes: stored settings and key, then `resolve`.

    The stored key is looked up only when `environ` has no OPENAI_API_KEY (keyring is slow to import).
    A damaged settings file or an unreadable keychain never stops a run: what could not be read is left
    out and a message saying which file or keychain and how to fix it lands in `Settings.warnings`.
    """
    from lancelot_schema import credentials, stored

    directory = config_dir(environ)
    problems: list[str] = []
    try:
        kept = stored.load(directory)
    except stored.StoredSettingsError as exc:
        problems.append(str(exc))
        kept = {}
    where = kept.pop(credentials.STORE_FIELD, None)
    if _clean(environ.get("OPENAI_API_KEY")) is None:
        try:
            key = credentials.read_api_key(directory, where)
        except credentials.CredentialsError as exc:
            problems.append(str(exc))
        else:
            if key is not None:
                kept["OPENAI_API_KEY"] = key
    resolved = resolve(environ, kept)
    return replace(resolved, warnings=(*problems, *resolved.warnings))


def on_lambda(environ: Mapping[str, str]) -> bool:
    """True inside AWS Lambda, where only /tmp is writable."""
    return bool(_clean(environ.get("AWS_LAMBDA_FUNCTION_NAME")))


def models_cache(environ: Mapping[str, str]) -> Path:
    """Where local models are kept, one folder each: the per-user cache directory, or /tmp on Lambda."""
    if on_lambda(environ):
        return Path("/tmp/lancelot/models")  # noqa: S108 - Lambda's only writable place
    if sys.platform.startswith("linux"):  # platformdirs' rule, without its import at every start
        xdg = _clean(environ.get("XDG_CACHE_HOME"))
        return (Path(xdg) if xdg is not None else Path.home() / ".cache") / "lancelot" / "models"
    import platformdirs

    return Path(platformdirs.user_cache_dir("lancelot", appauthor=False)) / "models"


def config_dir(environ: Mapping[str, str]) -> Path:
    """Where Lancelot keeps its own settings: the per-user config directory, or /tmp on Lambda.

    Never the database folder: the server must not write there, and a database may be shared.
    """
    if on_lambda(environ):
        return Path("/tmp/lancelot")  # noqa: S108 - Lambda's only writable place
    import platformdirs

    xdg = _clean(environ.get("XDG_CONFIG_HOME"))
    if xdg is not None and sys.platform.startswith("linux"):
        # platformdirs reads os.environ itself; honour the mapping we were given instead.
        return Path(xdg) / "lancelot"
    return Path(platformdirs.user_config_dir("lancelot", appauthor=False))
