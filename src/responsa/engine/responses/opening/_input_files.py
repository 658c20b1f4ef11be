"""``input_file`` parts, read for every model: no backend here takes a file as it is (the embedded model
and the simulator read text; vLLM, SGLang and llama.cpp's server take no ``file`` part), so the model
reads each file's text instead, extracted by the file search's document reader (text, Markdown,
HTML, JSON, PDF). The stored items keep the parts as sent; only what the model reads changes.

A file given inline (``file_data``, base64 or a ``data:`` URL) or by id (``file_id``, the tenant's
upload) is read; ``file_url`` is not fetched here, and a file with no text to read is a 400 naming the
part (``input[i].content[j]``). Files of earlier turns are read again on each turn (the text is not
stored), so a later turn's model reads what the first one did.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence

import anyio.to_thread

from responsa.protocol import InputFile, InputText, InvalidRequest, Item, Message, NotFound

from ...files import FileService, UnsupportedFile, extract_text
from .._context import with_files

__all__ = ["read_input_files"]


async def read_input_files(files: FileService, context: Sequence[Item], first_input: int) -> list[Item]:
    """``context`` as the model reads it: each message's ``input_file`` parts replaced by their text.
    ``files``: the tenant's. ``first_input``: where the request's own input starts in ``context``
    (a 400 names its index)."""
    read: list[Item] = []
    for index, item in enumerate(context):
        if not with_files(item):
            read.append(item)
            continue
        assert isinstance(item, Message) and not isinstance(item.content, str)
        param = f"input[{index - first_input}].content" if index >= first_input else "input"
        parts = [await _as_text(files, part, f"{param}[{number}]") if type(part) is InputFile else part
                 for number, part in enumerate(item.content)]  # fmt: skip
        read.append(item.model_copy(update={"content": parts}))
    return read


async def _as_text(files: FileService, part: InputFile, param: str) -> InputText:
    name, data = await _file(files, part, param)
    try:
        text = await anyio.to_thread.run_sync(extract_text, name, data)
    except UnsupportedFile as exc:
        raise InvalidRequest(f"The file '{name}' has no text to read here: {exc}", param=param,
                             code="unsupported_file") from None  # fmt: skip
    return InputText(text=f"[file: {name}]\n{text}")


async def _file(files: FileService, part: InputFile, param: str) -> tuple[str, bytes]:
    """The file's name and bytes, from the part or the tenant's files."""
    if part.file_data is not None:
        encoded = part.file_data.partition(",")[2] if part.file_data.startswith("data:") else part.file_data
        try:
            return part.filename or "file", base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            why = "'file_data' is not base64."
            raise InvalidRequest(why, param=f"{param}.file_data", code="invalid_value") from None
    if part.file_id is not None:
        try:
            found, parts = await files.content(part.file_id)
        except NotFound:
            why = f"No file with id '{part.file_id}'."
            raise InvalidRequest(why, param=f"{param}.file_id", code="invalid_value") from None
        return part.filename or found.filename, b"".join([chunk async for chunk in parts])
    if part.file_url is not None:
        raise InvalidRequest("'file_url' is not fetched here: send the file as 'file_data' or upload it ('file_id').",
                             param=f"{param}.file_url", code="unsupported_value")  # fmt: skip
    why = "An 'input_file' needs 'file_data' or 'file_id'."
    raise InvalidRequest(why, param=param, code="missing_required_parameter")
