"""What moto's S3 server (the benches' bucket, tests/support/s3_server.py) takes to answer a 4 KiB ranged GET of an
object, by the object's size: moto reads the whole object for each, where S3 answers a range in a time that does not
depend on the object's size. The data files' cap (`lancelot_indexer.writing.indexes.ROWS_PER_FILE`) is chosen
from it (docs/decisions.md, "Data files of at most 32,768 rows").

    .venv/bin/python -m bench.moto_ranges [--sizes-mb 0.06 1 5 18 55 552] [--gets 7]   # a Markdown table
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from tests.support.s3_server import S3Server

from bench import common


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.moto_ranges", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[0.06, 1, 5, 18, 55, 552])
    parser.add_argument("--gets", type=int, default=7, help="ranged GETs timed per object (default 7)")
    args = parser.parse_args()
    load = common.load_average(3)
    print(f"### moto: a 4 KiB ranged GET by object size ({platform.machine()}, {os.cpu_count()} cores)\n")
    print(common.table_head(["object", "median ms", "min ms", "ms per MB above the smallest (of the minimums)"]))
    with S3Server() as server:
        client, bucket = server.client(), server.bucket()
        base = None
        for megabytes in args.sizes_mb:
            key = f"object-{megabytes:g}"
            client.put_object(Bucket=bucket, Key=key, Body=os.urandom(int(megabytes * 1e6)))
            times = []
            for number in range(args.gets):
                start = number * 4096 % max(1, int(megabytes * 1e6) - 4096)
                started = time.perf_counter()
                client.get_object(Bucket=bucket, Key=key, Range=f"bytes={start}-{start + 4095}")["Body"].read()
                times.append(time.perf_counter() - started)
            median, least = statistics.median(times) * 1000, min(times) * 1000
            base = base if base is not None else (megabytes, least)  # a busy machine moves medians more than minimums
            slope = f"{(least - base[1]) / (megabytes - base[0]):.2f}" if megabytes > base[0] else "–"
            print(common.table_row([f"{megabytes:g} MB", f"{median:.1f}", f"{least:.1f}", slope]))
            client.delete_object(Bucket=bucket, Key=key)
    print(f"\nLoad average {load} → {common.load_average(3)}; boto3 on 127.0.0.1, IAM checks on.")
    sizes = " ".join(f"{size:g}" for size in args.sizes_mb)
    print(f"\nCommand: `.venv/bin/python -m bench.moto_ranges --sizes-mb {sizes} --gets {args.gets}`")


if __name__ == "__main__":
    main()
