"""Hundreds of generated tool calls and resource requests, most of them hostile, sent as raw JSON-RPC lines to the
real `lancelot` over stdio: every call gets a result or a tool error (never a protocol error), every resource
request a result or an invalid-params error with its reason (never an internal error), the server stays up, and
no database file changes."""

from __future__ import annotations

import base64
import json
import os
import random
import resource
import subprocess

from tests.architecture.test_read_only import fingerprint
from tests.e2e.stdio_server import LANCELOT
from tests.e2e.test_stdio import _exchange, _frame

FILTERS = ["tags", "tagMatch", "since", "until", "types"]
TOOLS = {
    "lancedb_search": ["query", "queries", "mode", "limit", "table", "path", "perDocument", *FILTERS],
    "lancedb_query": ["query", "queries", "mode", "limit", "table", "path", "budget", "perDocument", *FILTERS],
    "lancedb_read": ["id", "source", "table", "before", "after", "from", "offset", "budget"],
    "lancedb_status": [],
    "lancedb_version": [],
}
STRINGS = [
    "",
    "chain",
    "guide/puncture.md",
    "guide/puncture.md#1",
    "guide/puncture.md#999999999",
    "documents",
    "../../etc/passwd",
    "x\x00y",
    "%_\\' OR 1=1 --",
    '"); DROP TABLE documents; --',
    "DEC-0054",
    "the of and",
    "\u202eevil\u202c",
    "\U0001f6b2 bike",
    "null",
    "[1, 2]",
    "ü" * 3000,
    "w " * 1500,
    "z" * 300_000,
]
NUMBERS = [0, 1, 3, -1, 20, 21, 50, 51, 500, 12_000, 100_001, 2**31, -(2**63), 10**30, 2.0, 2.5, 1e308]
OTHERS = [None, True, False, [], ["chain"], {}, {"query": "chain"}]
# How many tags a generated `tags` lists: up to the most a search takes (MAX_TAGS, 20) and past it.
TAG_COUNTS = [1, 5, 10, 15, 19, 20, 21, 64]


# How many phrasings a generated `queries` lists: none, up to the most a search takes (MAX_QUERIES, 5) and past it.
QUERIES_COUNTS = [0, 1, 2, 5, 6, 40]


def hostile(rng: random.Random, key: str | None = None) -> object:
    if key == "tags" and rng.random() < 0.5:
        return [f"{rng.choice(STRINGS[:12])[:40]} {number}" for number in range(rng.choice(TAG_COUNTS))]
    if key == "queries" and rng.random() < 0.7:
        # Phrasings of every kind, a repeat (spaces around it or not) and a non-string item now and then.
        pool = [*STRINGS, " chain ", *NUMBERS[:3], *OTHERS[:4]]
        return [rng.choice(pool) for _ in range(rng.choice(QUERIES_COUNTS))]
    pool = rng.choice([STRINGS, NUMBERS, OTHERS, STRINGS])
    return rng.choice(pool)


def calls(count: int, seed: int) -> list[dict]:
    """`count` tools/call params: valid names with random arguments mostly, and some of every malformed shape."""
    rng = random.Random(seed)
    made = []
    for _ in range(count):
        roll = rng.random()
        name = rng.choice(list(TOOLS))
        if roll < 0.05:
            made.append({"name": hostile(rng), "arguments": {}})
        elif roll < 0.10:
            made.append({"name": name, "arguments": hostile(rng)})
        else:
            names = TOOLS[name] + ["limt", "verbose"]
            chosen = rng.sample(names, k=rng.randint(0, min(4, len(names))))
            made.append({"name": name, "arguments": {key: hostile(rng, key) for key in chosen}})
    return made


def tag_searches() -> list[dict]:
    """A valid text search with each number of tags (none of them held), any and all: the filter's cost."""
    made = []
    for count in TAG_COUNTS:
        tags = [f"no such tag {number}" for number in range(count)]
        for match in ("any", "all"):
            arguments = {"query": "chain", "mode": "text", "tags": tags, "tagMatch": match}
            made.append({"name": "lancedb_search", "arguments": arguments})
    return made


def phrasings_searches() -> list[dict]:
    """Valid searches of several phrasings in each mode (hostile ones among them), the longest and the most."""
    most = ["chain", "the of and", "%_\\' OR 1=1 --", "x\x00y", "w " * 999]
    made = []
    for mode in ("auto", "text", "vector", "hybrid"):
        for tool in ("lancedb_search", "lancedb_query"):
            made.append({"name": tool, "arguments": {"queries": most, "mode": mode, "limit": 50, "perDocument": 3}})
    return made


