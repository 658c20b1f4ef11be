"""Images for a multimodal GGUF: its projector (``mmproj``) turns each image into embeddings the
model reads in place of the image's marker in the prompt, through llama.cpp's ``mtmd`` library (the
one llama-cpp-python's multimodal chat handlers drive).

The server never fetches an image: a local model reads images sent as base64 ``data:`` URLs; an
``http(s)`` URL or a ``file_id`` is a 400 that says so.
"""

from __future__ import annotations

import base64
import binascii
import ctypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from responsa.backends._base import ModelRequest
from responsa.protocol import InputImage, InvalidRequest, Message, ResponsaError

from ._prompt import image_urls

if TYPE_CHECKING:
    from llama_cpp import _internals

__all__ = ["MEDIA_MARKER", "MediaPrompt", "Projector", "request_images"]

MEDIA_MARKER = "<__media__>"
"""Where an image goes in the rendered prompt (``mtmd_default_marker()``); mtmd wraps it in the
model's own image tokens."""


def request_images(request: ModelRequest) -> list[bytes]:
    """The conversation's images, in prompt order; a 400 for one the server would have to fetch."""
    for item in request.items:
        if isinstance(item, Message) and not isinstance(item.content, str):
            if any(isinstance(part, InputImage) and not part.image_url for part in item.content):
                raise _not_a_data_url()  # a file_id
    return [_image_bytes(url) for url in image_urls(request)]


def _not_a_data_url() -> InvalidRequest:
    return InvalidRequest(
        "The embedded model reads images sent as base64 data URLs (data:image/png;base64,...): the server "
        "does not fetch image URLs or read file_ids for local models.",
        param="input",
        code="unsupported_value",
    )


def _image_bytes(url: str) -> bytes:
    """The image a chat ``image_url`` carries, which must be a base64 ``data:`` URL."""
    if not url.startswith("data:") or "," not in url:
        raise _not_a_data_url()
    try:
        return base64.b64decode(url.split(",", 1)[1], validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidRequest("The image data is not valid base64.", param="input", code="invalid_image") from exc


@dataclass
class MediaPrompt:
    """A prompt with images, cut into chunks by mtmd: everything up to the last text chunk is evaluated
    by mtmd into a slot's cache; the last chunk's tokens are decoded as a prompt's tokens always are."""

    chunks: Any
    """mtmd_input_chunks (freed by :meth:`free`)."""
    head: int
    """Chunks evaluated by mtmd (all but the last)."""
    head_tokens: int
    tail: list[int]
    _projector: Projector = field(repr=False)

    def evaluate_head(self, context: Any, seq: int, n_batch: int) -> int:
        """Evaluate the head into sequence ``seq`` of ``context`` from position 0; the next position."""
        import llama_cpp
        import llama_cpp.mtmd_cpp as mtmd

        position = 0
        for index in range(self.head):
            chunk = mtmd.mtmd_input_chunks_get(self.chunks, index)
            after = llama_cpp.llama_pos(position)  # a text chunk adds its tokens to it
            status = mtmd.mtmd_helper_eval_chunk_single(
                self._projector.context, context, chunk, position, seq, n_batch, False, ctypes.byref(after)
            )
            if status != 0:
                raise ResponsaError(f"The projector could not evaluate part {index} of the prompt (status {status}).")
            position = after.value
        return position

    def free(self) -> None:
        import llama_cpp.mtmd_cpp as mtmd

        if self.chunks is not None:
            mtmd.mtmd_input_chunks_free(self.chunks)
            self.chunks = None


class Projector:
    """A loaded ``mmproj`` file bound to its model; used only from the inference thread."""

    def __init__(self, path: Path, model: _internals.LlamaModel, n_threads: int, use_gpu: bool) -> None:
        import llama_cpp.mtmd_cpp as mtmd

        params = mtmd.mtmd_context_params_default()
        params.use_gpu = use_gpu
        params.n_threads = n_threads
        params.print_timings = False
        params.warmup = False
        self.context = mtmd.mtmd_init_from_file(str(path).encode(), model.model, params)
        if not self.context:
            raise ResponsaError(f"{path} could not be loaded as a projector for {model.path_model}.")
        if not mtmd.mtmd_support_vision(self.context):
            mtmd.mtmd_free(self.context)
            raise ResponsaError(f"{path} is a projector without vision: it cannot read images.")

    def tokenize(self, prompt: str, images: Sequence[bytes]) -> MediaPrompt:
        """Cut ``prompt`` (one :data:`MEDIA_MARKER` per image, in order) into text and image chunks."""
        import llama_cpp.mtmd_cpp as mtmd

        bitmaps = []
        try:
            for data in images:
                buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
                bitmap = mtmd.mtmd_helper_bitmap_init_from_buf(self.context, buffer, len(data), False)
                if not bitmap:
                    raise InvalidRequest("An input_image could not be decoded as an image.", param="input",
                                         code="invalid_image")  # fmt: skip
                bitmaps.append(bitmap)
            return self._chunks(prompt, bitmaps)
        finally:
            for bitmap in bitmaps:
                mtmd.mtmd_bitmap_free(bitmap)

    def _chunks(self, prompt: str, bitmaps: list[Any]) -> MediaPrompt:
        import llama_cpp.mtmd_cpp as mtmd

        text = prompt.encode("utf-8")
        given = mtmd.mtmd_input_text()
        given.text, given.text_len, given.add_special, given.parse_special = text, len(text), True, True
        chunks = mtmd.mtmd_input_chunks_init()
        array = (mtmd.mtmd_bitmap_p_ctypes * max(len(bitmaps), 1))(*bitmaps)
        status = mtmd.mtmd_tokenize(self.context, chunks, ctypes.byref(given), array, len(bitmaps))
        count = mtmd.mtmd_input_chunks_size(chunks) if status == 0 else 0
        last = mtmd.mtmd_input_chunks_get(chunks, count - 1) if count else None
        if last is None or mtmd.mtmd_input_chunk_get_type(last) != mtmd.MTMD_INPUT_CHUNK_TYPE_TEXT:
            mtmd.mtmd_input_chunks_free(chunks)
            raise InvalidRequest(
                f"The prompt and its {len(bitmaps)} image(s) could not be put together (mtmd status {status}): "
                f"is '{MEDIA_MARKER}' in the text?",
                param="input",
            )
        size = ctypes.c_size_t()
        pointer = mtmd.mtmd_input_chunk_get_tokens_text(last, ctypes.byref(size))
        tail = [pointer[i] for i in range(size.value)]
        head_tokens = sum(mtmd.mtmd_input_chunk_get_n_tokens(mtmd.mtmd_input_chunks_get(chunks, i))
                          for i in range(count - 1))  # fmt: skip
        return MediaPrompt(chunks, count - 1, head_tokens, tail, self)

    def free(self) -> None:
        import llama_cpp.mtmd_cpp as mtmd

        if self.context:
            mtmd.mtmd_free(self.context)
            self.context = None
