"""Views of a response's optional data. A response is stored with what was produced whether or not
asked (``file_search_call.results``, ``web_search_call.action.sources`` and ``.results``,
``code_interpreter_call.outputs``); a create
shows what its ``include`` asks for, a retrieve with ``include`` what that asks for, and a retrieve
without it what the create showed."""

from __future__ import annotations

from collections.abc import Collection
from typing import TypeVar

from responsa.protocol import OPTIONAL_DATA_ITEMS, InvalidRequest, Item, Message, OutputText, ResponseObject

__all__ = ["ENCRYPTED_REASONING", "KNOWN_INCLUDES", "check_includes", "create_view", "shown", "with_includes"]

LOGPROBS = "message.output_text.logprobs"
ENCRYPTED_REASONING = "reasoning.encrypted_content"
KNOWN_INCLUDES = frozenset(
    {
        "computer_call_output.output.image_url",
        "message.input_image.image_url",
        LOGPROBS,
        ENCRYPTED_REASONING,
        *(value for item_class in OPTIONAL_DATA_ITEMS for value in item_class.INCLUDES),
    }
)
"""Every ``include`` value a request may give: OpenAI's, those of items with optional data among them."""

ItemT = TypeVar("ItemT", bound=Item)


def check_includes(values: Collection[str], known: Collection[str]) -> None:
    for value in values:
        if value not in known:
            raise InvalidRequest(f"Invalid value for 'include': {value!r}.", param="include", code="invalid_value")


def shown(item: ItemT, include: Collection[str]) -> ItemT:
    """An item with only the optional data ``include`` asks for (one without any, as it is)."""
    return item.shown(include) if isinstance(item, OPTIONAL_DATA_ITEMS) else item  # type: ignore[return-value]


def create_view(response: ResponseObject) -> ResponseObject:
    """``response`` as its create showed it: search data only where its ``include`` asked (log
    probabilities are produced only when asked, so they show as stored)."""
    if not any(isinstance(item, OPTIONAL_DATA_ITEMS) for item in response.output):
        return response
    output = [shown(item, response.shown_includes) for item in response.output]
    return response.model_copy(update={"output": output})


def with_includes(response: ResponseObject, include: Collection[str]) -> ResponseObject:
    """``response`` without the optional data ``include`` does not ask for. Log probabilities the
    create did not ask for were never produced, so they cannot appear."""
    output = []
    for item in response.output:
        if isinstance(item, Message) and LOGPROBS not in include and not isinstance(item.content, str):
            parts = [part.model_copy(update={"logprobs": []}) if isinstance(part, OutputText) and part.logprobs
                     else part for part in item.content]  # fmt: skip
            item = item.model_copy(update={"content": parts})
        output.append(shown(item, include))
    return response.model_copy(update={"output": output})
