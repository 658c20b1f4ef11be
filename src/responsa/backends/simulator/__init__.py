"""The built-in simulator backend."""

from ._backend import FAULTS, SimulatorBackend
from ._profiles import ModelProfile, default_profiles, load_profiles

__all__ = ["FAULTS", "ModelProfile", "SimulatorBackend", "default_profiles", "load_profiles"]
