"""How an installation was made, read from what pip and uv leave behind."""

import sys
from pathlib import Path

from lancelot_schema import installation

ROOT = Path(__file__).resolve().parents[2]


def test_this_environment_s_packages_came_from_the_clone_s_folders():
    # scripts/setup installs the workspace's members from their folders (editable), not from an index.
    url = installation.installed_from("lancelot-schema")
    assert installation.local_folder(url) == ROOT / "shared"


def test_the_clone_is_the_folder_that_holds_scripts_install(tmp_path):
    assert installation.clone_of("lancelot-indexer") == ROOT
    assert installation.clone_of("click") is None


def test_a_package_from_an_index_or_none_at_all_has_no_url():
    assert installation.installed_from("click") is None
    assert installation.installed_from("no-such-distribution-here") is None


def test_only_a_file_url_to_an_existing_folder_is_a_local_folder(tmp_path):
    assert installation.local_folder(tmp_path.as_uri()) == tmp_path
    assert installation.local_folder((tmp_path / "gone").as_uri()) is None
    assert installation.local_folder("https://github.com/lancelot-search/lancelot") is None
    assert installation.local_folder(None) is None


def uv_environment(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\nuv = 0.13.8\n", encoding="utf-8")
    return folder


def test_an_environment_inside_uv_s_cache_is_uvx_s(tmp_path):
    (tmp_path / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n", encoding="utf-8")
    assert installation.under_uvx(str(uv_environment(tmp_path / "archive-v0" / "abc")))


def test_a_lasting_environment_is_not_uvx_s(tmp_path):
    # A project's .venv and `uv tool install`'s environments carry uv's mark but lie outside its cache.
    tagged = uv_environment(tmp_path / "tools" / "lancelot-server")
    (tagged / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n", encoding="utf-8")
    assert not installation.under_uvx(str(tagged))
    assert not installation.under_uvx(sys.prefix)
    assert not installation.under_uvx(str(tmp_path / "no-environment"))
