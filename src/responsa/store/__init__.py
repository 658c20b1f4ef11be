"""Durable storage of responses and items."""

from ._base import ItemPage, LoggedEvent, Order, Retention, Store
from ._sql import SqlStore

__all__ = ["ItemPage", "LoggedEvent", "Order", "Retention", "SqlStore", "Store"]
