"""OpenTelemetry traces: a span per request (continuing an incoming ``traceparent``), per response,
per model call (the upstream gets the call's ``traceparent``), per MCP listing and call and per store
write, with the response id, tenant, model and token counts; exported to an in-memory exporter and,
from a ``responsa serve`` process configured only by ``OTEL_*`` variables, to a loopback OTLP/HTTP
receiver."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from responsa import tracing
from tests.backends.mock_upstream import Stream, text_chunks
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import serve_app, start_serve
from tests.engine.tools.mcp_server import streamable_app


def _traceparent() -> tuple[str, str, str]:
    trace_id, parent_id = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace_id}-{parent_id}-01", trace_id, parent_id


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracing.configure(exporter, batch=False)
    yield exporter
    tracing.shutdown()


@pytest.fixture
def rig(exported: InMemorySpanExporter, tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)  # after ``exported``: the server's store opens with tracing on


def _named(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def _parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def test_an_upstream_turn_is_one_trace_from_the_caller_to_the_upstream(
    exported: InMemorySpanExporter, rig: Rig
) -> None:
    header, trace_id, caller_span = _traceparent()
    usage = {"prompt_tokens": 12, "completion_tokens": 2}
    rig.first.script.append(Stream(text_chunks("Hi", " there", usage=usage)))
    reply = rig.http.post(
        "/v1/responses", json={"model": "up-model", "input": "Hello"}, headers={"traceparent": header}
    )
    assert reply.status_code == 200
    response_id = reply.json()["id"]
    spans = exported.get_finished_spans()

    (server,) = _named(spans, "POST /v1/responses")
    assert server.kind == SpanKind.SERVER and format(server.context.trace_id, "032x") == trace_id
    assert format(_parent_id(server) or 0, "016x") == caller_span  # the caller's trace goes on
    assert server.attributes is not None and server.attributes["http.response.status_code"] == 200
    assert server.attributes["responsa.tenant"] == "default"
    assert server.resource.attributes["service.name"] == "responsa"  # no OTEL_SERVICE_NAME: the default

    (response,) = _named(spans, "response up-model")
    assert _parent_id(response) == server.context.span_id
    expected = {"gen_ai.response.id": response_id, "gen_ai.request.model": "up-model", "responsa.tenant": "default",
                "responsa.status": "completed", "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 2}  # fmt: skip
    assert dict(response.attributes or {}).items() >= expected.items()

    (call,) = _named(spans, "chat up-model")
    assert _parent_id(call) == response.context.span_id
    # The upstream request carried the model call's span as its parent.
    (sent,) = rig.first.traceparents
    assert sent == f"00-{trace_id}-{format(call.context.span_id, '016x')}-01"

    saves = _named(spans, "store save_response")
    assert saves and all(_parent_id(save) == response.context.span_id for save in saves)
    assert saves[-1].attributes is not None and saves[-1].attributes["db.system.name"] == "sqlite"


def test_mcp_listings_and_calls_are_spans_of_the_response(exported: InMemorySpanExporter, rig: Rig) -> None:
    recorder = streamable_app()
    with serve_app(recorder) as mcp:
        tool = {"type": "mcp", "server_label": "calc", "server_url": f"{mcp.url}/mcp", "require_approval": "never"}
        body = {"model": "sim", "input": "Please add 2 and 3", "tools": [tool], "stream": True}
        with rig.http.stream("POST", "/v1/responses", json=body) as reply:
            assert reply.status_code == 200
            reply.read()
    spans = exported.get_finished_spans()
    (response,) = _named(spans, "response sim")
    (listing,) = _named(spans, "mcp list_tools")
    (call,) = _named(spans, "mcp call add")
    assert _parent_id(listing) == _parent_id(call) == response.context.span_id
    assert listing.attributes is not None and listing.attributes["mcp.tools"] == 4
    assert call.attributes is not None and call.attributes["mcp.server.label"] == "calc"
    assert len(_named(spans, "chat sim")) == 2  # the model asked twice: before and after the call


class Receiver:
    """An OTLP/HTTP trace receiver on loopback: keeps every export request it gets."""

    def __init__(self) -> None:
        self.exports: list[ExportTraceServiceRequest] = []
        self.app = Starlette(routes=[Route("/v1/traces", self._traces, methods=["POST"])])

    async def _traces(self, request: Request) -> Response:
        export = ExportTraceServiceRequest()
        export.ParseFromString(await request.body())
        self.exports.append(export)
        return Response(b"", media_type="application/x-protobuf")

    def spans(self) -> list[tuple[dict[str, Any], Any]]:
        """(resource attributes, span) of every span received."""
        found = []
        for export in self.exports:
            for resource_spans in export.resource_spans:
                resource = {kv.key: kv.value.string_value for kv in resource_spans.resource.attributes}
                found += [(resource, span) for scope in resource_spans.scope_spans for span in scope.spans]
        return found


def test_a_serve_process_exports_to_an_otlp_receiver_set_by_environment_variables(tmp_path: Path) -> None:
    receiver = Receiver()
    header, trace_id, _caller = _traceparent()
    with serve_app(receiver.app) as otlp:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.url, "OTEL_SERVICE_NAME": "responsa-under-test",
               "OTEL_BSP_SCHEDULE_DELAY": "50"}  # fmt: skip
        process, url = start_serve(
            "--db", f"sqlite:///{tmp_path / 'r.db'}", "--no-embedded", log=tmp_path / "log", env=env
        )
        try:
            reply = httpx.post(
                f"{url}/v1/responses", json={"model": "sim", "input": "Hi"}, headers={"traceparent": header}
            )
            response_id = reply.json()["id"]
            deadline = time.monotonic() + 10
            while not any(span.name == "response sim" for _resource, span in receiver.spans()):
                assert time.monotonic() < deadline, "no span reached the receiver"
                time.sleep(0.05)
        finally:
            process.terminate()
            process.wait(timeout=30)
    spans = receiver.spans()
    assert {resource["service.name"] for resource, _span in spans} == {"responsa-under-test"}
    # Every span of the request joins the caller's trace (background work has its own: the sweep, the
    # default project made at the first start, the usage ledger's writes and its pruning).
    background = {"GET /health", "store sweep", "store put_project", "store add_usage", "store prune_usage"}
    assert {span.trace_id.hex() for _resource, span in spans if span.name not in background} == {trace_id}
    (response,) = [span for _resource, span in spans if span.name == "response sim"]
    attributes = {kv.key: kv.value for kv in response.attributes}
    assert attributes["gen_ai.response.id"].string_value == response_id
    assert attributes["gen_ai.usage.output_tokens"].int_value > 0


def test_tracing_is_off_unless_the_environment_asks() -> None:
    assert not tracing.configured_from_environment({})
    assert not tracing.configured_from_environment({"OTEL_SERVICE_NAME": "x"})
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
    assert not tracing.configured_from_environment({**endpoint, "OTEL_TRACES_EXPORTER": "none"})
    assert not tracing.configured_from_environment({**endpoint, "OTEL_SDK_DISABLED": "true"})
    assert not tracing.enabled()
