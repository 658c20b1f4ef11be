"""The composition root and the process runtime: the app assembled from the settings (its lifespan
builds the services and starts the server's tasks), one process or N workers under uvicorn's
supervisor, the model process, what the workers share, the capability probes, ``responsa doctor``."""

from ._accepting import AcceptingLoop
from ._admin_key import make_admin_key
from ._app import create_app
from ._configured import configured_backends, configured_limiter
from ._diagnosis import Diagnosis, diagnose
from ._doctor import report
from ._parent import end_with_the_parent
from ._serving import connection_options, serve_settings, worker_count
from ._workers import WorkerGroup, worker_group

__all__ = [
    "AcceptingLoop",
    "Diagnosis",
    "WorkerGroup",
    "configured_backends",
    "configured_limiter",
    "connection_options",
    "create_app",
    "diagnose",
    "end_with_the_parent",
    "make_admin_key",
    "report",
    "serve_settings",
    "worker_count",
    "worker_group",
]
