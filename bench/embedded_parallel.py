"""Several users of one embedded model at once: aggregate tokens/s of 1, 2 and 4 concurrent streams
against the same number run one after another, and time to first token under that load.

A `responsa serve --parallel 4` process on loopback, the packaged SmolLM2 model, each stream a
different story prompt, --tokens tokens each (ignore_eos, so every stream is as long), sampled at
temperature 0.8. Sequential runs send the same requests one at a time. The raw llama-cpp-python
figure is one stream through `Llama.create_completion` in this process, for scale. Medians of
--repeat rounds, the kinds interleaved so all see the same machine.

    python bench/embedded_parallel.py [--tokens 128] [--repeat 3] [--model PATH.gguf]

--model measures another GGUF file instead (served as `--no-embedded --model bench=PATH`, and
loaded by the raw llama-cpp-python run): how well a model batches depends on its quantization's
CPU kernels, see docs/models.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
from _server import responsa_server
from embedded_speed import Direct

PACKAGED = "smollm2-135m-instruct"
TOPICS = ["a lighthouse keeper", "a dragon who collects clocks", "a baker on Mars", "two rival chess players"]


def one_stream(
    url: str, model: str, index: int, tokens: int, into: list[tuple[float, float, int]], started: float
) -> None:
    """One streamed response; appends (time to first token from ``started``, end time, tokens)."""
    body = {"model": model, "input": f"Write a long story about {TOPICS[index % len(TOPICS)]}.",
            "max_output_tokens": tokens, "temperature": 0.8, "ignore_eos": True, "stream": True,
            "store": False}  # fmt: skip
    first, count = 0.0, 0
    with httpx.Client(base_url=url, timeout=600) as http, http.stream("POST", "/v1/responses", json=body) as reply:
        for line in reply.iter_lines():
            if not first and '"response.output_text.delta"' in line:
                first = time.perf_counter()
            elif line.startswith("data: {") and '"response.incomplete"' in line:
                count = json.loads(line[6:])["response"]["usage"]["output_tokens"]
    into.append((first - started, time.perf_counter(), count))


def concurrent(url: str, model: str, streams: int, tokens: int) -> tuple[float, float]:
    """Aggregate tokens/s and median time to first token (ms) of ``streams`` streams started together."""
    results: list[tuple[float, float, int]] = []
    started = time.perf_counter()
    threads = [
        threading.Thread(target=one_stream, args=(url, model, n, tokens, results, started)) for n in range(streams)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = max(end for _first, end, _count in results) - started
    return sum(count for *_rest, count in results) / wall, statistics.median(r[0] for r in results) * 1000


def sequential(url: str, model: str, streams: int, tokens: int) -> float:
    """Aggregate tokens/s of the same ``streams`` requests sent one after another."""
    results: list[tuple[float, float, int]] = []
    started = time.perf_counter()
    for n in range(streams):
        one_stream(url, model, n, tokens, results, time.perf_counter())
    return sum(count for *_rest, count in results) / (time.perf_counter() - started)


def raw_stream(direct: Direct, tokens: int) -> float:
    ttft, rest, count = direct.run(tokens)
    return count / (ttft + rest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, help="responsa serve --threads (default: every core)")
    parser.add_argument("--model", type=Path, help="a GGUF file to measure instead of the packaged model")
    args = parser.parse_args()
    extra = ("--threads", str(args.threads)) if args.threads else ()
    model = PACKAGED
    if args.model:
        model, extra = "bench", (*extra, "--no-embedded", "--model", f"bench={args.model.resolve()}")
    counts = (1, 2, 4)
    together: dict[int, list[tuple[float, float]]] = {n: [] for n in counts}
    apart: dict[int, list[float]] = {n: [] for n in counts}
    raw: list[float] = []
    direct = Direct(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{Path(tmp) / 'b.db'}"
        with responsa_server("--db", db, "--no-simulator", "--parallel", "4", *extra) as url:
            sequential(url, model, 1, 8)  # load the model
            for _ in range(args.repeat):
                raw.append(raw_stream(direct, args.tokens))
                for n in counts:
                    together[n].append(concurrent(url, model, n, args.tokens))
                    apart[n].append(sequential(url, model, n, args.tokens))
    header = ("streams", "concurrent tok/s", "sequential tok/s", "ratio", "TTFT ms (concurrent)")
    print(" | ".join(f"{name:>{width}}" for name, width in zip(header, (7, 16, 16, 5, 20), strict=True)))
    print("-" * 79)
    one = statistics.median(speed for speed, _ttft in together[1])
    for n in counts:
        speed = statistics.median(s for s, _t in together[n])
        ttft = statistics.median(t for _s, t in together[n])
        alone = statistics.median(apart[n])
        print(f"{n:>7} | {speed:>16.1f} | {alone:>16.1f} | {speed / alone:>5.2f} | {ttft:>20.1f}")
    raw_speed = statistics.median(raw)
    four = statistics.median(s for s, _t in together[4])
    print(f"\nraw llama-cpp-python, one stream: {raw_speed:.1f} tok/s; responsa one stream: {one:.1f} tok/s "
          f"({one / raw_speed:.0%} of raw)")  # fmt: skip
    print(f"4 concurrent streams: {four / one:.2f}x one responsa stream, {four / raw_speed:.2f}x one raw stream")
    print(f"(medians of {args.repeat} rounds, {args.tokens} tokens a stream, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
