"""Alembic environment: runs on the connection responsa hands over (see ``responsa.store.sql._store``)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

config = context.config
connection = config.attributes.get("connection")

if connection is not None:
    context.configure(connection=connection, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "sqlite://")
    with engine.connect() as fresh:
        context.configure(connection=fresh, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
