"""HTTP mode with authentication against the same server without it, in one run. `scripts/bench-http --auth`.

Over the table `scripts/bench-http` builds (at least 100,000 chunks of the PostgreSQL manual), three
`lancelot --http` servers in turn, each warmed up, then `--clients` clients sending `--calls` text
searches as raw JSON-RPC POSTs:

- none:   no auth (loopback);
- tokens: LANCELOT_AUTH_TOKENS, every request with the bearer token;
- jwt:    an OAuth resource server; every request with an RS256 JWT from an issuer this script serves on
          127.0.0.1 (tests/support/issuer.py), the signature checked on every request.

The modes alternate for `--rounds` rounds (the machine's load drifts); the fastest round of each counts.
Reported: requests/s and its ratio to none, median and p99 latency, errors, and the server's RSS after
warm-up and after the run (flat memory: the run adds nothing that stays).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

from tests.support.issuer import Issuer

from bench import common
from bench.http import build_table, load, rss_mib, search_body, table_options

TOKEN = "bench-token-0123456789abcdef"
RESOURCE = "https://search.example.com/mcp"


def run(db: Path, mode: str, issuer: Issuer, calls: int, clients: int) -> dict[str, float]:
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    if mode == "tokens":
        env, headers = {"LANCELOT_AUTH_TOKENS": TOKEN}, {"authorization": f"Bearer {TOKEN}"}
    elif mode == "jwt":
        env = {"LANCELOT_OAUTH_ISSUER": issuer.url, "LANCELOT_OAUTH_RESOURCE": RESOURCE}
        env["LANCELOT_OAUTH_JWKS_URL"] = issuer.jwks_url
        headers = {"authorization": f"Bearer {issuer.token(exp=int(time.time()) + 3600)}"}
    port = common.free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with common.http_server(db, port, env) as server:
        warmup = asyncio.run(load(url, 4 * clients, clients, search_body, headers))
        before = rss_mib(server.pid)
        result = asyncio.run(load(url, calls, clients, search_body, headers))
        result.update(rss_before=before, rss_after=rss_mib(server.pid), errors=result["errors"] + warmup["errors"])
        return result


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="scripts/bench-http --auth", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    table_options(parser)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    chunks = build_table(args.db, args.rows)
    issuer = Issuer(audience=RESOURCE)
    best: dict[str, dict[str, float]] = {}
    started = time.time()
    try:
        for _ in range(args.rounds):
            for mode in ("none", "tokens", "jwt"):
                result = run(args.db, mode, issuer, args.calls, args.clients)
                print(f"{mode}: {result['rps']:.0f} requests/s, errors {result['errors']:.0f}", file=sys.stderr)
                if mode not in best or result["rps"] > best[mode]["rps"]:
                    best[mode] = result
    finally:
        issuer.close()
    load_avg = common.load_average(3)
    print(
        f"bench-http --auth, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, a table of {chunks:,} chunks, "
        f"{args.clients} clients × {args.calls:,} text searches per run, fastest of {args.rounds} alternating "
        f"rounds, {time.time() - started:.0f} s, load average at the end {load_avg}\n"
    )
    headers = ["auth", "requests/s", "÷ none", "median / p99", "errors", "server RSS after warm-up / after the run"]
    print(common.table_head(headers))
    for mode, result in best.items():
        cells = [mode, f"{result['rps']:.0f}", f"{result['rps'] / best['none']['rps']:.2f}"]
        cells += [f"{result['median_ms']:.1f} / {result['p99_ms']:.1f} ms", f"{result['errors']:.0f}"]
        print(common.table_row([*cells, f"{result['rss_before']:.0f} / {result['rss_after']:.0f} MiB"]))


if __name__ == "__main__":
    main()
