"""``POST /v1/embeddings``: vectors from a model that makes them (the embedded model in embedding mode,
an upstream's ``/v1/embeddings``), in OpenAI's list shape, as floats or base64 of little-endian float32."""

from __future__ import annotations

import base64
from typing import Any

from responsa.backends import BackendRegistry, Embeds, ModelRequest
from responsa.protocol import CreateEmbeddingRequest, InputText, InvalidRequest, Message

from ._vector_index import pack

__all__ = ["MAX_EMBEDDING_INPUTS", "EmbeddingService"]

MAX_EMBEDDING_INPUTS = 2048
"""OpenAI's limit on the texts of one request."""


class EmbeddingService:
    def __init__(self, backends: BackendRegistry) -> None:
        self._backends = backends

    async def create(self, request: CreateEmbeddingRequest) -> dict[str, Any]:
        texts = [request.input] if isinstance(request.input, str) else list(request.input)
        if not texts or len(texts) > MAX_EMBEDDING_INPUTS or any(not text for text in texts):
            raise InvalidRequest(f"'input' must be a non-empty string or a list of 1 to {MAX_EMBEDDING_INPUTS} "
                                 "non-empty strings.", param="input", code="invalid_value")  # fmt: skip
        if request.dimensions is not None:
            raise InvalidRequest("'dimensions' is not supported: vectors have the model's own size.",
                                 param="dimensions", code="unsupported_parameter")  # fmt: skip
        backend = self._backends.resolve(request.model)
        if not isinstance(backend, Embeds):
            raise InvalidRequest(f"The model '{request.model}' does not make embeddings.", param="model",
                                 code="model_not_found")  # fmt: skip
        vectors = await backend.embed(request.model, texts)
        tokens = 0
        for text in texts:  # the model's own count of each text (its tokenizer, where it has one)
            asked = ModelRequest(request.model, None, [Message(role="user", content=[InputText(text=text)])])
            tokens += await backend.count_tokens(asked)
        data = [{"object": "embedding", "index": index, "embedding": _encoded(vector, request.encoding_format)}
                for index, vector in enumerate(vectors)]  # fmt: skip
        return {"object": "list", "data": data, "model": request.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}  # fmt: skip


def _encoded(vector: list[float], encoding: str) -> list[float] | str:
    return base64.b64encode(pack(vector)).decode() if encoding == "base64" else vector
