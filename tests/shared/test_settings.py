from pathlib import Path

import pytest

from lancelot_schema import settings, stored
from lancelot_schema.settings import config_dir, resolve


def test_defaults_apply_when_nothing_is_set():
    s = resolve({}, {})
    assert s.db_path is None
    assert s.table == "documents"
    assert s.text_column == "text"
    assert s.embedding_model == "text-embedding-3-small"
    assert s.api_key is None and not s.has_api_key
    assert s.allowed_origins is None and s.allowed_hosts is None and s.base_path is None
    assert s.origins["LANCEDB_TABLE"] == "default"
    assert s.origins["LANCEDB_PATH"] == "unset"


def test_environment_wins_over_stored_and_stored_over_default():
    env = {"LANCEDB_PATH": "/env/db"}
    kept = {"LANCEDB_PATH": "/stored/db", "LANCEDB_TABLE": "kept", "OPENAI_API_KEY": "sk-stored"}
    s = resolve(env, kept)
    assert s.db_path == "/env/db"
    assert s.origins["LANCEDB_PATH"] == "environment"
    assert s.table == "kept"
    assert s.origins["LANCEDB_TABLE"] == "stored"
    assert s.api_key == "sk-stored"
    assert s.text_column == "text"
    assert s.origins["LANCEDB_TEXT_COLUMN"] == "default"


@pytest.mark.parametrize("blank", ["", " ", "\t\n "])
def test_blank_environment_values_count_as_unset(blank):
    s = resolve({"LANCEDB_PATH": blank, "LANCEDB_TABLE": blank, "OPENAI_API_KEY": blank}, {"LANCEDB_PATH": "/kept"})
    assert s.db_path == "/kept"
    assert s.table == "documents"
    assert s.api_key is None


def test_blank_stored_values_count_as_unset():
    s = resolve({}, {"LANCEDB_TABLE": "  ", "OPENAI_API_KEY": ""})
    assert s.table == "documents"
    assert s.origins["LANCEDB_TABLE"] == "default"
    assert s.api_key is None


def test_values_are_trimmed_and_lists_split():
    s = resolve(
        {
            "LANCEDB_TABLE": "  docs  ",
            "LANCELOT_ALLOWED_ORIGINS": "https://a.example, https://b.example ,,",
            "LANCELOT_ALLOWED_HOSTS": "example.com:8080",
        }
    )
    assert s.table == "docs"
    assert s.allowed_origins == ("https://a.example", "https://b.example")
    assert s.allowed_hosts == ("example.com:8080",)


@pytest.mark.parametrize("listing", [",", " , ,", ""])
def test_a_list_setting_that_names_nothing_counts_as_unset(listing):
    s = resolve({"LANCELOT_ALLOWED_HOSTS": listing}, {"LANCELOT_ALLOWED_HOSTS": "stored.example:3000"})
    assert s.allowed_hosts == ("stored.example:3000",)
    assert s.origins["LANCELOT_ALLOWED_HOSTS"] == "stored"
    s = resolve({"LANCELOT_ALLOWED_HOSTS": listing, "LANCELOT_ALLOWED_ORIGINS": listing})
    assert s.allowed_hosts is None and s.allowed_origins is None
    assert s.origins["LANCELOT_ALLOWED_HOSTS"] == "unset"


