"""Chat Completions (``POST /chat/completions``) on every backend, through the same engine as responses:
a chat request read as a create, the response written back as a completion or as chunks."""

from ._routes import chat_routes
from ._translate import chat_request, completion

__all__ = ["chat_request", "chat_routes", "completion"]
