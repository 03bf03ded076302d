"""Static bearer tokens: the file's format, digests, rotation by rewriting the file, and failing closed."""

import hashlib
import os
import time

import pytest
from structlog.testing import capture_logs

from lancelot_server.auth import tokens
from lancelot_server.auth.tokens import StaticTokens, TokenFileError, parse
from lancelot_server.auth.verifier import Rejected

pytestmark = pytest.mark.waits  # tests/support/ordering.py

GOOD = "a-long-enough-token-0001"
OTHER = "another-long-token-0002"


def test_environment_tokens_are_labelled_by_position_and_see_every_table():
    verifier = StaticTokens([GOOD, OTHER])
    assert verifier.verify(OTHER).label == "env-2"
    assert verifier.verify(GOOD).tables is None


def test_an_unknown_token_is_rejected_as_invalid_token():
    with pytest.raises(Rejected) as caught:
        StaticTokens([GOOD]).verify(GOOD + "x")
    assert caught.value.status == 401 and caught.value.error == "invalid_token"
    assert GOOD not in caught.value.reason


def test_a_short_token_is_refused_with_how_to_make_a_good_one():
    with pytest.raises(ValueError, match=r"shorter than 16 characters; make one with python3 -c"):
        StaticTokens(["short"])


def test_the_file_holds_labels_tokens_or_digests_and_table_limits(tmp_path):
    hashed = hashlib.sha256(OTHER.encode()).hexdigest()
    file = tmp_path / "tokens"
    file.write_text(f"# team tokens\nci {GOOD} docs,api  # the CI job\n\nalice sha256:{hashed}\n")
    verifier = StaticTokens(file=str(file))
    ci, alice = verifier.verify(GOOD), verifier.verify(OTHER)
    assert (ci.label, ci.tables) == ("ci", frozenset({"docs", "api"}))
    assert (alice.label, alice.tables) == ("alice", None)
    with pytest.raises(Rejected):
        verifier.verify(f"sha256:{hashed}")  # the digest is not itself a token


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("onlylabel\n", "line 1: expected `LABEL TOKEN"),
        (f"a {GOOD} t1 extra\n", "found 4 fields"),
        (f"bad/label {GOOD}\n", "line 1: the label must be"),
        (f"a {GOOD}\na {OTHER}\n", "line 2: the label a is used twice"),
        ("a shorttoken\n", "line 1: the token is shorter"),
    ],
)
def test_a_bad_line_names_the_file_and_line_and_never_the_token(text, problem):
    with pytest.raises(TokenFileError) as caught:
        parse(text, "tokens.txt")
    assert problem in str(caught.value) and "tokens.txt" in str(caught.value)
    assert GOOD not in str(caught.value) and "shorttoken" not in str(caught.value)


def test_a_missing_file_at_start_is_an_error(tmp_path):
    with pytest.raises(TokenFileError, match="cannot be read"):
        StaticTokens(file=str(tmp_path / "absent"))


def _rewrite(file, text, age=0.0):
    """Rewrite the file in place (its inode kept), changed `age` seconds ago, and let the once-a-second check
    come round."""
    with file.open("r+") as handle:
        handle.truncate(0)
        handle.write(text)
    if age:
        stamp = time.time_ns() - int(age * 1e9)
        os.utime(file, ns=(stamp, stamp))
    time.sleep(tokens.RECHECK_SECONDS + 0.05)


def test_rewriting_the_file_rotates_tokens_without_a_restart(tmp_path):
    file = tmp_path / "tokens"
    file.write_text(f"old {GOOD}\n")
    verifier = StaticTokens(file=str(file))
    assert verifier.verify(GOOD).label == "old"
    _rewrite(file, f"new {OTHER}\n")
    assert verifier.verify(OTHER).label == "new"
    with pytest.raises(Rejected):
        verifier.verify(GOOD)


def test_a_rewrite_keeping_inode_size_and_mtime_is_seen(tmp_path):
    file = tmp_path / "tokens"
    file.write_text(f"ci {GOOD}\n")
    verifier = StaticTokens(file=str(file))
    before = file.stat()
    _rewrite(file, f"ci2 {OTHER}\n")
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = file.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    assert verifier.verify(OTHER).label == "ci2"
    with pytest.raises(Rejected):
        verifier.verify(GOOD)


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(f"ci {GOOD} docs\nci-2 {OTHER[:5]}", id="mid-token"),
        pytest.param(f"ci {GOOD} docs\nci-2", id="mid-line"),
        pytest.param(f"ci {GOOD}", id="before-its-tables"),
        pytest.param("", id="empty"),
        pytest.param(f"ci {GOOD} docs\nci-2 \xfc".encode("latin-1"), id="mid-character"),
    ],
)
def test_a_file_caught_half_written_keeps_the_last_good_tokens(tmp_path, cut):
    file = tmp_path / "tokens"
    file.write_text(f"ci {GOOD} docs\n")
    verifier = StaticTokens(file=str(file))
    if isinstance(cut, bytes):
        file.write_bytes(cut)
    else:
        file.write_text(cut)
    time.sleep(tokens.RECHECK_SECONDS + 0.05)
    with capture_logs() as logs:
        assert verifier.verify(GOOD).tables == {"docs"}
    assert [log["event"] for log in logs] == ["token_file_being_written"]
    file.write_text(f"ci {GOOD} docs\nci-2 {OTHER}\n")
    time.sleep(tokens.RECHECK_SECONDS + 0.05)
    assert verifier.verify(OTHER).label == "ci-2"
    assert verifier.verify(GOOD).tables == {"docs"}


def test_a_last_line_without_a_newline_counts_once_the_file_has_stood(tmp_path):
    file = tmp_path / "tokens"
    file.write_text(f"ci {GOOD}\n")
    verifier = StaticTokens(file=str(file))
    _rewrite(file, f"ci2 {OTHER}", age=tokens.WRITING_SECONDS)
    assert verifier.verify(OTHER).label == "ci2"
    with pytest.raises(Rejected):
        verifier.verify(GOOD)


def test_a_file_broken_after_start_accepts_no_token_from_it_until_mended(tmp_path):
    file = tmp_path / "tokens"
    file.write_text(f"ci {GOOD}\n")
    verifier = StaticTokens([OTHER], file=str(file))
    with capture_logs() as logs:
        _rewrite(file, "broken line with too many fields\n", age=tokens.WRITING_SECONDS)
        with pytest.raises(Rejected):
            verifier.verify(GOOD)
        assert verifier.verify(OTHER).label == "env-1"  # the environment's tokens do not depend on the file
    assert [log["event"] for log in logs] == ["token_file_unusable"]
    _rewrite(file, f"ci {GOOD}\n")
    assert verifier.verify(GOOD).label == "ci"
    file.unlink()
    time.sleep(tokens.RECHECK_SECONDS + 0.05)
    with pytest.raises(Rejected):
        verifier.verify(GOOD)
