"""What a server-run tool search saves: the input tokens of a request's first model call with 500
function tools offered, against the same 500 marked ``defer_loading`` behind a ``tool_search`` (counted
by ``POST /v1/responses/input_tokens``, on the simulator's tokenizer, the app in process); and how long
one search over the 500 takes (BM25 indexing and ranking, ``_tool_catalog.ranked``). A benchmark: it
prints numbers and asserts nothing.

    python bench/tool_search_tokens.py [--tools 500]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from responsa.config import Settings
from responsa.engine.tools._tool_catalog import ranked
from responsa.protocol import FunctionTool
from responsa.serve import create_app

TOPICS = ["weather", "calendar", "email", "invoice", "customer", "ticket", "order", "shipment", "payroll", "report"]
ACTIONS = ["get", "create", "update", "delete", "list", "search", "archive", "export", "approve", "notify"]


def tools(count: int) -> list[dict[str, Any]]:
    """``count`` distinct functions, each with a description and two parameters, as agents declare them."""
    made = []
    for index in range(count):
        topic, action = TOPICS[index % len(TOPICS)], ACTIONS[(index // len(TOPICS)) % len(ACTIONS)]
        made.append({"type": "function", "name": f"{action}_{topic}_{index}",
                     "description": f"{action.title()} a {topic} record (variant {index}) in the business system.",
                     "parameters": {"type": "object", "properties": {
                         "id": {"type": "string", "description": f"The {topic}'s identifier."},
                         "note": {"type": "string", "description": "Why, for the audit log."}},
                         "required": ["id"]}})  # fmt: skip
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=500)
    args = parser.parse_args()
    offered = tools(args.tools)
    deferred = [{"type": "tool_search"}, *({**tool, "defer_loading": True} for tool in offered)]
    ask = {"model": "sim", "input": "Archive the invoice inv-42."}
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(db_url=f"sqlite:///{Path(scratch) / 'r.db'}", embedded=False)
        with TestClient(create_app(settings), base_url="http://bench") as http:
            counts = {}
            for name, listed in (("all offered", offered), ("deferred behind tool_search", deferred)):
                reply = http.post("/v1/responses/input_tokens", json={**ask, "tools": listed})
                reply.raise_for_status()
                counts[name] = reply.json()["input_tokens"]
                print(f"{args.tools} tools, {name}: {counts[name]} input tokens")
    print(f"the first model call reads {counts['deferred behind tool_search'] / counts['all offered']:.1%} as many")
    waiting = {tool["name"]: FunctionTool.model_validate(tool) for tool in offered}
    times = []
    for _ in range(20):
        began = time.perf_counter()
        found = ranked(waiting, "archive an invoice")
        times.append(time.perf_counter() - began)
    print(f"one search over {args.tools}: median {statistics.median(times) * 1000:.1f} ms; it loads {found}")


if __name__ == "__main__":
    main()
