"""Two versions of responsa side by side on the shared rig, for a before/after that this machine's
drift cannot fake: both servers run at once on core 1 (each from its own source tree, given with
--before and --after), the rig's load.py (core 0) alternates between them run after run, and the
medians are printed. The mock upstream shares core 0, as in gateway_rig.py.

    git worktree add /tmp/before <commit>
    python bench/gateway_ab.py --rig ../shared/bench --rig-python /tmp/rig/bin/python \\
        --before /tmp/before/src --after src [--stream] [--requests 6000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics

from _server import ab_arguments, ab_pythons, responsa_trees, rig_load, rig_mock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ab_arguments(parser)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sources = {"before": args.before, "after": args.after}
    with (
        rig_mock(args.rig_python, "--tokens", "64", rig=args.rig) as upstream,
        responsa_trees(upstream, sources, ab_pythons(args)) as servers,
    ):
        rates: dict[str, list[float]] = {name: [] for name in servers}
        cpu: dict[str, list[float]] = {name: [] for name in servers}
        for _ in range(args.rounds):
            for name, (url, pid) in servers.items():
                flags = ["-c", str(args.concurrency), "-n", str(args.requests), "--pid", str(pid), "--store", "true"]
                run = rig_load(args.rig_python, url, *flags, *(["--stream"] if args.stream else []), rig=args.rig)
                rates[name].append(run["rps"])
                cpu[name].append(run.get("server_cpu_ms_per_req") or 0.0)
    mode = "stream" if args.stream else "json"
    for name in servers:
        runs = ", ".join(f"{rate:.0f}" for rate in rates[name])
        print(f"{name:<6} {mode} c{args.concurrency}: median {statistics.median(rates[name]):.1f} req/s, "
              f"CPU {statistics.median(cpu[name]):.3f} ms/req  (runs: {runs})")  # fmt: skip
    change = statistics.median(rates["after"]) / statistics.median(rates["before"]) - 1
    rounds = f"{args.rounds} alternated rounds of {args.requests} requests; {os.cpu_count()} cores"
    print(f"after/before: {change:+.1%}  ({rounds})")


if __name__ == "__main__":
    main()
