"""`connections`: the cap's arithmetic, the descriptor limit and the answers written before any request.

The deadline and the cap at work are tested against a real `lancelot --http` in
tests/e2e/test_http_slow_clients.py.
"""

import json
import resource
import subprocess
import sys
from http import HTTPStatus

from lancelot_server.http.connections import MAX_CONNECTIONS, Pool, answer, connection_cap


def test_the_default_cap_takes_at_most_half_the_descriptors():
    assert connection_cap(None, 1_048_576) == (MAX_CONNECTIONS, True)
    assert connection_cap(None, 256) == (128, True)
    assert connection_cap(None, None) == (MAX_CONNECTIONS, True)


def test_a_cap_asked_for_is_kept_and_flagged_when_it_leaves_too_few_descriptors():
    assert connection_cap(50, 256) == (50, True)
    assert connection_cap(5000, 256) == (5000, False)


def test_the_soft_descriptor_limit_is_raised_to_the_hard_one():
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = min(hard, 64)
    probe = (
        "import resource\n"
        "from lancelot_server.http.connections import raise_fd_limit\n"
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({low}, {hard}))\n"
        "print(raise_fd_limit(), resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    expected = hard if hard != resource.RLIM_INFINITY else 10240
    assert out.stdout.split() == [str(expected), str(expected)]


def test_an_early_answer_is_a_whole_response_that_closes_the_connection():
    raw = answer(HTTPStatus.SERVICE_UNAVAILABLE, "Busy.", {"Retry-After": "1"})
    head, body = raw.split(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.1 503 Service Unavailable"
    assert {"Connection: close", "Retry-After: 1", f"Content-Length: {len(body)}"} <= set(lines)
    assert json.loads(body) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Busy."}}


def test_only_a_connection_that_has_waited_long_enough_may_be_evicted():
    pool = Pool()
    first, second = object(), object()
    pool.awaiting.update({first: 10.0, second: 10.5})  # type: ignore[dict-item]
    assert pool.evictable(10.9) is None
    assert pool.evictable(11.0) is first
    assert Pool().evictable(99.0) is None
