"""Containers (the code interpreter's and the hosted shell's): their files (in the file store) and the
sandbox each runs."""

from ._containers import CodeRun, CommandOutcome, ContainerService
from ._machine import container_egress
from ._network_policy import check_network_policy

__all__ = ["CodeRun", "CommandOutcome", "ContainerService", "check_network_policy", "container_egress"]
