"""On Lambda the handler writes only under /tmp: every Python-level write is watched through audit hooks.

The probe runs the handler in a fresh interpreter, as Lambda would, with `AWS_LAMBDA_FUNCTION_NAME` set,
answers an initialize, tools/list and each tool, and reports any file opened for writing, created,
renamed or removed outside /tmp, or inside the database folder (which here lives under /tmp itself).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.indexing import run_index

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import json, os, sys

DB = os.path.realpath(os.environ["LANCEDB_PATH"])
CHANGES = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.symlink", "os.link", "os.truncate",
           "os.chmod", "os.utime", "shutil.rmtree", "shutil.move", "shutil.copyfile"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
seen = []

def outside(target):
    path = os.path.realpath(os.fsdecode(target))
    in_db = path == DB or path.startswith(DB + os.sep)
    return in_db or not (path == "/tmp" or path.startswith(("/tmp/", "/dev/")))

def hook(event, args):
    if event == "open":
        path, mode, flags = args
        writing = any(c in (mode or "") for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & WRITE_FLAGS)
        if writing and isinstance(path, (str, bytes, os.PathLike)) and outside(path):
            seen.append([event, os.fsdecode(path)])
    elif event in CHANGES and args and isinstance(args[0], (str, bytes, os.PathLike)) and outside(args[0]):
        if event == "os.mkdir" and os.path.isdir(args[0]):
            return  # lancedb.connect asks for the folder with exist_ok: nothing is created
        seen.append([event, os.fsdecode(args[0])])

assert outside("/var/task/x") and outside(os.path.join(DB, "new")) and not outside("/tmp/lancelot/settings.json")
sys.addaudithook(hook)
from lancelot_server.lambda_handler import handler

def post(method, params=None):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params is not None else {})}
    headers = {"host": "x.example", "content-type": "application/json", "accept": "application/json"}
    event = {"rawPath": "/", "headers": headers,
             "requestContext": {"http": {"method": "POST"}}, "body": json.dumps(body), "isBase64Encoded": False}
    return handler(event, None)["statusCode"]

client = {"name": "probe", "version": "0"}
statuses = [
    post("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}),
    post("tools/list"),
    post("tools/call", {"name": "lancedb_search", "arguments": {"query": "tyre", "mode": "text"}}),
    post("tools/call", {"name": "lancedb_search", "arguments": {"query": "tyre"}}),
    post("tools/call", {"name": "lancedb_query", "arguments": {"query": "chain"}}),
    post("tools/call", {"name": "lancedb_status", "arguments": {}}),
    post("tools/call", {"name": "lancedb_version", "arguments": {}}),
]
print(json.dumps({"statuses": statuses, "writes": seen}))
"""


def test_the_handler_writes_nothing_outside_tmp(tmp_path):
    db = tmp_path / "db"
    run_index(ROOT / "examples" / "docs", db, "--quiet")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCE", "OPENAI", "EMBEDDING"))}
    env.update(AWS_LAMBDA_FUNCTION_NAME="lancelot", LANCEDB_PATH=str(db), PYTHONDONTWRITEBYTECODE="1")
    env.update(LANCELOT_ALLOW_UNAUTHENTICATED="1")
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path, check=True
    )
    report = json.loads(out.stdout)
    assert report["statuses"] == [200] * 7
    assert report["writes"] == []
