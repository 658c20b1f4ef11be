"""The embedded llama.cpp backend (``llama-cpp-python``), the default model of ``responsa serve``."""

from ._backend import DEFAULT_MODEL_NAME, PACKAGED_MAX_OUTPUT_TOKENS, LlamaCppBackend, default_gguf

__all__ = ["DEFAULT_MODEL_NAME", "PACKAGED_MAX_OUTPUT_TOKENS", "LlamaCppBackend", "default_gguf"]
