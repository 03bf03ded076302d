"""The release workflow, read without running it: on a version tag it checks the tag against the version,
builds exactly the three distributions, checks and installs them, and publishes by trusted publishing
(an OIDC token, no stored secret). And scripts/check-version, which it runs, run for real."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from lancelot_schema import local_models

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
CHECK_VERSION = ROOT / "scripts" / "check-version"


def workflow() -> dict:
    document = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as true.
    document["on"] = document.pop(True, document.get("on"))
    return document


def runs(job: dict) -> list[str]:
    return [line.strip() for step in job["steps"] for line in step.get("run", "").splitlines()]


def members() -> list[str]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)["tool"]["uv"]["workspace"]["members"]


def every_key(node: object) -> list[str]:
    if isinstance(node, dict):
        return [str(key) for key in node] + [key for value in node.values() for key in every_key(value)]
    if isinstance(node, list):
        return [key for item in node for key in every_key(item)]
    return []


def test_it_runs_on_a_version_tag_only():
    assert workflow()["on"] == {"push": {"tags": ["v*"]}}


def test_it_builds_exactly_the_three_distributions_and_checks_them_first():
    build = workflow()["jobs"]["build"]
    lines = runs(build)
    built = [match.group(1) for line in lines if (match := re.fullmatch(r"python -m build --outdir dist (\w+)", line))]
    assert built == members() == ["shared", "indexer", "server"]
    assert 'test "$(ls dist | wc -l)" -eq 6' in lines  # an sdist and a wheel each, nothing else
    assert "python -m twine check --strict dist/*" in lines
    assert "/tmp/smoke/bin/pip install dist/*.whl" in lines
    # The tag is checked before anything is built.
    assert lines.index('python scripts/check-version "$GITHUB_REF_NAME"') < lines.index(
        "python -m build --outdir dist shared"
    )


def test_it_publishes_by_trusted_publishing_with_no_secret():
    document = workflow()
    assert document["permissions"] == {"contents": "read"}
    build, publish = document["jobs"]["build"], document["jobs"]["publish"]
    assert "permissions" not in build
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"] == "pypi"  # the environment PyPI's trusted publishers name
    (publishing,) = [step for step in publish["steps"] if "pypa/gh-action-pypi-publish" in step.get("uses", "")]
    assert publishing["uses"] == "pypa/gh-action-pypi-publish@release/v1"
    assert not {"password", "user", "repository-url"} & set(every_key(document))
    assert "secrets." not in WORKFLOW.read_text(encoding="utf-8")
    # What the build job uploads is what the publish job downloads, where the action looks for it.
    (upload,) = [step for step in build["steps"] if step.get("uses", "").startswith("actions/upload-artifact")]
    (download,) = [step for step in publish["steps"] if step.get("uses", "").startswith("actions/download-artifact")]
    assert upload["with"] == download["with"] == {"name": "dist", "path": "dist/"}


def check_version(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([root / "scripts" / "check-version", *args], capture_output=True, text=True, timeout=60)


def test_check_version_agrees_with_this_tree_and_refuses_another_tag():
    version = check_version(ROOT).stdout.strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", version)
    assert check_version(ROOT, f"v{version}").returncode == 0
    wrong = check_version(ROOT, "v99.0.0")
    assert wrong.returncode == 1
    assert f"the tag v99.0.0 is not v{version}" in wrong.stderr


@pytest.fixture
def tree(tmp_path) -> Path:
    """The files check-version reads, copied, to be put out of step."""
    for name in ("scripts/check-version", "server.json", *(f"{m}/pyproject.toml" for m in members())):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tmp_path / name)
    for source in ROOT.glob("*/src/lancelot_*/__init__.py"):
        target = tmp_path / source.relative_to(ROOT)
        target.parent.mkdir(parents=True)
        shutil.copy(source, target)
    return tmp_path


def test_check_version_names_each_place_out_of_step(tree):
    version = check_version(tree).stdout.strip()
    indexer = tree / "indexer" / "src" / "lancelot_indexer" / "__init__.py"
    indexer.write_text(indexer.read_text(encoding="utf-8").replace(version, "9.9.9"), encoding="utf-8")
    server = tree / "server" / "pyproject.toml"
    pin = f'"lancelot-schema=={version}"'
    server.write_text(server.read_text(encoding="utf-8").replace(pin, '"lancelot-schema>=0.1"'), encoding="utf-8")
    done = check_version(tree)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Not releasable as one version:",
        f"  indexer/src/lancelot_indexer/__init__.py: 9.9.9, not {version}",
        f"  server/pyproject.toml (lancelot-schema>=0.1): (not ==), not {version}",
    ]


def test_the_default_local_models_files_are_published_once_from_the_checked_folder(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    from model_folder.recipes import RECIPES

    model = workflow()["jobs"]["model"]
    lines = runs(model)
    assert model["permissions"] == {"contents": "write"}
    assert "scripts/model-folder model" in lines
    published = next(line for line in lines if "gh release create" in line)
    assert published.startswith('gh release view "$MODEL_RELEASE" >/dev/null 2>&1 ||')
    assert "model/model.onnx model/tokenizer.json" in published
    # The release the download fetches from is the one this job makes, and it names the form built: a release
    # published once is never changed, so other bytes need another name.
    release = model["env"]["MODEL_RELEASE"]
    assert local_models.KNOWN[local_models.DEFAULT_MODEL].home == f"{local_models.RELEASES}/{release}"
    default = RECIPES[local_models.DEFAULT_MODEL].default
    assert release == f"model-{local_models.DEFAULT_MODEL}-{default}" == "model-all-MiniLM-L6-v2-int8-per-channel"
