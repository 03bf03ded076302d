"""Documentation builds recognised: their generated pages left out, said in one summary line, kept on request."""

from __future__ import annotations

from pathlib import Path

import lancedb
import pytest
from click.testing import CliRunner
from tests.support import builds

from lancelot_indexer.cli import main
from lancelot_indexer.documents.generated import CONTENTS, KINDS, SPHINX, Generated, recognise
from lancelot_indexer.documents.walk import Found, walk
from lancelot_indexer.readers import html
from lancelot_schema import layout


def index(docs: Path, db: Path, *flags: str) -> str:
    result = CliRunner().invoke(main, [str(docs), str(db), *flags])
    assert result.exit_code == 0, result.output
    return result.stdout


def rows(db: Path) -> dict[str, list[dict]]:
    by_path: dict[str, list[dict]] = {}
    for row in lancedb.connect(db).open_table("documents").to_arrow().to_pylist():
        by_path.setdefault(row[layout.PATH], []).append(row)
    return by_path


def test_a_sphinx_build_is_indexed_without_its_generated_pages_and_one_line_says_so(tmp_path):
    pages = builds.sphinx(tmp_path / "html")
    out = index(tmp_path / "html", tmp_path / "db")
    assert sorted(rows(tmp_path / "db")) == sorted(path for path, authored in pages.items() if authored)
    left_out = [line for line in out.splitlines() if line.startswith("Left out")]
    assert left_out == [
        "Left out 10 pages that Sphinx generated: 5 copies of sources, 3 index pages, 1 table of contents, "
        "1 search page (--keep-generated indexes them)."
    ]
    assert "--exclude" not in out.replace("--keep-generated", "")


def test_a_source_copy_is_read_as_rest_where_its_page_is_not_in_the_build(tmp_path):
    builds.sphinx(tmp_path / "html")
    changelog = rows_of(tmp_path, "_sources/changelog.rst.txt")
    assert [(row[layout.TITLE], row[layout.HEADING], row[layout.FILE_TYPE]) for row in changelog] == [
        ("Changelog", "Changelog", "rst"),
        ("Changelog", "Changelog > Version 1.0", "rst"),
    ]
    assert not any("=====" in row[layout.TEXT] or "-----" in row[layout.TEXT] for row in changelog)


def rows_of(tmp_path: Path, path: str, *flags: str) -> list[dict]:
    index(tmp_path / "html", tmp_path / "db", *flags)
    return rows(tmp_path / "db")[path]


def test_keep_generated_indexes_every_page_and_reads_the_source_copies_as_rest(tmp_path):
    pages = builds.sphinx(tmp_path / "html")
    out = index(tmp_path / "html", tmp_path / "db", "--keep-generated")
    found = rows(tmp_path / "db")
    assert sorted(found) == sorted(pages) and "Left out" not in out
    install = found["_sources/guide/install.rst.txt"]
    assert [row[layout.HEADING] for row in install] == ["Installing", "Installing > From source"]
    assert {row[layout.TITLE] for row in install} == {"Installing"} and install[0][layout.FILE_TYPE] == "rst"
    assert "Installing" in found["contents.html"][0][layout.TEXT]  # the table of contents, as before


@pytest.mark.parametrize("make", [builds.mkdocs, builds.doxygen, builds.javadoc], ids=lambda make: make.__name__)
def test_other_generators_builds_lose_their_generated_pages(tmp_path, make):
    pages = make(tmp_path / "html")
    out = index(tmp_path / "html", tmp_path / "db")
    assert sorted(rows(tmp_path / "db")) == sorted(path for path, authored in pages.items() if authored)
    generated = sum(not authored for authored in pages.values())
    assert f"Left out {generated} pages that " in out


def test_each_build_is_recognised_at_its_own_root_and_pages_named_alike_elsewhere_are_kept(tmp_path):
    docs = tmp_path / "docs"
    sphinx = builds.sphinx(docs / "gearbox" / "_build" / "html")
    mkdocs = builds.mkdocs(docs / "flywheel" / "site")
    # Named like generated pages, but in no build: a person's notes.
    (docs / "notes").mkdir()
    for name in ("genindex.html", "search.html", "404.html", "contents.html"):
        (docs / "notes" / name).write_text(f"<h1>{name}</h1><p>My own page about sprockets.</p>", encoding="utf-8")
    (docs / "notes" / "_sources").mkdir()
    (docs / "notes" / "_sources" / "notes.rst.txt").write_text("Notes\n=====\n\nKept.\n", encoding="utf-8")
    out = index(docs, tmp_path / "db")
    expected = [
        *(f"gearbox/_build/html/{path}" for path, authored in sphinx.items() if authored),
        *(f"flywheel/site/{path}" for path, authored in mkdocs.items() if authored),
        "notes/404.html", "notes/_sources/notes.rst.txt", "notes/contents.html", "notes/genindex.html",
        "notes/search.html",
    ]  # fmt: skip
    assert sorted(rows(tmp_path / "db")) == sorted(expected)
    generated = sum(not authored for authored in [*sphinx.values(), *mkdocs.values()])
    assert f"Left out {generated} pages that Sphinx and MkDocs generated: " in out


def test_a_marker_file_must_be_what_its_generator_writes(tmp_path):
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "objects.inv").write_text("a list of the objects in my attic\n", encoding="utf-8")
    (folder / "genindex.html").write_text("<p>My own index.</p>", encoding="utf-8")
    assert recognise(folder, "", {"objects.inv", "genindex.html"}) == []
    assert [type(item) for item in walk(folder)] == [Found]
    (folder / "searchindex.js").write_text('Search.setIndex({"docnames": []})', encoding="utf-8")
    assert [build.generator for build in recognise(folder, "", {"objects.inv", "searchindex.js"})] == [SPHINX]
    assert [type(item) for item in walk(folder)] == [Generated]
    assert [type(item) for item in walk(folder, leave_generated=False)] == [Found]


def test_a_folder_of_generated_pages_alone_is_the_no_documents_error_naming_them(tmp_path):
    site = tmp_path / "site"
    builds.mkdocs(site)
    for page in ("index.html", "setup/index.html"):
        (site / page).unlink()
    result = CliRunner().invoke(main, [str(site), str(tmp_path / "db")])
    assert result.exit_code == 1
    assert ", 2 generated pages left out (--keep-generated indexes them)" in result.output


def test_the_kind_of_page_the_html_reader_names_is_one_the_summary_counts():
    generator, kind = html.CONTENTS_PAGE
    assert generator == SPHINX.name and KINDS[kind] == CONTENTS
