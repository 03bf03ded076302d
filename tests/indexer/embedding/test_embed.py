import math
from array import array

import pytest
from tests.support.embedding_server import EmbeddingServer

from lancelot_indexer.embedding.embed import Limits, Retry, embed_texts, estimate_tokens, plan_batches, split_text
from lancelot_indexer.errors import (
    EmbeddingEndpointError,
    EmbeddingError,
    EmbeddingKeyError,
    EmbeddingModelError,
    EmbeddingRateLimited,
    EmbeddingUnreachable,
    EmbeddingWidthError,
)

pytestmark = pytest.mark.waits  # tests/support/ordering.py

FAST = Retry(base_delay=0.01, max_delay=0.05)


def embed(server: EmbeddingServer, texts, **options):
    options = {
        "model": "test-16",
        "api_key": "sk-test",
        "base_url": server.url,
        "retry": FAST,
        "concurrency": 1,
        **options,
    }
    return embed_texts(texts, **options)


def texts(count: int, prefix: str = "chunk") -> list[str]:
    return [f"{prefix} number {n} about vacuum and indexes" for n in range(count)]


def test_vectors_come_back_in_order_with_their_width_through_base64(embedding_server):
    given = texts(10)
    got = embed(embedding_server, given, concurrency=4)
    assert len(got) == 10 and got.width == 16 and got.model == "test-16"
    assert got.host == f"127.0.0.1:{embedding_server.port}"
    for n, text in enumerate(given):
        assert got[n] == pytest.approx(embedding_server.vector(text, "test-16"), abs=1e-6)
    assert {r.encoding_format for r in embedding_server.requests} == {"base64"}
    assert got.stats.requests == len(embedding_server.requests) and got.stats.inputs == 10


def test_the_arrow_column_is_fixed_size_float32_of_the_same_values(embedding_server):
    import pyarrow as pa

    got = embed(embedding_server, texts(3))
    column = got.to_arrow()
    assert column.type == pa.list_(pa.float32(), 16)
    assert column.to_pylist() == [got[0], got[1], got[2]]


def test_at_most_2048_inputs_go_in_one_request():
    with EmbeddingServer(max_inputs=2048) as server:
        got = embed(server, [f"t{n}" for n in range(5000)], model="test-8", concurrency=1)
        assert [len(r.inputs) for r in server.requests] == [2048, 2048, 904]
        assert len(got) == 5000 and got.stats.requests == 3


def test_each_request_stays_within_the_token_budget():
    with EmbeddingServer(max_request_tokens=100) as server:
        given = [("word " * (n % 9 + 1)).strip() for n in range(60)]
        got = embed(server, given, concurrency=1, limits=Limits(max_request_tokens=100, max_input_tokens=100))
        sent = [r.inputs for r in server.requests]
        assert all(sum(estimate_tokens(t) for t in batch) <= 100 for batch in sent)
        assert len(sent) > 1 and [t for batch in sent for t in batch] == given
        assert len(got) == 60


def test_default_batches_of_real_sized_chunks_stay_well_inside_openais_token_cap(embedding_server):
    chunk = ("Routine vacuuming reclaims the space held by dead row versions. " * 20)[:1200]
    got = embed(embedding_server, [f"{n} {chunk}" for n in range(1000)], model="test-8")
    sent = [r.inputs for r in embedding_server.requests]
    assert len(got) == 1000 and all(r.status == 200 for r in embedding_server.requests)
    assert all(sum(estimate_tokens(t) for t in batch) <= 100_000 for batch in sent)
    assert sum(len(batch) for batch in sent) == 1000 and len(sent) == 7  # ~166 chunks of 1,200 characters each


def test_requests_run_concurrently_but_never_more_than_asked():
    with EmbeddingServer(latency=0.2) as server:
        embed(server, texts(40), concurrency=4, limits=Limits(max_inputs=5))
        assert len(server.requests) == 8
        assert 2 <= server.max_in_flight <= 4
    with EmbeddingServer(latency=0.05) as server:
        embed(server, texts(20), concurrency=1, limits=Limits(max_inputs=5))
        assert server.max_in_flight == 1


