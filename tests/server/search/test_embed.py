"""A slow or broken embedding endpoint never fails a search and never holds text search up.

Against the real test endpoint on 127.0.0.1 through the real openai client: answers that are not
embeddings, a cool-down after an endpoint failure, and a bound on requests waiting at once.
"""

from __future__ import annotations

import threading
import time

import pytest
from tests.server.conftest import endpoint_tools

from lancelot_server.search import embed

# Timing budgets: one worker runs these modules' tests one after another, however many workers run.
pytestmark = pytest.mark.xdist_group("timing")


@pytest.fixture
def short_waits(monkeypatch):
    monkeypatch.setattr(embed, "COOL_DOWN_S", 1.0)
    monkeypatch.setattr(embed, "SLOT_WAIT_S", 0.3)


@pytest.mark.parametrize("body", [b"<html>gateway</html>", b'{"data": []}', b'{"object": "list"}', b"[1, 2]"])
def test_an_answer_that_is_not_an_embedding_falls_back_to_text_with_a_note(
    lancelot_db, embedding_server, make_tools, body
):
    embedding_server.bad_body_next(body)
    reply = endpoint_tools(make_tools, lancelot_db, embedding_server).search("hiss", mode="hybrid")
    assert reply["searchType"] == "text" and reply["hits"]
    assert reply["note"].startswith(f"vector search failed: 127.0.0.1:{embedding_server.port} did not answer with an ")


def test_after_an_endpoint_failure_vector_search_rests_then_tries_again(
    lancelot_db, embedding_server, make_tools, short_waits
):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server)
    embedding_server.fail_next(500)
    assert tools.search("hiss", mode="vector")["note"].startswith("vector search failed:")
    sent = len(embedding_server.requests)
    resting = tools.search("hiss", mode="vector")
    assert resting["searchType"] == "text" and resting["hits"]
    assert resting["note"].startswith("vector search skipped: it failed 0 s ago (127.0.0.1:")
    assert "500" in resting["note"]
    assert len(embedding_server.requests) == sent  # nothing was sent while resting
    time.sleep(1.1)
    assert tools.search("hiss", mode="vector")["searchType"] == "vector"
    assert len(embedding_server.requests) == sent + 1


def test_a_rejected_request_is_not_a_reason_to_rest(lancelot_db, embedding_server, make_tools, short_waits):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server)
    embedding_server.fail_next(400)
    assert "400" in tools.search("hiss", mode="vector")["note"]
    assert tools.search("hiss", mode="vector")["searchType"] == "vector"


def test_a_stalled_endpoint_holds_at_most_a_few_searches_and_text_search_stays_fast(
    lancelot_db, embedding_server, make_tools, short_waits
):
    tools = endpoint_tools(make_tools, lancelot_db, embedding_server)
    embedding_server.slow_next(2.0, times=embed.MAX_IN_FLIGHT + 4)
    replies: list[dict] = []
    searches = [
        threading.Thread(target=lambda: replies.append(tools.search("hiss", mode="vector")))
        for _ in range(embed.MAX_IN_FLIGHT + 4)
    ]
    for search in searches:
        search.start()
    deadline = time.monotonic() + 30
    while len(replies) < 4 or embedding_server.max_in_flight < embed.MAX_IN_FLIGHT:
        assert time.monotonic() < deadline, replies  # every slot taken, and the searches without one given up
        time.sleep(0.01)
    started = time.perf_counter()
    text = tools.search("hiss", mode="text")
    assert time.perf_counter() - started < 1.0 and text["hits"]
    for search in searches:
        search.join(timeout=30)
    skipped = [reply for reply in replies if reply.get("note", "").startswith("vector search skipped: ")]
    assert len(skipped) == 4
    assert all(f"{embed.MAX_IN_FLIGHT} embedding requests" in reply["note"] for reply in skipped)
    assert embedding_server.max_in_flight == embed.MAX_IN_FLIGHT
