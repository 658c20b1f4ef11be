"""``image_generation``, run by the server for any model: the model is offered ``generate_image(prompt)``;
its call becomes an ``image_generation_call`` the server draws with the images model the tool names
(``model``, default ``gpt-image-1``) on whichever upstream serves it (``POST …/images/generations``),
with OpenAI's events (``in_progress``, ``generating``, ``partial_image`` as asked, ``completed``).
The model reads that the image was made (it does not see it); the client gets it in ``result``.
Without an images model, or on the simulator (which simulates it), the tool is not this kind's.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from responsa.backends import BackendRegistry, Draws, ImageFile, ImageRequest
from responsa.protocol import (
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    ImageGenerationCall,
    ImageGenerationTool,
    ImagePartialEvent,
    InvalidRequest,
    Item,
    ResponsaError,
    StreamEvent,
    Tool,
    ToolRef,
    new_id,
)

from ._hosted import ArgumentCall, hosted_end, hosted_event
from ._kind import Recorded, Replay, Route, ServerContext, ServerRun, ToolPlan, ToolSetup, Where

__all__ = ["ImageGenerationKind", "ImagesApi"]

NAME = "image_generation"
FUNCTION = "generate_image"
DEFAULT_MODEL = "gpt-image-1"
_OPTIONS = ("size", "quality", "background", "output_format", "output_compression", "moderation")
_UNSUPPORTED = ("input_image_mask", "input_fidelity", "svg", "complexity", "frame_count", "frame_duration_ms")
"""Fields for image edits, SVG and animation, which the Images API's generations endpoint does not do."""

_FUNCTION = FunctionTool(
    name=FUNCTION,
    description="Draw an image from a description. Describe the whole picture: subject, style, composition.",
    parameters={
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "What the image shows", "maxLength": 1000}},
        "required": ["prompt"],
    },
)


@dataclass(frozen=True)
class _Painter:
    """The request's image_generation tool, bound to the backend that serves its images model."""

    backend: Draws
    model: str
    tool: ImageGenerationTool

    def request(self, prompt: str) -> ImageRequest:
        options = {name: value for name in _OPTIONS if (value := getattr(self.tool, name)) is not None}
        return ImageRequest(prompt, options, self.tool.partial_images or 0)


async def _run(
    painter: _Painter, item: ImageGenerationCall, prompt: str, context: ServerContext, where: Where
) -> AsyncIterator[list[StreamEvent]]:
    """Draw; partial images as they come, then the image ends the item."""
    yield [hosted_event("image_generation_call", "generating", where)]
    context.timeline.mark("image_generation.started", item_id=item.id, model=painter.model)
    try:
        async for update in painter.backend.generate_image(painter.model, painter.request(prompt)):
            details = {key: value for key, value in update.details.items() if key in ImageGenerationCall.model_fields}
            if update.partial_index is not None:
                yield [ImagePartialEvent(partial_image_b64=update.b64, partial_image_index=update.partial_index,
                                         **details, **where)]  # fmt: skip
                continue
            item.result, item.revised_prompt = update.b64, update.revised_prompt or prompt
            for key, value in details.items():
                setattr(item, key, value)
    except ResponsaError as failure:  # the images model refused or failed: the model is told, the response goes on
        item.status = "failed"
        item.error = {"code": failure.code or "image_generation_failed", "message": failure.message}
    else:
        item.status = "completed" if item.result else "failed"
    context.timeline.mark("image_generation.ended", item_id=item.id, status=item.status)
    yield hosted_end(item, context, where)


def _start(painter: _Painter, item: ImageGenerationCall, prompt: str) -> ServerRun:
    return partial(_run, painter, item, prompt)


def _cut(item: ImageGenerationCall) -> None:
    item.status = "failed"


