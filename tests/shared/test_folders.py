"""What a folder holds, from its listing: tables by their `_versions` folder, files two levels down."""

from __future__ import annotations

from lancelot_schema import folders


def test_a_table_is_a_dot_lance_folder_with_versions(tmp_path):
    (tmp_path / "notes.lance" / "_versions").mkdir(parents=True)
    (tmp_path / "empty.lance").mkdir()
    (tmp_path / ".hidden.lance" / "_versions").mkdir(parents=True)
    assert folders.tables(tmp_path) == ("notes",)
    assert folders.is_table(tmp_path / "notes.lance") and not folders.is_table(tmp_path / "empty.lance")


def test_files_are_found_two_levels_down_and_dot_names_are_left_out(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.md").write_text("x", encoding="utf-8")
    (tmp_path / ".notes.md").write_text("x", encoding="utf-8")
    assert not folders.holds_files(tmp_path)
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "deep.md").write_text("x", encoding="utf-8")
    assert not folders.holds_files(tmp_path)  # three levels down: not looked at
    (tmp_path / "a" / "page.HTML").write_text("x", encoding="utf-8")
    assert folders.holds_files(tmp_path) and folders.holds_files(tmp_path, {".html"})
    assert not folders.holds_files(tmp_path, {".md"})
    assert not folders.holds_files(tmp_path / "missing")
