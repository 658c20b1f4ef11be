"""Durable storage of responses and items."""

from ._base import ItemPage, Order, Store
from ._sql import SqlStore, async_url

__all__ = ["ItemPage", "Order", "SqlStore", "Store", "async_url"]
