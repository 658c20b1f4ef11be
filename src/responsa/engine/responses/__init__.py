"""The create path and what serves stored responses: a request checked and opened into a run, the
agentic loop, the output builder, conversations, compaction, background work and its leases."""

from ._accumulate import OutputBuilder
from ._apart import Apart
from ._compaction import Compactor
from ._conversations import ConversationService
from ._features import FeatureRun, RequestFeature
from ._prompt_cache import PromptCacheFeature
from ._prompts import PromptLibrary, PromptsFeature
from ._run import Run
from ._sealing import Sealer
from ._service import ResponseService
from ._setup import ResponseSetup
from ._steering import MAX_STEERS, Steer, Steering, steer_failure, steer_input, successor_create

__all__ = [
    "MAX_STEERS",
    "Apart",
    "Compactor",
    "ConversationService",
    "FeatureRun",
    "OutputBuilder",
    "PromptCacheFeature",
    "PromptLibrary",
    "PromptsFeature",
    "RequestFeature",
    "ResponseService",
    "ResponseSetup",
    "Run",
    "Sealer",
    "Steer",
    "Steering",
    "steer_failure",
    "steer_input",
    "successor_create",
]
