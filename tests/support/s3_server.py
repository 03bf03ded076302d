"""A real S3-compatible server on 127.0.0.1 for the tests and benches: moto's server mode, in its own process.

It speaks S3's HTTP API (ListObjectsV2, GetObject with ranges, PutObject with If-None-Match / If-Match,
multipart uploads) and, once started here, checks every request's signature and IAM policy the way AWS
does: an admin user (every action allowed) fills buckets through boto3, and `user()` makes users with the
policies a deployment would give (the server's read-only one). Unknown keys get InvalidAccessKeyId, a
policy that does not allow an action gets AccessDenied, exactly what a mistyped key or a narrow role meets.

Lancelot's processes reach it through the environment the AWS SDKs define (`env()`): AWS_ENDPOINT_URL,
AWS_REGION and keys; instance metadata is switched off so that no test ever asks 169.254.169.254.

    python -m tests.support.s3_server [--latency-ms 20]   # prints the endpoint and admin keys, serves until Ctrl-C
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REGION = "us-east-1"
# Runs in the child: moto's app on a free port, which it prints, then serves until killed. Each request may
# wait `latency` seconds first (what a round trip to a real bucket costs; `PUT /_latency?seconds=S` changes it);
# after `PUT /_hold?part=P`, one whose path contains P waits until `PUT /_hold?part=` ends the hold (a minute at
# most, so that nothing hangs; `GET /_hold` counts those waiting). Each is written to `log` when given, with its
# conditions (the commit protocol's create-only PUT carries `If-None-Match: *`) and its byte range. A
# conditional PUT is served whole under one lock: moto checks the condition, then writes, and two threads could
# both pass the check (two indexers both took one bucket's lock under load); S3 does both as one step. moto
# lists its own package folder (a stat of each of its ~180 services) on every request to find the service a
# host names; the list never changes while it serves, so it is read once (docs/decisions.md, "The suite's CPU,
# fifth pass").
_SERVE = """
import sys, threading, time, urllib.parse
from werkzeug.serving import make_server
from moto import backends
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app

services = tuple(backends.list_of_moto_modules())
backends.list_of_moto_modules = lambda: services

latency, log = [float(sys.argv[1])], sys.argv[2]
held, released, waiting = [""], threading.Event(), [0]
counting = threading.Lock()
conditional = threading.Lock()
moto = DomainDispatcherApplication(create_backend_app)
written = open(log, "a", encoding="utf-8", buffering=1) if log else None

def app(environ, start_response):
    if environ["PATH_INFO"] == "/_latency":  # the tests' own: no S3 request looks like it
        latency[0] = float(environ["QUERY_STRING"].removeprefix("seconds="))
        start_response("204 No Content", [])
        return [b""]
    if environ["PATH_INFO"] == "/_hold" and environ["REQUEST_METHOD"] == "GET":  # the tests' own too
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [str(waiting[0]).encode()]
    if environ["PATH_INFO"] == "/_hold":
        held[0] = urllib.parse.unquote(environ["QUERY_STRING"].removeprefix("part="))
        if held[0]:
            released.clear()
        else:
            released.set()
        start_response("204 No Content", [])
        return [b""]
    if held[0] and held[0] in environ["PATH_INFO"]:
        with counting:
            waiting[0] += 1
        released.wait(60)
        with counting:
            waiting[0] -= 1
    if not environ["PATH_INFO"].startswith("/moto-api"):
        if latency[0]:
            time.sleep(latency[0])
        if written:
            asked = f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}?{environ.get('QUERY_STRING', '')}"
            for header in ("If-None-Match", "If-Match", "Range"):
                value = environ.get("HTTP_" + header.upper().replace("-", "_"))
                asked += f" {header}: {value}" if value else ""
            written.write(asked + "\\n")
    if environ["REQUEST_METHOD"] == "PUT" and ("HTTP_IF_NONE_MATCH" in environ or "HTTP_IF_MATCH" in environ):
        with conditional:
            return moto(environ, start_response)
    return moto(environ, start_response)

server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""
ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
DENY = {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": "*", "Resource": "*"}]}


@dataclass(frozen=True)
class Keys:
    """An IAM user's access key: the secret is what a message must never show."""

    access_key_id: str
    secret_access_key: str = ""

    def __repr__(self) -> str:
        return f"Keys({self.access_key_id!r}, ***)"


def read_only_policy(bucket: str, prefix: str) -> dict[str, Any]:
    """What lancelot needs on a database at s3://BUCKET/PREFIX: list under the prefix, read its objects.

    The same policy README's S3 deployment gives the server's role.
    """
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ListTheDatabase",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": f"arn:aws:s3:::{bucket}",
                "Condition": {"StringLike": {"s3:prefix": [f"{prefix}/*"]}},
            },
            {
                "Sid": "ReadTheDatabase",
                "Effect": "Allow",
                "Action": "s3:GetObject",
                "Resource": f"arn:aws:s3:::{bucket}/{prefix}/*",
            },
        ],
    }


