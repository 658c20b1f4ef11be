"""The one exception tree of responsa; every error a client sees is built from it.

::

    ResponsaError                       500 server_error
    ├── InvalidRequest                  400 invalid_request_error
    │   ├── Conflict                    409 invalid_request_error (state does not allow it)
    │   └── PayloadTooLarge             413 invalid_request_error
    ├── AuthenticationFailed            401 authentication_error
    ├── PermissionDenied                403 invalid_request_error (a project's permissions)
    ├── NotFound                        404 invalid_request_error (code *_not_found)
    ├── RateLimited                     429 rate_limit_error
    ├── ModelError                      500 server_error (backend broke while generating)
    └── ServiceUnavailable              503 service_unavailable
        └── StorageUnavailable          503 service_unavailable (code storage_unavailable)

Code raises; a single HTTP handler turns the exception into ``{"error": {...}}``. Once SSE headers
are sent, the engine turns it into a ``response.failed`` event instead.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AuthenticationFailed",
    "Conflict",
    "InvalidRequest",
    "ModelError",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "RateLimited",
    "ResponsaError",
    "ServiceUnavailable",
    "StorageUnavailable",
]


class ResponsaError(Exception):
    """Base of every error that reaches a client, carrying its OpenAI-shaped body."""

    status_code: int = 500
    error_type: str = "server_error"
    default_code: str | None = "server_error"

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code if code is not None else self.default_code
        self.headers = headers or {}

    def to_body(self) -> dict[str, Any]:
        """The ``{"error": ...}`` body the OpenAI API returns for this error."""
        return {
            "error": {
                "message": self.message,
                "type": self.error_type,
                "param": self.param,
                "code": self.code,
            }
        }


class InvalidRequest(ResponsaError):
    """The client sent something we will not act on; retrying unchanged cannot help."""

    status_code = 400
    error_type = "invalid_request_error"
    default_code: str | None = None


class Conflict(InvalidRequest):
    """The request is well-formed but the stored object's state forbids it."""

    status_code = 409


class PayloadTooLarge(InvalidRequest):
    """The body is over the server's size limit."""

    status_code = 413
    default_code = "request_too_large"


class AuthenticationFailed(ResponsaError):
    status_code = 401
    error_type = "authentication_error"
    default_code = "invalid_api_key"


class PermissionDenied(ResponsaError):
    """The key is good but its project may not do this (a model or hosted tool its permissions leave
    out, an admin route with a project's key)."""

    status_code = 403
    error_type = "invalid_request_error"
    default_code = "permission_denied"


class NotFound(ResponsaError):
    status_code = 404
    error_type = "invalid_request_error"
    default_code = "not_found"


class RateLimited(ResponsaError):
    status_code = 429
    error_type = "rate_limit_error"
    default_code = "rate_limit_exceeded"


class ModelError(ResponsaError):
    """The backend failed while producing output; maps to ``response.failed``."""

    status_code = 500
    error_type = "server_error"
    default_code = "server_error"


class ServiceUnavailable(ResponsaError):
    status_code = 503
    error_type = "service_unavailable"
    default_code = "service_unavailable"


STORAGE_RETRY_AFTER_SECONDS = 1


class StorageUnavailable(ServiceUnavailable):
    """The store cannot be written (or reached) now: a full disk, a read-only or vanished database, a
    database server that is down. Nothing was stored, nothing acknowledged before is lost, and the
    same request can be retried once the fault clears."""

    default_code = "storage_unavailable"

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"The server cannot store data right now ({reason}); nothing was stored. Retry later.",
            headers={"retry-after": str(STORAGE_RETRY_AFTER_SECONDS)},
        )
        self.reason = reason
