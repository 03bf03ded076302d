"""Package metadata of the three distributions: what PyPI shows, and what the built files carry."""

import email
import shutil
import subprocess
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

# One worker runs this module when the suite runs on several: the wheels built once for the module, made once.
pytestmark = pytest.mark.xdist_group("built_wheels")

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = {"shared": "lancelot-schema", "indexer": "lancelot-indexer", "server": "lancelot-server"}
REPO_URL = "https://github.com/lancelot-search/lancelot"


def project(member: str) -> dict:
    with (ROOT / member / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)["project"]


def uv() -> str:
    found = ROOT / ".tools" / "bin" / "uv"
    if found.is_file():
        return str(found)
    on_path = shutil.which("uv")
    if on_path is None:
        pytest.fail("uv not found: run scripts/setup")
    return on_path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """Each member built the way a release would be: an sdist, then a wheel from that sdist."""
    out = tmp_path_factory.mktemp("dist")
    result = {}
    for member in MEMBERS:
        target = out / member
        done = subprocess.run(
            [uv(), "build", "--quiet", "--out-dir", target, ROOT / member],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        (sdist,) = target.glob("*.tar.gz")
        (wheel,) = target.glob("*.whl")
        result[member] = (sdist, wheel)
    return result


def wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(name))


@pytest.mark.parametrize("member", MEMBERS)
def test_names_and_descriptions(member):
    meta = project(member)
    assert meta["name"] == MEMBERS[member]
    assert 30 < len(meta["description"]) <= 200
    assert "\n" not in meta["description"]


@pytest.mark.parametrize("member", MEMBERS)
def test_license_is_apache_with_its_file(member):
    meta = project(member)
    assert meta["license"] == "Apache-2.0"
    assert meta["license-files"] == ["LICENSE"]
    assert (ROOT / member / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


def test_the_license_file_is_the_apache_license():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text
    assert "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


@pytest.mark.parametrize("member", MEMBERS)
def test_classifiers(member):
    classifiers = project(member)["classifiers"]
    # PEP 639: with a license expression, PyPI refuses the old License :: classifiers.
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Typing :: Typed" in classifiers
    assert any(c.startswith("Development Status ::") for c in classifiers)


@pytest.mark.parametrize("member", MEMBERS)
def test_project_urls_point_at_the_repository(member):
    urls = project(member)["urls"]
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    assert all(url.startswith(REPO_URL) for url in urls.values())
    # One project: the three pages on PyPI send a person to the same places.
    assert urls == project("shared")["urls"]


@pytest.mark.parametrize("member", MEMBERS)
def test_each_distribution_has_a_readme_that_points_to_the_main_one(member):
    assert project(member)["readme"] == "README.md"
    text = (ROOT / member / "README.md").read_text(encoding="utf-8")
    assert text.startswith(f"# {MEMBERS[member]}\n")
    assert REPO_URL in text
    assert "main README" in " ".join(text.split())
    # PyPI shows the README away from the repository, where relative links break.
    assert "](./" not in text
    assert "](../" not in text


@pytest.mark.slow
@pytest.mark.parametrize("member", MEMBERS)
def test_built_wheel_carries_license_and_metadata(built, member):
    sdist, wheel = built[member]
    metadata = wheel_metadata(wheel)
    assert metadata["Name"] == MEMBERS[member]
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["Summary"] == project(member)["description"]
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert REPO_URL in metadata.get_payload()
    with zipfile.ZipFile(wheel) as archive:
        (license_path,) = [n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert archive.read(license_path) == (ROOT / "LICENSE").read_bytes()
    with tarfile.open(sdist) as archive:
        assert any(name.endswith("/LICENSE") for name in archive.getnames())


@pytest.mark.slow
def test_the_server_wheel_carries_the_registry_ownership_marker(built):
    _, wheel = built["server"]
    assert "<!-- mcp-name: io.github.lancelot-search/lancelot -->" in wheel_metadata(wheel).get_payload()
