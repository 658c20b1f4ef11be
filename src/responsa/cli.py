"""``responsa serve``: builds :class:`~responsa.config.Settings` from options (each also an env var)."""

from __future__ import annotations

import click

from responsa.config import Settings, default_db_url

__all__ = ["main"]


@click.group()
@click.version_option(package_name="responsa")
def main() -> None:
    """responsa: an OpenAI Responses API server for any model."""


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, envvar="RESPONSA_HOST", help="Interface to bind.")
@click.option("--port", default=8080, show_default=True, type=int, envvar="RESPONSA_PORT", help="Port to bind.")
@click.option(
    "--backend",
    default="simulator",
    show_default=True,
    envvar="RESPONSA_BACKEND",
    type=click.Choice(["simulator"]),
    help="Which models to serve.",
)
@click.option(
    "--db",
    "db_url",
    default=None,
    envvar="RESPONSA_DB",
    help="Store URL: sqlite:///path.db (default: responsa.db in the user data dir).",
)
@click.option(
    "--api-key",
    "api_keys",
    multiple=True,
    envvar="RESPONSA_API_KEYS",
    help="Require this bearer key (repeatable; env: space-separated). Default: no auth.",
)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    envvar="RESPONSA_LOG_LEVEL",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
@click.option(
    "--sim-token-delay-ms",
    default=0.0,
    show_default=True,
    type=float,
    envvar="RESPONSA_SIM_TOKEN_DELAY_MS",
    help="Simulator: pause this long before each token.",
)
def serve(
    host: str,
    port: int,
    backend: str,
    db_url: str | None,
    api_keys: tuple[str, ...],
    log_level: str,
    sim_token_delay_ms: float,
) -> None:
    """Serve the Responses API over HTTP."""
    import uvicorn

    from responsa.http import create_app

    settings = Settings(
        host=host, port=port, backend=backend, db_url=db_url or default_db_url(), api_keys=api_keys, log_level=log_level
    )
    click.echo(f"responsa: serving {settings.backend} on http://{host}:{port}/v1 (store: {settings.db_url})")
    uvicorn.run(create_app(settings), host=host, port=port, log_level=log_level, access_log=False)


if __name__ == "__main__":
    main()
