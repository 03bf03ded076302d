"""`InFlight` at the ASGI level, around an app that holds each request until the test lets it go.

The limit at work in a real `lancelot --http` is tested in tests/e2e/test_http_inflight.py.
"""

import json

import anyio
import pytest
from structlog.testing import capture_logs

from lancelot_server.http.guard import Guard, Rules
from lancelot_server.http.inflight import InFlight

SCOPE = {
    "type": "http",
    "method": "POST",
    "path": "/mcp",
    "headers": [(b"host", b"127.0.0.1:3000"), (b"content-type", b"application/json"), (b"accept", b"application/json")],
}
PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
# Any test here is over in well under a second; the bound only stops a broken one from hanging.
HANG_S = 10


class Held:
    """The app inside the layer: counts the requests inside it and answers 200 once `release` is set.
    A client that goes away (http.disconnect) ends its request at once, unanswered."""

    def __init__(self):
        self.release = anyio.Event()
        self.inside = 0

    async def __call__(self, scope, receive, send):
        self.inside += 1
        try:
            async with anyio.create_task_group() as group:

                async def gone():
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(gone)
                await self.release.wait()
                await send({"type": "http.response.start", "status": 200, "headers": []})
                await send({"type": "http.response.body", "body": b"{}"})
                group.cancel_scope.cancel()
        finally:
            self.inside -= 1


class Client:
    """One request: a body that arrives whole (or never, or followed by the client leaving), and what came back."""

    def __init__(self, body=PING, leaves=None):
        self.body = body
        self.leaves = leaves  # an Event after which the client disconnects
        self.sent = False
        self.messages = []
        self.done = anyio.Event()

    async def receive(self):
        if not self.sent and self.body is not None:
            self.sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await (self.leaves or anyio.Event()).wait()
        return {"type": "http.disconnect"}

    async def send(self, message):
        self.messages.append(message)

    async def run(self, app):
        try:
            await app(SCOPE, self.receive, self.send)
        finally:
            self.done.set()

    @property
    def status(self):
        return self.messages[0]["status"] if self.messages else None

    @property
    def headers(self):
        return dict(self.messages[0]["headers"])


async def until(condition):
    with anyio.fail_after(HANG_S):
        while not condition():
            await anyio.sleep(0.001)


def test_past_the_limit_a_request_is_503_with_retry_after_at_once_while_the_accepted_wait():
    held = Held()
    layer = InFlight(held, limit=2)
    accepted, refused = [Client(), Client()], Client()

    async def scenario():
        async with anyio.create_task_group() as group:
            for client in accepted:
                group.start_soon(client.run, layer)
            await until(lambda: held.inside == 2)
            with anyio.fail_after(HANG_S):
                await refused.run(layer)  # returns though nothing has been released
            assert held.inside == 2 and not any(client.done.is_set() for client in accepted)
            held.release.set()

    anyio.run(scenario)
    assert [client.status for client in accepted] == [200, 200]
    assert refused.status == 503
    assert refused.headers[b"retry-after"] == b"1"
    assert refused.headers[b"content-type"] == b"application/json"
    error = json.loads(refused.messages[1]["body"])["error"]
    assert error == {"code": -32603, "message": "Service unavailable: 2 requests are in flight; retry in 1 s"}


def test_a_slot_is_free_again_once_a_request_is_answered():
    held = Held()
    layer = InFlight(held, limit=1)

    async def scenario():
        held.release.set()
        for _ in range(3):
            client = Client()
            await client.run(layer)
            assert client.status == 200
        assert layer.count == 0

    anyio.run(scenario)


def test_a_slot_is_freed_when_the_app_fails_or_the_client_leaves():
    async def fails(scope, receive, send):
        raise RuntimeError("the endpoint broke")

    async def scenario():
        layer = InFlight(fails, limit=1)
        for _ in range(2):  # the second reaches the app too: the first one's slot was freed
            with pytest.raises(RuntimeError, match="the endpoint broke"):
                await Client().run(layer)
        assert layer.count == 0

        held = Held()
        layer = InFlight(held, limit=1)
        leaves = anyio.Event()
        leaving = Client(leaves=leaves)
        async with anyio.create_task_group() as group:
            group.start_soon(leaving.run, layer)
            await until(lambda: held.inside == 1)
            leaves.set()
            await until(leaving.done.is_set)
        assert leaving.status is None and layer.count == 0
        held.release.set()
        after = Client()
        await after.run(layer)
        assert after.status == 200

    anyio.run(scenario)


def test_a_slot_is_freed_when_the_request_is_cancelled():
    held = Held()
    layer = InFlight(held, limit=1)

    async def scenario():
        async with anyio.create_task_group() as group:
            group.start_soon(Client().run, layer)
            await until(lambda: layer.count == 1)
            group.cancel_scope.cancel()  # as when the server stops with the request unanswered
        assert layer.count == 0

    anyio.run(scenario)


def test_lifespan_and_other_scopes_pass_through_uncounted():
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["type"])

    layer = InFlight(app, limit=1)
    layer.count = 1  # full: an http request would be refused
    anyio.run(layer, {"type": "lifespan"}, None, None)
    assert seen == ["lifespan"]


def test_many_refusals_are_one_log_line_and_the_end_is_one_more():
    held = Held()
    layer = InFlight(held, limit=1)
    layer.full.quiet = 0.0  # the end is logged at the first answer after the last refusal

    async def scenario():
        async with anyio.create_task_group() as group:
            group.start_soon(Client().run, layer)
            await until(lambda: held.inside == 1)
            for _ in range(100):
                await Client().run(layer)
            held.release.set()

    with capture_logs() as logs:
        anyio.run(scenario)
    assert [(line["event"], line["times"]) for line in logs] == [
        ("max_requests_reached", 1),
        ("max_requests_reached_ended", 100),
    ]
    assert logs[0]["max_requests"] == 1 and logs[0]["log_level"] == "warning"


def test_behind_the_guard_only_requests_whose_body_has_arrived_take_a_slot():
    held = Held()
    rules = Rules(path="/mcp", allowed_hosts=None, allowed_origins=frozenset(), protocol_versions=frozenset())
    guarded = Guard(InFlight(held, limit=1), rules)
    trickling = [Client(body=None) for _ in range(20)]  # headers in, the body never comes
    whole = Client()

    async def scenario():
        async with anyio.create_task_group() as group:
            for client in trickling:
                group.start_soon(client.run, guarded)
            group.start_soon(whole.run, guarded)
            await until(lambda: held.inside == 1)
            held.release.set()
            await until(whole.done.is_set)
            group.cancel_scope.cancel()

    with capture_logs():
        anyio.run(scenario)
    assert whole.status == 200
    assert not any(client.messages for client in trickling)
