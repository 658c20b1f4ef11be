"""Model backends behind one small interface."""

from ._base import (
    Backend,
    Finish,
    FinishReason,
    HiddenReasoning,
    HostedCall,
    ModelEvent,
    ModelRequest,
    ReasoningDelta,
    ReasoningSummaryDelta,
    Sampling,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
    ToolMode,
    estimate_tokens,
    one_at_a_time,
    read_texts,
)
from ._registry import BackendRegistry

__all__ = [
    "Backend",
    "BackendRegistry",
    "Finish",
    "FinishReason",
    "HiddenReasoning",
    "HostedCall",
    "ModelEvent",
    "ModelRequest",
    "ReasoningDelta",
    "ReasoningSummaryDelta",
    "Sampling",
    "TextDelta",
    "TokenUsage",
    "ToolCallDelta",
    "ToolMode",
    "estimate_tokens",
    "one_at_a_time",
    "read_texts",
]
