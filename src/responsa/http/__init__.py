"""The HTTP surface: routes, SSE framing, error rendering, the app factory."""

from ._app import create_app

__all__ = ["create_app"]
