"""The command as a person or a CI job runs it: exit statuses, one summary, --quiet, the progress bar."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import lancedb
import pytest
from click.testing import CliRunner
from tests.support.terminal import run_in_terminal

from lancelot_indexer.cli import main

from .conftest import deep_html, fan_out

BIN = Path(sys.executable).parent


def test_success_prints_one_summary_with_skips_and_exits_0(docs, tmp_path):
    result = CliRunner().invoke(main, [str(docs), str(tmp_path / "db")])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Indexed 9 documents into ")
    assert "  binary.txt: binary file (contains NUL bytes)" in result.stdout
    assert "Read as Windows-1252 (not valid UTF-8): legacy.txt" in result.stdout
    assert (
        "Left out 1 duplicate (files or folders reached by more than one path, each indexed once, under its first "
        "path)." in result.stdout
    )
    assert "\r" not in result.stdout  # no progress bar without a terminal


def test_one_document_and_one_passage_are_counted_in_the_singular(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "only.md").write_text("# Only\n\nOne short page.\n", encoding="utf-8")
    result = CliRunner().invoke(main, [str(docs), str(tmp_path / "db")])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Indexed 1 document into 1 passage in table 'documents' of ")


# Root reads any file; without these two capabilities it is refused like any other user.
WITHOUT_READ_OVERRIDE = ["--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]


def test_an_unreadable_file_is_skipped_with_its_reason_and_the_rest_is_indexed(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "open.md").write_text("Readable text.\n", encoding="utf-8")
    locked = docs / "locked.md"
    locked.write_text("Nobody may read this.\n", encoding="utf-8")
    locked.chmod(0)
    command = [str(BIN / "lancelot-index"), str(docs), str(tmp_path / "db")]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: every file is readable")
        command = [setpriv, *WITHOUT_READ_OVERRIDE, *command]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Indexed 1 document into 1 passage" in out.stdout
    assert "  locked.md: unreadable: Permission denied" in out.stdout
    assert "Traceback" not in out.stderr
    table = lancedb.connect(tmp_path / "db").open_table("documents")
    assert table.to_arrow()["path"].to_pylist() == ["open.md"]


def test_exclude_is_counted_in_the_summary_and_a_pattern_that_matches_nothing_is_named(tmp_path):
    docs = tmp_path / "docs"
    (docs / "_sources").mkdir(parents=True)
    (docs / "_sources" / "page.txt").write_text("Source of the page.\n", encoding="utf-8")
    (docs / "page.html").write_text("<title>Page</title><p>The page.</p>", encoding="utf-8")
    command = [BIN / "lancelot-index", docs, tmp_path / "db", "--exclude", "_sources", "--exclude", "_source"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Indexed 1 document into 1 passage" in out.stdout
    assert "Left out by --exclude: 1 path." in out.stdout
    assert "--exclude '_source' matched nothing." in out.stdout
    assert "_source" not in out.stderr  # said once, in the summary; the log is for what it does not say
    table = lancedb.connect(tmp_path / "db").open_table("documents")
    assert table.to_arrow()["path"].to_pylist() == ["page.html"]


def test_excluding_everything_is_the_no_documents_error_naming_the_exclusions(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("A.\n", encoding="utf-8")
    (docs / "b.md").write_text("B.\n", encoding="utf-8")
    out = subprocess.run(
        [BIN / "lancelot-index", docs, tmp_path / "db", "--exclude", "*.md"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    assert "No documents found in" in out.stderr and "2 paths left out by --exclude" in out.stderr
    assert not (tmp_path / "db" / "documents.lance").exists()


def test_quiet_prints_nothing_on_stdout(docs, tmp_path):
    result = CliRunner().invoke(main, ["--quiet", str(docs), str(tmp_path / "db")])
    assert result.exit_code == 0
    assert result.stdout == ""


def test_user_mistakes_exit_1_with_one_line_and_no_traceback(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = subprocess.run([BIN / "lancelot-index", empty, tmp_path / "db"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "Error: No documents found in" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "db").exists()  # a failed run leaves no new empty folder behind


def test_a_db_that_is_a_file_or_a_folder_without_write_access_is_named_precisely(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("A.\n", encoding="utf-8")
    (tmp_path / "dbfile").write_text("x", encoding="utf-8")
    out = subprocess.run([BIN / "lancelot-index", docs, tmp_path / "dbfile"], capture_output=True, text=True)
    assert out.returncode == 1
    assert f"Error: {tmp_path / 'dbfile'} is a file, not a database folder." in out.stderr
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o555)
    command = [str(BIN / "lancelot-index"), str(docs), str(closed)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: every folder is writable")
        command = [setpriv, *WITHOUT_READ_OVERRIDE, *command]
    out = subprocess.run(command, capture_output=True, text=True)
    assert out.returncode == 1
    assert f"Error: Cannot write in the database folder {closed}: Permission denied." in out.stderr


def test_usage_errors_exit_2(tmp_path):
    assert CliRunner().invoke(main, []).exit_code == 2
    assert CliRunner().invoke(main, ["--passage-size", "5", str(tmp_path), str(tmp_path / "db")]).exit_code == 2
    assert CliRunner().invoke(main, ["--chunk-size", "5", str(tmp_path), str(tmp_path / "db")]).exit_code == 2


def test_help_and_every_line_a_run_prints_say_passage_never_chunk(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n" + "A sentence of the page. " * 120, encoding="utf-8")
    shown = CliRunner().invoke(main, ["--help"]).output
    first = CliRunner().invoke(main, [str(docs), str(tmp_path / "db"), "--passage-size", "600"])
    again = CliRunner().invoke(main, [str(docs), str(tmp_path / "db"), "--chunk-size", "1200"])  # the earlier name
    assert "--passage-size" in shown and first.exit_code == again.exit_code == 0
    assert first.stdout.startswith("Indexed 1 document into 6 passages in table 'documents'")
    assert "Read every document again: passage size 600 -> 1200." in again.stdout
    assert "chunk" not in (shown + first.output + again.output).lower()


def test_table_passage_size_and_no_fts_options(docs, tmp_path):
    db = tmp_path / "db"
    result = CliRunner().invoke(main, ["--table", "notes", "--passage-size", "200", "--no-fts", str(docs), str(db)])
    assert result.exit_code == 0, result.output
    table = lancedb.connect(db).open_table("notes")
    # No full-text index; the B-tree indexes that reads use, and the file types' bitmap that filters use, are
    # built whatever --no-fts says.
    assert sorted((index.index_type, *index.columns) for index in table.list_indices()) == [
        ("BTree", "passage"),
        ("BTree", "path"),
        ("Bitmap", "file_type"),
    ]
    assert max(len(text) for text in table.to_arrow()["text"].to_pylist()) <= 200


def test_a_progress_bar_is_drawn_on_a_terminal(docs, tmp_path):
    status, text = run_in_terminal([BIN / "lancelot-index", docs, tmp_path / "db"])
    assert status == 0
    assert "read" in text and "100%" in text
    assert "Indexed 9 documents" in text


def test_a_terminal_shows_the_bar_and_the_summary_each_thing_once_and_log_lines_when_asked(docs, tmp_path):
    command = [BIN / "lancelot-index", docs, tmp_path / "db", "--exclude", "drafts-*"]
    status, text = run_in_terminal(command)
    assert status == 0 and "Indexed 9 documents into " in text
    assert "[info" not in text and "[warning" not in text  # no log line wraps between the bar and the summary
    assert text.count("drafts-*") == 1 and text.count("binary.txt") == 1  # in the summary alone
    status, text = run_in_terminal([*command, "--log-level", "info"])
    assert status == 0 and re.search(r"\[info\s*\] indexed ", text)
    status, text = run_in_terminal([*command, "--quiet"])
    assert status == 0 and "Indexed" not in text
    assert re.search(r"\[warning\s*\] --exclude matched nothing\s+pattern=drafts-\*", text)  # no summary: logged


def test_the_session_database_fixture_is_searchable(indexed_db):
    table = lancedb.connect(indexed_db).open_table("documents")
    assert table.search("puncture", query_type="fts", fts_columns="text").limit(1).to_list()


# Whether structlog and Ray were imported by the run, printed after it; a fresh process, since tests import them.
QUIET_RUN = """
import sys
from lancelot_indexer.cli import main
main(["--quiet", sys.argv[1], sys.argv[2]], standalone_mode=False)
print(sorted(name for name in ("ray", "structlog") if name in sys.modules))
"""


def test_a_quiet_clean_run_never_imports_structlog_and_warnings_still_reach_stderr(tmp_path):
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", QUIET_RUN, clean, tmp_path / "db"], capture_output=True, text=True)
    assert (out.returncode, out.stdout, out.stderr) == (0, "[]\n", "")
    (clean / "binary.txt").write_bytes(b"\x00\x01")
    out = subprocess.run([sys.executable, "-c", QUIET_RUN, clean, tmp_path / "db"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == "['structlog']\n"
    assert "skipped" in out.stderr and "binary.txt" in out.stderr and "binary file" in out.stderr


def test_help_and_usage_errors_import_neither_lance_nor_pyarrow():
    code = (
        "import sys\nfrom lancelot_indexer.cli import main\n"
        "for args in (['--help'], []):\n"
        "    try:\n        main(args)\n    except SystemExit:\n        pass\n"
        "print(sorted(name for name in ('lance', 'pyarrow', 'structlog', 'lancedb', 'ray') if name in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "Usage: " in out.stdout and "Missing argument" in out.stderr
    assert out.stdout.splitlines()[-1] == "[]"


def test_a_ray_address_that_names_no_cluster_is_a_usage_error_saying_what_one_is(docs, tmp_path):
    for address in ("http://head:8265", "head"):
        result = CliRunner().invoke(main, [str(docs), str(tmp_path / "db"), "--ray", address])
        assert result.exit_code == 2, (address, result.output)
        assert f"'--ray': {address!r} is no Ray address: give auto, ray://HEAD:10001 or HOST:PORT" in result.stderr
    assert not (tmp_path / "db").exists()


def test_a_table_name_lancedb_cannot_open_is_a_usage_error_and_nothing_is_written(docs, tmp_path):
    db = tmp_path / "sub" / "db"
    for name in ("../escaped", "a/b", "two words", "", ".", "é", "a" * 300):
        result = CliRunner().invoke(main, ["--table", name, str(docs), str(db)])
        assert result.exit_code == 2, (name, result.output)
        assert "--table" in result.stderr and "letters, digits" in result.stderr
    assert not db.exists() and not (tmp_path / "sub" / "escaped.lance").exists()


def test_a_bad_lancedb_table_setting_exits_1_naming_it(docs, tmp_path):
    result = CliRunner(env={"LANCEDB_TABLE": "two words"}).invoke(main, [str(docs), str(tmp_path / "db")])
    assert result.exit_code == 1
    assert "LANCEDB_TABLE" in result.stderr and "'two words'" in result.stderr
    assert not (tmp_path / "db").exists()


def test_a_link_template_is_stamped_kept_on_an_unchanged_rebuild_and_removed_when_dropped(docs, tmp_path):
    db = tmp_path / "db"
    template = "https://docs.example.com/{path}#{anchor}"

    def stamped():
        raw = lancedb.connect(db).open_table("documents").schema.metadata or {}
        return raw.get(b"lancelot.link_template", b"").decode()

    assert CliRunner().invoke(main, ["--link", template, str(docs), str(db)]).exit_code == 0
    assert stamped() == template
    other = "https://github.com/o/r/blob/main/{path}#L{line}"
    assert CliRunner().invoke(main, ["--link", other, str(docs), str(db)]).exit_code == 0
    assert stamped() == other
    assert CliRunner().invoke(main, [str(docs), str(db)]).exit_code == 0
    assert stamped() == ""


def test_a_link_template_that_cannot_work_is_a_usage_error_and_nothing_is_written(docs, tmp_path):
    for template in ("https://x/{page}", "https://x/{title}", "https://x/{anchor}#", "https://x/{path"):
        result = CliRunner().invoke(main, ["--link", template, str(docs), str(tmp_path / "db")])
        assert result.exit_code == 2, result.output
        assert "--link" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "db").exists()


def test_a_language_is_stamped_named_in_the_summary_and_builds_its_indexes(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ja.md").write_text("# パッケージ管理\n\nパッケージ管理システムの使い方。\n", encoding="utf-8")
    db = tmp_path / "db"
    result = CliRunner().invoke(main, ["--language", "Japanese", str(docs), str(db)])
    assert result.exit_code == 0, result.output
    assert "(full-text index: cjk)" in result.stdout
    table = lancedb.connect(db).open_table("documents")
    assert (table.schema.metadata or {})[b"lancelot.language"] == b"cjk"
    assert table.search("管理", query_type="fts").limit(5).to_arrow().num_rows == 1


def test_an_unknown_language_is_a_usage_error_naming_the_choices_and_nothing_is_written(docs, tmp_path):
    result = CliRunner().invoke(main, ["--language", "klingon", str(docs), str(tmp_path / "db")])
    assert result.exit_code == 2
    assert "--language" in result.stderr and "'klingon'" in result.stderr and "german" in result.stderr
    assert not (tmp_path / "db").exists()


def test_links_that_fan_out_index_each_file_once_and_the_summary_counts_the_duplicates(tmp_path):
    docs = fan_out(tmp_path / "docs", levels=12)  # 2**12 paths to the last page
    out = subprocess.run([BIN / "lancelot-index", docs, tmp_path / "db"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Indexed 13 documents into 13 passages")
    assert "Left out 24 duplicates (files or folders reached by more than one path" in out.stdout
    texts = lancedb.connect(tmp_path / "db").open_table("documents").to_arrow()["text"].to_pylist()
    assert sorted(texts) == sorted(f"Page {level}." for level in range(13))


def forged(text: str) -> list[str]:
    """Lines that a file name made, or that carry a terminal control character."""
    return [
        line for line in text.splitlines() if line.startswith("Error: forged") or "\x1b" in line or "\u202e" in line
    ]


def test_names_are_printed_escaped_so_that_none_forges_a_line_or_drives_the_terminal(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Fine\n\nText.\n", encoding="utf-8")
    for name in ("a\nError: forged.md", "b\x1b[2Jclear.txt", "c\u202etxt.exe.txt", "d\r\tcarriage.md"):
        (docs / name).write_bytes(b"\x00binary")
    (docs / "e\x07bell.txt").write_bytes(b"caf\xe9")  # Windows-1252: listed in the summary
    out = subprocess.run([BIN / "lancelot-index", docs, tmp_path / "db"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert forged(out.stdout) == forged(out.stderr) == []
    assert "\r" not in out.stdout + out.stderr and "\x07" not in out.stdout + out.stderr
    quiet = subprocess.run([BIN / "lancelot-index", docs, tmp_path / "quiet", "-q"], capture_output=True, text=True)
    assert quiet.returncode == 0 and forged(quiet.stderr) == [] and "\r" not in quiet.stderr
    for shown in (r"a\nError: forged.md", r"b\x1b[2Jclear.txt", r"c\u202etxt.exe.txt", r"d\r\tcarriage.md"):
        assert f"  {shown}: binary file (contains NUL bytes)" in out.stdout
        assert shown in quiet.stderr  # the warning naming it, where no summary does
    assert r"Read as Windows-1252 (not valid UTF-8): e\x07bell.txt" in out.stdout
    # The table keeps the real names.
    paths = lancedb.connect(tmp_path / "db").open_table("documents").to_arrow()["path"].to_pylist()
    assert sorted(paths) == ["e\x07bell.txt", "ok.md"]


def test_a_name_in_an_error_message_is_printed_escaped_on_the_error_line(tmp_path):
    missing = tmp_path / "missing\nError: forged"
    out = subprocess.run([BIN / "lancelot-index", missing, tmp_path / "db"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        rf"Error: The documents folder {tmp_path}/missing\nError: forged does not exist or is not a folder."
    ]


@pytest.mark.xdist_group("timing")  # a time budget
def test_a_file_that_takes_longer_than_the_limit_is_stopped_and_skipped_and_the_rest_is_indexed(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    deep_html(docs / "deep.html")
    (docs / "ok.md").write_text("# Fine\n\nText.\n", encoding="utf-8")
    command = [BIN / "lancelot-index", docs, tmp_path / "db", "--file-timeout", "0.5"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Indexed 1 document into 1 passage")
    assert "  deep.html: reading it took longer than 0.5 s, the limit per file (--file-timeout)" in out.stdout
    assert "Traceback" not in out.stderr
    paths = lancedb.connect(tmp_path / "db").open_table("documents").to_arrow()["path"].to_pylist()
    assert paths == ["ok.md"]


def test_a_time_limit_that_is_not_a_positive_number_is_a_usage_error(tmp_path):
    for value in ("0", "-1", "soon"):
        result = CliRunner().invoke(main, ["--file-timeout", value, str(tmp_path), str(tmp_path / "db")])
        assert result.exit_code == 2, result.output
        assert "Invalid value for '--file-timeout'" in result.stderr


@pytest.mark.parametrize(
    ("db", "problem"),
    [
        ("s3:/acme-docs/lancelot", "not a valid URI"),
        ("s3:acme-docs", "s3:acme-docs is not a valid URI: write s3://BUCKET/PREFIX (two slashes)"),
        ("ftp://example.com/db", "ftp://"),
    ],
)
def test_a_uri_is_never_written_as_a_local_folder(docs, tmp_path, db, problem):
    done = subprocess.run([BIN / "lancelot-index", docs, db], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert problem in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "s3:").exists() and not (tmp_path / "ftp:").exists()
