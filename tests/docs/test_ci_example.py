"""examples/ci-rebuild.yml: a GitHub Actions workflow that rebuilds the table when docs/ changes."""

from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / "examples" / "ci-rebuild.yml"


def workflow() -> dict:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def steps() -> list[dict]:
    (job,) = workflow()["jobs"].values()
    return job["steps"]


def runs() -> list[str]:
    return [step["run"] for step in steps() if "run" in step]


def uses() -> list[str]:
    return [step["uses"].split("@")[0] for step in steps() if "uses" in step]


def test_it_runs_on_pushes_that_touch_the_docs():
    # YAML 1.1 reads the bare key `on` as True.
    triggers = workflow().get("on", workflow().get(True))
    assert triggers["push"]["paths"] == ["docs/**"]


def test_it_sets_up_python_and_installs_the_indexer_from_pypi():
    assert uses()[:2] == ["actions/checkout", "actions/setup-python"]
    assert "pip install lancelot-indexer" in runs()


def test_it_runs_the_indexer_quietly_after_installing_it():
    commands = runs()
    index = commands.index("lancelot-index docs lancelot-db --quiet")
    assert index > commands.index("pip install lancelot-indexer")


def test_it_uploads_the_database():
    (upload,) = [step for step in steps() if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload["with"]["path"].rstrip("/") == "lancelot-db"
