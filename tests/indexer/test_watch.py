"""--watch: real files, the real indexer and watchdog, the table read back after every change.

Nothing waits on a clock but for a line, with a generous timeout: each test waits for the line a rebuild
prints, then reads the table. "No rebuild" is a wait of a few settle times in which no line comes.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import lancedb
import pytest

from lancelot_indexer import watch
from lancelot_indexer.cli import STOPPED_WRITING
from lancelot_indexer.errors import DocsError
from lancelot_indexer.pipeline import Options, Report, build

from .conftest import write_big_text
from .test_stop import all_ended, children

# Timing budgets: one worker runs these modules' tests one after another, however many workers run.
pytestmark = pytest.mark.xdist_group("timing")

WAIT = 120.0  # for a line: a loaded 2-core machine can be slow, never this slow
QUIET = 2.0  # seconds without a line that show no rebuild came of a change (settle times are 1 s at most)
LINE = re.compile(r"^\d\d:\d\d:\d\d  (.*); \d+\.\d s$")


@dataclass
class Watching:
    """A Watcher running in a thread, and the lines it printed (out and err alike), in order."""

    watcher: watch.Watcher
    thread: threading.Thread
    lines: queue.Queue[str] = field(default_factory=queue.Queue)
    result: list[int | BaseException] = field(default_factory=list)

    def line(self) -> str:
        try:
            return self.lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"no line within {WAIT} s") from None

    def rebuilt(self) -> str:
        """What the next rebuild's line says, without its time and seconds."""
        text = self.line()
        match = LINE.match(text)
        assert match is not None, text
        return match.group(1)

    def no_line(self) -> None:
        try:
            extra = self.lines.get(timeout=QUIET)
        except queue.Empty:
            return
        raise AssertionError(f"an unexpected line: {extra}")

    def stop(self) -> int | BaseException:
        self.watcher.stop()
        self.thread.join(WAIT)
        assert not self.thread.is_alive()
        return self.result[0]


@pytest.fixture
def watching() -> Iterator[Callable[..., Watching]]:
    """Start a watch in a thread: `watching(docs, db, options, settle=..., longest=..., build_once=...)`; stopped
    at the end."""
    running: list[Watching] = []

    def start(
        docs: Path,
        db: Path,
        options: Options | None = None,
        *,
        settle: float = 0.5,
        longest: float = 30.0,
        **run: object,
    ) -> Watching:
        watcher = watch.Watcher(docs, db, options, settle=settle, longest=longest)
        thread = threading.Thread(target=lambda: body(this), daemon=True)
        this = Watching(watcher, thread)

        def body(this: Watching) -> None:
            try:
                this.result.append(watcher.run(out=this.lines.put, **run))  # type: ignore[arg-type]
            except BaseException as exc:
                this.result.append(exc)
                this.lines.put(f"raised {exc!r}")

        thread.start()
        running.append(this)
        return this

    yield start
    for this in running:
        this.watcher.stop()
        this.thread.join(WAIT)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def put(path: Path, text: str) -> None:
    """Write `path` whole or not at all, in one event (its temporary file's dot name is not watched): where a
    test needs one burst of changes even if it is paused between a write's open and its close."""
    temporary = path.with_name(f".{path.name}.new")
    write(temporary, text)
    os.replace(temporary, path)


def table(db: Path) -> dict[str, str]:
    """Each document's path and its passages' text, from the table as the server reads it."""
    rows = lancedb.connect(db).open_table("documents").to_arrow().select(["path", "passage", "text"]).to_pylist()
    passages: dict[str, list[tuple[int, str]]] = {}
    for row in rows:
        passages.setdefault(row["path"], []).append((row["passage"], row["text"]))
    return {path: " ".join(text for _, text in sorted(parts)) for path, parts in passages.items()}


def on(running: Watching) -> str:
    """The first build's line, once the watch is on."""
    first = running.rebuilt()
    assert running.line().startswith("Watching ")
    return first


