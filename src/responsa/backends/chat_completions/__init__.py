"""OpenAI-compatible Chat Completions upstreams (vLLM, SGLang, Ollama, llama.cpp server, OpenAI)."""

from ._backend import ChatCompletionsBackend, UpstreamModel
from ._decode import ChunkDecoder, ThinkSplitter
from ._discover import discover_models
from ._translate import chat_body, chat_messages
from ._workers import Strategy, Worker, WorkerPool

__all__ = [
    "ChatCompletionsBackend",
    "ChunkDecoder",
    "Strategy",
    "ThinkSplitter",
    "UpstreamModel",
    "Worker",
    "WorkerPool",
    "chat_body",
    "chat_messages",
    "discover_models",
]
