"""`lancelot --http --max-requests 2` as a real process: vector searches held in flight by the test
embedding endpoint, a third request refused at once, and clients trickling their bodies never counted,
then cut off (408) at the request timeout with their connections closed."""

import time

import anyio
import httpx
import pytest
from tests.e2e.test_http_server import ACCEPT, Running, environment, rpc
from tests.e2e.test_http_slow_clients import Slow
from tests.support.embedding_server import EmbeddingServer

# Timing budgets: one worker runs these modules' tests one after another, however many workers run.
pytestmark = pytest.mark.xdist_group("timing")

# The embedding endpoint holds each search this long: under the server's 10 s embedding timeout, and
# far longer than a refusal takes, even on two busy cores.
HOLD_S = 4
# Generous bounds that only a hang would pass.
QUICKLY_S = 3
HANG_S = 30
# The request timeout: a trickling body is cut off (408) this long after its headers; far longer than
# the few requests made while they trickle take.
TIMEOUT_S = 6
HEADERS = {"content-type": "application/json", **ACCEPT}


@pytest.fixture(scope="module")
def endpoint():
    with EmbeddingServer() as server:
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory, lancelot_db, endpoint):
    env = environment(
        lancelot_db,
        LANCEDB_TABLE="embedded",
        OPENAI_BASE_URL=endpoint.url,
        OPENAI_API_KEY="sk-test",
        EMBEDDING_MODEL="test-8",
        LANCELOT_HTTP_REQUEST_TIMEOUT=str(TIMEOUT_S),
    )
    with Running(tmp_path_factory.mktemp("inflight"), env, "--max-requests", "2") as running:
        answer = httpx.post(running.url, json=search_body("warm up"), headers=HEADERS, timeout=HANG_S)
        assert answer.status_code == 200  # the first search loads LanceDB
        yield running


def search_body(query):
    return rpc("tools/call", {"name": "lancedb_search", "arguments": {"query": query, "mode": "vector"}})


async def post(http, url, body):
    """One POST: its answer, and how long it took."""
    started = time.monotonic()
    answer = await http.post(url, json=body, headers=HEADERS)
    return answer, time.monotonic() - started


async def held_searches(http, server, endpoint, group, answers):
    """Two vector searches, each held by the endpoint for HOLD_S; returns once both are inside it."""
    endpoint.reset()
    endpoint.slow_next(HOLD_S, times=2)

    async def search(query):
        answers.append(await post(http, server.url, search_body(query)))

    for query in ("press the patch firmly", "chain lubricant"):
        group.start_soon(search, query)
    with anyio.fail_after(HANG_S):
        while endpoint.max_in_flight < 2:
            await anyio.sleep(0.01)


def searched(answer):
    result = answer.json()["result"]
    return not result.get("isError", False) and result["structuredContent"]["searchType"] == "vector"


def test_past_the_limit_requests_are_503_at_once_and_the_accepted_ones_complete(server, endpoint):
    accepted, refused = [], []

    async def scenario():
        async with httpx.AsyncClient(timeout=HANG_S) as http, anyio.create_task_group() as group:
            await held_searches(http, server, endpoint, group, accepted)

            async def extra(number):
                refused.append(await post(http, server.url, search_body(f"extra {number}")))

            async with anyio.create_task_group() as extras:
                for number in range(5):
                    extras.start_soon(extra, number)
            assert not accepted  # every refusal came while both searches were still held

    anyio.run(scenario)
    assert [answer.status_code for answer, _ in refused] == [503] * 5
    assert all(took < QUICKLY_S for _, took in refused)
    answer = refused[0][0]
    assert answer.headers["retry-after"] == "1"
    assert answer.json()["error"]["message"] == "Service unavailable: 2 requests are in flight; retry in 1 s"
    assert [answer.status_code for answer, _ in accepted] == [200, 200]
    assert all(searched(answer) for answer, _ in accepted)
    assert all(took >= HOLD_S for _, took in accepted)

    after = httpx.post(server.url, json=search_body("patch"), headers=HEADERS, timeout=HANG_S)
    assert after.status_code == 200 and searched(after)
    assert limit_lines(server) == [("max_requests_reached", 1), ("max_requests_reached_ended", 5)]


def limit_lines(server):
    """The log's lines about the limit, once its end is there: it is written as a slot is freed, just
    after that request's answer."""
    deadline = time.monotonic() + HANG_S
    while True:
        lines = [(line["event"], line["times"]) for line in server.log() if "max_requests" in line["event"]]
        if (lines and lines[-1][0].endswith("_ended")) or time.monotonic() > deadline:
            return lines
        time.sleep(0.1)


class Trickle(Slow):
    """A client that sends whole headers, then its body one byte every half second; `closed` is when
    the server ended the connection."""

    HEAD = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
    )


def test_clients_trickling_their_bodies_take_no_slot_and_are_cut_off_and_closed_at_the_timeout(server, endpoint):
    trickling = [Trickle(server.port) for _ in range(50)]
    accepted, open_meanwhile = [], []

    async def scenario():
        async with httpx.AsyncClient(timeout=HANG_S) as http, anyio.create_task_group() as group:
            for client in trickling:
                group.start_soon(client.run)
            with anyio.fail_after(HANG_S):
                while any(client.opened is None for client in trickling):
                    await anyio.sleep(0.05)
            ping, _ = await post(http, server.url, rpc("ping"))
            assert ping.status_code == 200
            open_meanwhile.append(sum(client.closed is None for client in trickling))
            async with anyio.create_task_group() as searches:
                await held_searches(http, server, endpoint, searches, accepted)
                # Both slots are the searches', with every trickling client still sending.
                open_meanwhile.append(sum(client.closed is None for client in trickling))
                busy, _ = await post(http, server.url, rpc("ping"))
                assert busy.status_code == 503
            with anyio.fail_after(HANG_S):
                while any(client.closed is None for client in trickling):
                    await anyio.sleep(0.1)

    anyio.run(scenario)
    assert open_meanwhile == [50, 50]
    assert [answer.status_code for answer, _ in accepted] == [200, 200]
    assert all(searched(answer) for answer, _ in accepted)
    assert {client.status for client in trickling} == {408}
    lived = [client.closed - client.opened for client in trickling]
    assert min(lived) > TIMEOUT_S / 2 and max(lived) < HANG_S
