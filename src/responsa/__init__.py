"""responsa: an OpenAI Responses API and Open Responses server for any model."""

from importlib.metadata import version

__version__ = version("responsa")
__all__ = ["__version__"]