def test_db_path_expands_the_home_directory(monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")
    assert resolve({"LANCEDB_PATH": "~/db"}).db_path == "/home/someone/db"


def test_api_key_never_appears_in_repr():
    s = resolve({"OPENAI_API_KEY": "sk-secret-value"})
    assert "sk-secret-value" not in repr(s)


def test_every_documented_name_has_a_default_entry():
    assert set(settings.DEFAULTS) == {
        "LANCEDB_PATH",
        "LANCEDB_TABLE",
        "LANCEDB_TEXT_COLUMN",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "EMBEDDING_MODEL",
        "LANCELOT_EMBED_MODEL_PATH",
        "LANCELOT_EMBED_MODEL_URL",
        "LANCELOT_EMBED_DOWNLOAD",
        "LANCELOT_ALLOWED_ORIGINS",
        "LANCELOT_ALLOWED_HOSTS",
        "LANCELOT_BASE_PATH",
        "LANCELOT_TABLES",
        "LANCELOT_AUTH_TOKENS",
        "LANCELOT_AUTH_TOKENS_FILE",
        "LANCELOT_OAUTH_ISSUER",
        "LANCELOT_OAUTH_RESOURCE",
        "LANCELOT_OAUTH_JWKS_URL",
        "LANCELOT_OAUTH_SCOPES",
        "LANCELOT_ALLOW_UNAUTHENTICATED",
        "LANCELOT_REFRESH_SECONDS",
        "LANCELOT_CACHE_MB",
        "AWS_ENDPOINT_URL_S3",
        "AWS_ENDPOINT_URL",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    }


def test_config_dir_follows_xdg_and_never_the_database(tmp_path):
    assert config_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "lancelot"


def test_config_dir_is_under_tmp_on_lambda():
    assert config_dir({"AWS_LAMBDA_FUNCTION_NAME": "fn", "XDG_CONFIG_HOME": "/x"}) == Path("/tmp/lancelot")


def test_stored_settings_round_trip_and_missing_file_is_empty(tmp_path):
    assert stored.load(tmp_path) == {}
    stored.settings_path(tmp_path).write_text('{"LANCEDB_PATH": "/db", "n": 3}', encoding="utf-8")
    assert stored.load(tmp_path) == {"LANCEDB_PATH": "/db"}


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_damaged_stored_settings_name_the_file_and_the_fix(tmp_path, content):
    path = stored.settings_path(tmp_path)
    path.write_text(content, encoding="utf-8")
    with pytest.raises(stored.StoredSettingsError) as caught:
        stored.load(tmp_path)
    assert str(path) in str(caught.value)
    assert "lancelot-init --forget" in str(caught.value)


def test_tokens_never_appear_in_repr_and_lists_split_on_commas():
    s = resolve(
        {
            "LANCELOT_AUTH_TOKENS": "tok-one-secret, tok-two-secret",
            "LANCELOT_TABLES": "a, b,,",
            "LANCELOT_OAUTH_SCOPES": "mcp:read search",
            "LANCELOT_ALLOW_UNAUTHENTICATED": "TRUE",
        }
    )
    assert s.auth.tokens == ("tok-one-secret", "tok-two-secret")
    assert "secret" not in repr(s)
    assert s.tables == ("a", "b")
    assert s.auth.oauth_scopes == ("mcp:read", "search")
    assert s.auth.allow_unauthenticated and s.auth.configured


def test_auth_is_off_and_tables_unset_by_default():
    s = resolve({"LANCELOT_ALLOW_UNAUTHENTICATED": "no"})
    assert not s.auth.configured and not s.auth.allow_unauthenticated
    assert s.tables is None


def test_object_storage_takes_the_aws_sdks_names_the_specific_one_first():
    s = resolve({"AWS_ENDPOINT_URL": "http://all:9000", "AWS_DEFAULT_REGION": "eu-west-1"})
    assert (s.storage.endpoint, s.storage.region, s.storage.refresh_seconds) == ("http://all:9000", "eu-west-1", 10.0)
    s = resolve(
        {
            "AWS_ENDPOINT_URL": "http://all:9000",
            "AWS_ENDPOINT_URL_S3": "http://s3:9000",
            "AWS_DEFAULT_REGION": "eu-west-1",
            "AWS_REGION": "eu-north-1",
            "LANCELOT_REFRESH_SECONDS": "2.5",
        }
    )
    assert (s.storage.endpoint, s.storage.region, s.storage.refresh_seconds) == ("http://s3:9000", "eu-north-1", 2.5)
    assert resolve({"AWS_ENDPOINT_URL_S3": " ", "AWS_REGION": ""}).storage == settings.Storage()


@pytest.mark.parametrize("value", ["soon", "-1", "inf", "nan"])
def test_a_refresh_that_is_no_number_of_seconds_falls_back_with_a_warning(value):
    s = resolve({"LANCELOT_REFRESH_SECONDS": value})
    assert s.storage.refresh_seconds == 10.0
    assert s.warnings == (f"LANCELOT_REFRESH_SECONDS={value!r} is not a number of seconds (0 or more); using 10.",)


def test_a_refresh_of_zero_checks_at_every_call():
    assert resolve({"LANCELOT_REFRESH_SECONDS": "0"}).storage.refresh_seconds == 0.0


def test_load_passes_on_the_warning_of_a_bad_refresh(tmp_path):
    s = settings.load({"XDG_CONFIG_HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "LANCELOT_REFRESH_SECONDS": "x"})
    assert s.warnings == ("LANCELOT_REFRESH_SECONDS='x' is not a number of seconds (0 or more); using 10.",)


def test_the_cache_bound_is_whole_mebibytes_and_a_bad_one_is_the_default_with_a_warning():
    assert resolve({}).storage.cache_mb == settings.DEFAULT_CACHE_MB
    assert resolve({"LANCELOT_CACHE_MB": "0"}).storage.cache_mb == 0
    assert resolve({"LANCELOT_CACHE_MB": " 64 "}).storage.cache_mb == 64
    for bad in ("-1", "1.5", "lots", "١٢"):
        resolved = resolve({"LANCELOT_CACHE_MB": bad})
        assert resolved.storage.cache_mb == settings.DEFAULT_CACHE_MB
        assert resolved.warnings == (
            f"LANCELOT_CACHE_MB={bad!r} is not a whole number of MiB (0 or more); using {settings.DEFAULT_CACHE_MB}.",
        )


def test_local_models_are_looked_for_where_the_settings_say(tmp_path):
    said = resolve(
        {
            "LANCELOT_EMBED_MODEL_PATH": "/models/minilm",
            "LANCELOT_EMBED_MODEL_URL": "http://mirror/minilm",
            "LANCELOT_EMBED_DOWNLOAD": "yes",
            "XDG_CACHE_HOME": str(tmp_path),
        }
    ).local
    assert (said.path, said.url, said.download) == ("/models/minilm", "http://mirror/minilm", True)
    assert said.cache == tmp_path / "lancelot" / "models"
    assert resolve({}).local.download is False
    assert resolve({"AWS_LAMBDA_FUNCTION_NAME": "f"}).local.cache == Path("/tmp/lancelot/models")