def test_each_edit_addition_rename_and_deletion_is_one_rebuild_and_the_table_follows(tmp_path, watching):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write(docs / "alpha.md", "About apples.\n")
    write(docs / "guide" / "beta.txt", "About bananas.\n")
    running = watching(docs, db, settle=1.0)  # a write in place is three events: a pause between them stays one burst
    assert on(running) == "2 documents, 2 passages; 2 read, 0 unchanged, 0 removed"
    assert table(db) == {"alpha.md": "About apples.", "guide/beta.txt": "About bananas."}

    write(docs / "alpha.md", "About apricots.\n")
    assert running.rebuilt() == "2 documents, 2 passages; 1 read, 1 unchanged, 0 removed"
    assert table(db) == {"alpha.md": "About apricots.", "guide/beta.txt": "About bananas."}

    write(docs / "guide" / "gamma.md", "About grapes.\n")
    assert running.rebuilt() == "3 documents, 3 passages; 1 read, 2 unchanged, 0 removed"
    assert table(db)["guide/gamma.md"] == "About grapes."

    (docs / "guide" / "beta.txt").rename(docs / "guide" / "renamed.txt")
    assert running.rebuilt() == "3 documents, 3 passages; 1 read, 2 unchanged, 1 removed"
    assert table(db) == {
        "alpha.md": "About apricots.",
        "guide/renamed.txt": "About bananas.",
        "guide/gamma.md": "About grapes.",
    }

    (docs / "guide").rename(docs / "manual")  # one event for the folder: its documents move with it
    assert running.rebuilt() == "3 documents, 3 passages; 2 read, 1 unchanged, 2 removed"
    assert set(table(db)) == {"alpha.md", "manual/renamed.txt", "manual/gamma.md"}

    (docs / "alpha.md").unlink()
    assert running.rebuilt() == "2 documents, 2 passages; 0 read, 2 unchanged, 1 removed"
    assert table(db) == {"manual/renamed.txt": "About bananas.", "manual/gamma.md": "About grapes."}
    running.no_line()
    assert running.stop() == 6


def test_a_folder_moved_in_from_elsewhere_is_indexed_and_one_moved_out_is_forgotten(tmp_path, watching):
    docs, db, elsewhere = tmp_path / "docs", tmp_path / "db", tmp_path / "elsewhere"
    write(docs / "page.md", "A page.\n")
    write(elsewhere / "book" / "one.md", "Chapter one.\n")
    write(elsewhere / "book" / "part" / "two.txt", "Chapter two.\n")
    running = watching(docs, db)
    on(running)
    (elsewhere / "book").rename(docs / "book")  # one event for the folder; watchdog reports what it holds
    assert running.rebuilt() == "3 documents, 3 passages; 2 read, 1 unchanged, 0 removed"
    assert table(db) == {"page.md": "A page.", "book/one.md": "Chapter one.", "book/part/two.txt": "Chapter two."}
    (docs / "book").rename(elsewhere / "book")
    assert running.rebuilt() == "1 document, 1 passage; 0 read, 1 unchanged, 2 removed"
    assert table(db) == {"page.md": "A page."}
    running.no_line()


def test_folders_made_several_deep_at_once_are_watched_and_what_they_hold_is_indexed(tmp_path, watching):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write(docs / "page.md", "A page.\n")
    running = watching(docs, db)
    on(running)
    for number in range(20):  # each a file written before the watch of its new folders can exist
        write(docs / f"tree{number:02}" / "a" / "b" / "c" / "deep.md", f"Deep page {number}.\n")
    assert running.rebuilt() == "21 documents, 21 passages; 20 read, 1 unchanged, 0 removed"
    write(docs / "tree07" / "a" / "b" / "c" / "later.md", "Written later.\n")  # the new folders are watched
    assert running.rebuilt() == "22 documents, 22 passages; 1 read, 21 unchanged, 0 removed"
    assert table(db)["tree07/a/b/c/later.md"] == "Written later."


def test_changes_that_never_settle_are_rebuilt_all_the_same(tmp_path, watching):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write(docs / "busy.md", "Version 0.\n")
    write(docs / "calm.md", "Never changes.\n")
    running = watching(docs, db, settle=1.0, longest=1.5)
    on(running)
    done = threading.Event()

    def keep_writing() -> None:
        number = 0
        while not done.wait(0.02) and number < 3000:  # a new version every 20 ms: never quiet for a second
            number += 1
            put(docs / "busy.md", f"Version {number}.\n")  # never half a version

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        assert running.rebuilt().startswith("2 documents, 2 passages; 1 read, 1 unchanged")  # while the writes go on
        assert writer.is_alive()
    finally:
        done.set()
        writer.join()
    put(docs / "busy.md", "The last version.\n")
    while table(db).get("busy.md") != "The last version.":
        running.rebuilt()


