"""Reusable prompts (``prompt: {id, version?, variables?}`` on a create), from a directory of files.

OpenAI keeps prompts in its dashboard; here the operator keeps them as TOML files in
``--prompts-dir``, one a prompt, named by its id (``pmpt_travel.toml``), each version a table::

    [versions.1]
    instructions = "You plan trips to {{city}}."
    input = [{ role = "user", content = "Plan three days in {{city}}." }]

    [versions.2]
    instructions = "You plan trips to {{city}}, on a budget."

A create that names a prompt gets the version asked for (the highest number without ``version``):
its ``instructions`` where the request has none, and its ``input`` messages before the request's
own input. ``{{name}}`` in their text is replaced by the variable of that name: a string, or an
``input_text`` part's text; a content part that is exactly ``{{name}}`` is replaced by the
variable's ``input_image`` or ``input_file`` part. A variable the prompt uses and the request does
not give, an unknown id or version, and a prompt without a prompts directory are each a 400 naming
the field. The response echoes ``prompt`` with the version used. Files are read at start.

A request feature (``_features``): ``PromptsFeature`` is named by a request with ``prompt``; its run
revises the request (the prompt filled in, before the request is checked) and echoes it on the response.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from responsa.protocol import CreateResponseRequest, InvalidRequest, ResponseObject

from ._features import FeatureRun

__all__ = ["PromptLibrary", "PromptsFeature"]

_VARIABLE = re.compile(r"\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}")


@dataclass(frozen=True)
class _Version:
    instructions: str | None
    input: list[dict[str, Any]]


class PromptLibrary:
    """The prompts of a directory, by id and version."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._prompts: dict[str, dict[str, _Version]] = {}
        for path in sorted(folder.glob("*.toml")) if folder is not None else ():
            versions = tomllib.loads(path.read_text()).get("versions") or {}
            self._prompts[path.stem] = {
                str(number): _Version(entry.get("instructions"), list(entry.get("input") or []))
                for number, entry in versions.items()
            }

    def listing(self) -> list[dict[str, Any]]:
        """Every prompt with its versions (for the console and ``GET /v1/prompts``)."""
        return [{"id": prompt, "object": "prompt", "versions": sorted(versions, key=_order)}
                for prompt, versions in sorted(self._prompts.items())]  # fmt: skip

    def apply(self, request: CreateResponseRequest) -> CreateResponseRequest:
        """``request`` with the prompt it names filled in (the request as it is without one)."""
        asked = (request.model_extra or {}).get("prompt")
        if asked is None:
            return request
        if self.folder is None:
            raise InvalidRequest(
                "No prompts are configured on this server (--prompts-dir).",
                param="prompt",
                code="unsupported_parameter",
            )
        prompt_id, version, variables = _read(asked)
        versions = self._prompts.get(prompt_id)
        if versions is None:
            raise InvalidRequest(f"Prompt '{prompt_id}' not found.", param="prompt.id", code="not_found")
        chosen = version if version is not None else max(versions, key=_order)
        found = versions.get(chosen)
        if found is None:
            raise InvalidRequest(f"Prompt '{prompt_id}' has no version '{chosen}'.", param="prompt.version")
        return _filled(request, found, variables, {"id": prompt_id, "version": chosen, "variables": variables})


def _order(version: str) -> tuple[int, str]:
    return (int(version), version) if version.isdigit() else (-1, version)


def _read(asked: Any) -> tuple[str, str | None, dict[str, Any]]:
    if not isinstance(asked, dict) or not isinstance(asked.get("id"), str):
        raise InvalidRequest("'prompt' must be an object with a string 'id'.", param="prompt")
    version, variables = asked.get("version"), asked.get("variables") or {}
    if version is not None and not isinstance(version, str):
        raise InvalidRequest("'prompt.version' must be a string.", param="prompt.version")
    if not isinstance(variables, dict):
        raise InvalidRequest("'prompt.variables' must be an object.", param="prompt.variables")
    return asked["id"], version, variables


class PromptsFeature:
    """``prompt``: named by a request that names a reusable prompt."""

    name = "prompt"
    items: frozenset[type] = frozenset()
    fields: frozenset[str] = frozenset({"prompt"})

    def __init__(self, library: PromptLibrary) -> None:
        self.library = library

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> FeatureRun | None:
        return _PromptRun(self.library) if (request.model_extra or {}).get("prompt") is not None else None


class _PromptRun(FeatureRun):
    def __init__(self, library: PromptLibrary) -> None:
        self._library = library
        self._echo: Any = None

    def revise(self, request: CreateResponseRequest) -> CreateResponseRequest:
        filled = self._library.apply(request)
        self._echo = (filled.model_extra or {}).get("prompt")  # as resolved: id, the version used, variables
        return filled

    def begin(self, response: ResponseObject) -> None:
        response.prompt = self._echo


def _filled(
    request: CreateResponseRequest, version: _Version, variables: dict[str, Any], echo: dict[str, Any]
) -> CreateResponseRequest:
    changes: dict[str, Any] = {"prompt": echo}
    if request.instructions is None and version.instructions is not None:
        changes["instructions"] = _text(version.instructions, variables)
    changes["input"] = request.input_after([_message(message, variables) for message in version.input])
    try:
        return request.revised(changes)
    except ValidationError as exc:
        raise InvalidRequest(f"The prompt's input is not valid: {exc.errors()[0]['msg']}.", param="prompt") from None


def _text(text: str, variables: dict[str, Any]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        given = variables.get(name)
        if isinstance(given, dict) and given.get("type") == "input_text":
            given = given.get("text")
        if not isinstance(given, str):
            raise InvalidRequest(
                f"The prompt uses the text variable '{name}', which the request does not give.",
                param=f"prompt.variables.{name}",
            )
        return given

    return _VARIABLE.sub(value, text)


def _message(message: dict[str, Any], variables: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str):
        part = _part_variable(content, variables)
        return {**message, "content": [part] if part is not None else _text(content, variables)}
    return {**message, "content": [_part(part, variables) for part in content or []]}


def _part(part: dict[str, Any], variables: dict[str, Any]) -> dict[str, Any]:
    text = part.get("text")
    if not isinstance(text, str):
        return part
    whole = _part_variable(text, variables)
    return whole if whole is not None else {**part, "text": _text(text, variables)}


def _part_variable(text: str, variables: dict[str, Any]) -> dict[str, Any] | None:
    """The ``input_image`` or ``input_file`` variable that ``text`` is exactly a placeholder of."""
    whole = _VARIABLE.fullmatch(text.strip())
    given = variables.get(whole.group(1)) if whole else None
    return given if isinstance(given, dict) and given.get("type") in ("input_image", "input_file") else None
