"""SIGTERM and SIGINT stop `serve.serve` cleanly, and a request in flight still gets its answer.

The server here is a real process running `lancelot_server.http.serve.serve` around a small MCPServer with a
slow tool: the real tools answer too fast to be caught in flight.
"""

import json
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

# Timing budgets: one worker runs these modules' tests one after another, however many workers run.
pytestmark = pytest.mark.xdist_group("timing")

SERVER = """
import sys
from pathlib import Path
import anyio
from mcp.server.mcpserver import MCPServer
from lancelot_schema.settings import resolve
from lancelot_server.http import opening, serve

server = MCPServer("slow")

@server.tool()
async def slow(seconds: float) -> str:
    \"\"\"Say it started (a file named by the second argument), wait, then answer.\"\"\"
    Path(sys.argv[2]).touch()
    await anyio.sleep(seconds)
    return "done"

settings = resolve({})
serve.serve(server, settings, opening.open_port(settings, "127.0.0.1", int(sys.argv[1])))
"""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_listening(port, process, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the server never listened")


def call_slow(port, seconds):
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "slow", "arguments": {"seconds": seconds}},
    }
    headers = {"accept": "application/json", "mcp-protocol-version": "2025-11-25"}
    return httpx.post(f"http://127.0.0.1:{port}/mcp", json=body, headers=headers, timeout=30)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_lets_the_request_in_flight_finish_then_exits_zero(stop, tmp_path):
    port, started = free_port(), tmp_path / "started"
    command = [sys.executable, "-c", SERVER, str(port), str(started)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            wait_until_listening(port, process)
            answers = []
            caller = threading.Thread(target=lambda: answers.append(call_slow(port, 1.5)))
            caller.start()
            deadline = time.monotonic() + 30
            while not started.exists():  # the call is in flight once the tool has begun
                assert caller.is_alive() and time.monotonic() < deadline, answers
                time.sleep(0.01)
            process.send_signal(stop)
            caller.join(timeout=30)
            stdout, stderr = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
    assert answers[0].status_code == 200
    assert answers[0].json()["result"]["structuredContent"] == {"result": "done"}
    assert process.returncode == 0, stderr
    assert stdout == ""
    assert "Traceback" not in stderr
    events = [json.loads(line)["event"] for line in stderr.splitlines() if line.startswith("{")]
    assert events[0] == "serving"
    assert events[-1] == "stopped"
    with pytest.raises(httpx.ConnectError):
        call_slow(port, 0)


def test_stop_signals_that_keep_coming_while_it_exits_never_kill_it():
    """A supervisor may signal again while the server is already exiting; Python's own finalization
    would then die of the signal (exit -15) unless the stopped server ignores it."""
    port = free_port()
    command = [sys.executable, "-c", SERVER, str(port)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            wait_until_listening(port, process)
            deadline = time.monotonic() + 30
            while process.poll() is None and time.monotonic() < deadline:
                process.send_signal(signal.SIGTERM)
                time.sleep(0.001)
            _, stderr = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
