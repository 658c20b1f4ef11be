"""The usage ledger's table (migration 0020), beside ``_tables``'s."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, String, Table

from ._tables import metadata

__all__ = ["LATENCY_BUCKETS", "usage_buckets"]

LATENCY_BUCKETS = 12
"""Columns of the latency histogram (``latency_0`` ... ``latency_11``; their bounds are the engine's)."""

usage_buckets = Table(
    "usage_buckets",
    metadata,
    # Rolled up as it is recorded, at each width ('1m', '1h', '1d'), so a query over a month of a
    # million responses reads a few rows a day, not a row a request.
    Column("width", String(2), primary_key=True),
    Column("start", BigInteger, primary_key=True),
    Column("project_id", String(80), primary_key=True),
    Column("api_key_id", String(80), primary_key=True),  # '' where no key (a server without keys, a batch)
    Column("model", String(160), primary_key=True),
    Column("kind", String(32), primary_key=True),  # completions, embeddings, web_search_calls, ...
    Column("batch", Boolean, primary_key=True),
    Column("requests", BigInteger, nullable=False),
    Column("errors", BigInteger, nullable=False),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("cached_tokens", BigInteger, nullable=False),
    Column("units", BigInteger, nullable=False),  # images made, tool calls, sessions: the kind's count
    Column("latency_ms", BigInteger, nullable=False),  # summed
    *(Column(f"latency_{index}", BigInteger, nullable=False) for index in range(LATENCY_BUCKETS)),
)
