"""The HTTP surface: routes, SSE framing, error rendering, the app factory."""

from ._app import create_app
from ._diagnosis import Diagnosis, diagnose

__all__ = ["Diagnosis", "create_app", "diagnose"]
