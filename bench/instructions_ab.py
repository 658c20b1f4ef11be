"""Two versions of responsa compared by the instructions they execute per request, counted by
valgrind (callgrind): on a machine whose speed drifts by 2x from hour to hour, and whose A/B rounds
(bench/gateway_ab.py) swing by 10%, a count that does not depend on the neighbours. Each source tree
is served in turn under callgrind in front of the rig's mock; after --warmup requests the counters
are zeroed, --requests more are sent at c=16, and the count is read.

It counts user-space instructions only: system calls, cache misses and waiting are not in it, so it
measures the Python work a change adds or removes, not the time (gateway_ab.py measures that, with
its noise). Needs valgrind (the Debian package); a server starts in about a minute under it.

    python bench/instructions_ab.py --rig-python /tmp/rig/bin/python --before /tmp/before/src --after src [--stream]

A tree's count moves by up to 1.5% from one invocation to the next: compare the two trees of one
invocation; only a larger effect reads across invocations, such as ``--store false`` beside a
default run: what storing a response costs (16% of a JSON request's instructions on 2026-11-27).
Within one invocation, two copies of the same tree differed by -0.83% and +0.59% (JSON) and -0.14%
(streams) on 2026-11-27: a difference under 1% (JSON) or 0.3% (streams) is not a finding.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from _callgrind import counted_server, instructions
from _server import ab_arguments, ab_pythons, rig_load, rig_mock


def instructions_per_request(
    source: Path, python: str, upstream: str, args: argparse.Namespace, scratch: Path
) -> float:
    """``source``'s responsa, run by ``python``, under callgrind: instructions per request of a run of
    ``args.requests``."""
    flags = ["-c", "16", "--store", args.store, "--timeout", "300", *(["--stream"] if args.stream else [])]
    env = {"PYTHONPATH": str(source.resolve())}
    with counted_server(upstream, scratch, python=python, env=env) as server:
        rig_load(args.rig_python, server.url, *flags, "-n", str(args.warmup), rig=args.rig)
        server.zero()
        rig_load(args.rig_python, server.url, *flags, "-n", str(args.requests), rig=args.rig)
        server.dump()
    dump = Path(f"{server.counts}.1")
    total = instructions(dump)
    collected = _garbage_collection(dump)
    print(f"  of which garbage collection: {collected / args.requests:,.0f} a request ({collected / total:.2%})")
    return total / args.requests


def _garbage_collection(counts: Path) -> int:
    """Instructions spent in the garbage collector's collections: whether one falls in the window can
    move the count by a few percent for a change that makes no other difference."""
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(counts)],
                               check=True, capture_output=True, text=True).stdout  # fmt: skip
    lines = [line for line in annotated.splitlines() if ":gc_collect_main " in line]  # "file:function [object]"
    return max((int(line.split()[0].replace(",", "")) for line in lines), default=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ab_arguments(parser)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--store", choices=("true", "false"), default="true",
                        help="false: requests not stored (beside a default run: the store's share)")  # fmt: skip
    args = parser.parse_args()
    counts: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, rig_mock(args.rig_python, "--tokens", "64", rig=args.rig) as upstream:
        pythons = ab_pythons(args)
        for name, source in (("before", args.before), ("after", args.after)):
            counts[name] = instructions_per_request(source, pythons[name], upstream, args, Path(tmp))
            print(f"{name:<6} {'stream' if args.stream else 'json'}: {counts[name]:,.0f} instructions a request")
    change = counts["after"] / counts["before"] - 1
    print(f"after/before: {change:+.2%} instructions ({args.requests} requests each, c=16, store: {args.store})")


if __name__ == "__main__":
    main()