def save_through_a_temporary_file(page: Path, text: str) -> None:
    """gedit, VS Code and most editors: the new text in a file beside, renamed over the page."""
    temporary = page.with_name(page.name + ".tmp4Xz")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, page)


def save_as_vim_does(page: Path, text: str) -> None:
    """vim (backupcopy=auto): a probe file, the page moved to a backup, written anew, the backup deleted."""
    probe = page.with_name("4913")
    probe.write_text("", encoding="utf-8")
    probe.unlink()
    backup = page.with_name(page.name + "~")
    page.rename(backup)
    page.write_text(text, encoding="utf-8")
    backup.unlink()


def save_as_jetbrains_does(page: Path, text: str) -> None:
    """IntelliJ's safe write: a ___jb_tmp___ file written, the page moved aside, the new one moved in."""
    new, old = page.with_name(page.name + "___jb_tmp___"), page.with_name(page.name + "___jb_old___")
    new.write_text(text, encoding="utf-8")
    page.rename(old)
    new.rename(page)
    old.unlink()


@pytest.mark.parametrize("save", [save_through_a_temporary_file, save_as_vim_does, save_as_jetbrains_does])
def test_an_editor_saving_through_temporary_files_causes_exactly_one_rebuild(tmp_path, watching, save):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write(docs / "page.md", "First words.\n")
    write(docs / "other.md", "Other words.\n")
    running = watching(docs, db, settle=1.0)  # however the machine is loaded, a save stays one burst
    on(running)
    for number, word in enumerate(("second", "third"), 1):
        save(docs / "page.md", f"The {word} version.\n")
        assert running.rebuilt() == "2 documents, 2 passages; 1 read, 1 unchanged, 0 removed", number
        assert table(db) == {"page.md": f"The {word} version.", "other.md": "Other words."}
    running.no_line()
    assert sorted(path.name for path in docs.iterdir()) == ["other.md", "page.md"]


def test_the_database_inside_docs_and_what_the_walk_leaves_out_cause_no_rebuild(tmp_path, watching):
    docs = tmp_path / "docs"
    db = docs / "db"  # the rebuild's own writes land inside DOCS
    write(docs / "page.md", "A page.\n")
    running = watching(docs, db, Options(exclude=("drafts/", "*.min.html")))
    assert on(running) == "1 document, 1 passage; 1 read, 0 unchanged, 0 removed"
    running.no_line()
    write(docs / "notes.log", "not a document\n")
    write(docs / ".hidden.md", "a dot name\n")
    write(docs / ".git" / "HEAD.txt", "in a dot folder\n")
    write(docs / "drafts" / "draft.md", "excluded\n")
    write(docs / "site" / "app.min.html", "<p>excluded</p>\n")
    running.no_line()
    write(docs / "site" / "index.html", "<p>A site.</p>\n")
    assert running.rebuilt() == "2 documents, 2 passages; 1 read, 1 unchanged, 0 removed"
    assert table(db) == {"page.md": "A page.", "site/index.html": "A site."}
    running.no_line()


def test_what_is_relevant_follows_the_walk(tmp_path):
    root, db = tmp_path / "docs", tmp_path / "docs" / "db"

    def relevant(relative: str, is_dir: bool = False, exclude: tuple[str, ...] = ()) -> bool:
        return watch.relevant(root / relative, is_dir, root=root, database=db, exclude=exclude)

    assert relevant("page.md") and relevant("a/b/PAGE.HTM") and relevant("notes.txt")
    assert relevant("guide", is_dir=True)  # a folder moved away or deleted takes its documents with it
    assert not relevant("page.md.tmp4Xz") and not relevant("4913") and not relevant("page.md~")
    assert not relevant(".page.md.swp") and not relevant(".git/x.md") and not relevant("a/.cache", is_dir=True)
    assert not relevant("db", is_dir=True) and not relevant("db/documents.lance/data/x.lance")
    assert relevant("db/page.md")  # beside the tables, a document is a document
    assert not relevant("drafts/x.md", exclude=("drafts/",)) and not relevant("drafts", True, ("drafts/",))
    assert relevant("x/notes.md", exclude=("notes.md/",))  # a trailing / names folders only, as in the walk
    assert not relevant("a/b/x.min.html", exclude=("*.min.html",))
    assert not watch.relevant(tmp_path / "elsewhere.md", False, root=root, database=None, exclude=())


