"""``python -m responsa.config``: the settings table for docs/configuration.md."""

from responsa.config import settings_table

print(settings_table(), end="")
