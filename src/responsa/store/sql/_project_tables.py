"""The tables of projects, service accounts and API keys (migration 0019), beside ``_tables``'s."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Integer, String, Table, Text

from ._tables import metadata

__all__ = ["api_keys", "audit_logs", "project_changes", "projects", "service_accounts", "spend_alerts"]

projects = Table(
    "projects",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("name", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("archived_at", BigInteger, nullable=True),
    Column("source", String(16), nullable=False),
    Column("model_permissions", Text, nullable=True),
    Column("tool_permissions", Text, nullable=True),
    Column("spend_limit", Text, nullable=True),  # migration 0020: JSON {"threshold_amount" (cents), ...}
    Column("rate_limits", Text, nullable=True),  # migration 0023: JSON {model: {"max_requests_per_1_minute", ...}}
)

service_accounts = Table(
    "service_accounts",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("project_id", String(80), nullable=False),
    Column("name", Text, nullable=False),
    Column("role", String(16), nullable=False),
    Column("created_at", BigInteger, nullable=False),
)
Index("ix_service_accounts_project_id", service_accounts.c.project_id, service_accounts.c.id)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String(80), primary_key=True),
    # SHA-256 of the secret, hex: the secret itself is shown once, when the key is made, and kept nowhere.
    Column("secret_hash", String(64), nullable=False, unique=True),
    Column("name", Text, nullable=False),
    Column("redacted_value", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("project_id", String(80), nullable=True),  # None: an admin key
    Column("service_account_id", String(80), nullable=True),
    Column("expires_at", BigInteger, nullable=True),
    Column("last_used_at", BigInteger, nullable=True),
)
Index("ix_api_keys_project_id", api_keys.c.project_id, api_keys.c.id)

project_changes = Table(
    "project_changes",
    metadata,
    # One row (id 1): how many changes of projects and keys the store has seen; each process reloads
    # the keys it holds when it has moved (engine/projects/_directory.py).
    Column("id", Integer, primary_key=True),
    Column("changes", BigInteger, nullable=False, server_default="0"),
)

audit_logs = Table(
    "audit_logs",
    metadata,
    # Every admin action and every use of a key outside its permissions (migration 0021), as the
    # Admin API lists them: ids grow with time, so the newest first is the id's order.
    Column("id", String(80), primary_key=True),
    Column("effective_at", BigInteger, nullable=False),
    Column("type", String(64), nullable=False),
    Column("project_id", String(80), nullable=True),
    Column("actor_id", String(80), nullable=True),  # the key that acted (None: the settings' admin key)
    Column("resource_id", String(80), nullable=True),
    Column("body", Text, nullable=False),  # the log's JSON as listed
)
Index("ix_audit_logs_effective_at", audit_logs.c.effective_at)

spend_alerts = Table(
    "spend_alerts",
    metadata,
    # A project's alert on its month's spend (migration 0022); ``fired_for``: the start of the month it
    # last fired in, so it fires once a month, by whichever process sees it first.
    Column("id", String(80), primary_key=True),
    Column("project_id", String(80), nullable=False),
    Column("threshold_amount", BigInteger, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("fired_for", BigInteger, nullable=True),
)
Index("ix_spend_alerts_project_id", spend_alerts.c.project_id, spend_alerts.c.id)