def test_a_file_that_vanishes_while_it_is_read_is_skipped_and_the_watch_goes_on(tmp_path, watching):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write(docs / "base.md", "The base page.\n")
    vanishing = docs / "zz-last.md"  # read last: the pages before it are read first

    def remove_it(stage: str, done: int, total: int) -> None:
        if done == 1:
            vanishing.unlink(missing_ok=True)

    def build_once() -> Report:
        return build(docs, db, Options(workers=1), on_progress=remove_it)

    running = watching(docs, db, build_once=build_once)
    on(running)
    for number in range(30):
        write(docs / f"page{number:02}.md", f"Page {number}.\n")
    write(vanishing, "Here for a moment.\n")
    assert running.rebuilt() == "31 documents, 31 passages; 30 read, 1 unchanged, 0 removed, 1 skipped"
    # Its deletion is a change too: the next rebuild no longer finds it.
    assert running.rebuilt() == "31 documents, 31 passages; 0 read, 31 unchanged, 0 removed"
    assert len(table(db)) == 31 and "zz-last.md" not in table(db)


def test_an_emptied_folder_says_so_and_the_watch_goes_on_until_docs_itself_is_gone(tmp_path, watching):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write(docs / "only.md", "The only page.\n")
    running = watching(docs, db)
    on(running)
    (docs / "only.md").unlink()
    assert "not rebuilt: No documents found in" in running.line()
    assert table(db) == {"only.md": "The only page."}  # left as it was
    write(docs / "back.md", "A page again.\n")
    assert running.rebuilt() == "1 document, 1 passage; 1 read, 0 unchanged, 1 removed"
    (docs / "back.md").unlink()
    docs.rmdir()
    assert "not rebuilt" not in running.line()  # "raised DocsError(...)"
    result = running.result[0]
    assert isinstance(result, DocsError) and "is gone; stopped watching it" in str(result)


