import os
from itertools import islice

from tests.indexer.conftest import fan_out

from lancelot_indexer.documents.walk import Duplicate, Excluded, Found, Skipped, is_document, walk


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
        "long.txt",
        "wide.txt",
    ]
    # A link to a document found before, under its own path: the same file, found once.
    assert [item for item in walk(docs) if isinstance(item, Duplicate)] == [
        Duplicate("link-inside.md", "guide/install.md")
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


def test_a_linked_folder_inside_the_root_is_followed_and_walked_once_under_its_first_path(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.md").write_text("x", encoding="utf-8")
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert list(walk(tmp_path)) == [Found(tmp_path / "alias" / "a.md", "alias/a.md"), Duplicate("real", "alias")]


def test_links_that_fan_out_find_each_file_once_without_listing_the_paths_to_it(tmp_path):
    # 2**30 paths lead to the last page (30 links in a row: Linux follows at most 40 in one path). Listing
    # them would never end: the walk must never enter a folder it walked before.
    root = fan_out(tmp_path / "docs", levels=30)
    items = list(islice(walk(root), 1000))
    assert len(items) < 1000
    found = sorted(item.path.name for item in items if isinstance(item, Found))
    assert found == sorted(f"page{level}.md" for level in range(31))
    duplicates = [item for item in items if isinstance(item, Duplicate)]
    # Each folder's second link, and each folder l<n> that a link reached first, is named once.
    assert len(duplicates) == 30 + 30
    assert Duplicate("l0/b", "l0/a") in duplicates
    assert Duplicate("l1", "l0/a") in duplicates
    assert not any(isinstance(item, Skipped) for item in items)


def test_hard_links_to_one_file_are_found_once_under_the_first_path(tmp_path):
    (tmp_path / "b.md").write_text("x", encoding="utf-8")
    os.link(tmp_path / "b.md", tmp_path / "a.md")
    (tmp_path / "sub").mkdir()
    os.link(tmp_path / "b.md", tmp_path / "sub" / "c.md")
    assert list(walk(tmp_path)) == [
        Found(tmp_path / "a.md", "a.md"),
        Duplicate("b.md", "a.md"),
        Duplicate("sub/c.md", "a.md"),
    ]


def test_document_extensions():
    assert all(
        is_document(name) for name in ["a.md", "b.MARKDOWN", "c.Txt", "d.html", "e.HTM", "f.rst", "g.PDF", "h.docx"]
    )
    assert not any(is_document(name) for name in ["a.odt", "b.doc", "md", "c.md.bak", "d.pdf.part"])


def test_a_named_pipe_with_a_document_name_is_skipped_not_read(tmp_path):
    # Reading a pipe with no writer would block the indexer forever.
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "a.md").write_text("x", encoding="utf-8")
    items = {item.relative: item for item in walk(tmp_path)}
    assert isinstance(items["a.md"], Found)
    assert items["pipe.md"] == Skipped("pipe.md", "not a regular file")
