"""Static bearer tokens: the file's format, digests, rotation by rewriting the file, and failing closed."""

import hashlib
import os
import time

import pytest

from lancelot_server.auth import tokens
from lancelot_server.auth.callers import Rejected
from lancelot_server.auth.tokens import StaticTokens, TokenFileError, parse

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


@pytest.fixture
def quick_recheck(monkeypatch):
    """The file looked at every 0.1 s rather than every second: the same check, sooner round."""
    monkeypatch.setattr(tokens, "RECHECK_SECONDS", 0.1)


def _rewrite(file, text):
    """Rewrite the file so its stamp changes, and let the periodic check come round."""
    stamp = file.stat().st_mtime_ns
    file.write_text(text)
    os.utime(file, ns=(stamp + 2_000_000_000, stamp + 2_000_000_000))
    time.sleep(tokens.RECHECK_SECONDS + 0.05)


def test_rewriting_the_file_rotates_tokens_without_a_restart(tmp_path, quick_recheck):
    file = tmp_path / "tokens"
    file.write_text(f"old {GOOD}\n")
    verifier = StaticTokens(file=str(file))
    assert verifier.verify(GOOD).label == "old"
    _rewrite(file, f"new {OTHER}\n")
    assert verifier.verify(OTHER).label == "new"
    with pytest.raises(Rejected):
        verifier.verify(GOOD)


def test_a_file_broken_after_start_accepts_no_token_from_it_until_mended(tmp_path, quick_recheck):
    file = tmp_path / "tokens"
    file.write_text(f"ci {GOOD}\n")
    verifier = StaticTokens([OTHER], file=str(file))
    _rewrite(file, "broken line with too many fields\n")
    with pytest.raises(Rejected):
        verifier.verify(GOOD)
    assert verifier.verify(OTHER).label == "env-1"  # the environment's tokens do not depend on the file
    _rewrite(file, f"ci {GOOD}\n")
    assert verifier.verify(GOOD).label == "ci"
    file.unlink()
    time.sleep(tokens.RECHECK_SECONDS + 0.05)
    with pytest.raises(Rejected):
        verifier.verify(GOOD)