DRIVER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from lancelot_indexer import log, watch

    log.configure("WARNING")
    rebuilds = watch.run(Path(sys.argv[1]), Path(sys.argv[2]), out=lambda text: print(text, flush=True), settle=0.2)
    print(f"stopped after {rebuilds} rebuilds", flush=True)
    """
)


@pytest.mark.skipif(sys.platform != "linux", reason="worker processes and /proc are Linux's")
def test_ctrl_c_while_watching_ends_the_watch_at_once_with_status_0_and_no_process_left(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write(docs / "page.md", "A page.\n")
    process = subprocess.Popen(
        [sys.executable, "-c", DRIVER, docs, db], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    try:
        assert LINE.match(process.stdout.readline())
        assert process.stdout.readline().startswith("Watching ")
        put(docs / "page.md", "A page, edited.\n")
        assert LINE.match(process.stdout.readline()).group(1) == "1 document, 1 passage; 1 read, 0 unchanged, 0 removed"
        helpers = children(process.pid)  # the reader's forkserver and its workers come and go with rebuilds
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=WAIT)
    finally:
        process.kill()
    assert (process.returncode, out, err) == (0, "stopped after 2 rebuilds\n", "")
    assert all_ended(helpers)
    assert table(db) == {"page.md": "A page, edited."}


def test_watchdog_is_imported_only_when_watching():
    imported = subprocess.run(
        [sys.executable, "-c", "import sys, lancelot_indexer.cli, lancelot_indexer.watch; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "watchdog" not in imported.stdout


BIN = Path(sys.executable).parent


def watch_command(docs: Path, db: Path, *options: str) -> subprocess.Popen[str]:
    # Its own session, as a terminal's job: Ctrl-C reaches its whole process group.
    return subprocess.Popen(
        [BIN / "lancelot-index", "--watch", *options, docs, db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def grandchildren(pid: int) -> set[int]:
    """The reader's workers: children of its forkserver, itself a child of the indexer (watchdog's threads
    make forking the indexer itself unsafe)."""
    return {worker for child in children(pid) for worker in children(child)}


@pytest.mark.skipif(sys.platform != "linux", reason="worker processes and /proc are Linux's")
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_lancelot_index_watch_prints_a_line_per_rebuild_and_a_stop_while_waiting_exits_0(tmp_path, how):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write(docs / "page.md", "A page.\n")
    process = watch_command(docs, db)
    assert process.stdout is not None
    try:
        assert LINE.match(process.stdout.readline()).group(1) == "1 document, 1 passage; 1 read, 0 unchanged, 0 removed"
        assert process.stdout.readline() == f"Watching {docs} for changes (Ctrl-C to stop).\n"
        put(docs / "more.md", "More.\n")
        assert (
            LINE.match(process.stdout.readline()).group(1) == "2 documents, 2 passages; 1 read, 1 unchanged, 0 removed"
        )
        helpers = children(process.pid)
        os.killpg(process.pid, how)
        out, err = process.communicate(timeout=WAIT)
    finally:
        process.kill()
    assert (process.returncode, out, err) == (0, "Stopped watching.\n", "")
    assert all_ended(helpers)
    assert table(db) == {"page.md": "A page.", "more.md": "More."}


@pytest.mark.skipif(sys.platform != "linux", reason="worker processes and /proc are Linux's")
# 0.0: the moment the reader's processes start, which needs /tmp/h2-workers.diff (in watch mode other threads
# exist: watchdog's, Lance's; the signal mask of the one starting a worker no longer holds a stop back).
@pytest.mark.parametrize("delay", [0.2, 0.0], ids=["while-reading", "as-the-workers-start"])
def test_ctrl_c_during_a_rebuild_says_what_became_of_the_table_and_exits_130(tmp_path, delay):
    docs, db = tmp_path / "docs", tmp_path / "db"
    write(docs / "page.md", "The previous table.\n")
    process = watch_command(docs, db, "-q")
    try:
        deadline = time.monotonic() + WAIT
        while not (db / "documents.lance" / "lancelot-sources.json").exists():  # -q: no line, the table says
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        (tmp_path / "many").mkdir()
        for number in range(200):
            write_big_text(tmp_path / "many" / f"page{number:03}.md", size=80 * 1024)
        before = grandchildren(process.pid)  # the first build's worker may not be reaped yet
        (tmp_path / "many").rename(docs / "many")  # one burst: the rebuild reads 200 files
        while not (workers := grandchildren(process.pid) - before):  # reading has begun once workers exist
            assert process.poll() is None and time.monotonic() < deadline, "no worker ever started"
            time.sleep(0.002)
        time.sleep(delay)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=WAIT)
    finally:
        process.kill()
    assert (process.returncode, out, err.strip()) == (
        130,
        "",
        "Stopped before anything was written: the table was left as it was.",
    )
    assert all_ended(workers)
    assert table(db) == {"page.md": "The previous table."}


def test_lancelot_index_watch_quiet_prints_nothing_but_errors(tmp_path):
    docs, db = tmp_path / "docs", tmp_path / "db"
    docs.mkdir()
    process = watch_command(docs, db, "--quiet")
    assert process.stderr is not None
    try:
        line = process.stderr.readline()  # an empty folder: the first build fails, the watch goes on
        assert re.match(r"^\d\d:\d\d:\d\d  not rebuilt: No documents found in ", line), line
        write(docs / "page.md", "A page.\n")
        deadline = time.monotonic() + WAIT
        while not (db / "documents.lance" / "lancelot-sources.json").exists():
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=WAIT)
    finally:
        process.kill()
    # The saved copy is written just after the commit, so the stop may still find the rebuild finishing: then it
    # says what became of the table, as a stop during a rebuild does. Nothing else is printed either way.
    assert out == ""
    assert (process.returncode, err) in [(0, ""), (130, STOPPED_WRITING + "\n")]
    assert table(db) == {"page.md": "A page."}


def test_the_help_describes_watch():
    done = subprocess.run([BIN / "lancelot-index", "--help"], capture_output=True, text=True, check=True)
    assert "--watch" in done.stdout and "Ctrl-C stops" in " ".join(done.stdout.split())
