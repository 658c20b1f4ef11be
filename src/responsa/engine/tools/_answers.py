"""What answers a call the client must run (or an approval it must give): the stub of the input item
the client sends back, for ``response.steer.pending``'s ``required_input``.

The answer's type comes from the kind that owns the call's item type: ``<call>_output`` where the
kind has it, else the kind's one output or response type (``tool_search_output``,
``mcp_approval_response``). The stub carries the fields that identify the call (``call_id``, or the
approval request's id, and the ``name`` and ``execution`` the call has).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from responsa.protocol import Item

from ._registry import ToolRegistry

__all__ = ["answer_stub"]

_IDENTIFYING = ("call_id", "name", "execution")


def answer_stub(kinds: ToolRegistry, item: Item) -> dict[str, Any] | None:
    """The stub of the item that answers ``item``; None when no kind says what answers it."""
    kind = kinds.for_item(item.type)
    answer = _answer_type(item.type, kind.item_types) if kind is not None else None
    if answer is None:
        return None
    stub: dict[str, Any] = {"type": answer}
    for field in _IDENTIFYING:
        value = getattr(item, field, None)
        if value is not None:
            stub[field] = value
    if "call_id" not in stub:
        stub["approval_request_id"] = getattr(item, "id", None)
    return stub


def _answer_type(call_type: str, owned: Mapping[str, str]) -> str | None:
    if f"{call_type}_output" in owned:
        return f"{call_type}_output"
    answers = [kind for kind in owned if kind != call_type and kind.endswith(("_output", "_response"))]
    return answers[0] if len(answers) == 1 else None
