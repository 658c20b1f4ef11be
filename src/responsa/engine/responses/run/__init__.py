"""The run: the agentic loop and its outcomes, the output builder, each model request, truncation,
cancels and steering, leases and the event log."""
