"""Requests for fixed paths skip Starlette's router, and are answered as it would have answered them:
the same endpoint (an earlier pattern that takes the path keeps it), the same error handling."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.testclient import TestClient

from responsa.http._errors import EXCEPTION_HANDLERS, json_response
from responsa.http._exact_routes import ExactRoutes
from responsa.http._middleware import Gate
from responsa.protocol import InvalidRequest
from responsa.serve import create_app
from tests.conftest import LiveServer, sqlite_server


async def _by_name(request: Request) -> Response:
    return json_response({"endpoint": "by_name", "name": request.path_params["name"]})


async def _fixed(request: Request) -> Response:
    """Which way the request came (Starlette's router marks the scope it routes), and the route the scope names."""
    route = request.scope["route"].path
    return json_response({"endpoint": "fixed", "through_router": "router" in request.scope, "route": route})


async def _invalid(request: Request) -> Response:
    raise InvalidRequest("Bad 'thing'.", param="thing", code="invalid_value")


async def _missing(request: Request) -> Response:
    raise HTTPException(status_code=404, detail="No such thing.")


async def _broken(request: Request) -> Response:
    raise RuntimeError("a bug")


def _app(exact: bool) -> Starlette:
    table = [
        Route("/items/{name}", _by_name, methods=["GET"]),
        Route("/items/new", _fixed, methods=["GET", "POST"]),  # GET is the pattern's, POST is this one's
        Route("/fixed", _fixed, methods=["GET"]),
        Route("/invalid", _invalid, methods=["POST"]),
        Route("/missing", _missing, methods=["GET"]),
        Route("/broken", _broken, methods=["GET"]),
    ]
    app = Starlette(routes=table, exception_handlers=EXCEPTION_HANDLERS)
    if exact:
        app.add_middleware(ExactRoutes, routes=table, handlers=EXCEPTION_HANDLERS)
    return app


@pytest.fixture(params=[False, True], ids=["starlette", "exact"])
def client(request: pytest.FixtureRequest) -> Iterator[TestClient]:
    with TestClient(_app(request.param), raise_server_exceptions=False) as client:
        yield client


def test_a_fixed_path_skips_the_router() -> None:
    with TestClient(_app(exact=True)) as fast, TestClient(_app(exact=False)) as routed:
        assert fast.get("/fixed").json() == {"endpoint": "fixed", "through_router": False, "route": "/fixed"}
        assert routed.get("/fixed").json() == {"endpoint": "fixed", "through_router": True, "route": "/fixed"}


def test_an_earlier_pattern_keeps_the_paths_it_takes(client: TestClient) -> None:
    assert client.get("/items/new").json() == {"endpoint": "by_name", "name": "new"}
    assert client.post("/items/new").json()["endpoint"] == "fixed"
    assert client.get("/items/other").json() == {"endpoint": "by_name", "name": "other"}


def test_failures_meet_the_apps_handlers(client: TestClient) -> None:
    invalid = client.post("/invalid")
    assert invalid.status_code == 400
    assert invalid.json()["error"] == {
        "message": "Bad 'thing'.", "type": "invalid_request_error", "param": "thing", "code": "invalid_value"
    }  # fmt: skip
    missing = client.get("/missing")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "not_found")
    broken = client.get("/broken")  # the catch-all is the outermost middleware's, as without the table
    assert broken.status_code == 500
    assert broken.json()["error"]["type"] == "server_error"


def test_a_method_the_path_lacks_is_starlettes_405(client: TestClient) -> None:
    refused = client.delete("/fixed")
    assert (refused.status_code, refused.json()["error"]["code"]) == (405, "method_not_allowed")
    assert set(refused.headers["allow"].split(", ")) == {"GET", "HEAD"}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "exact")


def test_the_server_answers_fixed_paths_as_before(live: LiveServer) -> None:
    with httpx.Client(base_url=live.url, timeout=30) as http:
        created = http.post("/v1/responses", json={"model": "sim", "input": "Hi", "max_output_tokens": 4})
        assert created.status_code == 200 and created.headers["x-request-id"].startswith("req_")
        assert http.get(f"/v1/responses/{created.json()['id']}").json()["id"] == created.json()["id"]
        bad = http.post("/v1/responses", content=b"{not json", headers={"content-type": "application/json"})
        assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
        assert http.head("/health").status_code == 200
        put = http.put("/v1/responses", json={})
        assert put.status_code == 405 and put.json()["error"]["code"] == "method_not_allowed"
        assert "POST" in put.headers["allow"]  # the first route of the path that Starlette finds


def test_the_gate_sees_every_request_first(live: LiveServer) -> None:
    """The table sits below the gate (keys, limits, request ids and metrics apply to what it serves)."""
    app = create_app(live.settings)
    assert [layer.cls for layer in app.user_middleware] == [Gate, ExactRoutes]
