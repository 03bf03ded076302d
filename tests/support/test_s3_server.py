"""The test S3 server does what the tests rely on: IAM checks, conditional PUT, and Lance's commits through it."""

import time

import pytest
from botocore.exceptions import ClientError
from tests.support.s3_server import Keys, S3Server, read_only_policy, requests


def code(caught: pytest.ExceptionInfo[ClientError]) -> str:
    return caught.value.response["Error"]["Code"]


def test_keys_and_policies_are_checked(s3_server):
    bucket = s3_server.bucket()
    s3_server.client().put_object(Bucket=bucket, Key="db/a", Body=b"a")
    with pytest.raises(ClientError) as caught:
        s3_server.client(Keys("AKIAUNKNOWNKEY000000", "x")).get_object(Bucket=bucket, Key="db/a")
    assert code(caught) == "InvalidAccessKeyId"
    reader = s3_server.client(s3_server.user("reader", read_only_policy(bucket, "db")))
    assert reader.get_object(Bucket=bucket, Key="db/a")["Body"].read() == b"a"
    with pytest.raises(ClientError) as caught:
        reader.put_object(Bucket=bucket, Key="db/b", Body=b"b")
    assert code(caught) == "AccessDenied"


def test_conditional_put_creates_once_and_replaces_only_the_version_named(s3_server):
    # Lance commits a table version by creating its manifest with If-None-Match: *; a second writer of the same
    # version must be refused, not silently win.
    client, bucket = s3_server.client(), s3_server.bucket()
    etag = client.put_object(Bucket=bucket, Key="m", Body=b"1", IfNoneMatch="*")["ETag"]
    with pytest.raises(ClientError) as caught:
        client.put_object(Bucket=bucket, Key="m", Body=b"2", IfNoneMatch="*")
    assert code(caught) == "PreconditionFailed"
    with pytest.raises(ClientError) as caught:
        client.put_object(Bucket=bucket, Key="m", Body=b"3", IfMatch='"0123456789abcdef0123456789abcdef"')
    assert code(caught) == "PreconditionFailed"
    client.put_object(Bucket=bucket, Key="m", Body=b"4", IfMatch=etag)
    assert client.get_object(Bucket=bucket, Key="m")["Body"].read() == b"4"


def test_lance_commits_each_version_with_a_create_only_put(tmp_path):
    import lance
    import pyarrow as pa

    log = tmp_path / "requests.log"
    with S3Server(log=log) as server:
        bucket = server.bucket()
        options = {
            "aws_endpoint": server.endpoint,
            "allow_http": "true",
            "aws_region": "us-east-1",
            "aws_access_key_id": server.admin.access_key_id,
            "aws_secret_access_key": server.admin.secret_access_key,
        }
        uri = f"s3://{bucket}/db/t.lance"
        lance.write_dataset(pa.table({"a": [1]}), uri, storage_options=options)
        lance.write_dataset(pa.table({"a": [2]}), uri, mode="append", storage_options=options)
    manifests = [line for line in requests(log) if line.startswith("PUT ") and "/_versions/" in line]
    assert len(manifests) == 2 and all(line.endswith("If-None-Match: *") for line in manifests)


def test_a_server_slowed_down_makes_each_request_wait_from_then_on():
    with S3Server() as server:
        client, bucket = server.client(), server.bucket()
        server.slow_down(300)
        started = time.perf_counter()
        client.head_bucket(Bucket=bucket)
        assert time.perf_counter() - started >= 0.3


def test_a_held_request_waits_for_the_hold_to_end_and_meets_the_policy_then(s3_server):
    from concurrent.futures import ThreadPoolExecutor

    admin, bucket = s3_server.client(), s3_server.bucket()
    for key in ("db/held", "db/free"):
        admin.put_object(Bucket=bucket, Key=key, Body=b"x")
    reader = s3_server.user("reader", read_only_policy(bucket, "db"))
    client = s3_server.client(reader)
    with ThreadPoolExecutor(1) as pool:
        with s3_server.hold("db/held") as held:
            waiting = pool.submit(client.get_object, Bucket=bucket, Key="db/held")
            assert client.get_object(Bucket=bucket, Key="db/free")["Body"].read() == b"x"  # other paths answered
            deadline = time.monotonic() + 30
            while held() < 1:
                assert time.monotonic() < deadline
                time.sleep(0.01)
            assert not waiting.done()
            s3_server.deny(reader)
        with pytest.raises(ClientError) as caught:
            waiting.result(timeout=30)  # answered once the hold ended, under the policy of that moment
    assert code(caught) == "AccessDenied" and held() == 0
