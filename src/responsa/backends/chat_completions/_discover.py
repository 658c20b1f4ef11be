"""Learn which models an OpenAI-compatible server offers, from its ``GET /models``."""

from __future__ import annotations

from collections.abc import Sequence

import aiohttp

from ._backend import UpstreamModel

__all__ = ["discover_models"]


async def discover_models(urls: Sequence[str], api_key: str | None = None) -> list[UpstreamModel]:
    """One :class:`UpstreamModel` per model name; a name offered by several URLs gets them all as workers."""
    workers: dict[str, list[str]] = {}
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10), headers=headers) as client:
        for url in urls:
            base = url.rstrip("/")
            try:
                async with client.get(f"{base}/models", raise_for_status=True) as reply:
                    names = [entry["id"] for entry in (await reply.json(content_type=None))["data"]]
            except (aiohttp.ClientError, TimeoutError, KeyError, TypeError, ValueError) as exc:
                raise RuntimeError(f"could not list the models of upstream {base}: {exc}") from exc
            for name in names:
                workers.setdefault(name, []).append(base)
    return [UpstreamModel(name=name, urls=tuple(urls)) for name, urls in workers.items()]