def exchange(db, tmp_path, messages: list[tuple[str, object]], last: int) -> tuple[dict[int, dict], str, float]:
    """`messages` (method, params) sent after the handshake, numbered from 10, to a fresh `lancelot` over stdio:
    the replies by id, its log, and the CPU seconds it spent (this process's children's, around it)."""
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}
    lines = [_frame(1, "initialize", init), _frame(None, "notifications/initialized")]
    lines += [_frame(number, method, params) for number, (method, params) in enumerate(messages, start=10)]
    env = {**os.environ, "LANCEDB_PATH": str(db), "XDG_CONFIG_HOME": str(tmp_path)}
    log = tmp_path / "stderr.log"  # a file, not a pipe: one refusal logged per request would fill a pipe's 64 KB
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with (
        log.open("w", encoding="utf-8") as stderr,
        subprocess.Popen(
            [LANCELOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env
        ) as process,
    ):
        answers, _ = _exchange(process, "".join(lines), ids=set(range(10, last + 1)))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    replies = {message["id"]: message for message in map(json.loads, answers) if "id" in message}
    return replies, log.read_text(encoding="utf-8"), spent


def test_hundreds_of_hostile_calls_get_answers_and_change_no_file(lancelot_db, tmp_path):
    before = fingerprint(lancelot_db)
    made = calls(400, seed=14) + tag_searches()
    several = range(10 + len(made), 10 + len(made) + len(phrasings_searches()))
    made += phrasings_searches()
    last = 10 + len(made)
    made.append({"name": "lancedb_search", "arguments": {"query": "chain"}})
    replies, stderr, spent = exchange(lancelot_db, tmp_path, [("tools/call", params) for params in made], last)
    protocol_errors = {number: reply["error"] for number, reply in replies.items() if "error" in reply}
    assert protocol_errors == {}
    refused = [number for number in range(10, last) if replies[number]["result"].get("isError")]
    assert 0.3 * len(made) < len(refused) < len(made)  # the generator is hostile, but not only
    assert replies[last]["result"]["structuredContent"]["count"] >= 1  # still searching after all that
    assert not any(replies[number]["result"].get("isError") for number in several)  # five hostile phrasings: found
    assert "Traceback" not in stderr
    assert fingerprint(lancelot_db) == before
    # With a condition one level deeper per tag, 19 and 20 tags alone took over 30 s of CPU.
    assert spent < 20, f"the server spent {spent:.1f} s of CPU"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


CURSORS = [
    "",
    "not-a-cursor",
    "\u00b2\u00b2",
    "=" * 9,
    "x" * 200_000,
    _b64(b"[" * 40_000 + b"]" * 40_000),
    _b64(b"{" * 5_000),
    _b64(b'{"a":' * 10_000 + b"1" + b"}" * 10_000),
    _b64(b"\xff\xfe\x00"),
    _b64(b"null"),
    _b64(b'{"table": 1, "after": "x"}'),
    _b64(b'{"table": "documents", "after": ["x"]}'),
    _b64(b'{"table": "nope", "after": "x"}'),
    _b64(b'{"table": "documents", "after": "' + b"a" * 100_000 + b'"}'),
]
URI_QUERIES = [
    "",
    "?from=1",
    "?from=\u00b2",
    "?offset=\u0663",
    "?from=1e308",
    "?from=" + "9" * 400,
    "?from=-1",
    "?from=1&from=2",
    "?from=0&offset=5",
    "?x=1",
    "?from=%FF",
    "#fragment",
]
URI_SOURCES = ["guide/puncture.md", "notes/odd.txt", "%FF", "%C3", "%", "a%00b", "%2e%2e/etc/passwd", "%E2%80%AE"]


def resource_requests(count: int, seed: int) -> list[tuple[str, dict]]:
    """`count` resources/list and resources/read requests: hostile cursors and URIs, and some good ones."""
    rng = random.Random(seed)
    made: list[tuple[str, dict]] = [("resources/list", {"cursor": cursor}) for cursor in CURSORS]
    for _ in range(count - len(made)):
        table = rng.choice(["documents", "documents", "nope", "", "..", "x" * 300])
        source = rng.choice([*URI_SOURCES, *(string[:200] for string in STRINGS)])
        uri = rng.choice(["lancelot://", "lancelot://", "file://", "", "LANCELOT://"]) + f"{table}/{source}"
        made.append(("resources/read", {"uri": uri + rng.choice(URI_QUERIES)}))
    return made


def test_hostile_resource_requests_get_answers_or_invalid_params_never_internal_errors(lancelot_db, tmp_path):
    before = fingerprint(lancelot_db)
    made = resource_requests(200, seed=29)
    last = 10 + len(made)
    made.append(("resources/read", {"uri": "lancelot://documents/guide/puncture.md?from=1"}))
    replies, stderr, _ = exchange(lancelot_db, tmp_path, made, last)
    errors = {number: reply["error"] for number, reply in replies.items() if "error" in reply}
    assert {error["code"] for error in errors.values()} == {-32602}, errors
    assert all(len(error["message"]) < 600 and "unexpectedly" not in error["message"] for error in errors.values())
    assert 0.5 * len(made) < len(errors) < len(made)
    assert "Passage 1" in replies[last]["result"]["contents"][0]["text"]  # still reading after all that
    assert "Traceback" not in stderr and "resource request failed" not in stderr
    assert fingerprint(lancelot_db) == before
