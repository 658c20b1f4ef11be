"""The engine, in folders that show its parts (imports flow one way, tests/test_architecture.py):
``output`` (events, includes, usage, timeline) ← ``files`` (files, documents, vector stores) ←
``containers`` ← ``tools`` (the tool kinds) ← ``responses`` (the create path and its services)."""

from ._periodic import every
from .batches import BATCH_RANK, BatchLines, BatchRunner, BatchService, Started
from .containers import ContainerService
from .files import (
    Embedder,
    EmbeddingService,
    FileService,
    VectorStoreService,
    batch_body,
    file_body,
    probe_pdf_text,
    vector_store_body,
)
from .responses import (
    MAX_STEERS,
    Apart,
    Compactor,
    ConversationService,
    FeatureRun,
    ModerationFeature,
    OutputBuilder,
    PromptCacheFeature,
    PromptLibrary,
    PromptsFeature,
    RequestFeature,
    ResponseService,
    ResponseSetup,
    Run,
    Sealer,
    Steer,
    Steering,
    steer_failure,
    steer_input,
    successor_create,
)
from .tools.image_generation import DEFAULT_MODEL as DEFAULT_IMAGES_MODEL
from .webhooks import WebhookDeliverer, WebhookService, delivery_body, endpoint_body

__all__ = [
    "BATCH_RANK",
    "DEFAULT_IMAGES_MODEL",
    "MAX_STEERS",
    "Apart",
    "BatchLines",
    "BatchRunner",
    "BatchService",
    "Compactor",
    "ContainerService",
    "ConversationService",
    "Embedder",
    "EmbeddingService",
    "FeatureRun",
    "FileService",
    "ModerationFeature",
    "OutputBuilder",
    "PromptCacheFeature",
    "PromptLibrary",
    "PromptsFeature",
    "RequestFeature",
    "ResponseService",
    "ResponseSetup",
    "Run",
    "Sealer",
    "Started",
    "Steer",
    "Steering",
    "VectorStoreService",
    "WebhookDeliverer",
    "WebhookService",
    "batch_body",
    "delivery_body",
    "endpoint_body",
    "every",
    "file_body",
    "probe_pdf_text",
    "steer_failure",
    "steer_input",
    "successor_create",
    "vector_store_body",
]
