"""The built-in simulator backend."""

from ._backend import FAULTS, SIMULATOR_MODELS, SimulatorBackend
from ._profiles import ModelProfile, default_profiles, load_profiles

__all__ = ["FAULTS", "SIMULATOR_MODELS", "ModelProfile", "SimulatorBackend", "default_profiles", "load_profiles"]
