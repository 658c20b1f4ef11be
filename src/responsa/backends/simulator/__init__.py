"""The built-in simulator backend."""

from ._backend import FAULTS, SIMULATOR_MODELS, SimulatorBackend

__all__ = ["FAULTS", "SIMULATOR_MODELS", "SimulatorBackend"]
