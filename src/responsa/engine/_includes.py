"""Views of a response's optional data. A response is stored with what was produced whether or not
asked (``file_search_call.results``, ``web_search_call.action.sources`` and ``.results``,
``code_interpreter_call.outputs``); a create
shows what its ``include`` asks for, a retrieve with ``include`` what that asks for, and a retrieve
without it what the create showed."""

from __future__ import annotations

from collections.abc import Collection
from typing import TypeVar

from responsa.protocol import (
    CodeInterpreterCall,
    FileSearchCall,
    InvalidRequest,
    Item,
    Message,
    OutputText,
    ResponseObject,
    WebSearchCall,
)

__all__ = ["ENCRYPTED_REASONING", "check_includes", "create_view", "shown", "with_includes"]

LOGPROBS = "message.output_text.logprobs"
SEARCH_RESULTS = "file_search_call.results"
WEB_SOURCES = "web_search_call.action.sources"
WEB_RESULTS = "web_search_call.results"
CODE_OUTPUTS = "code_interpreter_call.outputs"
ENCRYPTED_REASONING = "reasoning.encrypted_content"

ItemT = TypeVar("ItemT", bound=Item)
_WITH_OPTIONAL_DATA = (FileSearchCall, WebSearchCall, CodeInterpreterCall)


def check_includes(values: Collection[str], known: Collection[str]) -> None:
    for value in values:
        if value not in known:
            raise InvalidRequest(f"Invalid value for 'include': {value!r}.", param="include", code="invalid_value")


def shown(item: ItemT, include: Collection[str]) -> ItemT:
    """A search call with only the optional data ``include`` asks for (any other item as it is)."""
    if isinstance(item, FileSearchCall):
        hide_results = item.results is not None and SEARCH_RESULTS not in include
        return item.model_copy(update={"results": None}) if hide_results else item
    if isinstance(item, WebSearchCall):
        update: dict[str, object] = {}
        if item.results is not None and WEB_RESULTS not in include:
            update["results"] = None
        if item.action.sources is not None and WEB_SOURCES not in include:
            update["action"] = item.action.model_copy(update={"sources": None})
        return item.model_copy(update=update) if update else item
    if isinstance(item, CodeInterpreterCall) and item.outputs is not None and CODE_OUTPUTS not in include:
        return item.model_copy(update={"outputs": None})
    return item


def create_view(response: ResponseObject) -> ResponseObject:
    """``response`` as its create showed it: search data only where its ``include`` asked (log
    probabilities are produced only when asked, so they show as stored)."""
    if not any(isinstance(item, _WITH_OPTIONAL_DATA) for item in response.output):
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
