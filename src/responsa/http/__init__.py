"""The HTTP surface: routes, SSE framing, error rendering, the app factory, the workers' shared setup."""

from ._app import create_app
from ._diagnosis import Diagnosis, diagnose
from ._parent import end_with_the_parent
from ._workers import WorkerGroup, worker_group

__all__ = ["Diagnosis", "WorkerGroup", "create_app", "diagnose", "end_with_the_parent", "worker_group"]
