"""The Admin API's objects (``/v1/organization/...``), as openai 3.57's ``client.admin.organization``
reads them: projects, their service accounts and API keys, model and hosted-tool permissions, and the
admin keys that alone may manage them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ._base import WireModel

__all__ = [
    "HOSTED_TOOL_PERMISSIONS",
    "AdminApiKeyObject",
    "AdminKeyCreated",
    "CreateAdminKeyRequest",
    "CreateKeyRequest",
    "CreateProjectRequest",
    "CreateServiceAccountRequest",
    "CreateSpendAlertRequest",
    "CreatedKey",
    "HostedToolPermissionsObject",
    "KeyOwner",
    "ModelPermissionsObject",
    "NotificationChannel",
    "OwnerServiceAccount",
    "ProjectApiKeyObject",
    "ProjectObject",
    "RateLimitObject",
    "ServiceAccountCreated",
    "ServiceAccountObject",
    "SpendAlertObject",
    "SpendLimitObject",
    "ToolPermission",
    "UpdateModelPermissionsRequest",
    "UpdateProjectRequest",
    "UpdateRateLimitRequest",
    "UpdateServiceAccountRequest",
    "UpdateSpendAlertRequest",
    "UpdateSpendLimitRequest",
]

HOSTED_TOOL_PERMISSIONS = ("code_interpreter", "file_search", "image_generation", "mcp", "web_search")
"""The hosted tools a project's permissions name (OpenAI's five), each a tool type of a request."""


class ProjectObject(WireModel):
    id: str
    object: Literal["organization.project"] = "organization.project"
    name: str
    created_at: int
    archived_at: int | None = None
    status: Literal["active", "archived"] = "active"


class OwnerServiceAccount(WireModel):
    id: str
    name: str
    role: str
    created_at: int


class KeyOwner(WireModel):
    type: Literal["service_account", "user"] = "service_account"
    service_account: OwnerServiceAccount | None = None


class ProjectApiKeyObject(WireModel):
    id: str
    object: Literal["organization.project.api_key"] = "organization.project.api_key"
    name: str
    redacted_value: str
    created_at: int
    last_used_at: int | None = None
    expires_at: int | None = None
    owner: KeyOwner
    owner_project_access: Literal["active", "inactive"] = "active"


class CreatedKey(WireModel):
    """A service account's new key: its secret, shown this once."""

    id: str
    object: Literal["organization.project.service_account.api_key"] = "organization.project.service_account.api_key"
    name: str
    value: str
    created_at: int
    expires_at: int | None = None


class ServiceAccountObject(WireModel):
    id: str
    object: Literal["organization.project.service_account"] = "organization.project.service_account"
    name: str
    role: Literal["owner", "member", "none"]
    created_at: int


class ServiceAccountCreated(ServiceAccountObject):
    """A new service account, with its first key (none with ``create_service_account_only``)."""

    api_key: CreatedKey | None = None


class AdminApiKeyObject(WireModel):
    id: str
    object: Literal["organization.admin_api_key"] = "organization.admin_api_key"
    name: str | None = None
    redacted_value: str
    created_at: int
    last_used_at: int | None = None
    expires_at: int | None = None
    owner: dict[str, str] = Field(default_factory=lambda: {"type": "service_account", "role": "owner"})


class AdminKeyCreated(AdminApiKeyObject):
    """A new admin key, with its secret, shown this once."""

    value: str


class ModelPermissionsObject(WireModel):
    object: Literal["project.model_permissions"] = "project.model_permissions"
    mode: Literal["allow_list", "deny_list"] = "deny_list"
    model_ids: list[str] = Field(default_factory=list)


class ToolPermission(BaseModel):
    enabled: bool


class HostedToolPermissionsObject(WireModel):
    code_interpreter: ToolPermission = ToolPermission(enabled=True)
    file_search: ToolPermission = ToolPermission(enabled=True)
    image_generation: ToolPermission = ToolPermission(enabled=True)
    mcp: ToolPermission = ToolPermission(enabled=True)
    web_search: ToolPermission = ToolPermission(enabled=True)


