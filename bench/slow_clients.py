"""Slow clients against `lancelot --http`. Run through `scripts/bench-slow-clients`.

Indexes examples/docs, starts `lancelot --http` (environment variables from `--env`, open-file limit from
`--nofile`), then: a normal client (the MCP SDK's, a new connection per search) searches `--searches`
times; `--slow` clients connect, send a request line and then one header byte every `--interval` s
(reconnecting when closed, with `--reconnect`); the normal client searches for `--duration` s meanwhile;
the slow clients stop and it searches again. Reported: the normal client's median, p95 and errors in each
phase, how many slow connections the server closed and when, what it answered them, and how much it
wrote to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import anyio
from mcp import Client

from bench import common


async def search(url: str) -> tuple[float, str | None]:
    started = time.perf_counter()
    try:
        with anyio.fail_after(30):
            async with Client(url, mode="legacy") as client:
                result = await client.call_tool("lancedb_search", {"query": "vulcanising solution", "mode": "text"})
        return time.perf_counter() - started, "tool error" if result.is_error else None
    except Exception as exc:  # any failure is one error in the count
        return time.perf_counter() - started, type(exc).__name__


class Slow:
    def __init__(self) -> None:
        self.lifetimes: list[float] = []
        self.answers: Counter[str] = Counter()

    async def run(self, port: int, interval: float, reconnect: bool, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                self.answers["connect failed"] += 1
                await asyncio.sleep(interval)
                continue
            opened = time.monotonic()
            writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port)
            answer = asyncio.ensure_future(reader.read(200))
            while not stop.is_set() and not answer.done():
                try:
                    writer.write(b"x")
                    await writer.drain()
                except OSError:
                    break
                await asyncio.wait([answer], timeout=interval)
            if answer.done() and not stop.is_set():
                self.lifetimes.append(time.monotonic() - opened)
                data = answer.result() if answer.exception() is None else b""
                self.answers[data.split(b"\r\n", 1)[0].decode() or "closed"] += 1
            answer.cancel()
            writer.close()
            if not reconnect:
                await stop.wait()


def report(name: str, samples: list[tuple[float, str | None]]) -> None:
    times = sorted(took for took, error in samples if error is None)
    errors = Counter(error for _, error in samples if error is not None)
    if not times:
        print(f"{name}: {len(samples)} searches, all failed {dict(errors)}")
        return
    p95 = common.percentile(times, 0.95)
    print(
        f"{name}: {len(samples)} searches, median {statistics.median(times) * 1000:.0f} ms, "
        f"p95 {p95 * 1000:.0f} ms, max {times[-1] * 1000:.0f} ms, errors {dict(errors) or 0}"
    )


async def measure(args: argparse.Namespace, db: Path, stderr: Path) -> None:
    port = common.free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    extra = dict(pair.split("=", 1) for pair in args.env)

    def limit() -> None:
        if args.nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (args.nofile, args.nofile))

    # The server's own log level: what it writes to stderr under attack is part of the report.
    with stderr.open("w") as err, common.http_server(db, port, extra, log_level=None, stderr=err, preexec_fn=limit):
        await search(url)  # the first search loads LanceDB: not counted
        report("before", [await search(url) for _ in range(args.searches)])
        stop = asyncio.Event()
        slow = [Slow() for _ in range(args.slow)]
        started = time.monotonic()
        tasks = [asyncio.ensure_future(client.run(port, args.interval, args.reconnect, stop)) for client in slow]
        await asyncio.sleep(1)
        during: list[tuple[float, str | None]] = []
        while time.monotonic() - started < args.duration:
            during.append(await search(url))
        report(f"during ({args.slow} slow clients)", during)
        stop.set()
        await asyncio.gather(*tasks)
        lifetimes = sorted(t for client in slow for t in client.lifetimes)
        answers = sum((client.answers for client in slow), Counter())
        closed = f"{len(lifetimes)} slow connections closed by the server"
        if lifetimes:
            closed += (
                f", after {lifetimes[0]:.1f} s to {lifetimes[-1]:.1f} s (median {statistics.median(lifetimes):.1f})"
            )
        print(closed)
        print(f"answers to slow clients: {dict(answers)}")
        await asyncio.sleep(1)
        report("after", [await search(url) for _ in range(args.searches)])
    text = stderr.read_text()
    print(f"server stderr: {len(text)} bytes, {text.count('Traceback')} tracebacks")


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench-slow-clients", description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", type=int, default=300, help="slow clients (default 300)")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between a slow client's bytes")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of searching among slow clients")
    parser.add_argument("--searches", type=int, default=20, help="searches before and after")
    parser.add_argument("--reconnect", action="store_true", help="a slow client closed reconnects at once")
    parser.add_argument("--nofile", type=int, default=0, help="the server's open-file limit (default: as is)")
    parser.add_argument("--env", nargs="*", default=[], metavar="NAME=VALUE", help="extra server environment")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, args.slow * 2 + 256)), hard))
    with tempfile.TemporaryDirectory() as work:
        db = Path(work) / "db"
        common.index(common.ROOT / "examples" / "docs", db, "--quiet")
        asyncio.run(measure(args, db, Path(work) / "stderr"))


if __name__ == "__main__":
    sys.exit(main())
