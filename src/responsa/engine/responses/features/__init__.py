"""Request features: what a create may ask beyond the model's turn, each at the create's fixed points
(``_features``: prompts, the prompt cache, moderation), and those still threaded through the opening
(configuration updates, reasoning sealing, compaction)."""
