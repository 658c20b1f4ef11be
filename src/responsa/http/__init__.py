"""The HTTP surface: routes, middleware, SSE and WebSocket framing, error rendering, and the services
the routes read (``Services``); ``responsa.serve`` assembles them into the app."""

from ._batch_lines import batch_lines
from ._errors import EXCEPTION_HANDLERS
from ._exact_routes import ExactRoutes
from ._file_routes import FORM_SLACK
from ._limits import KINDS, Bucket, Limiter, Permits, RateLimiter, buckets, capacities, refusal
from ._metrics import Metrics
from ._middleware import Gate
from ._routes import routes
from ._services import HttpLimits, Services
from ._socket_lanes import SEND_BATCH

__all__ = [
    "EXCEPTION_HANDLERS",
    "FORM_SLACK",
    "KINDS",
    "SEND_BATCH",
    "Bucket",
    "ExactRoutes",
    "Gate",
    "HttpLimits",
    "Limiter",
    "Metrics",
    "Permits",
    "RateLimiter",
    "Services",
    "batch_lines",
    "buckets",
    "capacities",
    "refusal",
    "routes",
]
