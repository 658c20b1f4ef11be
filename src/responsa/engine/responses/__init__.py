"""The create path and what serves stored responses: a request checked and opened into a run, the
agentic loop, the output builder, conversations, compaction, background work and its leases."""

from ._conversations import ConversationService
from ._service import ResponseService
from .features._background_windows import BackgroundWindowsFeature
from .features._compaction import CompactionFeature, Compactor
from .features._configuration import ConfigurationFeature
from .features._features import FeatureRun, RequestFeature, load_features
from .features._moderation import ModerationFeature
from .features._multi_agent import MultiAgentFeature
from .features._prompt_cache import PromptCacheFeature
from .features._prompts import PromptLibrary, PromptsFeature
from .features._reasoning_context import ReasoningContextFeature
from .features._reasoning_seal import ReasoningSealFeature
from .features._sealing import Sealer
from .opening._apart import Apart
from .opening._setup import ResponseSetup
from .run._accumulate import OutputBuilder
from .run._run import Run
from .run._steering import (
    MAX_STEERS,
    Steer,
    Steering,
    inbox_of,
    inject_created,
    inject_failure,
    steer_failure,
    steer_input,
    successor_create,
)

__all__ = [
    "MAX_STEERS",
    "Apart",
    "BackgroundWindowsFeature",
    "CompactionFeature",
    "Compactor",
    "ConfigurationFeature",
    "ConversationService",
    "FeatureRun",
    "ModerationFeature",
    "MultiAgentFeature",
    "OutputBuilder",
    "PromptCacheFeature",
    "PromptLibrary",
    "PromptsFeature",
    "ReasoningContextFeature",
    "ReasoningSealFeature",
    "RequestFeature",
    "ResponseService",
    "ResponseSetup",
    "Run",
    "Sealer",
    "Steer",
    "Steering",
    "inbox_of",
    "inject_created",
    "inject_failure",
    "load_features",
    "steer_failure",
    "steer_input",
    "successor_create",
]
