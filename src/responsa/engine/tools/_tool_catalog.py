"""What a tool search run by the server looks through: the request's deferred tools (``defer_loading``),
ranked by BM25 (the ``bm25s`` library) over each tool's name (split into words), description and
parameters' names and descriptions; the best few with any word of the query in common are loaded.

BM25 and not the store's keyword index: the tools are the request's own, a few to a few thousand,
gone with it; indexing them in memory takes milliseconds (500 tools: see docs/performance.md) and
writes nothing."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import bm25s  # type: ignore[import-untyped]

from responsa.protocol import FunctionTool

from ._kind import SEPARATOR

__all__ = ["LOADED", "loaded_names", "merged", "ranked"]

LOADED = 5
"""Tools one search loads at most: enough for the task the model searched for (its tool and the
neighbours it may need next), few enough that the next model call does not carry the weight the
search was there to save. A search the model finds wanting it can repeat with other words."""

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _words(text: str) -> str:
    """``getWeather``, ``get_weather``, ``crm__find`` as words."""
    return " ".join(_WORDS.findall(text))


def _document(tool: FunctionTool) -> str:
    properties = (tool.parameters or {}).get("properties") or {}
    described = [f"{_words(name)} {(schema or {}).get('description') or ''}" for name, schema in properties.items()
                 if isinstance(schema, dict)]  # fmt: skip
    return " ".join([_words(tool.name), tool.description or "", *described])


def ranked(tools: Mapping[str, FunctionTool], query: str, limit: int = LOADED) -> list[str]:
    """The model-visible names of the ``limit`` tools that best match ``query``, best first (none
    shares a word with it: none)."""
    names = list(tools)
    asked = bm25s.tokenize([_words(query)], stopwords="en", return_ids=False, show_progress=False)
    if not names or not asked or not asked[0]:
        return []
    corpus = bm25s.tokenize([_document(tools[name]) for name in names], stopwords="en", return_ids=False,
                            show_progress=False)  # fmt: skip
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    found, scores = index.retrieve(asked, k=min(limit, len(names)), show_progress=False)
    return [names[int(position)] for position, score in zip(found[0], scores[0], strict=True) if score > 0]


def merged(definitions: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Loaded tools as a ``tool_search_output`` lists them: a namespace's, and an MCP server's, together."""
    tools: list[dict[str, Any]] = []
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for definition in definitions:
        kind, key = definition.get("type"), definition.get("name") or definition.get("server_label") or ""
        group = groups.get((str(kind), key)) if kind in ("namespace", "mcp") else None
        if group is None:
            copied = {**definition}
            tools.append(copied)
            if kind in ("namespace", "mcp"):
                groups[(str(kind), key)] = copied
        elif kind == "namespace":
            group["tools"] = [*group["tools"], *definition["tools"]]
        else:
            group["allowed_tools"] = [*group["allowed_tools"], *definition["allowed_tools"]]
    return tools


def loaded_names(definitions: Iterable[dict[str, Any]]) -> set[str]:
    """The model-visible names of the tools a server-run search loaded (a namespace's as
    ``<namespace>__<name>``; an MCP server's under either name it may have)."""
    names: set[str] = set()
    for definition in definitions:
        kind = definition.get("type")
        if kind == "namespace":
            names |= {
                f"{definition.get('name')}{SEPARATOR}{tool.get('name')}" for tool in definition.get("tools") or []
            }
        elif kind == "mcp":
            label = definition.get("server_label")
            names |= {
                spelled for name in definition.get("allowed_tools") or [] for spelled in (name, f"{label}_{name}")
            }
        elif isinstance(definition.get("name"), str):
            names.add(definition["name"])
    return names
