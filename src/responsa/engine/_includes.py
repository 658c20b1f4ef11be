"""``include`` on a retrieve: a stored response shown with the optional data the caller asks for,
as a create with the same ``include`` shows it."""

from __future__ import annotations

from collections.abc import Collection

from responsa.protocol import InvalidRequest, Message, OutputText, ResponseObject, UnknownItem

__all__ = ["check_includes", "with_includes"]

LOGPROBS = "message.output_text.logprobs"
SEARCH_RESULTS = "file_search_call.results"


def check_includes(values: Collection[str], known: Collection[str]) -> None:
    for value in values:
        if value not in known:
            raise InvalidRequest(f"Invalid value for 'include': {value!r}.", param="include", code="invalid_value")


def with_includes(response: ResponseObject, include: Collection[str]) -> ResponseObject:
    """``response`` without the optional data ``include`` does not ask for. What the create did not
    ask for was never produced (log probabilities) or kept (search results), so it cannot appear."""
    if LOGPROBS in include and SEARCH_RESULTS in include:
        return response
    output = []
    for item in response.output:
        if isinstance(item, Message) and LOGPROBS not in include and not isinstance(item.content, str):
            parts = [part.model_copy(update={"logprobs": []}) if isinstance(part, OutputText) and part.logprobs
                     else part for part in item.content]  # fmt: skip
            item = item.model_copy(update={"content": parts})
        elif isinstance(item, UnknownItem) and item.type == "file_search_call" and SEARCH_RESULTS not in include:
            item = item.model_copy(update={"results": None})
        output.append(item)
    return response.model_copy(update={"output": output})
