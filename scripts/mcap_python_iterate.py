#!/usr/bin/env python3
"""Time the PyPI `mcap` package's reader iterating over every message of an
MCAP file (the comparison for `syncline analyze`'s speed).

    pip install mcap
    cargo run --release -p syncline-log --example gen_mcap -- /tmp/big200.mcap 200 none
    python3 scripts/mcap_python_iterate.py /tmp/big200.mcap
"""
import sys
import time

from mcap.reader import make_reader


def main() -> None:
    path = sys.argv[1]
    wall, cpu = time.perf_counter(), time.process_time()
    n = 0
    with open(path, "rb") as f:
        for _schema, _channel, _message in make_reader(f).iter_messages():
            n += 1
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{path}: {n} messages, wall {wall:.2f} s, cpu {cpu:.2f} s")


if __name__ == "__main__":
    main()
