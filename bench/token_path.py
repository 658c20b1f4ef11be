"""The server's own cost per streamed token, in microseconds, without a network or a model: an upstream
chunk's line read and decoded as the Chat Completions backend reads it (vLLM's shape: id, model and
the choice's nulls around the text, read by its learnt shape), the output builder's events for it
(OutputBuilder.feed) and the SSE frame (encode_event); for a text token and a reasoning token
(``reasoning_content``). Medians of --repeat runs of --tokens tokens; compare commits (from af06d66
on, which has the reader's ``_read``) with PYTHONPATH:

    PYTHONPATH=src python bench/token_path.py
    PYTHONPATH=/tmp/before/src python bench/token_path.py
"""

from __future__ import annotations

import argparse
import statistics
import time

import orjson

from responsa.backends import ReasoningDelta, TextDelta
from responsa.backends.chat_completions._backend import _read
from responsa.backends.chat_completions._decode import ChunkDecoder
from responsa.backends.chat_completions._text_chunks import TextChunks
from responsa.engine.responses.opening._new_response import new_response
from responsa.engine.responses.run._accumulate import OutputBuilder
from responsa.http._sse import encode_event
from responsa.protocol import CreateResponseRequest


def _per_token(work: object, tokens: int) -> float:
    started = time.perf_counter()
    for _ in range(tokens):
        work()  # type: ignore[operator]
    return (time.perf_counter() - started) / tokens * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    request = CreateResponseRequest.model_validate({"model": "m", "input": "hi", "stream": True})
    kinds = (("text", "content", TextDelta), ("reasoning", "reasoning_content", ReasoningDelta))
    for label, field, delta in kinds:
        builder = OutputBuilder(new_response(request, stored=True))
        builder.emitter.read = True  # a stream: its events are read
        builder.feed(delta(" start"))
        decoder, shape = ChunkDecoder(), TextChunks()
        head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "served"}
        choice = {"index": 0, "delta": {field: " word"}, "logprobs": None, "finish_reason": None}
        line = b"data: " + orjson.dumps({**head, "choices": [choice]})
        _read([line], decoder, shape)  # the first chunk: its shape is learnt
        event = builder.feed(delta(" word"))[0]
        rows = {
            "decode": lambda decoder=decoder, shape=shape, line=line: _read([line], decoder, shape),
            "build": lambda builder=builder, delta=delta: builder.feed(delta(" word")),
            "encode": lambda event=event: encode_event(event),
        }
        results = {name: statistics.median(_per_token(work, args.tokens) for _ in range(args.repeat))
                   for name, work in rows.items()}  # fmt: skip
        timings = "  ".join(f"{name} {value:.2f} us" for name, value in results.items())
        print(f"{label:<10} {timings}  total {sum(results.values()):.2f} us")


if __name__ == "__main__":
    main()
