"""responsa in front of the shared rig's mock Chat Completions upstream, measured with the rig's own
load generator, as LiteLLM and Llama Stack were (see ../shared/bench/README.md).

Layout on 2 cores: mock and load on core 0, responsa alone on core 1. For each mode (JSON, stream)
and concurrency it runs the rig's load.py --repeat times and prints the median req/s, p50 latency,
the gateway's CPU time per request (steadier than req/s on a shared machine), its peak RSS and the
sockets to the upstream left in TIME_WAIT (0 when connections are reused); then the mock alone at
the same concurrencies (one run each): how fast the machine is at that moment, the yardstick against
which the rig's published figures can be compared. Store on (SQLite), 64 tokens.

    python bench/gateway_rig.py --rig ../shared/bench --rig-python /tmp/rig/bin/python \\
        [--seconds 15] [--repeat 3] [--concurrency 1 16 64]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _server import mock_alone_rps, responsa_server, rig_arguments, rig_load, rig_mock, time_wait_to

MODES = ("json", "stream")


@dataclass(frozen=True)
class RigRow:
    """One mode and concurrency: responsa's medians, and the mock alone's rate in the same run."""

    mode: str
    concurrency: int
    rps: float
    p50_ms: float
    p99_ms: float
    cpu_ms: float
    rss_mb: float
    errors: int
    time_wait: int
    mock_rps: float = 0.0

    @property
    def share(self) -> float:
        """responsa's rate as a share of the mock's alone (the yardstick)."""
        return self.rps / self.mock_rps if self.mock_rps else 0.0


def measure(
    rig_python: str, rig: Path, concurrency: Sequence[int], seconds: float, repeat: int, tokens: int = 64
) -> list[RigRow]:
    """responsa (SQLite store on, pinned to core 1) on the rig at each concurrency, both modes; then
    the mock alone at the same ones."""
    rows: list[RigRow] = []
    with tempfile.TemporaryDirectory() as tmp, rig_mock(rig_python, "--tokens", str(tokens), rig=rig) as upstream:
        db = f"sqlite:///{Path(tmp) / 'rig.db'}"
        pids: list[int] = []
        with responsa_server(
            "--db", db, "--no-embedded", "--no-simulator", "--upstream", upstream, pin=1, pids=pids
        ) as url:
            for mode in MODES:
                for level in concurrency:
                    flags = ["-c", str(level), "-d", str(seconds), "--pid", str(pids[0]), "--store", "true"]
                    flags += ["--stream"] if mode == "stream" else []
                    runs = [rig_load(rig_python, url, *flags, rig=rig) for _ in range(repeat)]
                    rows.append(RigRow(
                        mode, level,
                        rps=statistics.median(run["rps"] for run in runs),
                        p50_ms=statistics.median(run["lat_p50_ms"] for run in runs),
                        p99_ms=statistics.median(run["lat_p99_ms"] for run in runs),
                        cpu_ms=statistics.median(run.get("server_cpu_ms_per_req") or 0 for run in runs),
                        rss_mb=max(run.get("server_rss_peak_mb") or 0 for run in runs),
                        errors=sum(run["errors"] for run in runs),
                        time_wait=time_wait_to(upstream),
                    ))  # fmt: skip
        # The upstream alone, afterwards, on the same machine: the yardstick across runs and machines.
        alone = {}
        for mode in MODES:
            for level in concurrency:
                alone[mode, level] = mock_alone_rps(rig_python, upstream, mode, level, seconds, rig=rig)
    return [RigRow(**{**row.__dict__, "mock_rps": alone[row.mode, row.concurrency]}) for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    rig_arguments(parser)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    args = parser.parse_args()
    rows = measure(args.rig_python, args.rig, args.concurrency, args.seconds, args.repeat)
    header = f"{'mode':<7} | {'c':>3} | {'req/s':>8} | {'p50 ms':>8} | {'CPU ms/req':>10} | {'RSS MB':>7}"
    print(f"{header} | errors | TIME_WAIT | mock alone | share")
    print("-" * 110)
    for row in rows:
        line = f"{row.mode:<7} | {row.concurrency:>3} | {row.rps:>8.1f} | {row.p50_ms:>8.2f} | {row.cpu_ms:>10.2f}"
        print(f"{line} | {row.rss_mb:>7.0f} | {row.errors:>6} | {row.time_wait:>9} | {row.mock_rps:>10.0f} | "
              f"{row.share:>5.1%}")  # fmt: skip
    print(f"\nmedians of {args.repeat} x {args.seconds:g}s, 64 tokens, store on; {os.cpu_count()} cores; "
          "mock alone: the rig's mock without responsa, one run each, after responsa's")  # fmt: skip


if __name__ == "__main__":
    main()
