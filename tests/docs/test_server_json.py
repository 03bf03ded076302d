"""server.json: valid for the official MCP registry, and true to the package it describes."""

import copy
import json
import re
from pathlib import Path

import jsonschema
import pytest

import lancelot_server
from lancelot_schema import settings

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = Path(__file__).parent / "schemas" / "server.schema.json"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def server_json() -> dict:
    return load(ROOT / "server.json")


def the_package() -> dict:
    (package,) = server_json()["packages"]
    return package


def env_entries() -> dict[str, dict]:
    return {entry["name"]: entry for entry in the_package()["environmentVariables"]}


def validation_errors(document: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(load(SCHEMA_PATH))
    return [f"{list(error.path)}: {error.message}" for error in validator.iter_errors(document)]


def test_the_vendored_schema_is_the_one_server_json_names():
    schema = load(SCHEMA_PATH)
    jsonschema.Draft7Validator.check_schema(schema)
    assert server_json()["$schema"] == schema["$id"]


def test_server_json_is_valid_against_the_registry_schema():
    assert validation_errors(server_json()) == []


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda doc: doc.update(name="lancelot"), ["name"]),
        (lambda doc: doc.update(description="x" * 101), ["description"]),
        (lambda doc: doc["packages"][0].update(version="latest"), ["packages", 0, "version"]),
        (lambda doc: doc["packages"][0].update(unknown=True), ["packages", 0]),
    ],
)
def test_the_schema_rejects_what_the_registry_rejects(change, path):
    # Proves the validation above has teeth: each breakage is caught where it happens.
    document = copy.deepcopy(server_json())
    change(document)
    errors = validation_errors(document)
    assert errors
    assert any(error.startswith(f"{path}:") for error in errors), errors


def test_identity_matches_the_pypi_readme_ownership_marker():
    readme = (ROOT / "server" / "README.md").read_text(encoding="utf-8")
    markers = re.findall(r"<!--\s*mcp-name:\s*(\S+)\s*-->", readme)
    assert markers == [server_json()["name"]]
    assert server_json()["name"] == "io.github.lancelot-search/lancelot"


def test_versions_match_the_server_distribution():
    assert server_json()["version"] == lancelot_server.__version__
    assert the_package()["version"] == lancelot_server.__version__


def test_the_package_is_the_pypi_server_run_with_uvx_over_stdio():
    package = the_package()
    assert package["registryType"] == "pypi"
    assert package["identifier"] == "lancelot-server"
    assert package["runtimeHint"] == "uvx"
    assert package["transport"] == {"type": "stdio"}


def test_repository_points_at_the_project():
    repository = server_json()["repository"]
    assert repository["url"] == "https://github.com/lancelot-search/lancelot"
    assert (ROOT / repository["subfolder"] / "pyproject.toml").is_file()


def test_environment_variables_are_the_stdio_settings():
    # The LANCELOT_* settings only matter in HTTP and Lambda mode, which a registry install never runs.
    stdio_settings = {name for name in settings.DEFAULTS if not name.startswith("LANCELOT_")}
    assert set(env_entries()) == stdio_settings


def test_every_environment_variable_is_described():
    for name, entry in env_entries().items():
        assert len(entry.get("description", "")) > 10, name


def test_only_the_database_path_is_required_and_only_the_key_is_secret():
    entries = env_entries()
    assert {name for name, entry in entries.items() if entry.get("isRequired")} == {"LANCEDB_PATH"}
    assert {name for name, entry in entries.items() if entry.get("isSecret")} == {"OPENAI_API_KEY"}


def test_defaults_match_the_code():
    for name, entry in env_entries().items():
        assert entry.get("default") == settings.DEFAULTS[name], name
