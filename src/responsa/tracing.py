"""OpenTelemetry traces, off unless the standard ``OTEL_*`` environment variables ask for them.

On when ``OTEL_TRACES_EXPORTER`` names an exporter (``otlp``, ``console``) or an OTLP endpoint is set
(``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), unless
``OTEL_SDK_DISABLED=true``; the SDK reads the rest (service name, resource attributes, sampler,
headers, batch delays) from the environment itself. Off, nothing of OpenTelemetry is even imported,
and every helper here returns at once: the request path pays nothing.

A leaf module: every layer may use it, it uses none of them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span, Tracer

__all__ = [
    "configure",
    "configured_from_environment",
    "current",
    "enabled",
    "extract",
    "finish",
    "inject",
    "shutdown",
    "span",
    "start",
]

logger = logging.getLogger(__name__)

_tracer: Tracer | None = None
_provider: Any = None


def configured_from_environment(environ: Mapping[str, str] = os.environ) -> bool:
    """Turn tracing on if the environment asks for it; whether it is on."""
    if environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    endpoint = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if exporter == "none" or (not exporter and not endpoint):
        return False
    if exporter == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        configure(ConsoleSpanExporter(), batch=False)
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        configure(OTLPSpanExporter())
    logger.info("tracing on: spans go to %s", endpoint or exporter)
    return True


def configure(exporter: SpanExporter, batch: bool = True) -> None:
    """Send this process's spans to ``exporter`` (tests pass an in-memory one)."""
    global _tracer, _provider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    shutdown()
    resource = Resource.create()  # from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "responsa"}))
    _provider = TracerProvider(resource=resource)
    _provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    _tracer = _provider.get_tracer("responsa")


def shutdown() -> None:
    """Flush and stop: spans still queued are exported first."""
    global _tracer, _provider
    if _provider is not None:
        _provider.shutdown()
    _tracer = _provider = None


def enabled() -> bool:
    return _tracer is not None


def start(name: str, attributes: Mapping[str, Any] | None = None, parent: Span | None = None) -> Span | None:
    """A span that is not made current (it outlives the code that starts it); the caller ends it.
    Its parent is ``parent``, else the current span."""
    if _tracer is None:
        return None
    from opentelemetry import trace

    context = trace.set_span_in_context(parent) if parent is not None else None
    return _tracer.start_span(name, context=context, attributes=attributes)


def finish(span: Span | None, attributes: Mapping[str, Any], error: str | None = None) -> None:
    """End a span started with ``start``, with what became known meanwhile."""
    if span is None:
        return
    from opentelemetry.trace import StatusCode

    span.set_attributes(attributes)
    if error is not None:
        span.set_status(StatusCode.ERROR, error)
    span.end()


def current(span: Span | None) -> Any:
    """``with current(span):`` makes ``span`` the parent of what starts in the block."""
    if span is None:
        return nullcontext()
    from opentelemetry import trace

    return trace.use_span(span, end_on_exit=False)


@contextmanager
def span(
    name: str, attributes: Mapping[str, Any] | None = None, context: Context | None = None, kind: str = "INTERNAL"
) -> Iterator[Span | None]:
    """``with span(name) as s:`` a current span for the block (``s`` is None while tracing is off)."""
    if _tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    with _tracer.start_as_current_span(name, context=context, kind=SpanKind[kind], attributes=attributes) as opened:
        yield opened


def inject(headers: MutableMapping[str, str]) -> None:
    """Add the current trace's ``traceparent`` (and ``tracestate``) to outgoing request headers."""
    if _tracer is not None:
        from opentelemetry import propagate

        propagate.inject(headers)


def extract(headers: Mapping[str, str]) -> Context | None:
    """The trace an incoming request's ``traceparent`` continues, if any."""
    if _tracer is None or "traceparent" not in headers:
        return None
    from opentelemetry import propagate

    return propagate.extract(headers)