class ImageGenerationKind:
    """Draws with the backend that serves the tool's images model (``backends``: the server's)."""

    name = NAME
    tool_types = (NAME,)
    item_types: ClassVar[Mapping[str, str]] = {"image_generation_call": "ig"}

    def metered(self, items: Sequence[Item]) -> Mapping[str, int]:
        """What a response's images count in the usage ledger: each one made."""
        return {"images": sum(1 for item in items if getattr(item, "result", None))}

    progress = "generating"
    """The phase of its progress event between ``in_progress`` and ``completed``."""

    def __init__(self, backends: BackendRegistry | None) -> None:
        self._backends = backends

    @property
    def status(self) -> dict[str, Any]:
        """What ``/v1/server`` says of it: drawn by the model a tool names, where it is served."""
        served = self._backends is not None and DEFAULT_MODEL in self._backends.models()
        detail = (f"drawn by the images model a tool names (default {DEFAULT_MODEL}) on the upstream that "
                  "lists it; a model no upstream lists is left out (ignored_tools)")  # fmt: skip
        return {"enabled": served, "default_model": DEFAULT_MODEL, "detail": detail}

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        """Nothing without an images model (see :meth:`prepare`); what the Images API's generations
        cannot do is a 400 now."""
        if not isinstance(tool, ImageGenerationTool):
            return
        if tool.action == "edit":
            raise InvalidRequest("Image edits are not supported: 'action' must be 'generate' or 'auto'.",
                                 param=f"{param}.action", code="unsupported_value")  # fmt: skip
        for field in _UNSUPPORTED:
            if getattr(tool, field, None) is not None:
                message = f"'{field}' is not supported: images are generated here (not edited), as raster images."
                raise InvalidRequest(message, param=f"{param}.{field}", code="unsupported_parameter")

    async def prepare(self, setup: ToolSetup) -> list[Recorded]:
        tool = next((tool for tool in setup.request.tools if isinstance(tool, ImageGenerationTool)), None)
        if tool is None or self._backends is None or setup.simulated:
            return []  # none asked, or left out (ignored_tools), or the simulator's own
        model = tool.model or DEFAULT_MODEL
        backend = self._backends.find(model)
        if isinstance(backend, Draws) and backend.draws(model):
            setup.tools.add(_FUNCTION, Route(NAME, FUNCTION, target=_Painter(backend, model, tool)), "tools")
        return []

    def open_call(self, route: Route, call_id: str) -> ArgumentCall:
        item = ImageGenerationCall(id=new_id("ig"), status="in_progress")
        return ArgumentCall(item, "prompt", partial(_start, route.target, item), partial(_cut, item))

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return ref.type == NAME

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        """A drawing the server made, as the model reads it: the call and what came of it (not the image)."""
        if not isinstance(item, ImageGenerationCall):
            return None
        call_id = item.id or new_id("ig")
        outcome = (f"The image was generated and shown to the user. Revised prompt: {item.revised_prompt}"
                   if item.status == "completed" else "The image could not be generated.")  # fmt: skip
        prompt = json.dumps({"prompt": item.revised_prompt or ""})
        return [
            FunctionCall(id=call_id, call_id=call_id, name=FUNCTION, arguments=prompt, status="completed"),
            FunctionCallOutput(call_id=call_id, output=outcome, status="completed"),
        ]


class ImagesApi:
    """The Images API (the SDK's ``images.generate`` and ``images.edit``), drawn as the tool draws: by
    the backend that serves the images model (an upstream that lists it), on its own Images API.
    Images come back as ``b64_json`` (no URL is hosted here), one drawing per image asked (``n``)."""

    def __init__(self, backends: BackendRegistry) -> None:
        self._backends = backends

    @staticmethod
    def model_of(body: Mapping[str, Any]) -> Any:
        """The images model a request names (the default where it names none)."""
        return body.get("model") or DEFAULT_MODEL

    async def generate(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/images/generations``."""
        return await self._draw(body, (), None)

    async def edit(self, body: dict[str, Any], images: Sequence[ImageFile], mask: ImageFile | None) -> dict[str, Any]:
        """``POST /v1/images/edits``: ``images`` (one at least) repainted as the prompt says."""
        if not images:
            why = "Missing required parameter: 'image'."
            raise InvalidRequest(why, param="image", code="missing_required_parameter")
        return await self._draw(body, tuple(images), mask)

    async def _draw(
        self, body: dict[str, Any], images: tuple[ImageFile, ...], mask: ImageFile | None
    ) -> dict[str, Any]:
        prompt, model, count = body.get("prompt"), self.model_of(body), body.get("n") or 1
        if not isinstance(prompt, str) or not prompt:
            why = "Missing required parameter: 'prompt'."
            raise InvalidRequest(why, param="prompt", code="missing_required_parameter")
        if isinstance(count, str) and count.isdigit():  # a multipart form's fields are text
            count = int(count)
        if not isinstance(count, int) or not 1 <= count <= 10:
            raise InvalidRequest("'n' must be an integer from 1 to 10.", param="n", code="invalid_value")
        if body.get("response_format") not in (None, "b64_json"):
            raise InvalidRequest("Images are returned as 'b64_json' here: no image URL is hosted.",
                                 param="response_format", code="unsupported_value")  # fmt: skip
        if body.get("stream") in (True, "true"):
            raise InvalidRequest("Streamed image generation is not served here.", param="stream",
                                 code="unsupported_value")  # fmt: skip
        backend = self._backends.find(model) if isinstance(model, str) else None
        if not (isinstance(backend, Draws) and isinstance(model, str) and backend.draws(model)):
            why = f"The images model '{model}' is not served here: an upstream that lists it draws images."
            raise InvalidRequest(why, param="model", code="model_not_found")
        options = {key: body[key] for key in _OPTIONS if body.get(key) is not None}
        asked = ImageRequest(prompt, options, images=images, mask=mask)
        data: list[dict[str, Any]] = []
        details: dict[str, Any] = {}
        for _ in range(count):
            async for update in backend.generate_image(model, asked):
                if update.partial_index is None:
                    revised = {"revised_prompt": update.revised_prompt} if update.revised_prompt else {}
                    data.append({"b64_json": update.b64, **revised})
                    details = update.details
        return {"created": int(time.time()), "data": data, **details}
