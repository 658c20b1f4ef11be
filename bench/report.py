"""One command for issue 30's figures: the shared rig (JSON and streaming at several concurrencies,
against the mock alone in the same run), the time to first token responsa adds, a 100-turn
``previous_response_id`` chain, a turn in a 1,000-item conversation, memory over a soak, and the
embedded model against llama-cpp-python. Prints one table (each figure beside its target) and
writes a plot of throughput and latency against concurrency (PNG, for docs/performance.md).

    python bench/report.py --rig-python /tmp/rig/bin/python [--plot docs/images/performance.png]
        [--seconds 10] [--repeat 3] [--soak-minutes 10] [--no-embedded] [--quick]

Layout on 2 cores, as every rig script here: the mock and the load generator on core 0, responsa
alone on core 1. Each section starts its own server on a fresh SQLite store. About 25 minutes with
the defaults; --quick (5 s runs, one repeat, a 2-minute soak, 30-turn chain) about 6.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import chain_cost
import embedded_speed
import gateway_rig
import lean_gateway
import ttft_overhead
from _server import responsa_on_rig, rig_arguments, rig_load


@dataclass(frozen=True)
class Figure:
    """One line of the table."""

    what: str
    value: str
    target: str
    met: bool | None  # None: no target, shown for context


def soak(rig_python: str, rig: Path, minutes: float) -> list[float]:
    """responsa's RSS (MB) after each minute of JSON load at c=16 (store on), for ``minutes``."""
    samples: list[float] = []
    pids: list[int] = []
    with responsa_on_rig(rig_python, "--tokens", "64", rig=rig, pids=pids) as (url, _):
        for _ in range(max(1, round(minutes))):
            flags = ["-c", "16", "-d", "60", "--pid", str(pids[0]), "--store", "true"]
            samples.append(rig_load(rig_python, url, *flags, rig=rig)["server_rss_end_mb"])
    return samples


def figures(args: argparse.Namespace, rows: list[gateway_rig.RigRow]) -> Iterator[Figure]:
    """Every measurement after the rig's, each as it is taken."""
    for row in rows:
        if row.concurrency in (16, 64):
            yield Figure(f"rig {row.mode} c={row.concurrency}: share of the mock alone",
                         f"{row.share:.1%} ({row.rps:,.0f} / {row.mock_rps:,.0f} req/s, {row.errors} errors)",
                         ">= 35%, 0 errors", row.share >= 0.35 and row.errors == 0)  # fmt: skip
    for lean in lean_gateway.measure(args.rig_python, args.rig, args.seconds, args.repeat):
        yield Figure(f"  the floor: a lean gateway + store, {lean.mode} c=16",
                     f"{lean.share:.1%} ({lean.rps:,.0f} / {lean.mock_rps:,.0f} req/s, {lean.cpu_ms:.3f} ms)",
                     "", None)  # fmt: skip
    for mode in gateway_rig.MODES:
        cpu = [row.cpu_ms for row in rows if row.mode == mode and row.concurrency == 16]
        if cpu:
            yield Figure(f"rig {mode} c=16: CPU per request", f"{cpu[0]:.3f} ms", "", None)
    peak = max(row.rss_mb for row in rows)
    yield Figure("RSS after the rig's runs", f"{peak:.0f} MB", "<= 100 MB", peak <= 100)
    ttft = ttft_overhead.measure(args.rig_python, args.rig, args.seconds, args.repeat)
    yield Figure("time to first token added (p50, c=1)", f"{ttft.added:+.2f} ms", "<= 1 ms", ttft.added <= 1.0)
    yield Figure("  added by a lean Python gateway (the floor)", f"{ttft.floor:+.2f} ms", "", None)
    per_turn = chain_cost.measure(args.rig_python, args.rig, args.chain_turns, args.chains)
    ratio = statistics.median(per_turn[-3:]) / statistics.median(per_turn[:3])
    yield Figure(f"{args.chain_turns}-turn chain: last turns / first turns", f"{ratio:.2f}x "
                 f"({statistics.median(per_turn[:3]):.1f} -> {statistics.median(per_turn[-3:]):.1f} ms)",
                 "<= 1.2x", ratio <= 1.2)  # fmt: skip
    # 60 turns of each: with 20, a few noisy seconds of this machine decided the median.
    cost = chain_cost.conversation_turns(args.rig_python, args.rig, args.conversation_items, 60)
    yield Figure(f"turn in a {args.conversation_items:,}-item conversation / in a new one",
                 f"{cost.ratio:.2f}x ({cost.short:.2f} -> {cost.long:.2f} ms)",
                 "<= 1.2x", cost.ratio <= 1.2)  # fmt: skip
    yield Figure("  the mock alone, sent as many messages (the floor)", f"{cost.upstream_ratio:.2f}x "
                 f"({cost.upstream_short:.2f} -> {cost.upstream_long:.2f} ms)", "", None)  # fmt: skip
    samples = soak(args.rig_python, args.rig, args.soak_minutes)
    growth = samples[-1] - samples[0]
    yield Figure(f"RSS over a {len(samples)}-minute soak (JSON c=16)",
                 f"{samples[0]:.0f} -> {samples[-1]:.0f} MB (max {max(samples):.0f})",
                 "flat, <= 100 MB", max(samples) <= 100 and growth <= 5)  # fmt: skip
    if args.embedded:
        plain, via, loop_us = embedded_speed.measure(args.embedded_tokens, args.repeat + 2)
        share = via[0] / plain[0]
        yield Figure("embedded model: tokens/s of llama-cpp-python's",
                     f"{share:.1%} ({via[0]:.1f} / {plain[0]:.1f} tok/s)", ">= 97%", share >= 0.97)  # fmt: skip
        yield Figure("  the server's event loop, CPU a token", f"{loop_us:.0f} us", "", None)


