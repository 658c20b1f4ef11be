"""Views of a response's optional data. A response is stored with what was produced whether or not
asked (``file_search_call.results``); a create shows what its ``include`` asks for, a retrieve with
``include`` what that asks for, and a retrieve without it what the create showed."""

from __future__ import annotations

from collections.abc import Collection

from responsa.protocol import FileSearchCall, InvalidRequest, Message, OutputText, ResponseObject

__all__ = ["check_includes", "create_view", "search_as_shown", "with_includes"]

LOGPROBS = "message.output_text.logprobs"
SEARCH_RESULTS = "file_search_call.results"


def check_includes(values: Collection[str], known: Collection[str]) -> None:
    for value in values:
        if value not in known:
            raise InvalidRequest(f"Invalid value for 'include': {value!r}.", param="include", code="invalid_value")


def create_view(response: ResponseObject) -> ResponseObject:
    """``response`` as its create showed it: search results only where its ``include`` asked (log
    probabilities are produced only when asked, so they show as stored)."""
    if not any(_has_results(item) for item in response.output) or SEARCH_RESULTS in response.shown_includes:
        return response
    output = [search_as_shown(item, response) if isinstance(item, FileSearchCall) else item for item in response.output]
    return response.model_copy(update={"output": output})


def search_as_shown(item: FileSearchCall, response: ResponseObject) -> FileSearchCall:
    """A search as ``response``'s create shows it: with its results only where its ``include`` asked."""
    if SEARCH_RESULTS in response.shown_includes or item.results is None:
        return item
    return item.model_copy(update={"results": None})


def _has_results(item: object) -> bool:
    return isinstance(item, FileSearchCall) and item.results is not None


def with_includes(response: ResponseObject, include: Collection[str]) -> ResponseObject:
    """``response`` without the optional data ``include`` does not ask for. Log probabilities the
    create did not ask for were never produced, so they cannot appear."""
    if LOGPROBS in include and SEARCH_RESULTS in include:
        return response
    output = []
    for item in response.output:
        if isinstance(item, Message) and LOGPROBS not in include and not isinstance(item.content, str):
            parts = [part.model_copy(update={"logprobs": []}) if isinstance(part, OutputText) and part.logprobs
                     else part for part in item.content]  # fmt: skip
            item = item.model_copy(update={"content": parts})
        elif isinstance(item, FileSearchCall) and SEARCH_RESULTS not in include:
            item = item.model_copy(update={"results": None})
        output.append(item)
    return response.model_copy(update={"output": output})
