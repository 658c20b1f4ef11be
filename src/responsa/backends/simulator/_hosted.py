"""Built-in tools, simulated: when the model would use one, and a plausible, complete call item."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

from responsa.backends._base import HostedCall, ModelRequest
from responsa.protocol import WEB_SEARCH_TYPES

from ._text import keywords, numbers, stem

__all__ = ["HOSTED_TYPES", "describe", "hosted_call"]

_SEARCHING = frozenset({"search", "latest", "news", "today", "current", "web", "online", "look"})
_TRIGGERS = {
    **dict.fromkeys(WEB_SEARCH_TYPES, _SEARCHING),
    "file_search": {"file", "document", "doc", "note", "manual", "report", "pdf"},
    "code_interpreter": {"calculate", "compute", "python", "code", "plot", "sum", "average", "run"},
    "image_generation": {"image", "draw", "picture", "illustration", "illustrate", "paint", "sketch"},
}
HOSTED_TYPES = frozenset(_TRIGGERS)


def hosted_call(request: ModelRequest, prompt: str) -> HostedCall | None:
    """The built-in tool call the prompt asks for (or ``tool_choice`` forces), or None."""
    offered = [kind for kind in request.hosted_tools if kind in HOSTED_TYPES]
    if not offered or request.tool_mode == "none":
        return None
    asked = {stem(word) for word in keywords(prompt)}
    chosen = next((kind for kind in offered if asked & _TRIGGERS[kind]), None)
    if chosen is None and request.tool_mode == "required" and not request.tools:
        chosen = offered[0]
    return None if chosen is None else _call(chosen, prompt)


def _call(kind: str, prompt: str) -> HostedCall:
    query = " ".join(keywords(prompt)[:6]) or prompt[:80]
    if kind.startswith("web_search"):
        source = {"type": "url", "url": f"https://example.com/search?q={'+'.join(query.split())}"}
        action = {"type": "search", "query": query, "sources": [source]}
        return HostedCall("web_search_call", {"status": "completed", "action": action})
    if kind == "file_search":
        return HostedCall("file_search_call", {"status": "completed", "queries": [query], "results": None})
    if kind == "code_interpreter":
        values = numbers(prompt) or [1.0, 2.0, 3.0]
        shown = ", ".join(f"{v:g}" for v in values)
        code = f"values = [{shown}]\nprint(sum(values))"
        fields: dict[str, Any] = {"status": "completed", "code": code, "container_id": "cntr_simulated",
                                  "outputs": [{"type": "logs", "logs": f"{sum(values):g}"}]}  # fmt: skip
        return HostedCall("code_interpreter_call", fields)
    return HostedCall("image_generation_call", {"status": "completed", "result": _tiny_png(), "revised_prompt": prompt})


def describe(call: HostedCall) -> str:
    """A sentence the answer starts with, saying what the tool gave."""
    fields = call.fields
    if call.item_type == "web_search_call":
        return f'I searched the web for "{fields["action"]["query"]}". '
    if call.item_type == "file_search_call":
        return f'I searched your files for "{fields["queries"][0]}". '
    if call.item_type == "code_interpreter_call":
        return f"I ran the numbers in Python: the result is {fields['outputs'][0]['logs']}. "
    return "Here is the image I generated. "


def _tiny_png() -> str:
    """A valid 1x1 PNG, base64 (what image generation returns, in miniature)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x80\xa0\xc0")
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()
