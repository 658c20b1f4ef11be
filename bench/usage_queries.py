"""How fast the Admin API answers usage over a month of a million responses: the usage ledger is
filled as a server's would be over 30 days (``--responses`` responses spread evenly, each by one of
``--keys`` keys of ``--projects`` projects and one of ``--models`` models, written once a simulated
second as a server writes them), then a server on that store is asked ``--queries`` times for 1d
buckets over the 30 days grouped by model and key (and by minute over the last hour, and the costs by
line item), through openai's admin client; the medians and p99s are printed.

    python bench/usage_queries.py [--db postgresql://...] [--responses 1000000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio
import openai
from _server import responsa_server

from responsa.engine.projects import CALLER_KEY
from responsa.engine.usage import UsageLedger, Used
from responsa.store import SqlStore, UsageFilter

ADMIN = "sk-admin-bench"


async def fill(db_url: str, responses: int, projects: int, keys: int, models: int, now: float) -> dict[str, int]:
    """The ledger's buckets of ``responses`` responses over the 30 days before ``now``; the rows kept,
    by width (minutes and hours are pruned as a server prunes them)."""
    store = SqlStore(db_url)
    await store.migrate()
    clock = [now - 30 * 86400]
    ledger = UsageLedger(clock=lambda: clock[0])
    ledger.attach(store.usage())
    step = 30 * 86400 / responses
    minute = int(clock[0]) // 60
    for index in range(responses):
        clock[0] += step
        CALLER_KEY.set(f"key_{index % keys:03d}")
        tenant = f"proj_{index % keys % projects:02d}"
        ledger.record(tenant, Used("completions", f"model-{index % models}", 900, 120, 300, latency_ms=800))
        if int(clock[0]) // 60 != minute:  # a server writes about once a second: the same rows, more often
            await ledger.flush()
            minute = int(clock[0]) // 60
    await ledger.flush()
    everything = ["project_id", "api_key_id", "model", "batch"]
    rows = {width: len(await store.usage().usage(UsageFilter(width, ("completions",), 0, 2**40), everything))
            for width in ("1m", "1h", "1d")}  # fmt: skip
    await store.aclose()
    return rows


def timed(call: object, times: int) -> tuple[float, float]:
    """Median and p99 of ``times`` calls, in milliseconds."""
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        call()  # type: ignore[operator]
        spent.append((time.perf_counter() - started) * 1000)
    spent.sort()
    return statistics.median(spent), spent[min(len(spent) - 1, int(len(spent) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="the store (default: a new SQLite file)")
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--projects", type=int, default=10)
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db_url = args.db or f"sqlite:///{Path(tmp) / 'usage.db'}"
        now = time.time()
        started = time.perf_counter()
        rows = anyio.run(fill, db_url, args.responses, args.projects, args.keys, args.models, now)
        print(f"{args.responses:,} responses over 30 days ({args.projects} projects, {args.keys} keys, "
              f"{args.models} models): bucket rows {rows}, made in {time.perf_counter() - started:.0f} s")  # fmt: skip
        with responsa_server("--db", db_url, "--no-embedded", "--admin-key", ADMIN) as url:
            usage = openai.OpenAI(base_url=f"{url}/v1", api_key="-", admin_api_key=ADMIN).admin.organization.usage
            month = int(now) - 30 * 86400
            cases = {
                "1d buckets, 30 days, by model and key": lambda: usage.completions(
                    start_time=month, bucket_width="1d", limit=31, group_by=["model", "api_key_id"]),
                "1m buckets, last hour, by project": lambda: usage.completions(
                    start_time=int(now) - 3600, bucket_width="1m", limit=60, group_by=["project_id"]),
                "costs, 30 days, by line item": lambda: usage.costs(
                    start_time=month, limit=31, group_by=["line_item"]),
            }  # fmt: skip
            for name, call in cases.items():
                median, p99 = timed(call, args.queries)
                print(f"{name}: median {median:.1f} ms, p99 {p99:.1f} ms ({args.queries} queries)")


if __name__ == "__main__":
    main()
