"""A model's chat template: renders the conversation (and the tools, when it knows them) as the
model was trained to read it, and says how the model calls tools and whether it thinks first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from responsa.backends._base import ModelRequest
from responsa.protocol import InvalidRequest, ResponsaError

from ._prompt import native_messages, template_messages, template_tools
from ._tool_formats import HERMES, ToolFormat, detect_format

if TYPE_CHECKING:
    from llama_cpp import _internals
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

__all__ = ["ChatTemplate"]

_RESERVED = frozenset({"messages", "tools", "functions", "function_call", "tool_choice", "eos_token", "bos_token",
                       "raise_exception", "add_generation_prompt", "strftime_now"})  # fmt: skip
"""Template variables the renderer sets itself."""


@dataclass(frozen=True)
class ChatTemplate:
    """A model's chat template and what it teaches: how tools are listed and called, and whether the
    model thinks in ``<think>`` blocks first."""

    formatter: Jinja2ChatFormatter
    knows_tools: bool
    """It lists ``tools`` itself; otherwise they are described in the system prompt, Hermes style."""
    tool_format: ToolFormat
    thinks: bool
    marker_tokens: frozenset[int]
    """Special tokens that mark calls (Mistral's ``[TOOL_CALLS]``): kept in the text, where other
    special tokens are dropped."""
    image_marker: str | None = None
    """What stands for an image in the prompt (a model with a projector); None: images are left out."""

    @classmethod
    def of(cls, model: _internals.LlamaModel, override: str | None, image_marker: str | None = None) -> ChatTemplate:
        """The GGUF's own template (or ``override``), compiled once (compiling costs milliseconds)."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        source = override or model.metadata().get("tokenizer.chat_template")
        if not source:
            raise ResponsaError(f"{model.path_model} has no chat template: give one with --chat-template.")
        formatter = Jinja2ChatFormatter(
            source, model.token_get_text(model.token_eos()), model.token_get_text(model.token_bos())
        )
        knows_tools = "tools" in source
        fmt = detect_format(source) if knows_tools else HERMES
        markers = set()
        for marker in (fmt.opener, fmt.closer):
            ids = model.tokenize(marker.encode(), add_bos=False, special=True) if marker else []
            if len(ids) == 1:
                markers.add(ids[0])
        return cls(formatter, knows_tools, fmt, "<think>" in source, frozenset(markers), image_marker)

    def render(self, request: ModelRequest, describe_tools: bool) -> str:
        """The prompt; ``chat_template_kwargs`` become template variables (``enable_thinking``)."""
        extra = dict(request.template_kwargs)
        for name in _RESERVED.intersection(extra):
            raise InvalidRequest(f"'chat_template_kwargs.{name}' is set by the server and cannot be given.",
                                 param="chat_template_kwargs", code="invalid_value")  # fmt: skip
        if self.knows_tools:
            tools = template_tools(request.tools) if request.tools and request.tool_mode != "none" else None
            rendered = self.formatter(messages=native_messages(request, self.image_marker), tools=tools, **extra)  # type: ignore[arg-type]
        else:
            rendered = self.formatter(messages=template_messages(request, describe_tools, self.image_marker), **extra)  # type: ignore[arg-type]
        return rendered.prompt

    def opens_thinking(self, prompt: str) -> bool:
        """The template began the model's turn inside a ``<think>`` block (DeepSeek-R1's do)."""
        return self.thinks and prompt.rstrip().endswith("<think>")