def test_batches_are_spread_over_the_workers():
    assert [len(b) for b in plan_batches([f"t{n}" for n in range(10)], Limits(), concurrency=4)] == [3, 3, 3, 1]
    assert [len(b) for b in plan_batches(["t"] * 10_000, Limits(), concurrency=4)] == [2048] * 4 + [1808]
    assert plan_batches([], Limits(), concurrency=4) == []


def test_a_429_is_retried_after_the_time_retry_after_asks(embedding_server):
    embedding_server.fail_next(429, retry_after=0.3)
    got = embed(embedding_server, texts(2))
    assert len(got) == 2 and got.stats.retries == 1 and got.stats.requests == 2
    assert 0.3 <= got.stats.waits[0] <= 0.3 + FAST.base_delay
    first, second = embedding_server.requests
    assert second.started - first.ended >= 0.25  # the wait really happened


def test_a_500_is_retried_with_growing_jittered_backoff(embedding_server):
    embedding_server.fail_next(500, times=3)
    got = embed(embedding_server, texts(2))
    assert [r.status for r in embedding_server.requests] == [500, 500, 500, 200]
    assert got.stats.retries == 3
    assert all(0 <= w <= min(FAST.max_delay, FAST.base_delay * 2**n) for n, w in enumerate(got.stats.waits))


def test_a_rate_limit_that_never_clears_fails_naming_it(embedding_server):
    embedding_server.fail_next(429, times=10, retry_after=0)
    with pytest.raises(EmbeddingRateLimited, match="never cleared: 3 attempts"):
        embed(embedding_server, texts(2), retry=Retry(attempts=3, base_delay=0.01))
    assert len(embedding_server.requests) == 3


def test_a_used_up_quota_or_a_long_retry_after_fails_at_once(embedding_server):
    embedding_server.fail_next(429, code="insufficient_quota")
    with pytest.raises(EmbeddingRateLimited, match="quota is used up"):
        embed(embedding_server, texts(2))
    embedding_server.fail_next(429, retry_after=3600)
    with pytest.raises(EmbeddingRateLimited, match="asks to wait 3600 s"):
        embed(embedding_server, texts(2))
    assert len(embedding_server.requests) == 2


def test_a_server_error_that_persists_fails_naming_the_status(embedding_server):
    embedding_server.fail_next(503, times=5)
    with pytest.raises(EmbeddingEndpointError, match=r"failed 3 times in a row \(503"):
        embed(embedding_server, texts(2), retry=Retry(attempts=3, base_delay=0.01))


def test_a_bad_key_fails_at_once_without_showing_the_key(embedding_server):
    with pytest.raises(EmbeddingKeyError, match="refused the API key") as caught:
        embed(embedding_server, texts(30), api_key="sk-not-the-right-one", concurrency=4, limits=Limits(max_inputs=5))
    assert "OPENAI_API_KEY" in str(caught.value) and "sk-not-the-right-one" not in str(caught.value)
    assert len(embedding_server.requests) <= 4  # the first refusal stops the rest; nothing is retried


def test_no_key_for_openai_itself_fails_before_any_request():
    with pytest.raises(EmbeddingKeyError, match=r"api\.openai\.com"):
        embed_texts(["x"], model="text-embedding-3-small", api_key=None, base_url=None)


def test_a_local_endpoint_may_need_no_key():
    with EmbeddingServer(api_key=None) as server:
        assert len(embed(server, texts(2), api_key=None)) == 2


def test_an_unknown_model_fails_naming_it(embedding_server):
    with pytest.raises(EmbeddingModelError, match="does not know the model no-such-model"):
        embed(embedding_server, texts(2), model="no-such-model")
    assert len(embedding_server.requests) == 1


def test_an_unreachable_endpoint_fails_naming_the_host(closed_url):
    host = closed_url.split("/")[2]
    with pytest.raises(EmbeddingUnreachable, match=f"cannot reach the embedding endpoint {host}"):
        embed_texts(["x"], model="test-8", api_key="sk-test", base_url=closed_url, retry=FAST)


