"""Most chunks of a stream are the same bytes around a different piece of text: read just the text.

An upstream writes each token as a chunk such as ``{"id":"c1","object":"chat.completion.chunk",...,
"choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}``: the id,
the model and the rest repeat, byte for byte. Parsing all of it (0.5 µs) and looking through it for
what it holds cost more than the rest of a token's way to the client. Once one text-only chunk has
shown the bytes before and after its text, a chunk with the same bytes around a single JSON string
is that text: by JSON's grammar, putting one string token in place of another changes nothing else.
Anything else (another shape, a usage or finish chunk, a server that varies its chunks) is parsed
whole, as before.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["TextChunks"]

_PROBE = '\u2028probe "\\'
"""A text whose encoding has escapes, put where the text was: the shape is kept only if the chunk then
reads as the same chunk with this text (so the place found was the text's, and nothing else's)."""


TEXT_FIELDS = ("content", "reasoning_content", "reasoning")
"""The delta's fields a chunk may carry alone as its text: the answer, or (vLLM, SGLang, others) reasoning."""


class TextChunks:
    """The shape of one stream's text-only chunks (the ``data:`` payload, as it came), once learnt.

    A reasoning model streams reasoning, then its answer: each is learnt in turn (``field`` says which
    the shape reads)."""

    __slots__ = ("_given_up", "_head", "_tail", "field")

    def __init__(self) -> None:
        self._head: bytes | None = None
        self._tail = b""
        self._given_up = False
        self.field = ""
        """The delta's field the learnt shape carries (one of :data:`TEXT_FIELDS`)."""

    def text(self, data: bytes) -> str | None:
        """The text of ``data`` if it is a text-only chunk of the learnt shape; else None (parse it whole)."""
        head = self._head
        if head is None or not data.startswith(head) or not data.endswith(self._tail):
            return None
        try:
            text = orjson.loads(data[len(head) : len(data) - len(self._tail)])
        except orjson.JSONDecodeError:
            return None
        return text if type(text) is str else None

    def learn(self, data: bytes, chunk: dict[str, Any]) -> None:
        """Learn the shape from ``chunk`` (``data`` parsed) if it is a text-only chunk the shape did not
        read. One of the learnt field that the shape missed means the upstream varies its chunks (some
        pad each one): learning stops for the stream, which is parsed whole from then on."""
        found = None if self._given_up else _text_only(chunk)
        if found is None:
            return
        field, text = found
        if self._head is not None and field == self.field:  # the shape missed a chunk it should read
            self._head, self._given_up = None, True
            return
        self._head = None
        literal = orjson.dumps(text)
        at = data.find(literal)
        if at < 0 or data.find(literal, at + 1) >= 0:  # written another way, or not only once
            return
        head, tail = data[:at], data[at + len(literal) :]
        try:
            probed = orjson.loads(head + orjson.dumps(_PROBE) + tail)
        except orjson.JSONDecodeError:
            return
        if probed == _with_text(chunk, field, _PROBE):
            self._head, self._tail, self.field = head, tail, field


def _text_only(chunk: dict[str, Any]) -> tuple[str, str] | None:
    """The field and text of a chunk that holds one choice's text and nothing else that means anything
    (its delta's other fields null, as SGLang writes ``role``, ``tool_calls`` and the rest in each)."""
    choices = chunk.get("choices")
    if chunk.get("usage") or type(choices) is not list or len(choices) != 1 or type(choices[0]) is not dict:
        return None
    choice = choices[0]
    delta = choice.get("delta")
    if type(delta) is not dict or choice.get("index", 0) != 0 or choice.get("logprobs") or choice.get("finish_reason"):
        return None
    given = [(field, value) for field, value in delta.items() if value is not None]
    if len(given) != 1:
        return None
    field, text = given[0]
    return (field, text) if field in TEXT_FIELDS and type(text) is str and text else None


def _with_text(chunk: dict[str, Any], field: str, text: str) -> dict[str, Any]:
    choice = chunk["choices"][0]
    return {**chunk, "choices": [{**choice, "delta": {**choice["delta"], field: text}}]}
