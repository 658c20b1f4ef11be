"""One ``/metrics`` for the workers of a server: each worker writes its registry's exposition to a
file of the workers' directory every second (and whenever it renders), and the worker that answers
sums the files. Counting stays in each worker's own registry, at in-process cost (prometheus_client's
multiprocess mode writes a memory-mapped file on every count: 20 to 40 µs more per request on the rig);
what another worker counted shows within a second. Counters of a worker that is gone stay in the sums
(they keep counting across its replacement); its gauges do not."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["SummedWorkers", "publish"]

MAXIMA = frozenset({"responsa_backend_worker_up"})
"""Gauges whose workers' values combine as the largest (an upstream is up if any worker sees it up);
the others add up."""


def publish(registry: CollectorRegistry, directory: Path) -> None:
    """This worker's counts, as the other workers will read them (replaced at once, never half-written)."""
    written = directory / f".{os.getpid()}.prom.new"
    written.write_bytes(generate_latest(registry))
    os.replace(written, directory / f"{os.getpid()}.prom")


class SummedWorkers:
    """A collector of every worker's published counts, summed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def collect(self) -> Iterable[Metric]:
        families: dict[str, Metric] = {}
        values: dict[tuple[str, str, tuple[tuple[str, str], ...]], float] = {}
        for path in sorted(self.directory.glob("*.prom")):
            alive = _alive(int(path.stem))
            for family in text_string_to_metric_families(path.read_text()):
                if family.type == "gauge" and not alive:
                    continue
                families.setdefault(family.name, Metric(family.name, family.documentation, family.type))
                for sample in family.samples:
                    if sample.name.endswith("_created"):  # when each worker began counting: no sum
                        continue
                    key = (family.name, sample.name, tuple(sorted(sample.labels.items())))
                    if key not in values:
                        values[key] = sample.value
                    elif family.name in MAXIMA:
                        values[key] = max(values[key], sample.value)
                    else:
                        values[key] += sample.value
        for (family_name, sample_name, labels), value in values.items():
            families[family_name].add_sample(sample_name, dict(labels), value)
        return families.values()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's, alive
        return True
    return True
