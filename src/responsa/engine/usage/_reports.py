"""The Admin API's usage and costs answers (``/v1/organization/usage/{kind}``, ``/costs``), in OpenAI's
shapes, from the ledger's buckets: pages of time buckets from ``start_time``, each with its results
grouped as asked; costs from the prices the operator set (none: cost 0, and each result says so)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from responsa.config import Price
from responsa.protocol import InvalidRequest
from responsa.store import USAGE_DIMENSIONS, UsageFilter, UsageRepository, UsageRow

from ._ledger import LATENCY_BOUNDS_MS, WIDTHS, UsageLedger
from ._storage import SAMPLES_KIND, STORAGE_KIND, StorageSampler, mean_bytes

__all__ = ["REPORTS", "UsageQuery", "UsageReports"]


@dataclass(frozen=True)
class Report:
    """One usage endpoint: the ledger kinds it reads, the dimensions it may group by, and its result."""

    kinds: tuple[str, ...]
    group_by: frozenset[str]
    result: Callable[[UsageRow], dict[str, Any]]
    batch: bool = False
    """Whether it answers by batch or not (``batch`` filter and group)."""
    sampled: bool = False
    """Whether its kind is a level looked at now and then (storage), reported as its mean over each
    bucket (see ``_storage``) and not priced; otherwise a count of uses, summed and priced."""


def _completions(row: UsageRow) -> dict[str, Any]:
    return {
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "input_cached_tokens": row.cached_tokens,
        "input_uncached_tokens": row.input_tokens - row.cached_tokens,
        "input_audio_tokens": 0,
        "output_audio_tokens": 0,
        "num_model_requests": row.requests,
        # responsa's own: what the console draws (OpenAI's result has no place for them)
        "errors": row.errors,
        "latency_p50_ms": _percentile(row.latency, 0.5),
        "latency_p99_ms": _percentile(row.latency, 0.99),
    }


def _percentile(histogram: Sequence[int], share: float) -> int | None:
    """The latency under which ``share`` of the requests ended, as its histogram bucket's upper bound
    (the last bucket's lower bound: slower than that); None without timed requests."""
    total = sum(histogram)
    if not total:
        return None
    seen = 0
    for index, count in enumerate(histogram):
        seen += count
        if seen >= share * total:
            return LATENCY_BOUNDS_MS[min(index, len(LATENCY_BOUNDS_MS) - 1)]
    return LATENCY_BOUNDS_MS[-1]


def _tokens_in(row: UsageRow) -> dict[str, Any]:
    return {"input_tokens": row.input_tokens, "num_model_requests": row.requests}


_KEYED = frozenset({"project_id", "user_id", "api_key_id", "model"})
REPORTS: Mapping[str, tuple[str, Report]] = {
    "completions": (
        "completions",
        Report(("completions",), _KEYED | {"batch", "service_tier", "api_source"}, _completions, batch=True),
    ),
    "embeddings": ("embeddings", Report(("embeddings",), _KEYED, _tokens_in)),
    "moderations": ("moderations", Report(("moderations",), _KEYED, _tokens_in)),
    "images": (
        "images",
        Report(
            ("images",),
            _KEYED | {"size", "source"},
            lambda row: {"images": row.units, "num_model_requests": row.requests},
        ),
    ),
    "web_search_calls": (
        "web_searches",
        Report(
            ("web_search_calls",),
            _KEYED | {"api_source", "context_level"},
            lambda row: {"num_requests": row.units, "num_model_requests": row.requests},
        ),
    ),
    "file_search_calls": (
        "file_searches",
        Report(
            ("file_search_calls",), _KEYED - {"model"} | {"vector_store_id"}, lambda row: {"num_requests": row.units}
        ),
    ),
    "code_interpreter_sessions": (
        "code_interpreter_sessions",
        Report(("code_interpreter_sessions",), frozenset({"project_id"}), lambda row: {"num_sessions": row.units}),
    ),
    "vector_stores": (
        "vector_stores",
        Report((STORAGE_KIND,), frozenset({"project_id"}), lambda row: {"usage_bytes": row.units}, sampled=True),
    ),
    "audio_speeches": ("audio_speeches", Report(("audio_speeches",), _KEYED, lambda row: {})),
    "audio_transcriptions": ("audio_transcriptions", Report(("audio_transcriptions",), _KEYED, lambda row: {})),
}
"""By route name: the result's ``object`` name and the report. Audio is not served here: its reports
are truthfully empty."""

_LIMITS = {"1m": (60, 1440), "1h": (24, 168), "1d": (7, 31)}
"""Buckets a page holds by default, and at most, by width (OpenAI's)."""
_ALL_KINDS = tuple(kind for _, report in REPORTS.values() if not report.sampled for kind in report.kinds)
"""Every kind the ledger counts uses of, as costs read them."""
_ALWAYS_NULL = {
    "user_id": None,
    "service_tier": None,
    "api_source": "unlabeled",
    "size": None,
    "source": None,
    "context_level": None,
    "vector_store_id": None,
}


@dataclass(frozen=True)
class UsageQuery:
    """A usage request's parameters, as read from its query string."""

    start_time: int
    end_time: int
    bucket_width: str = "1d"
    limit: int | None = None
    page: str | None = None
    group_by: tuple[str, ...] = ()
    project_ids: tuple[str, ...] = ()
    api_key_ids: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    batch: bool | None = None
    line_items: tuple[str, ...] = ()


class UsageReports:
    """Usage and costs, read from the ledger's buckets."""

    def __init__(
        self, store: UsageRepository, prices: Sequence[Price], ledger: UsageLedger, sampler: StorageSampler
    ) -> None:
        self._store = store
        self._ledger = ledger
        self._sampler = sampler
        """This process's: written before each read, so what it counted shows at once (other processes'
        within their next flush, about a second)."""
        self._prices = {(price.model, price.line_item): price.usd for price in prices}

    def _window(self, query: UsageQuery) -> tuple[int, int, int, bool]:
        """The buckets of this page: width (seconds), first start, end, and whether more follow."""
        if query.bucket_width not in WIDTHS:
            raise InvalidRequest(
                f"Invalid 'bucket_width': {query.bucket_width!r}. Expected 1m, 1h or 1d.",
                param="bucket_width",
                code="invalid_value",
            )
        seconds = WIDTHS[query.bucket_width]
        default, most = _LIMITS[query.bucket_width]
        limit = default if query.limit is None else query.limit
        if not 1 <= limit <= most:
            raise InvalidRequest(
                f"Invalid 'limit': {limit}. With bucket_width {query.bucket_width} it is 1 to {most}.",
                param="limit",
                code="invalid_value",
            )
        first = query.start_time - query.start_time % seconds
        if query.page is not None:
            if not query.page.isdigit() or int(query.page) < first:
                raise InvalidRequest(f"Invalid 'page': {query.page!r}.", param="page", code="invalid_value")
            first = int(query.page)
        end = min(query.end_time, first + limit * seconds)
        return seconds, first, end, end < query.end_time

    async def usage(self, name: str, query: UsageQuery) -> dict[str, Any]:
        """``GET /v1/organization/usage/{name}``."""
        found = REPORTS.get(name)
        if found is None:
            raise InvalidRequest(f"Unknown usage report '{name}'.", param="name", code="invalid_value")
        object_name, report = found
        _check_group_by(query.group_by, report.group_by)
        if query.batch is not None and not report.batch:
            raise InvalidRequest("'batch' filters completions only.", param="batch", code="invalid_value")
        seconds, first, end, more = self._window(query)
        if report.sampled:
            await self._sampler.sample()
        await self._ledger.flush()
        rows = await self._rows(query, report.kinds, first, end)
        if report.sampled:
            rows = await self._means(rows, query.bucket_width, first, end)

        def result(row: UsageRow) -> dict[str, Any]:
            shown = {name: _dimension(row, name) for name in report.group_by if name in query.group_by}
            return {"object": f"organization.usage.{object_name}.result", **report.result(row), **shown}

        return _page(rows, seconds, first, end, more, lambda found: [result(row) for row in found])

    async def costs(self, query: UsageQuery) -> dict[str, Any]:
        """``GET /v1/organization/costs``: each bucket's amount in USD, by line item where asked."""
        if query.bucket_width != "1d":
            raise InvalidRequest("Costs are by day: bucket_width is 1d.", param="bucket_width", code="invalid_value")
        _check_group_by(query.group_by, frozenset({"project_id", "user_id", "line_item", "api_key_id", "api_source"}))
        seconds, first, end, more = self._window(query)
        await self._ledger.flush()
        rows = await self._rows(query, _ALL_KINDS, first, end, by_kind=True)

        def results(found: list[UsageRow]) -> list[dict[str, Any]]:
            totals: dict[tuple[Any, ...], list[Any]] = {}
            by_line = "line_item" in query.group_by
            for row in found:
                for line_item, quantity, unit, usd in self._lines(row):
                    if query.line_items and line_item not in query.line_items:
                        continue
                    key = tuple(_dimension(row, name) if name != "line_item" else line_item for name in query.group_by)
                    kept = totals.setdefault(key, [0.0, 0, unit, False])
                    kept[0] += usd
                    kept[1] += quantity
                    kept[3] = kept[3] or (usd == 0 and quantity > 0)
            return [
                {
                    "object": "organization.costs.result",
                    "amount": {"value": round(usd, 6), "currency": "usd"},
                    **dict(zip(query.group_by, key, strict=True)),
                    **({"quantity": quantity, "quantity_unit": unit} if by_line else {}),
                    **({"unpriced": True} if unpriced else {}),
                }
                for key, (usd, quantity, unit, unpriced) in totals.items()
            ]

        return _page(rows, seconds, first, end, more, results)

    async def spent(self, since: int, projects: Sequence[str]) -> dict[str, float]:
        """USD each of ``projects`` has spent since ``since`` (the start of a day), at the prices set."""
        query = UsageQuery(start_time=since, end_time=int(time.time()) + 1, project_ids=tuple(projects))
        await self._ledger.flush()
        spent: dict[str, float] = {}
        for row in await self._rows(query, _ALL_KINDS, since, query.end_time, by_kind=True):
            spent[row.project_id] = spent.get(row.project_id, 0.0) + sum(usd for *_, usd in self._lines(row))
        return spent

    async def _rows(
        self, query: UsageQuery, kinds: Sequence[str], first: int, end: int, by_kind: bool = False
    ) -> list[UsageRow]:
        """The buckets' rows, grouped as the query asks (what the ledger keeps of it: users, tiers and
        sources group as one, null), or ``by_kind``: by project, key, model and kind, as costs price them."""
        wanted = UsageFilter(
            query.bucket_width, kinds, first, end, query.project_ids, query.api_key_ids, query.models, query.batch
        )
        asked = ["project_id", "api_key_id", "model", "kind"] if by_kind else query.group_by
        return await self._store.usage(wanted, [name for name in asked if name in USAGE_DIMENSIONS])

    async def _means(self, rows: list[UsageRow], width: str, first: int, end: int) -> list[UsageRow]:
        """Sampled rows with their mean over the bucket's looks in place of the sum."""
        looks = await self._store.usage(UsageFilter(width, (SAMPLES_KIND,), first, end), [])
        by_start = {row.start: row.units for row in looks}
        return [replace(row, units=mean_bytes(by_start.get(row.start, 0), row.units)) for row in rows]

    def _price(self, model: str, line_item: str) -> float:
        return self._prices.get((model, line_item), self._prices.get(("*", line_item), 0.0))

    def _lines(self, row: UsageRow) -> list[tuple[str, int, str | None, float]]:
        """A row's line items: name, quantity, its unit (OpenAI's: tokens, images; calls and sessions have
        none there) and USD (prices per million tokens, per image, per thousand tool calls, per session)."""
        kind, model = row.kind, row.model
        if kind == "completions":
            uncached = row.input_tokens - row.cached_tokens
            cached_price = self._price(model, "cached_input") or self._price(model, "input")
            return [
                (f"{model}, input", uncached, "tokens", uncached * self._price(model, "input") / 1e6),
                (f"{model}, cached input", row.cached_tokens, "tokens", row.cached_tokens * cached_price / 1e6),
                (
                    f"{model}, output",
                    row.output_tokens,
                    "tokens",
                    row.output_tokens * self._price(model, "output") / 1e6,
                ),
            ]
        if kind in ("embeddings", "moderations"):
            usd = row.input_tokens * self._price(model, "input") / 1e6
            return [(f"{model}, {kind}", row.input_tokens, "tokens", usd)]
        if kind == "images":
            return [(f"{model}, images", row.units, "images", row.units * self._price(model, "images"))]
        per = 1000 if kind.endswith("_calls") else 1
        return [(kind.replace("_", " "), row.units, None, row.units * self._price("*", kind) / per)]


def _check_group_by(asked: Sequence[str], allowed: frozenset[str]) -> None:
    for name in asked:
        if name not in allowed:
            raise InvalidRequest(
                f"Invalid 'group_by': {name!r}. Expected any of {', '.join(sorted(allowed))}.",
                param="group_by",
                code="invalid_value",
            )


def _dimension(row: UsageRow, name: str) -> Any:
    if name in _ALWAYS_NULL:
        return _ALWAYS_NULL[name]
    value = getattr(row, name)
    return value if value != "" else None


def _page(
    rows: list[UsageRow],
    seconds: int,
    first: int,
    end: int,
    more: bool,
    results: Callable[[list[UsageRow]], list[dict[str, Any]]],
) -> dict[str, Any]:
    by_start: dict[int, list[UsageRow]] = {}
    for row in rows:
        by_start.setdefault(row.start, []).append(row)
    buckets = [
        {
            "object": "bucket",
            "start_time": start,
            "end_time": start + seconds,
            "results": results(by_start.get(start, [])),
        }
        for start in range(first, end, seconds)
    ]
    return {"object": "page", "data": buckets, "has_more": more, "next_page": str(end) if more else None}
