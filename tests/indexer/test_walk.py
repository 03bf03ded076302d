import os

from lancelot_indexer.walk import Excluded, Found, Skipped, is_document, walk


def test_walk_is_sorted_skips_dot_names_and_takes_document_extensions_in_any_case(docs):
    found = [item.relative for item in walk(docs) if isinstance(item, Found)]
    assert found == [
        "Page.HTM",
        "UPPER.TXT",
        "binary.txt",
        "bom.txt",
        "broken.html",
        "empty.md",
        "guide/api.markdown",
        "guide/install.md",
        "legacy.txt",
        "link-inside.md",
        "long.txt",
        "wide.txt",
    ]


def test_links_that_leave_the_folder_loop_or_dangle_are_skipped_with_a_reason(docs):
    skipped = {item.relative: item.reason for item in walk(docs) if isinstance(item, Skipped)}
    assert skipped == {
        "dangling.md": "broken or looping symlink",
        "guide/loop": "symlink loop",
        "link-outside.md": "symlink leads outside the documents folder",
    }


def test_links_that_could_not_be_documents_are_passed_over_without_a_word(tmp_path):
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    docs.mkdir()
    outside.mkdir()
    (outside / "jquery.js").write_text("x", encoding="utf-8")
    (docs / "jquery.js").symlink_to(outside / "jquery.js")  # as Sphinx's _static/ has them
    (docs / "gone.png").symlink_to(tmp_path / "missing.png")
    (docs / "shared").symlink_to(outside, target_is_directory=True)  # a folder outside may hold documents
    (docs / "a.md").write_text("x", encoding="utf-8")
    items = {item.relative: item for item in walk(docs)}
    assert items == {
        "a.md": Found(docs / "a.md", "a.md"),
        "shared": Skipped("shared", "symlink leads outside the documents folder"),
    }


def test_exclude_leaves_out_paths_and_names_and_does_not_enter_excluded_folders(tmp_path):
    for relative in ["html/_sources/a.txt", "html/lib/b.html", "html/genindex-A.html", "notes/_sources/c.md"]:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("x", encoding="utf-8")
    items = list(walk(tmp_path, exclude=["_sources", "html/genindex*.html"]))
    assert [item.relative for item in items if isinstance(item, Found)] == ["html/lib/b.html"]
    assert [item for item in items if isinstance(item, Excluded)] == [
        Excluded("html/_sources", "_sources"),
        Excluded("html/genindex-A.html", "html/genindex*.html"),
        Excluded("notes/_sources", "_sources"),
    ]


def test_exclude_star_crosses_folders_and_matching_is_case_sensitive(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "draft.md").write_text("x", encoding="utf-8")
    (tmp_path / "Draft.md").write_text("x", encoding="utf-8")
    found = [item.relative for item in walk(tmp_path, exclude=["a/*.md", "draft*"]) if isinstance(item, Found)]
    assert found == ["Draft.md"]


def test_a_name_that_is_not_utf8_is_skipped_with_a_printable_reason(tmp_path):
    root = bytes(tmp_path)
    (tmp_path / "good.md").write_text("x", encoding="utf-8")
    with open(os.path.join(root, b"bad\xff\xfe.md"), "wb") as handle:
        handle.write(b"x\n")
    os.mkdir(os.path.join(root, b"old\xe9"))
    with open(os.path.join(root, b"old\xe9", b"inside.md"), "wb") as handle:
        handle.write(b"x\n")
    with open(os.path.join(root, b"picture\xff.png"), "wb") as handle:
        handle.write(b"x")
    items = list(walk(tmp_path))
    assert [item.relative for item in items if isinstance(item, Found)] == ["good.md"]
    assert [item for item in items if isinstance(item, Skipped)] == [
        Skipped("bad\ufffd\ufffd.md", "name is not valid UTF-8; rename it to index it"),
        Skipped("old\ufffd", "name is not valid UTF-8; rename it to index it"),
    ]


def test_exclude_takes_a_leading_dot_slash_and_a_trailing_slash_for_folders_only(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.md").write_text("x", encoding="utf-8")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "draft.md").write_text("x", encoding="utf-8")
    (tmp_path / "draft.md").write_text("x", encoding="utf-8")
    items = list(walk(tmp_path, exclude=["./sub", "draft.md/"]))
    assert [item.relative for item in items if isinstance(item, Found)] == ["draft.md", "notes/draft.md"]
    assert [item for item in items if isinstance(item, Excluded)] == [Excluded("sub", "./sub")]
    folders_only = [item.relative for item in walk(tmp_path, exclude=["sub/"]) if isinstance(item, Excluded)]
    assert folders_only == ["sub"]


def test_a_linked_folder_inside_the_root_is_followed(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.md").write_text("x", encoding="utf-8")
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert [item.relative for item in walk(tmp_path)] == ["alias/a.md", "real/a.md"]


def test_document_extensions():
    assert all(is_document(name) for name in ["a.md", "b.MARKDOWN", "c.Txt", "d.html", "e.HTM"])
    assert not any(is_document(name) for name in ["a.rst", "b.pdf", "md", "c.md.bak"])


def test_a_named_pipe_with_a_document_name_is_skipped_not_read(tmp_path):
    # Reading a pipe with no writer would block the indexer forever.
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "a.md").write_text("x", encoding="utf-8")
    items = {item.relative: item for item in walk(tmp_path)}
    assert isinstance(items["a.md"], Found)
    assert items["pipe.md"] == Skipped("pipe.md", "not a regular file")