def plot(rows: list[gateway_rig.RigRow], path: Path) -> None:
    """Throughput (responsa and the mock alone) and responsa's latency against concurrency."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, (rate, latency) = pyplot.subplots(1, 2, figsize=(11, 4.2))
    for mode, color in zip(gateway_rig.MODES, ("tab:blue", "tab:orange"), strict=True):
        mine = [row for row in rows if row.mode == mode]
        levels = [row.concurrency for row in mine]
        rate.plot(levels, [row.rps for row in mine], "o-", color=color, label=f"responsa {mode}")
        rate.plot(levels, [row.mock_rps for row in mine], "s--", color=color, alpha=0.5, label=f"mock alone {mode}")
        latency.plot(levels, [row.p50_ms for row in mine], "o-", color=color, label=f"{mode} p50")
        latency.plot(levels, [row.p99_ms for row in mine], "^:", color=color, label=f"{mode} p99")
    levels = sorted({row.concurrency for row in rows})
    for axes, title, unit in ((rate, "throughput", "requests/s"), (latency, "latency through responsa", "ms")):
        axes.set_xscale("log", base=2)
        axes.set_xticks(levels, [str(level) for level in levels])
        axes.set_yscale("log")
        axes.set_xlabel("concurrent clients")
        axes.set_ylabel(unit)
        axes.set_title(title)
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize=8, ncol=2, loc="upper center" if axes is rate else "upper left")
    rate.set_ylim(top=max(row.mock_rps for row in rows) * 5)  # room for the legend above the lines
    figure.suptitle(f"responsa on the shared rig (64 tokens, SQLite store on, {os.cpu_count()} cores)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    rig_arguments(parser)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--soak-minutes", type=float, default=10)
    parser.add_argument("--chain-turns", type=int, default=100)
    parser.add_argument("--chains", type=int, default=3)
    parser.add_argument("--conversation-items", type=int, default=1000)
    parser.add_argument("--embedded-tokens", type=int, default=128)
    parser.add_argument("--no-embedded", dest="embedded", action="store_false", help="skip the embedded model")
    parser.add_argument("--plot", type=Path, default=Path("docs/images/performance.png"))
    parser.add_argument("--quick", action="store_true", help="shorter runs, for a first look")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.repeat, args.soak_minutes, args.chain_turns, args.chains = 5, 1, 2, 30, 1
    rows = gateway_rig.measure(args.rig_python, args.rig, args.concurrency, args.seconds, args.repeat)
    plot(rows, args.plot)
    print(f"{'mode':<7} | {'c':>3} | {'req/s':>8} | {'mock alone':>10} | {'share':>6} | {'p50 ms':>7} | "
          f"{'p99 ms':>7} | {'CPU ms/req':>10} | {'RSS MB':>6}")  # fmt: skip
    for row in rows:
        print(f"{row.mode:<7} | {row.concurrency:>3} | {row.rps:>8.0f} | {row.mock_rps:>10.0f} | {row.share:>6.1%} | "
              f"{row.p50_ms:>7.2f} | {row.p99_ms:>7.2f} | {row.cpu_ms:>10.3f} | {row.rss_mb:>6.0f}")  # fmt: skip
    print(f"\n{'figure':<52} | {'measured':<40} | {'target':<16} | met")
    print("-" * 120)
    for figure in figures(args, rows):
        met = "-" if figure.met is None else "yes" if figure.met else "NO"
        print(f"{figure.what:<52} | {figure.value:<40} | {figure.target:<16} | {met}", flush=True)
    print(f"\nmedians of {args.repeat} x {args.seconds:g} s per rig figure; plot: {args.plot}")


if __name__ == "__main__":
    main()
