"""Request features: what a create may ask beyond the model's turn, each at the create's fixed points
(``_features``: prompts, the prompt cache), and those still threaded through the opening
(configuration updates, moderation, reasoning sealing, compaction)."""