class SpendLimitObject(WireModel):
    """A project's hard limit on its spend this month (by the prices the server was given)."""

    object: Literal["project.spend_limit"] = "project.spend_limit"
    threshold_amount: int
    """In US cents."""
    currency: Literal["USD"] = "USD"
    interval: Literal["month"] = "month"
    enforcement: dict[str, str] = Field(default_factory=lambda: {"status": "inactive"})
    """``enforcing`` while the project's spend this month is past the threshold (its requests are 429s)."""


class UpdateSpendLimitRequest(WireModel):
    threshold_amount: int = Field(ge=0)
    currency: Literal["USD"]
    interval: Literal["month"]


class RateLimitObject(WireModel):
    """A project's rate limits for one model (``id``: ``rl-`` and the model). responsa has no organization
    limit to show beneath them: 0 means the project has no limit of its own for the model."""

    id: str
    object: Literal["project.rate_limit"] = "project.rate_limit"
    model: str
    max_requests_per_1_minute: int = 0
    max_tokens_per_1_minute: int = 0
    max_requests_per_1_day: int | None = None


class UpdateRateLimitRequest(WireModel):
    """New limits for a model (a field left out stays; 0 removes that limit). The images, audio and
    batch-token limits OpenAI keeps for some models are not counted here: a value for one is a 400."""

    max_requests_per_1_minute: int | None = Field(default=None, ge=0)
    max_tokens_per_1_minute: int | None = Field(default=None, ge=0)
    max_requests_per_1_day: int | None = Field(default=None, ge=0)
    max_images_per_1_minute: None = None
    max_audio_megabytes_per_1_minute: None = None
    batch_1_day_max_input_tokens: None = None


class SpendAlertObject(WireModel):
    """A project's alert on its spend this month: an event to its webhook endpoints once a month, when
    its spend passes the threshold (``notification_channel`` ``{"type": "webhook"}``: no mail is sent
    from here)."""

    id: str
    object: Literal["project.spend_alert"] = "project.spend_alert"
    threshold_amount: int
    """In US cents."""
    currency: Literal["USD"] = "USD"
    interval: Literal["month"] = "month"
    notification_channel: dict[str, str] = Field(default_factory=lambda: {"type": "webhook"})


class NotificationChannel(WireModel):
    type: str
    recipients: list[str] | None = None
    subject_prefix: str | None = None


class CreateSpendAlertRequest(WireModel):
    threshold_amount: int = Field(ge=0)
    currency: Literal["USD"]
    interval: Literal["month"]
    notification_channel: NotificationChannel


class UpdateSpendAlertRequest(WireModel):
    threshold_amount: int | None = Field(default=None, ge=0)
    currency: Literal["USD"] | None = None
    interval: Literal["month"] | None = None
    notification_channel: NotificationChannel | None = None


class CreateProjectRequest(WireModel):
    """What a project is made with. Data residency and customer-managed keys are OpenAI's to offer: a
    value for them is a 400 naming it (null is accepted)."""

    name: str = Field(min_length=1, max_length=256)
    external_key_id: None = None
    geography: None = None
    residency: None = None


class UpdateProjectRequest(WireModel):
    name: str | None = Field(default=None, min_length=1, max_length=256)
    external_key_id: None = None
    geography: None = None


class CreateKeyRequest(WireModel):
    """A key's options: an expiry, and scopes (none but all here: a 400 names any other)."""

    expires_in_seconds: int | None = Field(default=None, ge=1)
    scopes: list[str] | None = None


class CreateServiceAccountRequest(CreateKeyRequest):
    name: str = Field(min_length=1, max_length=256)
    create_service_account_only: bool | None = None


class UpdateServiceAccountRequest(WireModel):
    role: Literal["member", "owner"] | None = None


class CreateAdminKeyRequest(WireModel):
    name: str = Field(min_length=1, max_length=256)
    expires_in_seconds: int | None = Field(default=None, ge=1)


class UpdateModelPermissionsRequest(WireModel):
    mode: Literal["allow_list", "deny_list"]
    model_ids: list[str]
