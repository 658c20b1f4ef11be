"""What the create path is made of: one keyword-only value, built once at start from the settings
(serve's ``_responses`` builder), so no default of a setting is copied here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from anyio.abc import TaskGroup

from responsa.backends import BackendRegistry
from responsa.store import Store

from ...files import FileService
from ...tools import ToolRegistry
from ...usage import UsageHook
from ..features._features import RequestFeature
from ..features._prompts import PromptLibrary
from ..features._sealing import Sealer

__all__ = ["ResponseSetup"]


@dataclass(frozen=True, kw_only=True)
class ResponseSetup:
    """The services and limits ``ResponseService`` and its ``Opener`` run with."""

    store: Store
    backends: BackendRegistry
    tools: ToolRegistry
    """The tool kinds the server serves, each server-run one with its service."""
    background: TaskGroup | None
    """Where background responses run (None: none can)."""
    on_usage: UsageHook | None
    """Told each response as it ends (the rate limiter's spend, the metrics, the usage ledger)."""
    sealer: Sealer
    """Seals reasoning for a retrieve that asks for ``reasoning.encrypted_content`` (as a create does)."""
    prompts: PromptLibrary
    hosted_tools: str
    """``--hosted-tools``: what a hosted tool a backend cannot run does (``ignore`` or ``error``)."""
    max_input_items: int
    admission: tuple[int, int, float]
    """Generations at once, requests waiting, and how long one may wait, per backend."""
    lease: float
    """How long a background response's lease lasts before another process may take it over."""
    cancel_poll: float
    """How often the store is read for cancels asked in other processes."""
    features: tuple[RequestFeature, ...]
    """The request features creates may name, in the order their runs take their hooks (see ``_features``)."""
    files: FileService
    """The uploaded files ``input_file`` parts may name by id (every file's text is read for the model:
    see ``_input_files``)."""
    permits: Callable[[str, str | None, Sequence[str], float], Awaitable[None]]
    """Raises where the tenant's project may not use the model or a hosted tool (by tool type), or has
    spent its limit (the key directory's ``check``, which logs the refusal), or once its rate limits
    for the model have not let the request through within the patience given (seconds)."""
