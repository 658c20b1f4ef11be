"""Backends served from another process on this machine: the workers of ``responsa serve --workers N``
share one model process holding the embedded models, so the weights are in memory once and the
requests of every worker are decoded together in its slots."""

from ._client import RemoteBackend, remote_backends
from ._server import serve_backends

__all__ = ["RemoteBackend", "remote_backends", "serve_backends"]
