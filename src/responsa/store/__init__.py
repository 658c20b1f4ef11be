"""Durable storage of responses and items."""

from ._base import ItemPage, LoggedEvent, Order, ResponseFilter, ResponsePage, Retention, Store
from ._sql import SqlStore

__all__ = ["ItemPage", "LoggedEvent", "Order", "ResponseFilter", "ResponsePage", "Retention", "SqlStore", "Store"]
