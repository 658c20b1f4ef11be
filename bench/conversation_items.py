"""How listing a conversation's items scales with its length.

Fills conversations of several sizes through the API (20 items per request, as the API allows), then
times, per size: the first page, a page from the middle (``after`` cursor), the last page, fetching
one item, and appending 20 more. Prints medians in milliseconds; flat rows mean pagination does not
slow down as conversations grow.

    python bench/conversation_items.py [--sizes 100 1000 10000] [--repeat 30]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from _server import responsa_server


def median_ms(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def fill(http: httpx.Client, conversation: str, size: int) -> list[str]:
    ids: list[str] = []
    for start in range(0, size, 20):
        batch = [{"role": "user", "content": f"message {i}"} for i in range(start, min(start + 20, size))]
        reply = http.post(f"/v1/conversations/{conversation}/items", json={"items": batch})
        reply.raise_for_status()
        ids += [item["id"] for item in reply.json()["data"]]
    return ids


def measure(http: httpx.Client, conversation: str, ids: list[str], repeat: int) -> list[float]:
    items = f"/v1/conversations/{conversation}/items"
    middle, last, one = ids[len(ids) // 2], ids[max(0, len(ids) - 101)], ids[len(ids) // 3]
    append = {"items": [{"role": "user", "content": "x"}] * 20}
    return [
        median_ms(lambda: http.get(items, params={"limit": 100}).raise_for_status(), repeat),
        median_ms(lambda: http.get(items, params={"limit": 100, "order": "asc", "after": middle}), repeat),
        median_ms(lambda: http.get(items, params={"limit": 100, "order": "asc", "after": last}), repeat),
        median_ms(lambda: http.get(f"{items}/{one}").raise_for_status(), repeat),
        median_ms(lambda: http.post(items, json=append).raise_for_status(), repeat),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    columns = ("items", "first page", "middle page", "last page", "one item", "append 20")
    with tempfile.TemporaryDirectory() as tmp, responsa_server("--db", f"sqlite:///{Path(tmp) / 'b.db'}") as url:
        with httpx.Client(base_url=url, timeout=60) as http:
            print(" | ".join(f"{name:>11}" for name in columns))
            print("-" * 14 * len(columns))
            for size in args.sizes:
                conversation = http.post("/v1/conversations", json={}).json()["id"]
                ids = fill(http, conversation, size)
                row = measure(http, conversation, ids, args.repeat)
                print(f"{size:>11} | " + " | ".join(f"{value:>11.2f}" for value in row))
            print("\nmedian milliseconds per request over loopback (SQLite store)")


if __name__ == "__main__":
    main()
