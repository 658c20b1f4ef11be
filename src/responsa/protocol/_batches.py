"""The wire shapes of work done without a client waiting: the Batch API (``openai.types.Batch``,
``batch_create_params``), the webhook endpoints (``openai.types.webhooks``), and the embeddings request
a batch's lines may hold."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import WireModel
from ._metadata import Metadata

__all__ = [
    "BATCH_STATUSES",
    "BATCH_TERMINAL_STATUSES",
    "WEBHOOK_EVENT_TYPES",
    "Batch",
    "BatchCounts",
    "BatchLineError",
    "CreateBatchRequest",
    "CreateEmbeddingRequest",
    "CreateWebhookEndpointRequest",
    "OutputExpiresAfter",
    "RotateSecretRequest",
    "TestWebhookRequest",
    "UpdateWebhookEndpointRequest",
]

BATCH_STATUSES = (
    "validating",
    "failed",
    "in_progress",
    "finalizing",
    "completed",
    "expired",
    "cancelling",
    "cancelled",
)
BATCH_TERMINAL_STATUSES = frozenset({"failed", "completed", "expired", "cancelled"})

WEBHOOK_EVENT_TYPES = (
    "batch.completed",
    "batch.failed",
    "batch.expired",
    "batch.cancelled",
    "response.completed",
    "response.failed",
    "response.cancelled",
    "response.incomplete",
    "project.spend_alert.triggered",
)
"""The events this server sends (the openai SDK's list has more, for features it does not have;
``project.spend_alert.triggered`` is responsa's own: a project's spend alert, to its endpoints)."""


class OutputExpiresAfter(WireModel):
    anchor: Literal["created_at"]
    seconds: int = Field(ge=3600, le=30 * 24 * 3600)


class CreateBatchRequest(WireModel):
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: Metadata | None = None
    output_expires_after: OutputExpiresAfter | None = None


class BatchLineError(WireModel):
    code: str | None = None
    line: int | None = None
    message: str | None = None
    param: str | None = None


class BatchCounts(WireModel):
    completed: int = 0
    failed: int = 0
    total: int = 0


class Batch(WireModel):
    id: str
    object: Literal["batch"] = "batch"
    endpoint: str
    model: str | None = None
    errors: dict[str, Any] | None = None
    """``{"object": "list", "data": [BatchLineError...]}`` when validation failed."""
    input_file_id: str
    completion_window: str
    status: str
    output_file_id: str | None = None
    error_file_id: str | None = None
    created_at: int
    in_progress_at: int | None = None
    expires_at: int | None = None
    finalizing_at: int | None = None
    completed_at: int | None = None
    failed_at: int | None = None
    expired_at: int | None = None
    cancelling_at: int | None = None
    cancelled_at: int | None = None
    request_counts: BatchCounts = Field(default_factory=BatchCounts)
    usage: dict[str, Any] | None = None
    metadata: dict[str, str] | None = None


class CreateEmbeddingRequest(WireModel):
    """``POST /v1/embeddings``: texts only (token arrays are not taken), at the model's own dimensions."""

    model: str
    input: str | list[str]
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = None
    """Not supported (a 400 names it): vectors have the model's own size."""
    user: str | None = None


class CreateWebhookEndpointRequest(WireModel):
    name: str = Field(min_length=1, max_length=256)
    url: str
    event_types: list[str] = Field(min_length=1)


class UpdateWebhookEndpointRequest(WireModel):
    name: str | None = Field(default=None, min_length=1, max_length=256)
    url: str | None = None
    event_types: list[str] | None = Field(default=None, min_length=1)


class RotateSecretRequest(WireModel):
    keep_old_secret_active_for_24_hours: bool = False


class TestWebhookRequest(WireModel):
    event_type: str