class S3Server:
    """moto in a child process on 127.0.0.1, with IAM checks on; `stop()` (or `with`) ends it."""

    def __init__(self, latency_ms: float = 0.0, log: Path | None = None) -> None:
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SERVE, str(latency_ms / 1000), str(log or "")],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "AWS_EC2_METADATA_DISABLED": "true"},
        )
        assert self.process.stdout is not None
        port = self.process.stdout.readline().strip()
        if not port.isdigit():
            self.process.kill()
            raise RuntimeError("moto's server did not start")
        self.endpoint = f"http://127.0.0.1:{port}"
        self.admin = self._enforce_auth()

    def slow_down(self, latency_ms: float) -> None:
        """From now on each request waits `latency_ms` first (set up a bucket at full speed, then slow it)."""
        self._control(f"/_latency?seconds={latency_ms / 1000}")

    @contextlib.contextmanager
    def hold(self, part: str) -> Iterator[Callable[[], int]]:
        """While the block runs, each request whose path contains `part` waits (answered, or refused, once it
        ends): a reader caught in the middle of reading those objects, or two writers at one step, whatever the
        machine's speed. It gives how many requests wait now."""
        self._control(f"/_hold?part={urllib.parse.quote(part)}")
        try:
            yield self._waiting
        finally:
            self._control("/_hold?part=")

    def _waiting(self) -> int:
        with urllib.request.urlopen(f"{self.endpoint}/_hold", timeout=10) as answer:
            return int(answer.read())

    def _control(self, path: str) -> None:
        request = urllib.request.Request(self.endpoint + path, method="PUT")
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 204

    def __enter__(self) -> S3Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def _enforce_auth(self) -> Keys:
        """An admin user made while moto still lets anyone in, then signatures and policies are checked."""
        admin = self._new_user("admin", ALLOW_ALL, self.client(Keys("any", "any"), "iam"))
        import urllib.request

        # A body that is not a form, or werkzeug hands moto an empty one.
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200
        return admin

    def client(self, keys: Keys | None = None, service: str = "s3") -> Any:
        import boto3

        keys = keys or self.admin
        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=keys.access_key_id,
            aws_secret_access_key=keys.secret_access_key,
        )

    def user(self, name: str, policy: dict[str, Any]) -> Keys:
        """A new IAM user allowed exactly `policy`, and its access key."""
        return self._new_user(name, policy, self.client(service="iam"))

    def deny(self, keys: Keys) -> None:
        """From now on every request signed with `keys` is refused (AccessDenied): a role's policy taken away."""
        iam = self.client(service="iam")
        for user in iam.list_users()["Users"]:
            listed = iam.list_access_keys(UserName=user["UserName"])["AccessKeyMetadata"]
            if any(key["AccessKeyId"] == keys.access_key_id for key in listed):
                iam.put_user_policy(UserName=user["UserName"], PolicyName="lancelot", PolicyDocument=json.dumps(DENY))
                return
        raise LookupError(f"no user holds {keys!r}")

    @staticmethod
    def _new_user(name: str, policy: dict[str, Any], iam: Any) -> Keys:
        name = f"{name}-{uuid.uuid4().hex[:8]}"
        iam.create_user(UserName=name)
        iam.put_user_policy(UserName=name, PolicyName="lancelot", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName=name)["AccessKey"]
        return Keys(key["AccessKeyId"], key["SecretAccessKey"])

    def env(self, keys: Keys | None = None, *, endpoint: str | None = None) -> dict[str, str]:
        """The variables a process needs to reach this server with `keys` (the admin's by default)."""
        keys = keys or self.admin
        return {**local_aws_env(), **{
            "AWS_ENDPOINT_URL": endpoint or self.endpoint,
            "AWS_REGION": REGION,
            "AWS_ACCESS_KEY_ID": keys.access_key_id,
            "AWS_SECRET_ACCESS_KEY": keys.secret_access_key,
        }}  # fmt: skip

    def bucket(self, name: str = "lancelot") -> str:
        """A new, empty bucket of its own for one test."""
        bucket = f"{name}-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=bucket)
        return bucket

    def database(self, folder: Path, prefix: str = "teams/docs") -> str:
        """A local database folder copied into a new bucket under `prefix`; its s3:// URI."""
        bucket = self.bucket()
        self.upload(folder, bucket, prefix)
        return f"s3://{bucket}/{prefix}"

    def upload(self, folder: Path, bucket: str, prefix: str, only: Iterable[Path] | None = None) -> list[str]:
        """Copy a local database folder (or the files `only`) under s3://bucket/prefix, as a writer would:
        data and indexes first, each version's manifest last, so a reader never finds a manifest before its files."""
        files = sorted(only if only is not None else (path for path in folder.rglob("*") if path.is_file()))
        files.sort(key=lambda path: "_versions" in path.parts or "_latest" in path.name)
        client = self.client()
        keys = []
        for path in files:
            key = f"{prefix}/{path.relative_to(folder).as_posix()}"
            client.upload_file(str(path), bucket, key)
            keys.append(key)
        return keys

    def objects(self, bucket: str, prefix: str = "") -> dict[str, str]:
        """Every object under the prefix and the SHA-256 of its bytes."""
        client = self.client()
        found: dict[str, str] = {}
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                body = client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
                found[item["Key"]] = hashlib.sha256(body).hexdigest()
        return found


def local_aws_env() -> dict[str, str]:
    """What keeps the AWS credential and region chains on this machine: no instance metadata (never a
    request to 169.254.169.254), no shared config or credentials files of the person running the tests."""
    return {
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    }


def without_aws(environ: dict[str, str]) -> dict[str, str]:
    """`environ` less every AWS_ variable, so a test's process sees only what the test gives it."""
    return {name: value for name, value in environ.items() if not name.startswith("AWS_")}


def requests(log: Path) -> list[str]:
    """The requests written to a server's log so far, as `METHOD /bucket/key?query [If-None-Match: *] [Range: A-B]`."""
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=0.0, help="wait this long before each answer")
    with S3Server(parser.parse_args().latency_ms) as server:
        print(f"endpoint {server.endpoint}\nAWS_ACCESS_KEY_ID={server.admin.access_key_id}", flush=True)
        print(f"AWS_SECRET_ACCESS_KEY={server.admin.secret_access_key}", flush=True)
        try:
            while server.process.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