def test_a_slow_answer_times_out_and_is_retried(embedding_server):
    embedding_server.slow_next(2.0)
    got = embed(embedding_server, texts(2), timeout=0.3)
    assert len(got) == 2 and got.stats.retries == 1
    embedding_server.slow_next(2.0, times=2)
    with pytest.raises(EmbeddingUnreachable, match="did not answer in time, 2 times"):
        embed(embedding_server, texts(2), timeout=0.3, retry=Retry(timeout_attempts=2, base_delay=0.01))


def test_a_wrong_width_is_caught(embedding_server):
    embedding_server.wrong_width_next(5)
    with pytest.raises(EmbeddingWidthError, match=r"width 5, but the table's vectors are 16 wide"):
        embed(embedding_server, texts(2), expected_width=16)
    embedding_server.wrong_width_next(5)
    with pytest.raises(EmbeddingWidthError, match=r"differing widths \[5, 16\]"):
        embed(embedding_server, texts(10), concurrency=1, limits=Limits(max_inputs=2))


def test_a_refused_request_stops_the_run_early():
    with EmbeddingServer(latency=0.05) as server:
        server.fail_next(400)
        with pytest.raises(EmbeddingEndpointError, match=r"refused the request \(400"):
            embed(server, texts(40), concurrency=2, limits=Limits(max_inputs=2))
        assert len(server.requests) < 20


def test_a_long_text_is_split_and_its_parts_combined_never_cut():
    with EmbeddingServer(max_input_tokens=64) as server:  # the endpoint refuses any longer input
        long = " ".join(f"word{n}" for n in range(300))
        given = ["short one", long, "short two"]
        got = embed(server, given, limits=Limits(max_input_tokens=64), concurrency=1)
        sent = [t for r in server.requests for t in r.inputs]
        parts = sent[1:-1]
        assert sent[0] == "short one" and sent[-1] == "short two"
        assert len(parts) > 1 and "".join(parts) == long
        assert got.stats.split_texts == 1 and len(got) == 3
        total = [0.0] * 16
        for part in parts:
            for i, value in enumerate(server.vector(part, "test-16")):
                total[i] += len(part) * value
        norm = math.sqrt(sum(v * v for v in total))
        assert got[1] == pytest.approx([v / norm for v in total], abs=1e-5)
        assert got[0] == pytest.approx(server.vector("short one", "test-16"), abs=1e-6)


def test_split_text_keeps_every_character_and_prefers_spaces():
    text = "héllo wörld 🙂 " * 50 + "x" * 300
    parts = split_text(text, 20)
    assert "".join(parts) == text
    assert all(len(p.encode()) <= 40 for p in parts)
    assert all(p.endswith(" ") for p in parts[:10])  # cut after a space while there are spaces
    assert split_text("short", 20) == ["short"]


def test_progress_counts_each_text_once(embedding_server):
    seen: list[int] = []
    long = "alpha " * 200
    embed(embedding_server, [*texts(9), long], progress=seen.append, limits=Limits(max_input_tokens=50, max_inputs=3))
    assert sum(seen) == 10


def test_nothing_to_embed_sends_nothing_and_empty_text_is_refused(embedding_server):
    got = embed(embedding_server, [])
    assert len(got) == 0 and got.flat == array("f") and embedding_server.requests == []
    with pytest.raises(ValueError, match="empty"):
        embed(embedding_server, ["fine", ""])


def test_every_embedding_error_is_an_indexer_error():
    from lancelot_indexer.errors import IndexerError

    assert issubclass(EmbeddingError, IndexerError)


@pytest.mark.parametrize("body", [b"not json", b'{"object": "list"}', b'{"data": [1, 2]}', b'{"data": [{"x": 1}]}'])
def test_an_answer_that_is_not_embeddings_fails_naming_the_endpoint(body):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Odd(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Odd) as odd:
        threading.Thread(target=odd.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{odd.server_address[1]}/v1"
        with pytest.raises(EmbeddingEndpointError, match=r"test-16 at 127\.0\.0\.1:\d+ answered"):
            embed_texts(texts(2), model="test-16", api_key="sk-test", base_url=url, retry=FAST)
        odd.shutdown()
