"""A documents folder that exercises every rule of the indexer, built in tmp_path (symlinks, binary
files and a 20 MB file do not belong in git)."""

from __future__ import annotations

import codecs
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

LONG_WORDS = " ".join(f"word{n}" for n in range(600))  # about 4,800 characters, no paragraph break


def make_docs(root: Path) -> Path:
    """The rule-covering folder. Returns `root`."""
    (root / "guide").mkdir(parents=True)
    (root / "guide" / "install.md").write_text(
        "---\ntitle: Installing Lancelot\n---\n\n# Install\n\nGet the package.\n\n## Linux\n\nUse apt.\n\n"
        "```\n# not a heading\npip install lancelot\n```\n\n## macOS\n\nUse brew.\n",
        encoding="utf-8",
    )
    (root / "guide" / "api.markdown").write_text(
        "```\n# Fenced, never the title\n```\n\nThe `foo` API\n=============\n\nIt does *things*.\n",
        encoding="utf-8",
    )
    (root / "UPPER.TXT").write_text("Shouting file name.\n", encoding="utf-8")
    (root / "Page.HTM").write_text(
        "<html><head><title>Upper &amp; page</title><style>p{}</style></head>"
        "<body><h1>Heading</h1><p>caf&eacute; text<script>var hidden=1</script></p></body></html>",
        encoding="utf-8",
    )
    (root / "broken.html").write_text(
        "<h1>Malformed <b>page</h1><p>first <i>unclosed<div>second</p></span><pre>line one\n  line two</pre>",
        encoding="utf-8",
    )
    (root / "bom.txt").write_bytes(codecs.BOM_UTF8 + b"Byte order mark, UTF-8.")
    (root / "wide.txt").write_bytes("Sixteen-bit text: naïve.".encode("utf-16"))
    (root / "legacy.txt").write_bytes("Smart quotes \x93here\x94 and caf\xe9.".encode("latin-1"))
    (root / "binary.txt").write_bytes(b"PK\x03\x04\x00\x00binary")
    (root / "empty.md").write_text("", encoding="utf-8")
    (root / "long.txt").write_text(LONG_WORDS + "\n", encoding="utf-8")
    (root / "notes.odt").write_text("not a document type\n", encoding="utf-8")
    (root / ".hidden.md").write_text("# Hidden\n", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "config.txt").write_text("hidden folder\n", encoding="utf-8")
    (root / "link-inside.md").symlink_to(root / "guide" / "install.md")
    (root / "guide" / "loop").symlink_to(root / "guide", target_is_directory=True)
    outside = root.parent / f"{root.name}-outside.md"
    outside.write_text("# Outside\n", encoding="utf-8")
    (root / "link-outside.md").symlink_to(outside)
    (root / "dangling.md").symlink_to(root / "missing.md")
    return root


def fan_out(root: Path, levels: int) -> Path:
    """Folders l0 … l<levels>, each with a page and two links to the next: 2**n paths lead to the n-th,
    and none of them loops."""
    for level in range(levels + 1):
        (root / f"l{level}").mkdir(parents=True)
        (root / f"l{level}" / f"page{level}.md").write_text(f"Page {level}.\n", encoding="utf-8")
        if level:
            for name in "ab":
                (root / f"l{level - 1}" / name).symlink_to(f"../l{level}", target_is_directory=True)
    return root


def deep_html(path: Path, depth: int = 100_000) -> Path:
    """`depth` nested divs: 1.1 MB at 100,000, which Lexbor takes tens of seconds to parse (its tree
    building is quadratic in the depth)."""
    path.write_text("<div>" * depth + "deep text" + "</div>" * depth, encoding="utf-8")
    return path


def write_big_text(path: Path, size: int = 20 * 1024 * 1024) -> None:
    paragraph = ("The quick brown fox jumps over the lazy dog. " * 20).strip() + "\n\n"
    count = size // len(paragraph) + 1
    path.write_text(paragraph * count, encoding="utf-8")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return make_docs(tmp_path / "docs")


# Three small documents, for the embedding tests (a few chunks, each with a distinct text).
SMALL_DOCS = {
    "guide/vacuum.md": "# Vacuum\n\nVacuum reclaims the space of dead rows.\n\n## Autovacuum\n\nIt runs for you.\n",
    "guide/index.md": "# Indexes\n\nA B-tree index speeds up equality and range lookups.\n",
    "notes.txt": "Backups are taken with pg_dump and restored with pg_restore.\n",
}


@pytest.fixture
def small_docs(tmp_path: Path) -> Path:
    root = tmp_path / "small-docs"
    for name, text in SMALL_DOCS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


# An indexer run whose commit never comes: it says so in the file named first (the merge's data files
# are written) and waits to be killed. A test that kills a run "before its commit" uses it, so that a
# loaded machine can never let the commit slip in before the kill.
PAUSED_BEFORE_COMMIT = """
import sys, time
from pathlib import Path
from lancelot_indexer import cli
from lancelot_indexer.writing import write

written = Path(sys.argv[1])

def paused(dataset, transaction):
    written.write_text("the merge's data files are written", encoding="utf-8")
    time.sleep(600)

write._commit = paused
sys.argv = ["lancelot-index", *sys.argv[2:]]
cli.main()
"""


def kill_at_first_write(command: list, table_dir: Path) -> int:
    """Run `command` (an indexer run) and SIGKILL it the moment a new file appears in the table's data
    folder, before its commit; return its exit status once its workers are gone too."""
    data_dir = table_dir / "data"
    files_before = set(data_dir.iterdir())
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while set(data_dir.iterdir()) == files_before and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    # Its workers die a moment after it, and hold its lock file open until then: on a loaded machine the next
    # run met them and was refused as a second indexer.
    assert group_ended(process.pid), "a worker outlived its killed indexer"
    return process.returncode


def running(pid: int) -> bool:
    """Alive and not a zombie (a reparented child may wait for a reaper that is not ours)."""
    return _stat(pid)[0] not in ("", "Z")


def group_ended(group: int, within: float = 30.0) -> bool:
    """Whether every process of the process group `group` is gone within `within` s (Linux; elsewhere,
    without /proc, true at once)."""
    if sys.platform != "linux":
        return True
    deadline = time.monotonic() + within
    while any(_stat(int(pid))[1] == group and running(int(pid)) for pid in os.listdir("/proc") if pid.isdigit()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _stat(pid: int) -> tuple[str, int]:
    """A process's state letter and process group ("" and -1 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return "", -1
    return fields[0], int(fields[2])
