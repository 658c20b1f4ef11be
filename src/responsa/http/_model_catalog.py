"""``GET /v1/models``: OpenAI's model list for plain clients, and the catalog Codex reads.

Codex's models manager asks ``GET {base}/models?client_version=…`` and reads ``{"models": [...]}``,
one entry per model with what it needs to drive it: the context window (for its own compaction),
the input modalities (it withholds images from a model that does not read them), the reasoning
efforts, ``apply_patch_tool_type: "freeform"`` (its ``apply_patch`` as a custom tool with a grammar,
which every backend here can be offered). Without an entry it warns that the model's metadata is
missing and falls back to generic settings. The catalog comes from what the backends know of each
model (a GGUF's context and projector, an upstream's configured window and vision, the simulator's
profiles); it changes only with the server's configuration, so its ETag is a hash of its JSON and a
matching ``If-None-Match`` gets a 304.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from responsa.backends import ServedModel
from responsa.protocol import NotFound

from ._errors import json_response
from ._services import services

__all__ = ["list_models", "retrieve_model"]

BASE_INSTRUCTIONS = """You are a coding agent working in the user's workspace through the tools you are given.

- Read before you change: list and open the files that matter, and run the project's own commands
  (tests, linters, builds) to learn how it works.
- Make the smallest change that does what the user asked, in the style of the code around it. Edit
  files with the apply_patch tool where it is offered; run commands with the shell tools.
- After a change, run what checks it (the tests, the build) and fix what you broke.
- Do not invent files, commands or results: if something fails or you are unsure, say so.
- When you are done, answer briefly: what you changed, where, and how you checked it."""
"""What Codex sends as ``instructions`` for a model of this catalog (Codex requires an entry to carry
them; its own prompt is for OpenAI's models). Codex's ``base_instructions`` setting replaces them."""

TOOL_OUTPUT_TOKENS = 10_000
"""How much of a tool's output Codex keeps in the conversation (its own default for OpenAI's models);
at most a quarter of a smaller model's window."""


def _codex_entry(model: ServedModel, priority: int, lite: bool) -> dict[str, Any]:
    """One model as Codex's ``ModelInfo`` reads it; ``lite``: Codex talks Responses Lite to it."""
    efforts = [{"effort": effort, "description": f"{effort} reasoning effort"} for effort in model.efforts]
    window = model.context_window
    kept = TOOL_OUTPUT_TOKENS if window is None else min(TOOL_OUTPUT_TOKENS, window // 4)
    return {
        "slug": model.name,
        "display_name": model.name,
        "description": f"{model.name}, served by responsa",
        "default_reasoning_level": model.default_effort if efforts else None,
        "supported_reasoning_levels": efforts,
        "shell_type": "shell_command",
        "visibility": "list",
        "supported_in_api": True,
        "priority": priority,
        "additional_speed_tiers": [],
        "service_tiers": [],
        "default_service_tier": None,
        "availability_nux": None,
        "upgrade": None,
        "base_instructions": BASE_INSTRUCTIONS,
        "model_messages": None,
        "supports_reasoning_summaries": bool(efforts),
        "default_reasoning_summary": "auto" if efforts else "none",
        "support_verbosity": False,
        "default_verbosity": None,
        "apply_patch_tool_type": "freeform",
        "web_search_tool_type": "text",
        "truncation_policy": {"mode": "tokens", "limit": kept},
        "supports_parallel_tool_calls": True,
        "supports_image_detail_original": False,
        "context_window": window,
        "max_context_window": window,
        "auto_compact_token_limit": None,
        "effective_context_window_percent": 95,
        "experimental_supported_tools": [],
        "input_modalities": ["text", "image"] if model.reads_images else ["text"],
        "supports_search_tool": False,
        "prefer_websockets": True,
        "use_responses_lite": lite,
        "supports_reasoning_effort_updates": bool(efforts),  # configuration_update items are served
        "available_in_plans": [],
    }


def _openai_entry(model: ServedModel) -> dict[str, Any]:
    return {"id": model.name, "object": "model", "created": 0, "owned_by": "responsa"}


async def retrieve_model(request: Request) -> Response:
    """``GET /v1/models/{model}`` (the SDK's ``models.retrieve``): one model of the list, or a 404."""
    name = request.path_params["model"]
    for model in services(request).catalog:
        if model.name == name:
            return json_response(_openai_entry(model))
    raise NotFound(f"The model '{name}' does not exist.", param="model", code="model_not_found")


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


async def list_models(request: Request) -> Response:
    """OpenAI's list; Codex's catalog when the request names a ``client_version`` (as Codex does)."""
    models = services(request).catalog
    if "client_version" not in request.query_params:
        return json_response({"object": "list", "data": [_openai_entry(model) for model in models]})
    lite = services(request).limits.codex_responses_lite
    catalog = {"models": [_codex_entry(model, priority, lite) for priority, model in enumerate(models, start=1)]}
    body = json.dumps(catalog, separators=(",", ":")).encode()
    etag = _etag(body)
    headers = {"ETag": etag, "x-models-etag": etag, "Cache-Control": "no-cache"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)
