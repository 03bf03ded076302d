"""Hundreds of generated tool calls, most of them hostile, sent as raw JSON-RPC lines to the real `lancelot`
over stdio: every call gets a result or a tool error (never a protocol error), the server stays up, and no
database file changes."""

from __future__ import annotations

import json
import os
import random
import subprocess

from tests.architecture.test_read_only import fingerprint
from tests.e2e.stdio_server import LANCELOT
from tests.e2e.test_stdio import _exchange, _frame

FILTERS = ["tags", "tagMatch", "since", "until", "types"]
TOOLS = {
    "lancedb_search": ["query", "mode", "limit", "table", "path", "perDocument", *FILTERS],
    "lancedb_query": ["query", "mode", "limit", "table", "path", "budget", "perDocument", *FILTERS],
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


def hostile(rng: random.Random) -> object:
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
            made.append({"name": name, "arguments": {key: hostile(rng) for key in chosen}})
    return made


def test_hundreds_of_hostile_calls_get_answers_and_change_no_file(lancelot_db, tmp_path):
    before = fingerprint(lancelot_db)
    made = calls(400, seed=14)
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}
    lines = [_frame(1, "initialize", init), _frame(None, "notifications/initialized")]
    lines += [_frame(number, "tools/call", params) for number, params in enumerate(made, start=10)]
    last = 10 + len(made)
    lines.append(_frame(last, "tools/call", {"name": "lancedb_search", "arguments": {"query": "chain"}}))
    env = {**os.environ, "LANCEDB_PATH": str(lancelot_db), "XDG_CONFIG_HOME": str(tmp_path)}
    with subprocess.Popen(
        [LANCELOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as process:
        answers, stderr = _exchange(process, "".join(lines), ids=set(range(10, last + 1)))
    replies = {message["id"]: message for message in map(json.loads, answers) if "id" in message}
    protocol_errors = {number: reply["error"] for number, reply in replies.items() if "error" in reply}
    assert protocol_errors == {}
    refused = [number for number in range(10, last) if replies[number]["result"].get("isError")]
    assert 0.3 * len(made) < len(refused) < len(made)  # the generator is hostile, but not only
    assert replies[last]["result"]["structuredContent"]["count"] >= 1  # still searching after all that
    assert "Traceback" not in stderr
    assert fingerprint(lancelot_db) == before
