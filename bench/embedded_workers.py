"""The embedded model behind ``--workers 2`` against one process: aggregate tokens/s and time to
first token of 4 concurrent streams (each on its own connection, so the kernel spreads them over the
workers), both servers up at once and measured in alternate rounds. With two workers the model runs
once, in the model process both reach; its slots decode the streams of both together.

    python bench/embedded_workers.py [--tokens 128] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from contextlib import ExitStack
from pathlib import Path

from _server import responsa_server
from embedded_parallel import PACKAGED, concurrent, sequential


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        urls = {}
        for workers in results:
            db = f"sqlite:///{Path(tmp) / f'w{workers}.db'}"
            urls[workers] = stack.enter_context(responsa_server("--db", db, "--no-simulator", "--parallel", "4",
                                                                "--workers", str(workers)))  # fmt: skip
            sequential(urls[workers], PACKAGED, 1, 8)  # load the model
        for _ in range(args.rounds):
            for workers, url in urls.items():
                results[workers].append(concurrent(url, PACKAGED, 4, args.tokens))
    for workers, found in results.items():
        speed = statistics.median(s for s, _t in found)
        ttft = statistics.median(t for _s, t in found)
        print(f"--workers {workers}: 4 concurrent streams {speed:.1f} tok/s, TTFT median {ttft:.0f} ms")
    print(f"(medians of {args.rounds} rounds, {args.tokens} tokens a stream)")


if __name__ == "__main__":
    main()
