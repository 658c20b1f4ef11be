"""The opening: a create checked, admitted and opened into a run (its new response, its setup)."""
