"""Code interpreter containers: their files (in the file store) and the sandboxed Python each runs."""

from ._containers import CodeRun, ContainerService, check_network_policy

__all__ = ["CodeRun", "ContainerService", "check_network_policy"]
