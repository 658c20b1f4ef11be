"""``responsa projects …`` and ``responsa usage``: the Admin API from a shell, for an operator without a
browser. Each verb is one or two calls to a running server's ``/v1/organization/...`` with an admin
key (``--admin-key`` or ``RESPONSA_ADMIN_KEY``), its answer printed as a table (or JSON with
``--json``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import click
import httpx
import orjson

__all__ = ["projects", "usage"]

_URL = click.option("--url", default="http://127.0.0.1:8080", envvar="RESPONSA_URL", show_default=True,
                    help="The server.")  # fmt: skip
_KEY = click.option("--admin-key", envvar="RESPONSA_ADMIN_KEY", required=True, help="An admin key.")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print the answer's JSON.")


def _call(url: str, key: str, method: str, path: str, **kwargs: Any) -> Any:
    """The Admin API's answer; its error, as the server words it, stops the command."""
    try:
        reply = httpx.request(method, f"{url.rstrip('/')}/v1/organization{path}",
                              headers={"authorization": f"Bearer {key}"}, timeout=30, **kwargs)  # fmt: skip
    except httpx.HTTPError as exc:
        raise click.ClickException(f"{url} did not answer: {exc}") from exc
    if reply.status_code >= 400:
        try:
            message = reply.json()["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = reply.text[:300]
        raise click.ClickException(f"{reply.status_code}: {message}")
    return reply.json()


def _table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> None:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=False)]
    for row in (header, *rows):
        click.echo("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _shown(answer: Any, as_json: bool, rows: Callable[[Any], tuple[Sequence[Sequence[Any]], Sequence[str]]]) -> None:
    if as_json:
        click.echo(orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode())
    else:
        _table(*rows(answer))


@click.group()
def projects() -> None:
    """Projects and their keys, through a running server's Admin API."""


@projects.command(name="list")
@_URL
@_KEY
@_JSON
@click.option("--include-archived", is_flag=True)
def list_projects(url: str, admin_key: str, as_json: bool, include_archived: bool) -> None:
    """The projects, oldest id first."""
    params = {"limit": 100, "include_archived": str(include_archived).lower()}
    answer = _call(url, admin_key, "GET", "/projects", params=params)
    _shown(answer, as_json, lambda found: ([(p["id"], p["name"], p["status"]) for p in found["data"]],
                                           ("id", "name", "status")))  # fmt: skip


@projects.command(name="create")
@_URL
@_KEY
@_JSON
@click.argument("name")
def create_project(url: str, admin_key: str, as_json: bool, name: str) -> None:
    """A new project."""
    answer = _call(url, admin_key, "POST", "/projects", json={"name": name})
    _shown(answer, as_json, lambda made: ([(made["id"], made["name"])], ("id", "name")))


@projects.command(name="archive")
@_URL
@_KEY
@_JSON
@click.argument("project_id")
def archive_project(url: str, admin_key: str, as_json: bool, project_id: str) -> None:
    """Archive a project: its keys stop working."""
    answer = _call(url, admin_key, "POST", f"/projects/{project_id}/archive")
    _shown(answer, as_json, lambda made: ([(made["id"], made["status"])], ("id", "status")))


@projects.command(name="key")
@_URL
@_KEY
@click.argument("project_id")
@click.option("--name", default="cli", show_default=True, help="The service account the key belongs to.")
@click.option("--expires-in-seconds", type=click.IntRange(1), default=None)
def make_key(url: str, admin_key: str, project_id: str, name: str, expires_in_seconds: int | None) -> None:
    """A new key for a project (a service account of its own), its secret printed once."""
    body: dict[str, Any] = {"name": name}
    if expires_in_seconds is not None:
        body["expires_in_seconds"] = expires_in_seconds
    made = _call(url, admin_key, "POST", f"/projects/{project_id}/service_accounts", json=body)
    click.echo(made["api_key"]["value"])
    click.echo(f"{made['api_key']['id']} of {made['id']} ({name}): keep the key above; it is not shown again.",
               err=True)  # fmt: skip


@projects.command(name="keys")
@_URL
@_KEY
@_JSON
@click.argument("project_id")
def list_keys(url: str, admin_key: str, as_json: bool, project_id: str) -> None:
    """A project's keys, redacted, with when each was last used."""
    answer = _call(url, admin_key, "GET", f"/projects/{project_id}/api_keys", params={"limit": 100})

    def rows(found: Any) -> tuple[list[tuple[Any, ...]], tuple[str, ...]]:
        table = [(key["id"], key["redacted_value"], _when(key["last_used_at"]), _when(key["expires_at"]))
                 for key in found["data"]]  # fmt: skip
        return table, ("id", "key", "last used", "expires")

    _shown(answer, as_json, rows)


@projects.command(name="revoke")
@_URL
@_KEY
@click.argument("project_id")
@click.argument("key_id")
def revoke_key(url: str, admin_key: str, project_id: str, key_id: str) -> None:
    """Revoke one of a project's keys."""
    _call(url, admin_key, "DELETE", f"/projects/{project_id}/api_keys/{key_id}")
    click.echo(f"{key_id} revoked")


@click.command()
@_URL
@_KEY
@_JSON
@click.option("--days", type=click.IntRange(1, 31), default=7, show_default=True)
@click.option("--by", "group_by", type=click.Choice(["model", "project_id", "api_key_id"]), multiple=True,
              default=("model",), show_default=True)  # fmt: skip
def usage(url: str, admin_key: str, as_json: bool, days: int, group_by: tuple[str, ...]) -> None:
    """Completions used by day (requests, tokens in and out) and what they cost, through the Admin API."""
    since = int(time.time()) - (days - 1) * 86400
    params: dict[str, Any] = {"start_time": since, "bucket_width": "1d", "limit": days, "group_by[]": list(group_by)}
    used = _call(url, admin_key, "GET", "/usage/completions", params=params)
    costs = _call(url, admin_key, "GET", "/costs", params={"start_time": since, "limit": days})

    def rows(found: Any) -> tuple[list[tuple[Any, ...]], tuple[str, ...]]:
        table = [(time.strftime("%Y-%m-%d", time.gmtime(bucket["start_time"])),
                  *(result.get(name) or "-" for name in group_by), result["num_model_requests"],
                  result["input_tokens"], result["output_tokens"])
                 for bucket in found["data"] for result in bucket["results"]]  # fmt: skip
        return table, ("day", *group_by, "requests", "input tokens", "output tokens")

    _shown({"usage": used, "costs": costs}, as_json, lambda answer: rows(answer["usage"]))
    if not as_json:
        total = sum(result["amount"]["value"] for bucket in costs["data"] for result in bucket["results"])
        click.echo(f"cost over {days} days: ${total:.4f} (at the server's --prices-file)")


def _when(seconds: int | None) -> str:
    return "-" if seconds is None else time.strftime("%Y-%m-%d %H:%M", time.gmtime(seconds))
