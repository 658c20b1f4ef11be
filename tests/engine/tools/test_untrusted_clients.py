"""Tighter defaults once API keys are configured (clients are not trusted): MCP server_urls on
loopback or private addresses are refused unless allowed by name, names are resolved and every
address checked, and every request the MCP client sends is checked again. URLs in inputs
(``input_image``, ``input_file``) are never fetched by the server (a file by URL is a 400)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from responsa.config import ApiKey, Settings, UpstreamConfig
from responsa.external import UrlPolicy
from responsa.protocol import InvalidRequest
from tests.backends.mock_upstream import MockUpstream
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import LiveServer, serve, serve_app
from tests.engine.tools.mcp_server import streamable_app

KEY = ApiKey("sk-tenant", "tenant")


@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    with serve_app(streamable_app()) as live:
        yield f"{live.url}/mcp"


@contextmanager
def _keyed_server(tmp_path: Path, *allowed: str) -> Iterator[LiveServer]:
    """Keys configured; beside the simulator, an upstream model (a real backend: refusals stay 400s)."""
    with serve_app(MockUpstream().app) as upstream:
        settings = Settings(
            db_url=f"sqlite:///{tmp_path / 'k.db'}", embedded=False, api_keys=(KEY,), mcp_allow_hosts=allowed,
            models=(UpstreamConfig(name="up-model", urls=(f"{upstream.url}/v1",)),),
        )  # fmt: skip
        with serve(settings) as server:
            yield server


def _create(server: LiveServer, url: str, model: str = "sim", **tool: Any) -> Any:
    with openai.OpenAI(base_url=server.v1, api_key=KEY.key, max_retries=0) as client:
        tool = {"type": "mcp", "server_label": "calc", "server_url": url, "require_approval": "never", **tool}
        return client.responses.create(model=model, input="Please add 2 and 3", tools=[tool])  # type: ignore[list-item]


def test_with_api_keys_loopback_is_closed_unless_allowed_by_name(tmp_path: Path, mcp_url: str) -> None:
    port = httpx.URL(mcp_url).port
    with _keyed_server(tmp_path, f"127.0.0.1:{port}") as server:
        for url in ("http://127.0.0.1:5432/", f"http://localhost:{port}/mcp", "http://10.1.2.3/mcp"):
            with pytest.raises(openai.BadRequestError) as refused:
                _create(server, url, "up-model")  # the database's port; the same server by another name; a private host
            assert refused.value.code == "mcp_url_not_allowed"
            assert refused.value.param == "tools[0].server_url"
            assert "with API keys configured" in refused.value.message
        reply = _create(server, mcp_url)  # allowed by name (host:port)
        assert [item.type for item in reply.output] == ["mcp_list_tools", "mcp_call", "message"]
        assert reply.output[1].output == "5"  # type: ignore[union-attr]  # the real server's answer


def test_the_simulator_simulates_a_refused_server_without_contacting_it(tmp_path: Path) -> None:
    """LLMSim accepts any server_url and never connects: on the simulator a host the policy refuses
    gets a made-up listing and call; the host sees nothing. A real backend gets the 400 (above)."""
    hits: list[str] = []

    async def bait(request: Request) -> Response:
        hits.append(request.url.path)
        return Response("no")

    with serve_app(Starlette(routes=[Route("/{path:path}", bait, methods=["GET", "POST"])])) as target:
        with _keyed_server(tmp_path) as server:
            reply = _create(server, f"{target.url}/mcp", allowed_tools=["add"])
            listing, call = reply.output[0], reply.output[1]
            assert [item.type for item in reply.output] == ["mcp_list_tools", "mcp_call", "message"]
            assert [tool.name for tool in listing.tools] == ["add"]  # type: ignore[union-attr]
            assert call.name == "add" and call.error is None  # type: ignore[union-attr]
            assert call.output.startswith("Simulated result of add")  # type: ignore[union-attr]
            for url in ("http://169.254.169.254/mcp", "http://10.1.2.3/mcp"):  # never reachable: still simulated
                assert _create(server, url, allowed_tools=["add"]).output[1].type == "mcp_call"
            with pytest.raises(openai.BadRequestError):  # a malformed tool is a 400 everywhere
                _create(server, "")
    assert hits == []


def test_without_api_keys_loopback_stays_open(client: openai.OpenAI, mcp_url: str) -> None:
    tool = {"type": "mcp", "server_label": "calc", "server_url": mcp_url, "require_approval": "never"}
    reply = client.responses.create(model="sim", input="Please add 2 and 3", tools=[tool])  # type: ignore[list-item]
    assert reply.output[1].type == "mcp_call"


def test_every_request_of_an_mcp_client_is_checked_again(mcp_url: str) -> None:
    """The guard runs as the HTTP client's request hook: a request the policy refuses is never sent."""
    hits: list[str] = []

    async def bait(request: Request) -> Response:
        hits.append(request.url.path)
        return Response("no")

    async def send(policy: UrlPolicy, url: str) -> None:
        async with httpx2.AsyncClient(event_hooks={"request": [policy.guard], "response": []}) as client:
            await client.get(url)

    with serve_app(Starlette(routes=[Route("/{path:path}", bait)])) as target:
        with pytest.raises(InvalidRequest, match="with API keys configured"):
            anyio.run(send, UrlPolicy(allow_loopback=False), f"{target.url}/secret")
        with pytest.raises(InvalidRequest, match="link-local"):
            anyio.run(send, UrlPolicy(["169.254.169.254"]), "http://169.254.169.254/latest/meta-data")
        assert hits == []
        anyio.run(send, UrlPolicy(), f"{target.url}/fine")  # loopback, no keys: sent
        assert hits == ["/fine"]


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def test_urls_in_inputs_are_never_fetched_by_the_server(rig: Rig) -> None:
    hits: list[str] = []

    async def bait(request: Request) -> Response:
        hits.append(request.url.path)
        return Response(b"\x89PNG\r\n\x1a\n", media_type="image/png")

    with serve_app(Starlette(routes=[Route("/{path:path}", bait)])) as target:
        content = [
            {"type": "input_text", "text": "What is in these?"},
            {"type": "input_image", "image_url": f"{target.url}/cat.png"},
        ]
        file = {"type": "input_file", "file_url": f"{target.url}/report.pdf"}
        for model in ("sim", "up-model"):
            reply = rig.http.post(
                "/v1/responses", json={"model": model, "input": [{"role": "user", "content": content}]}
            )
            assert reply.status_code == 200, reply.text
            refused = rig.http.post(
                "/v1/responses", json={"model": model, "input": [{"role": "user", "content": [*content, file]}]}
            )  # the model reads a file's text, which would need the server to fetch it: a 400, nothing fetched
            assert refused.status_code == 400 and refused.json()["error"]["param"] == "input[0].content[2].file_url"
    assert hits == []
    # The upstream got the URLs as they were: reading them is its business.
    sent = rig.first.requests[-1]["messages"][-1]["content"]
    assert {"type": "image_url", "image_url": {"url": f"{target.url}/cat.png"}} in sent
