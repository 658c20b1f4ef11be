"""``apply_patch``: create, update (a V4A diff) or delete a file on the client's machine."""

from __future__ import annotations

from typing import Any

from responsa.protocol import ApplyPatchCall, ApplyPatchCallOutput

from ._fixed import FixedKind

__all__ = ["APPLY_PATCH"]


def _fill(item: ApplyPatchCall, values: dict[str, Any]) -> None:
    item.operation = {key: values[key] for key in ("type", "path", "diff") if isinstance(values.get(key), str)}


APPLY_PATCH = FixedKind(
    name="apply_patch",
    id_prefix="apc",
    description="Create, update or delete a file on the user's machine. For update_file, 'diff' is a V4A diff.",
    parameters={
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["create_file", "update_file", "delete_file"]},
            "path": {"type": "string"},
            "diff": {"type": "string"},
        },
        "required": ["type", "path"],
    },
    new_item=lambda item_id, call_id: ApplyPatchCall(id=item_id, call_id=call_id, operation={}, status="in_progress"),
    fill=_fill,
    call_type=ApplyPatchCall,
    call_arguments=lambda item: item.operation,
    output_type=ApplyPatchCallOutput,
    output_text=lambda output: (output.call_id, f"{output.status}: {output.output or ''}".strip()),
)
