import json
import math
import re
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import openai
import pytest
from tests.support import fake_vectors
from tests.support.embedding_server import EmbeddingServer
from tests.support.fake_vectors import hashed_vector, hashed_vectors

ROOT = Path(__file__).resolve().parents[2]


def create(server: EmbeddingServer, key: str = "sk-test", **request):
    with openai.OpenAI(api_key=key, base_url=server.url, max_retries=0) as oai:
        return oai.embeddings.create(**request)


_http = httpx.Client(verify=False)  # plain HTTP on 127.0.0.1; skips building a TLS context per call


@pytest.fixture(scope="module", autouse=True)
def _close_http():
    yield
    _http.close()


def post(server: EmbeddingServer, body: object, key: str | None = "sk-test") -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return _http.post(f"{server.url}/embeddings", json=body, headers=headers)


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def test_answers_base64_by_default_and_float_on_request(embedding_server):
    texts = ["Install the server on Linux", "Configure the API key"]
    default = create(embedding_server, model="test-16", input=texts)
    floats = create(embedding_server, model="test-16", input=texts, encoding_format="float")
    assert [r.encoding_format for r in embedding_server.requests] == ["base64", "float"]
    for text, got_b64, got_float in zip(texts, default.data, floats.data, strict=True):
        expected = embedding_server.vector(text, "test-16")
        assert got_float.embedding == expected
        assert got_b64.embedding == pytest.approx(expected, abs=1e-6)  # float32 on the wire
    assert default.usage.prompt_tokens > 0


def test_vectors_are_deterministic_normalised_and_close_for_shared_words():
    a = hashed_vector("postgres vacuum analyze table statistics", 256)
    assert a == hashed_vector("postgres vacuum analyze table statistics", 256)
    assert math.isclose(math.fsum(x * x for x in a), 1.0)
    near = hashed_vector("vacuum and analyze refresh table statistics", 256)
    far = hashed_vector("python asyncio event loop coroutine", 256)
    assert cosine(a, near) > cosine(a, far) + 0.3
    assert hashed_vector("a b", 256) != hashed_vector("b a", 256)  # word order still tells texts apart


def test_a_request_gives_each_text_the_vector_it_gets_alone():
    texts = ["Vacuum, ANALYZE; table_stats 42!", "vacuum naïve café 東京 — ok", "a b", "a b"]
    for row, text in zip(hashed_vectors(texts, 64), texts, strict=True):
        assert row.tolist() == hashed_vector(text, 64)


@pytest.mark.parametrize("text", ["Vacuum, ANALYZE; table_stats 42!\n(x-y)", "tab\there", "--"])
def test_an_ascii_text_splits_into_the_same_words_as_any_other(text):
    assert [word.decode() for word in fake_vectors._words(text)] == re.findall(r"\w+", text.lower())
    assert fake_vectors._words(text + " é") == [*re.findall(r"\w+", text.lower()), "é"]


def test_width_follows_the_model_and_dimensions(embedding_server):
    assert len(create(embedding_server, model="text-embedding-3-small", input="x").data[0].embedding) == 1536
    assert len(create(embedding_server, model="test-8", input="x").data[0].embedding) == 8
    assert (
        len(create(embedding_server, model="text-embedding-3-small", input="x", dimensions=64).data[0].embedding) == 64
    )


def test_a_bad_or_missing_key_is_refused_in_openais_error_shape(embedding_server):
    with pytest.raises(openai.AuthenticationError) as caught:
        create(embedding_server, key="sk-wrong-key-1234", model="test-8", input="x")
    assert caught.value.code == "invalid_api_key"
    assert "sk-wrong-key-1234" not in str(caught.value)  # the key is masked as OpenAI does
    raw = post(embedding_server, {"model": "test-8", "input": "x"}, key=None)
    assert raw.status_code == 401
    assert set(raw.json()["error"]) == {"message", "type", "param", "code"}


def test_any_key_is_accepted_when_the_endpoint_has_none():
    with EmbeddingServer(api_key=None) as server:
        assert post(server, {"model": "test-8", "input": "x"}, key=None).status_code == 200


def test_an_unknown_model_is_404_model_not_found(embedding_server):
    with pytest.raises(openai.NotFoundError) as caught:
        create(embedding_server, model="no-such-model", input="x")
    assert caught.value.code == "model_not_found"
    assert "no-such-model" in caught.value.message


def test_switchable_429_with_retry_after_then_500_then_success(embedding_server):
    embedding_server.fail_next(429, retry_after=3)
    embedding_server.fail_next(500, times=2)
    body = {"model": "test-8", "input": ["a", "b"]}
    first = post(embedding_server, body)
    assert first.status_code == 429 and first.headers["Retry-After"] == "3"
    assert first.json()["error"]["code"] == "rate_limit_exceeded"
    assert [post(embedding_server, body).status_code for _ in range(3)] == [500, 500, 200]
    assert embedding_server.stats() == {"requests": 4, "ok": 1, "inputs": 2, "max_in_flight": 1}
    assert embedding_server.input_count == 8  # every request's inputs, failed ones included


def test_wrong_width_answers_then_the_right_width(embedding_server):
    embedding_server.wrong_width_next(5)
    assert len(create(embedding_server, model="test-8", input="x").data[0].embedding) == 5
    assert len(create(embedding_server, model="test-8", input="x").data[0].embedding) == 8


def test_per_request_limits_answer_400_like_openai():
    with EmbeddingServer(max_inputs=3, max_input_tokens=10, max_request_tokens=12) as server:
        too_many = post(server, {"model": "test-8", "input": ["a", "b", "c", "d"]})
        too_long = post(server, {"model": "test-8", "input": ["x" * 41]})
        too_much = post(server, {"model": "test-8", "input": ["x" * 40, "y" * 40]})
        empty = post(server, {"model": "test-8", "input": ["fine", ""]})
        assert [r.status_code for r in (too_many, too_long, too_much, empty)] == [400, 400, 400, 400]
        assert too_long.json()["error"]["code"] == "context_length_exceeded"
        assert too_much.json()["error"]["code"] == "max_tokens_per_request"
        assert post(server, {"model": "test-8", "input": ["a", "b", "c"]}).status_code == 200


def test_it_records_how_many_requests_were_in_flight_at_once():
    with EmbeddingServer(latency=0.5) as server:
        start = threading.Barrier(3)

        def one() -> None:
            start.wait()
            post(server, {"model": "test-8", "input": "x"})

        threads = [threading.Thread(target=one) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert server.max_in_flight >= 2
        assert len(server.requests) == 3


def test_unknown_paths_are_404(embedding_server):
    assert _http.post(f"http://127.0.0.1:{embedding_server.port}/v1/chat", json={}).status_code == 404


def test_runs_as_a_subprocess_printing_its_port_and_stats():
    command = [sys.executable, "-m", "tests.support.embedding_server", "--port", "0", "--latency-ms", "5"]
    command += ["--model", "mini=4"]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            port = int(proc.stdout.readline())
            url = f"http://127.0.0.1:{port}/v1"
            with openai.OpenAI(api_key="sk-test", base_url=url, max_retries=0) as oai:
                answer = oai.embeddings.create(model="mini", input=["one", "two"])
            assert [len(d.embedding) for d in answer.data] == [4, 4]
            assert _http.get(f"http://127.0.0.1:{port}/_stats").json()["inputs"] == 2
        finally:
            proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert json.loads(err.strip().splitlines()[-1])["requests"] == 1
